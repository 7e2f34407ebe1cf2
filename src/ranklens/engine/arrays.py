"""Evaluate rankings held as arrays, the way scikit-learn and torchmetrics users hold them.

Two forms, truth first as in :func:`ranklens.evaluate` and scikit-learn's ``ndcg_score(y_true, y_score)``:

* **dense**: ``y_true`` and ``y_score`` of shape (queries, documents); row i is query i, column j
  document j. Query ids are the row numbers and document ids the column numbers, zero-padded to one
  width (``"07"``) so that they sort in row order: ``Results.query_ids[i]`` is row ``i`` when every row
  is evaluated.
* **flat**: 1-D ``y_true`` and ``y_score`` with ``indexes=``, the query of every element (torchmetrics'
  retrieval metrics, ``metric(preds, target, indexes=indexes)``, which put the predictions first; here
  the truth comes first, as everywhere in ranklens). Query ids are the indexes: integers zero-padded as
  rows are, anything else as text.

NaN marks what an array cannot leave out: NaN in ``y_true`` is a document without a judgement (retrieved,
gain 0, never relevant, not in the ideal, not counted by Judged); NaN in ``y_score`` a document not
retrieved (it still counts in the ideal when judged); NaN in both a padding cell (ragged lists in one
matrix). scikit-learn has no such marks: every cell is judged and retrieved there.

Labels are typed by ``labels=``: ``"auto"`` (default) reads integers when ``y_true`` has an integer or
boolean dtype or every judged value is a whole number, real-valued labels otherwise (docs/labels.md: the
graded measures use them as gains; binary measures then need ``rel=`` or ``rel_level=``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ranklens.data._arrow import from_numpy
from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.evaluator import Evaluator
from ranklens.errors import InputError
from ranklens.measures.language import MeasuresArg
from ranklens.results.core import Results

__all__ = ["evaluate_arrays"]


def evaluate_arrays(
    y_true: Any,
    y_score: Any,
    measures: MeasuresArg,
    *,
    indexes: Any = None,
    labels: str = "auto",
    name: str = "run",
    **options: Any,
) -> Results:
    """Evaluate dense (queries × documents) matrices, or flat arrays with ``indexes=``, like :func:`evaluate`.

    Args:
        y_true: relevance labels (integers, booleans or real numbers; NaN = not judged).
        y_score: scores, higher ranks first (NaN = not retrieved); same shape as ``y_true``.
        measures: measure names or :class:`Measure` values.
        indexes: with 1-D ``y_true``/``y_score``: the query of every element (torchmetrics ``indexes``).
        labels: ``"auto"``, ``"int"`` or ``"float"`` (see the module docstring).
        name: the run's name in the :class:`Results`.
        **options: the :class:`~ranklens.Evaluator` policies (``missing``, ``negative``, ``judged_only``,
            ``max_docs``, ``rel_level``).

    Ties follow each measure's ``ties`` policy; scikit-learn averages over tied orderings, so compare
    with ``ties=average`` (the default breaks ties by document id descending: the later column first).

    >>> import numpy as np
    >>> y_true = np.array([[3, 2, 3, 0, 1, 2]])
    >>> y_score = np.array([[0.9, 0.8, 0.1, 0.2, 0.7, 0.7]])  # two documents tied at 0.7
    >>> res = evaluate_arrays(y_true, y_score, ["nDCG(ties=average)@4", "nDCG@4"])
    >>> [round(v, 6) for v in res.aggregates]   # sklearn.metrics.ndcg_score(y_true, y_score, k=4): 0.83769
    [0.83769, 0.842821]
    >>> flat = evaluate_arrays([1, 0, 0, 1], [0.2, 0.9, 0.5, 0.1], ["RR"], indexes=[7, 7, 3, 3])
    >>> flat.per_query("RR")
    {'3': 0.5, '7': 0.5}
    """
    truth = _numbers(y_true, "y_true")
    score = _numbers(y_score, "y_score")
    if indexes is None:
        if truth.ndim == 1:
            raise InputError(
                "1-D y_true and y_score need indexes= (the query of each element, as torchmetrics); "
                "or pass 2-D arrays (rows = queries)"
            )
        if truth.ndim != 2:
            raise InputError(f"y_true must be 1-D (with indexes=) or 2-D (rows = queries); got {truth.ndim}-D")
        _same_shape(truth, score)
        rows, cols = truth.shape
        query = _coded(np.repeat(np.arange(rows, dtype=np.int32), cols), _padded(np.arange(rows)))
        doc = _coded(np.tile(np.arange(cols, dtype=np.int32), rows), _padded(np.arange(cols)))
    else:
        if truth.ndim != 1 or score.ndim != 1:
            raise InputError(f"indexes= goes with 1-D y_true and y_score; got {max(truth.ndim, score.ndim)}-D arrays")
        _same_shape(truth, score)
        idx = np.asarray(indexes)
        if idx.ndim != 1 or idx.shape[0] != truth.shape[0]:
            raise InputError(f"indexes must have one entry per element of y_true; got {idx.size} for {truth.shape[0]}")
        query = _coded(*_query_ids(idx))
        doc = pa.array(_padded(np.arange(truth.shape[0])))
    kind = _label_kind(truth, labels)
    truth, score = truth.reshape(-1), score.reshape(-1)
    if np.isinf(truth).any():
        raise InputError("y_true must be finite or NaN (NaN: not judged); got an infinite label")
    judged = np.flatnonzero(~np.isnan(truth))
    retrieved = np.flatnonzero(~np.isnan(score))
    qrels = Qrels.from_arrays(
        query.take(from_numpy(judged)), doc.take(from_numpy(judged)), truth[judged], source="<y_true>",
        line_numbers=judged + 1, label_kind=kind,
    )
    run = Run.from_arrays(
        query.take(from_numpy(retrieved)), doc.take(from_numpy(retrieved)), score[retrieved], name=name,
        source="<y_score>",
    )
    return Evaluator(measures, qrels, **options)(run)


def _numbers(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{what} must hold numbers; got an array of {arr.dtype}")
    return arr


def _same_shape(truth: np.ndarray, score: np.ndarray) -> None:
    if truth.shape != score.shape:
        raise InputError(f"y_true and y_score must have the same shape; got {truth.shape} and {score.shape}")


def _label_kind(truth: np.ndarray, labels: str) -> str:
    if labels not in ("auto", "int", "float"):
        raise InputError(f"labels must be 'auto', 'int' or 'float'; got {labels!r}")
    if labels != "auto":
        return labels
    if truth.dtype.kind in "iu":
        return "int"
    judged = truth[~np.isnan(truth)]
    return "int" if bool(np.all(judged == np.round(judged))) else "float"


def _padded(numbers: np.ndarray) -> np.ndarray:
    """Non-negative integers as text of one width, so that text order is number order."""
    width = len(str(int(numbers.max()))) if numbers.size else 1
    return np.char.zfill(numbers.astype(str), width)


def _coded(codes: np.ndarray, vocabulary: np.ndarray) -> pa.Array:
    """Ids as an Arrow dictionary array (``vocabulary[codes]``): one string per distinct id, not per row."""
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(vocabulary, pa.string()))


def _query_ids(indexes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, ids) from torchmetrics-style indexes: non-negative whole numbers zero-padded, else text."""
    values, codes = np.unique(indexes, return_inverse=True)
    codes = codes.reshape(-1).astype(np.int32)
    if values.dtype.kind in "iu" or (values.dtype.kind == "f" and np.all(values == np.round(values))):
        whole = values.astype(np.int64)
        if whole.size == 0 or whole.min() >= 0:
            return codes, np.char.zfill(whole.astype(str), len(str(int(whole.max()))) if whole.size else 1)
    return codes, values.astype(str)
