"""Binary-relevance measures: P, R, RR, AP, R-precision, Success, Judged and the counts.

A retrieved document is relevant when its label is ≥ ``rel`` (default 1; negative labels never are;
with real-valued labels ``rel`` may be any number and has no default: :mod:`ranklens.engine.labels`).
With ``ties=average`` each value is the expectation over all orderings of tied documents
(McSherry & Najork, ECIR 2008; closed forms in spec §3, checked against brute force in the tests).
"""

from __future__ import annotations

import numpy as np

from ranklens.engine.kernels._common import rel_threshold, relevant, segment_cumsum, tie_groups, within
from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _averaged(m: Measure) -> bool:
    return any(k == "ties" and v == "average" for k, v in m.params)


def expected_relevant_in_top(lists: RankedLists, rel: float, k: int | None) -> np.ndarray:
    """E[#relevant in top k] per query, averaging over tied orderings: Σ_g r_g·|group ∩ top k|/n_g."""
    r = relevant(lists.labels, rel).astype(np.float64)
    gid, gstart = tie_groups(lists)
    if r.size == 0:
        return np.zeros(lists.num_queries)
    sizes = np.diff(gstart)
    r_g = np.bincount(gid, weights=r)
    in_top = np.bincount(gid, weights=within(lists, k).astype(np.float64))
    group_query = lists.row_query[gstart[:-1]]
    return np.bincount(group_query, weights=r_g * in_top / sizes, minlength=lists.num_queries)


def relevant_in_top(lists: RankedLists, m: Measure) -> np.ndarray:
    """#relevant in the top k per query (expected value with ties=average)."""
    rel = rel_threshold(m)
    if _averaged(m):
        return expected_relevant_in_top(lists, rel, m.cutoff)
    return lists.per_query_count(relevant(lists.labels, rel) & within(lists, m.cutoff)).astype(np.float64)


def precision(lists: RankedLists, m: Measure) -> np.ndarray:
    """P@k = #relevant in top k / k (missing ranks count as non-relevant)."""
    return relevant_in_top(lists, m) / float(m.cutoff)  # type: ignore[arg-type]


def recall(lists: RankedLists, m: Measure) -> np.ndarray:
    """R@k = #relevant in top k / R; 0 when R = 0."""
    return _safe_div(relevant_in_top(lists, m), lists.num_relevant(rel_threshold(m)).astype(np.float64))


def num_rel_ret(lists: RankedLists, m: Measure) -> np.ndarray:
    """#relevant retrieved (within the cutoff)."""
    return relevant_in_top(lists, m.with_defaults(ties="trec"))


def num_ret(lists: RankedLists, m: Measure) -> np.ndarray:
    """#retrieved (within the cutoff)."""
    n = lists.lengths.astype(np.float64)
    return np.minimum(n, m.cutoff) if m.cutoff is not None else n


def num_rel(lists: RankedLists, m: Measure) -> np.ndarray:
    """#relevant judged documents R."""
    return lists.num_relevant(rel_threshold(m)).astype(np.float64)


def num_q(lists: RankedLists, m: Measure) -> np.ndarray:
    """1 per evaluated query."""
    return np.ones(lists.num_queries)


def success(lists: RankedLists, m: Measure) -> np.ndarray:
    """1 if any relevant document is in the top k (probability of it with ties=average)."""
    rel = rel_threshold(m)
    if not _averaged(m):
        return (lists.per_query_count(relevant(lists.labels, rel) & within(lists, m.cutoff)) > 0).astype(np.float64)
    return 1.0 - _prob_none_relevant_in_top(lists, rel, m.cutoff)


def judged(lists: RankedLists, m: Measure) -> np.ndarray:
    """Fraction of the top k retrieved documents with a non-negative judgement (0 if none retrieved)."""
    top = within(lists, m.cutoff)
    count = lists.per_query_count((lists.labels >= 0) & top).astype(np.float64)
    return _safe_div(count, np.minimum(lists.lengths, m.cutoff).astype(np.float64))  # type: ignore[arg-type]


def reciprocal_rank(lists: RankedLists, m: Measure) -> np.ndarray:
    """1 / rank of the first relevant document within the cutoff; 0 if none."""
    rel = rel_threshold(m)
    if _averaged(m):
        return _tie_averaged_rr(lists, rel, m.cutoff)
    hit = relevant(lists.labels, rel) & within(lists, m.cutoff)
    rows = np.flatnonzero(hit)
    out = np.zeros(lists.num_queries)
    q, first = np.unique(lists.row_query[rows], return_index=True)
    out[q] = 1.0 / (lists.rank0[rows[first]] + 1.0)
    return out


