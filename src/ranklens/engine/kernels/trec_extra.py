"""Kernels for the trec_eval measures of :mod:`ranklens.measures.trec_families`.

Each kernel reproduces one ``m_*.c`` file of trec_eval v10.0 (named in its docstring), vectorised over
:class:`~ranklens.engine.ranked.RankedLists`: per-row arrays, per-query reductions with ``np.bincount``
(which adds in row order, as trec_eval's loops do) and no Python loop per query or per document (loops
run over recall levels at most).

Notation: ``n`` documents retrieved, ``R`` judged documents with label ≥ rel, ``RR`` of them retrieved,
``g*`` the query's positive ideal gains sorted descending (``P`` of them), ranks ``i`` 1-based.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ranklens.engine.kernels import binary, incomplete
from ranklens.engine.kernels._common import gains, rel_threshold, relevant, segment_cumsum, within
from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure

__all__ = ["NEG_NAN", "TREC_KERNELS"]

#: trec_eval (x86-64) prints 0/0 as ``-nan``: the default NaN has its sign bit set
NEG_NAN = float(np.copysign(np.nan, -1.0))


# --- primitives ----------------------------------------------------------------------------------------


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _counts(lists: RankedLists, rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, R, RR) per query as float64: retrieved, relevant judged, relevant retrieved."""
    n = lists.lengths.astype(np.float64)
    big_r = lists.num_relevant(rel).astype(np.float64)
    rr = lists.per_query_count(relevant(lists.labels, rel)).astype(np.float64)
    return n, big_r, rr


def lround(x: np.ndarray) -> np.ndarray:
    """C ``lround``: nearest integer, halves away from zero (exact: ``x − trunc(x)`` has no rounding)."""
    t = np.trunc(x)
    frac = x - t
    return (t + np.where(np.abs(frac) >= 0.5, np.sign(x), 0.0)).astype(np.int64)


