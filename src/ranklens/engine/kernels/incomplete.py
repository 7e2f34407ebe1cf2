"""Measures for incomplete judgements: bpref and infAP, exactly as trec_eval computes them.

Retrieved documents not in the qrels (:data:`NONPOOL`) are skipped; documents with a negative qrels label
(:data:`UNJUDGED`, "pooled but unjudged") are skipped by bpref and counted as pooled-unjudged by infAP.
"""

from __future__ import annotations

import numpy as np

from ranklens.engine.kernels._common import rel_threshold, segment_cumsum
from ranklens.engine.ranked import UNJUDGED, RankedLists
from ranklens.measures.base import Measure

INFAP_EPSILON = 1e-5


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def bpref(lists: RankedLists, m: Measure) -> np.ndarray:
    """bpref (Buckley & Voorhees 2004, trec_eval form): (1/R)·Σ_{judged relevant r}
    (1 − min(#judged non-relevant above r, R) / min(N, R)), a term of 1 when none is above r;
    N = judged non-relevant documents in the qrels."""
    rel = rel_threshold(m)
    lab = lists.labels
    is_rel = lab >= max(rel, 0)
    is_nonrel = (lab >= 0) & (lab < rel)
    nonrel_above = segment_cumsum(is_nonrel.astype(np.float64), lists.offsets) - is_nonrel
    big_r = lists.num_relevant(rel).astype(np.float64)
    big_n = lists.num_judged_nonrelevant(rel).astype(np.float64)
    q = lists.row_query
    den = np.minimum(big_n, big_r)[q]
    frac = np.zeros_like(nonrel_above)
    np.divide(np.minimum(nonrel_above, big_r[q]), den, out=frac, where=den > 0)
    term = np.where(nonrel_above > 0, 1.0 - frac, 1.0)
    return _safe_div(lists.per_query_sum(np.where(is_rel, term, 0.0)), big_r)


def inf_ap(lists: RankedLists, m: Measure) -> np.ndarray:
    """infAP (Yilmaz & Aslam 2006) as trec_eval m_infap.c: for a judged relevant doc at 0-based index j,
    1 if j = 0, else 1/(j+1) + (j/(j+1))·((rel−1+nonrel+unj)/j)·((rel−1+ε)/(rel−1+nonrel+2ε)); sum / R."""
    rel_level = rel_threshold(m)
    lab = lists.labels
    is_rel = lab >= max(rel_level, 0)
    is_nonrel = (lab >= 0) & (lab < rel_level)
    is_unj = lab == UNJUDGED
    off = lists.offsets
    rel_so_far = segment_cumsum(is_rel.astype(np.float64), off)  # includes the current doc
    nonrel = segment_cumsum(is_nonrel.astype(np.float64), off)
    unj = segment_cumsum(is_unj.astype(np.float64), off)
    j = lists.rank0.astype(np.float64)
    a = rel_so_far - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((a + nonrel + unj) / j) * (
            (a + INFAP_EPSILON) / (a + nonrel + 2 * INFAP_EPSILON)
        )
    term = np.where(j == 0, 1.0, later)
    big_r = lists.num_relevant(rel_level).astype(np.float64)
    return _safe_div(lists.per_query_sum(np.where(is_rel, term, 0.0)), big_r)