def average_precision(lists: RankedLists, m: Measure) -> np.ndarray:
    """AP@k = Σ_{relevant i ≤ k} P@i / R (trec_eval map / map_cut.k); 0 when R = 0."""
    rel = rel_threshold(m)
    r = relevant(lists.labels, rel)
    top = within(lists, m.cutoff)
    rank = lists.rank0 + 1.0
    if _averaged(m):
        contrib = _tie_averaged_ap_terms(lists, r, rank)
    else:
        cum = segment_cumsum(r.astype(np.float64), lists.offsets)
        contrib = np.where(r, cum / rank, 0.0)
    total = lists.per_query_sum(np.where(top, contrib, 0.0))
    return _safe_div(total, lists.num_relevant(rel).astype(np.float64))


def r_precision(lists: RankedLists, m: Measure) -> np.ndarray:
    """R-precision: #relevant in the top R / R; 0 when R = 0."""
    rel = rel_threshold(m)
    big_r = lists.num_relevant(rel)
    top = lists.rank0 < big_r[lists.row_query]
    count = lists.per_query_count(relevant(lists.labels, rel) & top).astype(np.float64)
    return _safe_div(count, big_r.astype(np.float64))


# --- tie-averaged closed forms (spec §3) ------------------------------------------------------------


def _group_stats(lists: RankedLists, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: group size n_g, relevant in group r_g, position within group (0-based), and R_<g."""
    gid, gstart = tie_groups(lists)
    sizes = np.diff(gstart)
    r_g = np.bincount(gid, weights=r.astype(np.float64), minlength=sizes.size)
    pos = np.arange(r.size) - gstart[:-1][gid]
    # relevant docs in earlier groups of the same query
    group_query = lists.row_query[gstart[:-1]]
    q_counts = np.bincount(group_query, minlength=lists.num_queries)
    q_off = np.concatenate(([0], np.cumsum(q_counts)))
    cum = segment_cumsum(r_g, q_off)
    before = cum - r_g
    return sizes[gid].astype(np.float64), r_g[gid], pos.astype(np.float64), before[gid]


def _tie_averaged_ap_terms(lists: RankedLists, r: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """E[rel_j · P@j] per row j: (r_g/n_g)·(R_<g + 1 + pos·(r_g−1)/(n_g−1)) / j."""
    if r.size == 0:
        return np.zeros(0)
    n_g, r_g, pos, before = _group_stats(lists, r)
    inner = np.zeros_like(n_g)
    np.divide(r_g - 1.0, n_g - 1.0, out=inner, where=n_g > 1)
    return (r_g / n_g) * (before + 1.0 + pos * inner) / rank


def _log_prob_none_in_first(n_g: np.ndarray, r_g: np.ndarray, pos: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """log P(no relevant among the first pos+1 members of the group), per row (hypergeometric)."""
    num = n_g - r_g - pos
    zero = num <= 0
    with np.errstate(divide="ignore"):
        term = np.where(zero, 0.0, np.log(np.where(zero, 1.0, num)) - np.log(n_g - pos))
    # cumulative within each group (groups are contiguous and restart at pos == 0); a zero factor
    # makes every later prefix probability 0, tracked as a count so no -inf enters the sums
    group_off = np.concatenate((np.flatnonzero(pos == 0), [pos.size]))
    logs = segment_cumsum(term, group_off)
    zeros = segment_cumsum(zero.astype(np.float64), group_off)
    return np.where(zeros > 0, -np.inf, logs)


def _prob_none_relevant_in_top(lists: RankedLists, rel: float, k: int | None) -> np.ndarray:
    r = relevant(lists.labels, rel)
    out = np.ones(lists.num_queries)
    if r.size == 0:
        return out
    n_g, r_g, pos, before = _group_stats(lists, r)
    logp = _log_prob_none_in_first(n_g, r_g, pos, lists.offsets)
    top = within(lists, k)
    # the last row within the cutoff of each query decides: no relevant before its group and none in
    # the group's members up to it
    rows = np.flatnonzero(top)
    if rows.size == 0:
        return out
    q = lists.row_query[rows]
    last = rows[np.concatenate((np.flatnonzero(q[1:] != q[:-1]), [q.size - 1]))]
    p_none = np.where(before[last] > 0, 0.0, np.exp(logp[last]))
    out[lists.row_query[last]] = p_none
    return out


def _tie_averaged_rr(lists: RankedLists, rel: float, k: int | None) -> np.ndarray:
    """E[RR@k]: in the first group holding a relevant document, the first relevant sits at member j with
    probability C(n−j, r−1)/C(n, r) = P(none in first j−1)·r/(n−j+1)."""
    r = relevant(lists.labels, rel)
    if r.size == 0:
        return np.zeros(lists.num_queries)
    n_g, r_g, pos, before = _group_stats(lists, r)
    logp = _log_prob_none_in_first(n_g, r_g, pos, lists.offsets)
    log_prev = np.where(pos == 0, 0.0, np.concatenate(([0.0], logp[:-1])))
    first_group = (before == 0) & (r_g > 0)
    p_first_here = np.where(first_group, np.exp(log_prev) * r_g / (n_g - pos), 0.0)
    term = p_first_here / (lists.rank0 + 1.0) * within(lists, k)
    return lists.per_query_sum(term)