def segment_suffix_max(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``max(values[j] for j ≥ i in i's segment)`` per element, exactly (no arithmetic on the values).

    Values are replaced by their rank among the distinct values, shifted so that later segments in the
    reversed array rank above earlier ones; one ``np.maximum.accumulate`` then yields every suffix max.
    """
    if values.size == 0:
        return values.astype(np.float64)
    uniq, code = np.unique(values, return_inverse=True)
    nseg = offsets.shape[0] - 1
    seg = np.repeat(np.arange(nseg, dtype=np.int64), np.diff(offsets))
    shift = (nseg - 1 - seg) * np.int64(uniq.size)
    acc = np.maximum.accumulate((code.astype(np.int64) + shift)[::-1])[::-1]
    return uniq[acc - shift]


def powers(p: float, upto: int) -> np.ndarray:
    """``p**i`` for ``i = 0..upto`` by repeated multiplication, as trec_eval's ``cur_p *= p``."""
    return np.cumprod(np.concatenate(([1.0], np.full(upto, p))))


def ideal_positive_gains(lists: RankedLists, gain: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The positive gains of each query's judged documents, descending: (gains, query, offsets)."""
    g = gains(lists.ideal_labels, gain)
    q = lists.ideal_query
    perm = np.lexsort((-g, q))
    g, q = g[perm], q[perm]
    keep = g > 0
    g, q = g[keep], q[keep]
    offsets = np.concatenate(([0], np.cumsum(np.bincount(q, minlength=lists.num_queries)))).astype(np.int64)
    return g, q, offsets


def _ideal_at_rows(lists: RankedLists, values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``values`` of the ideal position equal to each retrieved row's rank, clipped to the last one
    (NaN-free: rows of queries without ideal values get 0)."""
    count = np.diff(offsets)[lists.row_query]
    pos = offsets[:-1][lists.row_query] + np.minimum(lists.rank0, np.maximum(count - 1, 0))
    if values.size == 0:
        return np.zeros(lists.labels.shape[0])
    return np.where(count > 0, values[np.minimum(pos, values.size - 1)], 0.0)


def _last_per_segment(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The last element of each segment (0 for empty segments)."""
    counts = np.diff(offsets)
    out = np.zeros(counts.shape[0])
    nonempty = counts > 0
    out[nonempty] = values[offsets[1:][nonempty] - 1]
    return out


# --- interpolated precision ----------------------------------------------------------------------------


def iprec_levels(lists: RankedLists, levels: Sequence[float], rel: float) -> np.ndarray:
    """Interpolated precision at each recall level: a (queries × levels) matrix (m_iprec_at_recall.c).

    With c = lround(level·R): if 1 ≤ c ≤ RR, the best precision at any rank ≥ the rank of the c-th relevant
    document; if c ≤ 0, the best precision anywhere (RR/n = 0 when nothing relevant is retrieved, and
    0/0 = ``-nan`` when nothing is retrieved, as trec_eval); if c > RR, 0. Precision only peaks at relevant
    ranks, so the best precision below a rank is a suffix max over the relevant rows alone.
    """
    r = relevant(lists.labels, rel)
    cumrel = segment_cumsum(r.astype(np.float64), lists.offsets)
    rows = np.flatnonzero(r)
    prec = cumrel[rows] / (lists.rank0[rows] + 1.0)
    n, big_r, rr = _counts(lists, rel)
    roff = np.concatenate(([0], np.cumsum(rr.astype(np.int64))))
    best_below = segment_suffix_max(prec, roff)
    best = np.zeros(lists.num_queries)
    some = rr > 0
    best[some] = best_below[roff[:-1][some]]
    end = np.where(some, best, np.where(n > 0, 0.0, NEG_NAN))
    out = np.zeros((lists.num_queries, len(levels)))
    for j, level in enumerate(levels):
        c = lround(float(level) * big_r)
        reached = (c >= 1) & (c <= rr)
        at = np.zeros(lists.num_queries)
        at[reached] = best_below[roff[:-1][reached] + c[reached] - 1]
        out[:, j] = np.where(c <= 0, end, at)
    return out


def iprec(lists: RankedLists, m: Measure) -> np.ndarray:
    """IPrec(recall=x): interpolated precision at recall x (trec_eval iprec_at_recall, m_iprec_at_recall.c)."""
    return iprec_levels(lists, (float(m.get("recall")),), rel_threshold(m))[:, 0]


def iprec_avg(lists: RankedLists, m: Measure) -> np.ndarray:
    """IPrecAvg: (1/L)·Σ_levels IPrec, summed from the highest level down as trec_eval (m_11pt_avg.c)."""
    levels = tuple(m.get("recall"))
    mat = iprec_levels(lists, levels, rel_threshold(m))
    total = np.zeros(lists.num_queries)
    for j in reversed(range(len(levels))):
        total = total + mat[:, j]
    return total / float(len(levels))


# --- precision-like set and cutoff measures ------------------------------------------------------------


def rprec_mult(lists: RankedLists, m: Measure) -> np.ndarray:
    """RprecMult(mult=x): P@c with c = ⌊x·R + 0.9⌋, 0 when c = 0 (m_Rprec_mult.c)."""
    rel = rel_threshold(m)
    big_r = lists.num_relevant(rel).astype(np.float64)
    c = np.trunc(float(m.get("mult")) * big_r + 0.9)
    top = lists.rank0 < c[lists.row_query]
    hits = lists.per_query_count(relevant(lists.labels, rel) & top).astype(np.float64)
    return _safe_div(hits, c)


def relative_p(lists: RankedLists, m: Measure) -> np.ndarray:
    """RelativeP@k = #relevant in top k / min(k, R); 0 when R = 0 (m_rel_P.c)."""
    rel = rel_threshold(m)
    k = float(m.cutoff)  # type: ignore[arg-type]
    big_r = lists.num_relevant(rel).astype(np.float64)
    hits = lists.per_query_count(relevant(lists.labels, rel) & within(lists, m.cutoff)).astype(np.float64)
    return _safe_div(hits, np.minimum(k, big_r))


def set_p(lists: RankedLists, m: Measure) -> np.ndarray:
    """SetP = RR / n; 0 when n = 0 (m_set_P.c)."""
    n, _, rr = _counts(lists, rel_threshold(m))
    return _safe_div(rr, n)


def set_relative_p(lists: RankedLists, m: Measure) -> np.ndarray:
    """SetRelativeP = RR / min(n, R); 0 when n = 0 or R = 0 (m_set_rel_P.c)."""
    n, big_r, rr = _counts(lists, rel_threshold(m))
    return _safe_div(rr, np.minimum(n, big_r))


def set_ap(lists: RankedLists, m: Measure) -> np.ndarray:
    """SetAP = RR² / (n·R); 0 when n = 0 or R = 0 (m_set_map.c)."""
    n, big_r, rr = _counts(lists, rel_threshold(m))
    return _safe_div(rr * rr, n * big_r)


def set_f(lists: RankedLists, m: Measure) -> np.ndarray:
    """SetF(beta2=x) = (x+1)·P·R / (x·P + R) with P = RR/n, R = RR/R; 0 when RR = 0 (m_set_F.c)."""
    n, big_r, rr = _counts(lists, rel_threshold(m))
    x = float(m.get("beta2"))
    prec = _safe_div(rr, n)
    rec = _safe_div(rr, big_r)
    return np.where(rr > 0, _safe_div((x + 1.0) * prec * rec, x * prec + rec), 0.0)


def utility(lists: RankedLists, m: Measure) -> np.ndarray:
    """Utility = a·RR + b·(n − RR) + c·(R − RR) + d·(N + RR − n − R), N = num_docs (m_utility.c)."""
    n, big_r, rr = _counts(lists, rel_threshold(m))
    a, b, c, d = (float(m.get(k)) for k in "abcd")
    big_n = float(m.get("num_docs"))
    return a * rr + b * (n - rr) + c * (big_r - rr) + d * (big_n + rr - n - big_r)


def unjudged(lists: RankedLists, m: Measure) -> np.ndarray:
    """Unjudged@k = #(label < 0 in the top k) / k; ranks past the end count as judged (m_unjudged.c)."""
    count = lists.per_query_count((lists.labels < 0) & within(lists, m.cutoff)).astype(np.float64)
    return count / float(m.cutoff)  # type: ignore[arg-type]


def num_nonrel_judged_ret(lists: RankedLists, m: Measure) -> np.ndarray:
    """#retrieved with 0 ≤ label < rel (m_num_nonrel_judged_ret.c)."""
    lab = lists.labels
    return lists.per_query_count((lab >= 0) & (lab < rel_threshold(m))).astype(np.float64)


# --- gain-based measures -------------------------------------------------------------------------------


def bin_g(lists: RankedLists, m: Measure) -> np.ndarray:
    """BinG = (1/R)·Σ_{relevant retrieved} 1/log2(2 + #non-relevant above it); 0 if none retrieved
    (m_binG.c)."""
    rel = rel_threshold(m)
    r = relevant(lists.labels, rel)
    cumrel = segment_cumsum(r.astype(np.float64), lists.offsets)
    arg = np.where(r, 3.0 + lists.rank0 - cumrel, 2.0)
    total = lists.per_query_sum(np.where(r, 1.0 / np.log2(arg), 0.0))
    _, big_r, rr = _counts(lists, rel)
    return np.where(rr > 0, _safe_div(total, big_r), 0.0)


def g_measure(lists: RankedLists, m: Measure) -> np.ndarray:
    """G = Σ_i g_i / log2(2 + C_i − S_i) / Σ g*, with S_i = Σ_{j≤i} g_j, C_i = Σ_{j≤i} max(g*_j, 1) and
    g*_j = 0 past the ideal (m_G.c)."""
    gain = m.get("gain")
    g = gains(lists.labels, gain)
    ig, _, ioff = ideal_positive_gains(lists, gain)
    star = np.where(lists.rank0 < np.diff(ioff)[lists.row_query], _ideal_at_rows(lists, ig, ioff), 0.0)
    cost = segment_cumsum(np.maximum(star, 1.0), lists.offsets)
    got = segment_cumsum(g, lists.offsets)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(g != 0, g / np.log2(2.0 + cost - got), 0.0)
    total = lists.per_query_sum(term)
    ideal = np.bincount(np.repeat(np.arange(lists.num_queries), np.diff(ioff)), weights=ig, minlength=lists.num_queries)
    return np.where(ideal > 0, _safe_div(total, ideal), 0.0)


def _dcg_parts(lists: RankedLists, gain: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Row gains, running DCG per row (inclusive), running IDCG per ideal position (inclusive), the
    positive ideal gains and their offsets."""
    g = gains(lists.labels, gain)
    contrib = np.where(g != 0, g / np.log2(lists.rank0 + 2.0), 0.0)
    dcg_run = segment_cumsum(contrib, lists.offsets)
    ig, _, ioff = ideal_positive_gains(lists, gain)
    irank = np.arange(ig.size) - np.repeat(ioff[:-1], np.diff(ioff))
    idcg_run = segment_cumsum(ig / np.log2(irank + 2.0), ioff)
    return g, dcg_run, idcg_run, ig, ioff


def ndcg_rel(lists: RankedLists, m: Measure) -> np.ndarray:
    """nDCGRel = (1/P)·[Σ_{retrieved, g>0} DCG@i/IDCG@i + (P − #retrieved with g>0)·DCG/IDCG]; 0 unless
    the sum is positive (m_ndcg_rel.c)."""
    g, dcg_run, idcg_run, _, ioff = _dcg_parts(lists, m.get("gain"))
    pos = g > 0
    idcg_row = _ideal_at_rows(lists, idcg_run, ioff)
    at_rel = lists.per_query_sum(np.where(pos, _safe_div(dcg_run, idcg_row), 0.0))
    big_p = np.diff(ioff).astype(np.float64)
    dcg_full = _last_per_segment(dcg_run, lists.offsets)
    idcg_full = _last_per_segment(idcg_run, ioff)
    missing = big_p - lists.per_query_count(pos)
    total = at_rel + _safe_div(missing * dcg_full, idcg_full)
    return np.where(total > 0, _safe_div(total, big_p), 0.0)


def rndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """RnDCG: mean of DCG@min(i,n)/IDCG@i over the ideal positions i where the ideal gain changes
    (g*_i ≠ g*_{i−1}, including i = P), plus DCG/IDCG at the end when n > P + 1; 0 when R = 0
    (m_Rndcg.c)."""
    _, dcg_run, idcg_run, ig, ioff = _dcg_parts(lists, m.get("gain"))
    nq = lists.num_queries
    big_p = np.diff(ioff)
    n = lists.lengths
    iq = np.repeat(np.arange(nq), big_p)
    # an event sits on ideal position j (0-based) when the next ideal gain differs (or j is the last)
    last = np.zeros(ig.size, dtype=bool)
    last[ioff[1:][big_p > 0] - 1] = True
    event = last.copy()
    event[:-1] |= ig[1:] != ig[:-1]
    j = np.arange(ig.size) - ioff[:-1][iq]
    dcg_full = _last_per_segment(dcg_run, lists.offsets)
    reached = (j + 1) < n[iq]
    row = np.minimum(lists.offsets[:-1][iq] + j, max(dcg_run.size - 1, 0))
    dcg_at = np.where(reached, dcg_run[row] if dcg_run.size else 0.0, dcg_full[iq])
    contrib = np.where(event, _safe_div(dcg_at, idcg_run), 0.0)
    total = np.bincount(iq, weights=contrib, minlength=nq)
    count = np.bincount(iq, weights=event.astype(np.float64), minlength=nq)
    tail = (n > big_p + 1) & (big_p > 0)
    idcg_full = _last_per_segment(idcg_run, ioff)
    total = total + np.where(tail, _safe_div(dcg_full, idcg_full), 0.0)
    count = count + tail
    big_r = lists.num_relevant(rel_threshold(m))
    value = np.where(count > 0, _safe_div(total, count), NEG_NAN)
    return np.where(big_r > 0, value, 0.0)


# --- trec_eval's RBP ------------------------------------------------------------------------------------


def _gain_table_bounds(lists: RankedLists, gain: object) -> tuple[np.ndarray, np.ndarray]:
    """Per query, min and max gain of trec_eval's gain table: levels 0..L_q (L_q the largest non-negative
    judged label) plus every level named in the gain map (gain_init.c setup_gains)."""
    lab = lists.ideal_labels
    judged = lab >= 0
    top = np.full(lists.num_queries, -1, dtype=np.int64)
    np.maximum.at(top, lists.ideal_query[judged], lab[judged].astype(np.int64))
    named = dict(gain) if isinstance(gain, tuple) else {}
    levels = np.arange(int(top.max()) + 1 if top.size else 0)
    level_gain = gains(levels, gain)
    free = ~np.isin(levels, list(named))
    lo = np.minimum.accumulate(np.where(free, level_gain, np.inf)) if levels.size else np.zeros(0)
    hi = np.maximum.accumulate(np.where(free, level_gain, -np.inf)) if levels.size else np.zeros(0)
    has = top >= 0
    gmin = np.where(has, lo[np.maximum(top, 0)] if lo.size else np.inf, np.inf)
    gmax = np.where(has, hi[np.maximum(top, 0)] if hi.size else -np.inf, -np.inf)
    if named:
        gmin = np.minimum(gmin, min(named.values()))
        gmax = np.maximum(gmax, max(named.values()))
    return gmin, gmax


def trec_rbp(lists: RankedLists, m: Measure) -> np.ndarray:
    """TrecRBP = (1−p)·Σ_i g'(label_i)·p^(i−1), g' the gain table min–max normalised when any gain is
    outside [0,1] (m_rbp.c with min/max taken over the table; see the trec_eval module for the
    uninitialised-variable bug of v10.0)."""
    p = float(m.get("p"))
    gain = m.get("gain")
    g = gains(lists.labels, gain)
    gmin, gmax = _gain_table_bounds(lists, gain)
    q = lists.row_query
    scale = (gmin < 0) | (gmax > 1)
    in_table = lists.labels >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(scale[q] & in_table, (g - gmin[q]) / (gmax[q] - gmin[q]), g)
    pw = powers(p, int(lists.lengths.max()) if lists.num_queries else 0)
    total = lists.per_query_sum(np.where(g != 0, g * pw[lists.rank0], 0.0))
    return (1.0 - p) * total


def trec_rbp_residual(lists: RankedLists, m: Measure) -> np.ndarray:
    """TrecRBPResidual = p^n + (1−p)·Σ_{unjudged i} p^(i−1) when some retrieved document is unjudged
    (label < 0), else 0 (m_rbp_resid.c)."""
    p = float(m.get("p"))
    unj = lists.labels < 0
    n = lists.lengths
    pw = powers(p, int(n.max()) if n.size else 0)
    total = lists.per_query_sum(np.where(unj, pw[lists.rank0], 0.0))
    has = lists.per_query_count(unj) > 0
    return np.where(has, pw[n] + (1.0 - p) * total, 0.0)


TREC_KERNELS = {
    "IPrec": iprec,
    "IPrecAvg": iprec_avg,
    "GMAP": binary.average_precision,
    "GMBpref": incomplete.bpref,
    "RprecMult": rprec_mult,
    "Utility": utility,
    "BinG": bin_g,
    "G": g_measure,
    "nDCGRel": ndcg_rel,
    "RnDCG": rndcg,
    "RelativeP": relative_p,
    "SetP": set_p,
    "SetRelativeP": set_relative_p,
    "SetAP": set_ap,
    "SetF": set_f,
    "Unjudged": unjudged,
    "NumNonRelJudgedRet": num_nonrel_judged_ret,
    "TrecRBP": trec_rbp,
    "TrecRBPResidual": trec_rbp_residual,
}
