"""The runs to fuse, aligned on one table of candidates: every (query, document) any run retrieved.

Each run becomes one column of a ``candidates × runs`` score matrix (NaN where the run did not retrieve the
document) plus the 1-based rank of the document in that run, so every fusion method is a few numpy
operations over all queries at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ranklens.data import Run
from ranklens.data._arrow import from_numpy
from ranklens.data._intern import intern_sorted

__all__ = ["Aligned", "align", "rank_within"]


@dataclass(frozen=True, eq=False)
class Aligned:
    """Runs aligned on their candidates.

    Attributes:
        query_ids: the union of the runs' query ids, sorted bytewise.
        doc_ids: the union of the runs' document ids, sorted bytewise.
        query: query code of every candidate (candidates are sorted by query, then document).
        doc: document code of every candidate.
        scores: ``candidates × runs`` float64 scores, NaN where a run did not retrieve the candidate.
        names: the runs' names.
        lacking: per run, how many of the union's queries it has no row for.

    >>> a = align([Run.from_dict({"q1": {"d1": 2.0}}), Run.from_dict({"q1": {"d2": 1.0}, "q2": {"d1": 3.0}})])
    >>> a.scores.tolist(), a.lacking
    ([[2.0, nan], [nan, 1.0], [nan, 3.0]], (1, 0))
    """

    query_ids: pa.Array
    doc_ids: pa.Array
    query: np.ndarray
    doc: np.ndarray
    scores: np.ndarray
    names: tuple[str, ...]
    lacking: tuple[int, ...]

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def bounds(self) -> np.ndarray:
        """Start of every query's candidates, and the end: ``bounds[q]:bounds[q + 1]``."""
        return np.searchsorted(self.query, np.arange(self.num_queries + 1))

    def to_run(self, score: np.ndarray, name: str) -> Run:
        """The fused run: every candidate with its fused ``score``."""
        return Run.from_arrays(
            self.query_ids.take(from_numpy(self.query)),
            self.doc_ids.take(from_numpy(self.doc)),
            score,
            name=name,
            source=f"<fused {name}>",
        )


def align(runs: Sequence[Run]) -> Aligned:
    """Align ``runs`` on the union of their (query, document) pairs (see :class:`Aligned`)."""
    qstrings = [r.query_ids.take(from_numpy(r.query)) for r in runs]
    qcodes, qvocab = intern_sorted(pa.concat_arrays(qstrings) if qstrings else pa.array([], pa.string()))
    dcodes, dvocab = intern_sorted(pa.concat_arrays([r.docs.cast(pa.string()) for r in runs]))
    ndocs = max(len(dvocab), 1)
    keys = qcodes.astype(np.int64) * ndocs + dcodes
    unique, inverse = _unique(keys, len(qvocab) * ndocs)
    scores = np.full((len(unique), len(runs)), np.nan)
    start = 0
    lacking = []
    for i, r in enumerate(runs):
        rows = slice(start, start + len(r))
        scores[inverse[rows], i] = r.score
        lacking.append(len(qvocab) - len(np.unique(qcodes[rows])))
        start += len(r)
    return Aligned(
        query_ids=qvocab,
        doc_ids=dvocab,
        query=(unique // ndocs).astype(np.int32),
        doc=(unique % ndocs).astype(np.int32),
        scores=scores,
        names=tuple(r.name for r in runs),
        lacking=tuple(lacking),
    )


def _unique(keys: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in ``[0, cells)``: through a table of the cells when
    it is no larger than a few times the keys (one pass, no sort), else by sorting.

    >>> [x.tolist() for x in _unique(np.array([5, 1, 5, 3]), 8)]
    [[1, 3, 5], [2, 0, 2, 1]]
    """
    if cells > 4 * keys.size + 1_000_000:
        return np.unique(keys, return_inverse=True)  # type: ignore[no-any-return]
    seen = np.zeros(cells, dtype=bool)
    seen[keys] = True
    unique = np.flatnonzero(seen)
    index = np.cumsum(seen, dtype=np.int64) - 1
    return unique, index[keys]


def rank_within(query: np.ndarray, doc: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """1-based rank of every candidate in every run's list (NaN where the run lacks it): score descending,
    ties by document id descending (trec_eval's order, the one ``eval`` reads the run in).

    >>> rank_within(np.array([0, 0, 0]), np.array([0, 1, 2]), np.array([[1.0], [np.nan], [1.0]])).tolist()
    [[2.0], [nan], [1.0]]
    """
    ranks = np.full(scores.shape, np.nan)
    for i in range(scores.shape[1]):
        present = np.flatnonzero(~np.isnan(scores[:, i]))
        q, s, d = query[present], scores[present, i], doc[present]
        order = _trec_order(q.astype(np.int64), s, d.astype(np.int64))
        sq = q[order]
        starts = np.flatnonzero(np.r_[True, sq[1:] != sq[:-1]]) if sq.size else np.zeros(0, np.int64)
        position = np.arange(sq.size) - np.repeat(starts, np.diff(np.r_[starts, sq.size]))
        ranks[present[order], i] = position + 1
    return ranks


def _trec_order(q: np.ndarray, s: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The order by query, score descending, document descending: one sort of an integer key (query, dense
    rank of the score, reversed document) when it fits in 63 bits, else ``np.lexsort``.

    >>> _trec_order(np.array([1, 0, 0, 0]), np.array([5.0, 1.0, 2.0, 1.0]), np.array([0, 0, 1, 2])).tolist()
    [2, 3, 1, 0]
    """
    if s.size == 0:
        return np.zeros(0, np.int64)
    by_score = np.argsort(-s)
    ordered = s[by_score]
    dense = np.empty(s.size, np.int64)
    dense[by_score] = np.cumsum(np.r_[0, ordered[1:] != ordered[:-1]])
    nscores, ndocs, nqueries = int(dense.max()) + 1, int(d.max()) + 1, int(q.max()) + 1
    if nqueries * nscores * ndocs >= 2**62:
        return np.lexsort((-d, -s, q))
    return np.argsort((q * nscores + dense) * ndocs + (ndocs - 1 - d))  # (keys unique: no stability needed)
