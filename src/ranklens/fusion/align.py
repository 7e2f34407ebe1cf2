"""The runs to fuse, aligned on one table of candidates: every (query, document) any run retrieved.

Each run becomes one column of a ``candidates × runs`` score matrix (NaN where the run did not retrieve the
document; column-major, so one run's scores are contiguous) plus the 1-based rank of the document in that
run, so every fusion method is a few numpy operations over all queries at once.

Ids are interned once per distinct string, not per row: the union of the runs' (already interned) query
vocabularies, and each run's documents dictionary-encoded on their own before the (small) dictionaries are
merged, so no column of 30 million id strings is ever concatenated or materialised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data import Run
from ranklens.data._arrow import from_numpy, to_numpy
from ranklens.data._intern import intern_sorted

__all__ = ["Aligned", "align", "rank_column", "rank_within"]

_MAX_PAD = 2  # the per-query sort pads every query to the longest; beyond 2× the rows (+ a constant) it sorts globally


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
        rows: per run, the candidate of each of its rows, in the run's own row order (so a run already in
            trec order gives its ranks without a sort: :func:`rank_within`).

    >>> a = align([Run.from_dict({"q1": {"d1": 2.0}}), Run.from_dict({"q1": {"d2": 1.0}, "q2": {"d1": 3.0}})])
    >>> a.scores.tolist(), a.lacking, [r.tolist() for r in a.rows]
    ([[2.0, nan], [nan, 1.0], [nan, 3.0]], (1, 0), [[0], [1, 2]])
    """

    query_ids: pa.Array
    doc_ids: pa.Array
    query: np.ndarray
    doc: np.ndarray
    scores: np.ndarray
    names: tuple[str, ...]
    lacking: tuple[int, ...]
    rows: tuple[np.ndarray, ...] = ()

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def bounds(self) -> np.ndarray:
        """Start of every query's candidates, and the end: ``bounds[q]:bounds[q + 1]``."""
        return np.searchsorted(self.query, np.arange(self.num_queries + 1))

    def to_run(self, score: np.ndarray, name: str) -> Run:
        """The fused run: every candidate with its fused ``score`` (built directly: the candidates are unique
        and their codes already index the sorted vocabularies, so nothing is re-interned or re-checked)."""
        if np.isnan(score).any():  # (as Run.from_arrays would refuse it)
            return Run.from_arrays(
                self.query_ids.take(from_numpy(self.query)), self.doc_ids.take(from_numpy(self.doc)), score,
                name=name, source=f"<fused {name}>",
            )
        run = Run(
            self.query_ids, self.query, self.doc_ids.take(from_numpy(self.doc)),
            np.ascontiguousarray(score, dtype=np.float64), name, f"<fused {name}>",
        )
        run._cache["doc"], run._cache["doc_ids"] = self.doc, self.doc_ids
        return run


