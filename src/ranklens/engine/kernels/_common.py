"""Primitives shared by the kernels: gains, discounts, tie groups, per-query sorting, vocabulary codes."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure


def gains(labels: np.ndarray, gain: object) -> np.ndarray:
    """Gain of every label; negative labels (unjudged, not in pool) get 0.

    ``gain`` is ``"linear"`` (g = label), ``"exp"`` (2^label − 1) or a tuple of ``(label, gain)`` pairs
    (labels not listed keep g = label, as trec_eval's ``ndcg.level=gain`` parameters).
    """
    lab = labels.astype(np.float64)
    judged = labels >= 0
    if gain == "linear":
        out = lab
    elif gain == "exp":
        out = np.exp2(lab) - 1.0
    else:
        out = lab.copy()
        for level, g in gain:  # type: ignore[attr-defined]
            out[labels == level] = g
    return np.where(judged, out, 0.0)


def discount_divisors(rank0: np.ndarray, m: Measure) -> np.ndarray:
    """What the gain at each 0-based rank is divided by: log2(i+1) for rank i; (``log``, base b)
    log_b(i+1) = ln(i+1)/ln(b); or (Järvelin–Kekäläinen, base b) 1 for i < b and log_b(i) after.
    Kernels divide rather than multiply by a reciprocal so that every sum is bit-identical to trec_eval's
    ``gain / log2(rank + 1)``.

    >>> from ranklens.measures import parse
    >>> discount_divisors(np.arange(3), parse("DCG(discount=log,base=10)")).round(6).tolist()
    [0.30103, 0.477121, 0.60206]
    """
    i = rank0.astype(np.float64) + 1.0
    discount = m.get("discount")
    if discount == "jk":
        b = float(m.get("base"))
        return np.where(i < b, 1.0, np.log(np.maximum(i, b)) / np.log(b))
    if discount == "log":
        return np.log(i + 1.0) / np.log(float(m.get("base")))
    return log2_of_rank(rank0)


#: log2(r + 2) for the 0-based ranks r = 0, 1, …, grown as needed (see :func:`log2_of_rank`)
_LOG2_TABLE: list[np.ndarray] = [np.empty(0)]


def log2_of_rank(rank0: np.ndarray) -> np.ndarray:
    """log2(r + 2) for every 0-based rank r, from the C library's ``log2`` (:func:`math.log2`): the function
    trec_eval calls and the compiled express path (``ranklens._cexpress``) uses. numpy's own ``log2`` may
    differ from it in the last bit on some CPUs (its SIMD versions), which would make a sum differ too.

    >>> log2_of_rank(np.array([0, 1, 2, 6])).tolist()
    [1.0, 1.584962500721156, 2.0, 3.0]
    """
    if rank0.dtype.kind not in "iu":  # (fractional ranks: no table)
        return np.log2(rank0.astype(np.float64) + 2.0)
    top = int(rank0.max()) + 1 if rank0.size else 0
    table = _LOG2_TABLE[0]
    if table.size < top:
        table = np.array([math.log2(r + 2.0) for r in range(max(top, 2 * table.size, 1024))])
        _LOG2_TABLE[0] = table
    return table[rank0]


def discounts(rank0: np.ndarray, m: Measure) -> np.ndarray:
    """Discount of each 0-based rank: 1/log2(i+1), or Järvelin–Kekäläinen with base b (for display)."""
    return 1.0 / discount_divisors(rank0, m)


def within(lists: RankedLists, k: int | None) -> np.ndarray:
    """Mask of retrieved rows within the cutoff (all rows when ``k`` is None)."""
    if k is None:
        return np.ones(lists.labels.shape[0], dtype=bool)
    return lists.rank0 < k


def rel_threshold(m: Measure) -> float:
    """The measure's relevance threshold ``rel``: an ``int`` for integer levels (the default 1), a float
    for a real threshold on real-valued labels. Never truncated: ``rel=0.5`` means label ≥ 0.5."""
    value: float = m.get("rel")
    return value


def relevant(labels: np.ndarray, rel: float) -> np.ndarray:
    """Binary relevance at threshold ``rel``: judged (label ≥ 0) and label ≥ rel."""
    return (labels >= rel) & (labels >= 0)


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum restarting at every segment start, exactly as a loop per segment would
    compute it (so a query's values never depend on the other queries' magnitudes).

    Segments are grouped into length classes (powers of two); each class is laid out as a padded
    matrix and summed along its rows: a loop over at most ~30 classes, never over segments.

    >>> segment_cumsum(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 2, 2, 5])).tolist()
    [1.0, 3.0, 3.0, 7.0, 12.0]
    """
    out = np.empty(values.shape[0], dtype=np.float64)
    if values.size == 0:
        return out
    lengths = np.diff(offsets)
    nonempty = np.flatnonzero(lengths > 0)
    if nonempty.size and np.all(lengths[nonempty] == lengths[nonempty[0]]):
        width = int(lengths[nonempty[0]])
        rows = values[offsets[nonempty[0]] : offsets[nonempty[0]] + width * nonempty.size]
        if offsets[nonempty[-1]] + width == offsets[-1] and rows.size == values.size:
            return np.cumsum(values.reshape(-1, width), axis=1, dtype=np.float64).reshape(-1)
    classes = np.ceil(np.log2(np.maximum(lengths[nonempty], 1))).astype(np.int64)
    for c in np.unique(classes):
        segs = nonempty[classes == c]
        lens = lengths[segs]
        width = int(lens.max())
        row = np.repeat(np.arange(segs.size), lens)
        col = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        src = np.repeat(offsets[segs], lens) + col
        mat = np.zeros((segs.size, width), dtype=np.float64)
        mat[row, col] = values[src]
        out[src] = np.cumsum(mat, axis=1)[row, col]
    return out


def tie_groups(lists: RankedLists) -> tuple[np.ndarray, np.ndarray]:
    """Group id of every retrieved row (equal scores within a query) and the group start offsets."""
    n = lists.scores.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    new = np.ones(n, dtype=bool)
    new[1:] = lists.scores[1:] != lists.scores[:-1]
    new[lists.offsets[:-1][np.diff(lists.offsets) > 0]] = True
    gid = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    return gid, np.concatenate((starts, [n])).astype(np.int64)


def sort_desc_per_query(values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Permutation sorting ``values`` descending within each query (queries stay in order)."""
    return np.lexsort((-values, query))


def codes_in(ids: pa.Array, vocabulary: pa.Array) -> np.ndarray:
    """The int32 code of each id of ``ids`` in ``vocabulary`` (its position there), −1 when absent.

    Kernels use it to move between the run's and the qrels' document vocabularies of a
    :class:`RankedLists` (``doc_ids`` and ``qrels_doc_ids``).

    >>> codes_in(pa.array(["b", "x", "a"]), pa.array(["a", "b"])).tolist()
    [1, -1, 0]
    """
    if len(ids) == 0:
        return np.empty(0, dtype=np.int32)
    import pyarrow.compute as pc

    found = pc.index_in(ids, value_set=vocabulary).fill_null(-1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int32)
