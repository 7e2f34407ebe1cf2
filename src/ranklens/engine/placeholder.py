"""A qrels query the run lacks, under ``missing="zero"`` (trec_eval ``-c``): evaluated as trec_eval 10.0
evaluates it, against a one-document ranking of a document that no qrels lists (``trec_eval.c``:
``"ceci_nest_pas_un_docno"`` with score 1.0), after which the values that count retrieved documents are
cleared (``num_ret``, ``unj*``, ``utility``, ``rbp_resid``).

So every face gives one number for such a query: a measure that is 0/0 on it in trec_eval (``Rndcg`` with
``-l0`` on a query judged 0 only) is NaN here too, and one that trec_eval scores 0 is 0, whatever the
measure's value on an empty ranking would be. ``ranklens trec-eval`` adds the same rows
(:func:`with_placeholders`); the Evaluator computes them with :func:`placeholder_values`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ranklens.data._arrow import from_numpy, string_array
from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.alignment import Negative, align
from ranklens.engine.kernels import kernel_for
from ranklens.measures.base import Measure

__all__ = ["CLEARED", "PLACEHOLDER_DOC", "placeholder_values", "with_placeholders"]

#: the document trec_eval ranks alone for a qrels query missing from the run (with -c)
PLACEHOLDER_DOC = "ceci_nest_pas_un_docno"

#: families whose value trec_eval clears (0) for a query ranked against the placeholder: they count what
#: was retrieved (trec_eval.c resets num_ret, utility, the unj values and rbp_resid)
CLEARED = frozenset({"NumRet", "Unjudged", "Utility", "TrecRBPResidual"})


def with_placeholders(run: Run, query_ids: Sequence[str]) -> Run:
    """``run`` plus one row (:data:`PLACEHOLDER_DOC`, score 1.0) for each of ``query_ids``.

    >>> r = with_placeholders(Run.from_dict({"q1": {"a": 2.0}}), ["q2"])
    >>> r.to_dict()["q2"]
    {'ceci_nest_pas_un_docno': 1.0}
    """
    if not query_ids:
        return run
    import pyarrow as pa

    queries = pa.concat_arrays([run.query_ids.take(from_numpy(run.query)), string_array(list(query_ids))])
    docs = pa.concat_arrays(
        [run.doc_ids.take(from_numpy(run.doc)), string_array([PLACEHOLDER_DOC] * len(query_ids))]
    )
    scores = np.concatenate((run.score, np.ones(len(query_ids))))
    return Run.from_arrays(queries, docs, scores, name=run.name, source=run.source)


def placeholder_values(
    qrels: Qrels,
    query_ids: Sequence[str],
    measures: Sequence[Measure],
    *,
    negative: Negative = "trec",
    judged_only: bool = False,
    max_docs: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The values of ``measures`` (columns) for ``query_ids`` (rows, qrels queries), each ranked against the
    placeholder document alone, with the :data:`CLEARED` families 0; and the mask of the rows computed.
    With ``judged_only`` the placeholder (judged by no one) is dropped, as trec_eval ``-J`` drops it: those
    rows are not computed here (the query's value is the one on an empty ranking).

    >>> from ranklens.measures import parse_many
    >>> q = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 0}})
    >>> values, done = placeholder_values(q, ["q1", "q2"], parse_many(["P@5", "NumRet", "Rndcg(rel=0)"]))
    >>> values.tolist(), done.tolist()
    ([[0.0, 0.0, 0.0], [0.0, 0.0, nan]], [True, True])
    """
    out = np.zeros((len(query_ids), len(measures)))
    if not query_ids or not measures:
        return out, np.ones(len(query_ids), dtype=bool)
    run = with_placeholders(Run.from_arrays(string_array([]), string_array([]), np.empty(0)), query_ids)
    lists, _ = align(qrels, run, query_set="intersect", negative=negative, judged_only=judged_only,
                     max_docs=max_docs, map_negative_labels=True)
    row = {q: i for i, q in enumerate(lists.query_ids.to_pylist())}
    done = np.array([q in row for q in query_ids], dtype=bool)
    where = np.array([row[q] for q, ok in zip(query_ids, done.tolist()) if ok], dtype=np.int64)
    for j, m in enumerate(measures):
        if m.name not in CLEARED:
            out[done, j] = np.asarray(kernel_for(m)(lists, m), dtype=np.float64)[where]
    return out, done