def align(runs: Sequence[Run]) -> Aligned:
    """Align ``runs`` on the union of their (query, document) pairs (see :class:`Aligned`)."""
    qcodes, qvocab = _union([r.query_ids for r in runs], [r.query for r in runs])
    encoded = [_encode(r.docs) for r in runs]
    dcodes, dvocab = _union([d for d, _ in encoded], [c for _, c in encoded])
    del encoded
    ndocs = max(len(dvocab), 1)
    unique, inverse = _unique([(q, d) for q, d in zip(qcodes, dcodes)], ndocs, len(qvocab) * ndocs)
    del qcodes, dcodes
    scores = np.full((len(unique), len(runs)), np.nan, order="F")
    for i, r in enumerate(runs):
        scores[inverse[i], i] = r.score
    return Aligned(
        query_ids=qvocab,
        doc_ids=dvocab,
        query=(unique // ndocs).astype(np.int32),
        doc=(unique % ndocs).astype(np.int32),
        scores=scores,
        names=tuple(r.name for r in runs),
        lacking=tuple(len(qvocab) - int(np.count_nonzero(np.bincount(r.query, minlength=1))) for r in runs),
        rows=tuple(inverse),
    )


def _encode(ids: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """One run's ids dictionary-encoded: its distinct ids (unsorted) and every row's code into them."""
    encoded = pc.dictionary_encode(ids.cast(pa.string()))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return encoded.dictionary, to_numpy(encoded.indices)


def _union(vocabularies: list[pa.Array], codes: list[np.ndarray]) -> tuple[list[np.ndarray], pa.Array]:
    """Codes into the union of ``vocabularies`` (sorted bytewise) for each list of ``codes`` into its own.

    >>> got, vocab = _union([pa.array(["b", "a"]), pa.array(["c", "a"])], [np.array([0, 1, 1]), np.array([1, 0])])
    >>> [g.tolist() for g in got], vocab.to_pylist()
    ([[1, 0, 0], [0, 2]], ['a', 'b', 'c'])
    """
    merged = pa.concat_arrays([v.cast(pa.string()) for v in vocabularies]) if vocabularies else pa.array([], pa.string())
    where, vocab = intern_sorted(merged)
    out, start = [], 0
    for v, c in zip(vocabularies, codes):
        out.append(where[start:start + len(v)][c])
        start += len(v)
    return out, vocab


def _unique(codes: list[tuple[np.ndarray, np.ndarray]], ndocs: int, cells: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted distinct keys ``query · ndocs + document`` of all (query codes, document codes) pairs (each in
    ``[0, cells)``) and, per pair of arrays, the index of each of its keys among them: through a table of the
    cells when it is no larger than a few times the keys (one pass, no sort; each run's keys computed when
    needed, never all held at once), else by sorting.

    >>> u, inv = _unique([(np.array([1, 0]), np.array([1, 1])), (np.array([1, 0]), np.array([1, 3]))], 4, 8)
    >>> u.tolist(), [i.tolist() for i in inv]
    ([1, 3, 5], [[2, 0], [2, 1]])
    """
    def keys(q: np.ndarray, d: np.ndarray) -> np.ndarray:
        k = q.astype(np.int64)
        k *= ndocs
        k += d
        return k

    total = sum(q.size for q, _ in codes)
    if cells > 4 * total + 1_000_000:
        unique, inverse = np.unique(np.concatenate([keys(q, d) for q, d in codes]), return_inverse=True)
        bounds = np.cumsum([0] + [q.size for q, _ in codes])
        return unique, [inverse[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    seen = np.zeros(cells, dtype=bool)
    for q, d in codes:
        seen[keys(q, d)] = True
    unique = np.flatnonzero(seen)
    index = np.cumsum(seen, dtype=np.int32 if unique.size < 2**31 else np.int64)
    del seen
    index -= 1
    return unique, [index[keys(q, d)] for q, d in codes]


def rank_within(
    query: np.ndarray, doc: np.ndarray, scores: np.ndarray, rows: Sequence[np.ndarray] = ()
) -> np.ndarray:
    """1-based rank of every candidate in every run's list (NaN where the run lacks it): score descending,
    ties by document id descending (trec_eval's order, the one ``eval`` reads the run in).

    ``rows`` (:attr:`Aligned.rows`): when a run's own rows are already in that order (an O(n) check on the
    scores given), its ranks are its row positions and nothing is sorted; otherwise each query's candidates
    are sorted on their own (:func:`_group_ranks`).

    >>> rank_within(np.array([0, 0, 0]), np.array([0, 1, 2]), np.array([[1.0], [np.nan], [1.0]])).tolist()
    [[2.0], [nan], [1.0]]
    >>> s = np.array([[1.0], [3.0], [np.nan]])
    >>> rank_within(np.array([0, 0, 0]), np.array([0, 1, 2]), s, rows=[np.array([1, 0])]).tolist()
    [[2.0], [1.0], [nan]]
    """
    ranks = np.empty(scores.shape, order="F")
    for i in range(scores.shape[1]):
        ranks[:, i] = rank_column(query, doc, scores[:, i], rows[i] if i < len(rows) else None)
    return ranks


def rank_column(query: np.ndarray, doc: np.ndarray, column: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """One run's column of :func:`rank_within` (``rows``: the run's :attr:`Aligned.rows`, if known).

    >>> rank_column(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([1.0, 2.0, np.nan])).tolist()
    [2.0, 1.0, nan]
    """
    ranks = np.full(column.shape[0], np.nan)
    present = np.flatnonzero(~np.isnan(column))
    if rows is not None and len(rows) == present.size:
        own = _in_row_order(query, doc, column, rows)
        if own is not None:
            ranks[rows] = own
            return ranks
    ranks[present] = _group_ranks(query[present], doc, column[present], present)
    return ranks


def _in_row_order(query: np.ndarray, doc: np.ndarray, column: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """The ranks of a run's rows (``rows``: their candidates) as their positions within each query, if every
    query's rows are contiguous and in trec order on ``column``'s scores; else None (a prefix is checked first,
    so a run not in that order costs next to nothing).

    >>> q, d = np.array([0, 0]), np.array([0, 1])
    >>> _in_row_order(q, d, np.array([2.0, 2.0]), np.array([0, 1])) is None
    True
    >>> _in_row_order(q, d, np.array([2.0, 2.0]), np.array([1, 0])).tolist()
    [1.0, 2.0]
    """
    if rows.size == 0:
        return np.zeros(0)
    for stop in (min(rows.size, 4096), rows.size):
        r = rows[:stop]
        q, s = query[r], column[r]
        same = q[1:] == q[:-1]
        ahead = s[:-1] > s[1:]
        if not np.all(ahead | ~same):  # (ties on the score, NaN: read the documents only there)
            level = np.flatnonzero(~ahead & same)
            if np.isnan(s).any() or not np.all((s[level] == s[level + 1]) & (doc[r[level]] > doc[r[level + 1]])):
                return None
    starts = np.flatnonzero(np.r_[True, ~same])
    if starts.size != np.count_nonzero(np.bincount(q)):  # a query's rows are split in two places
        return None
    sizes = np.diff(np.r_[starts, q.size])
    return (np.arange(q.size) - np.repeat(starts, sizes) + 1).astype(np.float64)


def _group_ranks(q: np.ndarray, doc: np.ndarray, s: np.ndarray, present: np.ndarray | None = None) -> np.ndarray:
    """1-based ranks within each query for rows sorted by query, then document ascending: every query's scores
    laid out in one row of a padded matrix (documents descending) and the rows sorted independently; rows with
    tied scores are re-sorted stably (so ties keep the document-descending order). Falls back to one global sort
    (:func:`_trec_order`) when the queries' sizes differ too much to pad.

    ``doc``: the documents of the rows, or of the candidates the rows are the ``present`` of (read only by the
    global sort).

    >>> _group_ranks(np.array([0, 0, 0, 1]), np.array([0, 1, 2, 0]), np.array([1.0, 3.0, 1.0, 7.0])).tolist()
    [3.0, 1.0, 2.0, 1.0]
    """
    n = s.size
    if n == 0:
        return np.zeros(0)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    sizes = np.diff(np.r_[starts, n])
    width = int(sizes.max())
    if starts.size * width > _MAX_PAD * n + 65536 or s.min() == -np.inf:  # (-inf would tie the padding)
        d = doc if present is None else doc[present]
        order = _trec_order(q.astype(np.int64), s, d.astype(np.int64))
        sq = q[order]
        first = np.flatnonzero(np.r_[True, sq[1:] != sq[:-1]])
        ranks = np.empty(n)
        ranks[order] = np.arange(n) - np.repeat(first, np.diff(np.r_[first, n])) + 1
        return ranks
    if starts.size * width == n:  # (every query the same size: the rows are the matrix, no scatter)
        table = s.reshape(starts.size, width)[:, ::-1] * -1.0
        flat = None
    else:
        flat = np.repeat(np.arange(starts.size, dtype=np.int64) * width + starts + sizes - 1, sizes)
        flat -= np.arange(n)  # (documents descending within the query)
        table = np.full((starts.size, width), np.inf)
        table.ravel()[flat] = -s
    order = np.argsort(table, axis=1)
    ordered = np.take_along_axis(table, order, axis=1)
    equal = ordered[:, 1:] == ordered[:, :-1]
    del ordered
    if flat is not None:  # (ties between padding cells do not count)
        equal &= np.arange(1, width)[None, :] < sizes[:, None]
    tied_rows = np.flatnonzero(equal.any(axis=1))
    del equal
    if tied_rows.size:
        order[tied_rows] = np.argsort(table[tied_rows], axis=1, kind="stable")
    del table
    rank = np.empty(order.shape)
    np.put_along_axis(rank, order, np.arange(1.0, width + 1.0)[None, :], axis=1)
    del order
    return rank[:, ::-1].ravel() if flat is None else rank.ravel()[flat]


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
