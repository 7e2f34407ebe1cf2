"""Kernels of Compat (rank-biased overlap with the ideal ranking) and Accuracy (ordered relevant/non-relevant
pairs); definitions in :mod:`ranklens.measures.agreement`. Flat arrays, per-query sums, no loop per query."""

from __future__ import annotations

import numpy as np

from ranklens.engine.kernels._common import rel_threshold, segment_cumsum, within
from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure

__all__ = ["AGREEMENT_KERNELS", "accuracy", "compat"]


def _rbo_head(p: float, depth: int) -> np.ndarray:
    """head[x] = Σ_{i < x} p^i/(i+1) for x = 0..depth (0-based ranks)."""
    i = np.arange(depth, dtype=np.float64)
    terms = np.power(p, i) / (i + 1.0)
    head = np.concatenate(([0.0], np.cumsum(terms)))
    return head


def _ideal_positions(lists: RankedLists, rel: float, hit: np.ndarray) -> np.ndarray:
    """0-based position in the ideal ranking of every retrieved relevant row (``hit``): the relevant documents
    with a larger label, plus the retrieved ones of its label ranked above it."""
    q = lists.row_query[hit].astype(np.int64)
    lab = lists.labels[hit].astype(np.float64)
    ideal = lists.ideal_labels >= rel
    ideal_q = lists.ideal_query[ideal].astype(np.int64)
    levels = np.unique(lists.ideal_labels[ideal].astype(np.float64))
    k = levels.shape[0] + 1
    # ideal rows are sorted by (query, label descending): key = query·k + (k − 1 − level code) ascends
    key = ideal_q * k + (k - 1 - np.searchsorted(levels, lists.ideal_labels[ideal].astype(np.float64)))
    row_code = np.searchsorted(levels, lab)
    above_level = np.searchsorted(key, q * k + (k - 1 - row_code), side="left") - np.searchsorted(key, q * k)
    order = np.lexsort((lists.rank0[hit], row_code, q))
    group = np.concatenate(([True], (q[order][1:] != q[order][:-1]) | (row_code[order][1:] != row_code[order][:-1])))
    starts = np.flatnonzero(group)
    within_level = np.empty(order.shape[0], dtype=np.int64)
    within_level[order] = np.arange(order.shape[0]) - np.repeat(starts, np.diff(np.append(starts, order.shape[0])))
    return above_level + within_level


def compat(lists: RankedLists, m: Measure) -> np.ndarray:
    """Compat = RBO_p(run, ideal) to depth D = max(retrieved, relevant), normalised by RBO_p(ideal, ideal).

    A retrieved relevant document at run rank r and ideal rank s (0-based) is in both prefixes from depth
    max(r, s) on, so RBO's numerator is Σ_d Σ_{max(r,s) ≤ i < D} p^i/(i+1): one table of partial sums.
    """
    p = float(m.get("p"))
    rel = rel_threshold(m)
    n_rel = lists.num_relevant(rel)
    depth = np.maximum(lists.lengths, n_rel)
    head = _rbo_head(p, int(depth.max()) if depth.size else 0)
    hit = lists.labels >= rel
    both_from = np.maximum(lists.rank0[hit].astype(np.int64), _ideal_positions(lists, rel, hit))
    q = lists.row_query[hit]
    score = np.bincount(q, weights=head[depth[q]] - head[both_from], minlength=lists.num_queries)
    if m.get("normalize"):
        # the ideal against itself: its j-th document is in both prefixes from depth j on
        best = n_rel * head[depth] - _sum_head(head, n_rel)
        out = np.zeros(lists.num_queries)
        np.divide(score, best, out=out, where=best > 0)
        return out
    norm = (1.0 - np.power(p, depth.astype(np.float64))) / (1.0 - p)
    out = np.zeros(lists.num_queries)
    np.divide(score, norm, out=out, where=norm > 0)
    return out


def _sum_head(head: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Σ_{j<n} head[j] per query."""
    cum = np.concatenate(([0.0], np.cumsum(head)))
    return cum[n]


def accuracy(lists: RankedLists, m: Measure) -> np.ndarray:
    """Accuracy@k = 1 − Σ_{relevant d in the top k} (non-relevant above d) / (relevant · non-relevant); NA
    without a pair.

    The non-relevant documents above the relevant row at 0-based rank r are r minus the relevant above it.
    """
    rel = rel_threshold(m)
    top = within(lists, m.cutoff)
    hit = (lists.labels >= rel) & top
    miss = ~hit & top
    n_hit = lists.per_query_count(hit).astype(np.float64)
    n_miss = lists.per_query_count(miss).astype(np.float64)
    hits_above = segment_cumsum(hit.astype(np.float64), lists.offsets) - hit
    misses_above = np.where(hit, lists.rank0 - hits_above, 0.0)
    wrong = lists.per_query_sum(misses_above)
    pairs = n_hit * n_miss
    out = np.full(lists.num_queries, np.nan)
    np.divide(wrong, pairs, out=out, where=pairs > 0)
    return np.where(pairs > 0, 1.0 - out, np.nan)


AGREEMENT_KERNELS = {"Compat": compat, "Accuracy": accuracy}
