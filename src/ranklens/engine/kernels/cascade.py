"""User-model measures: ERR (cascade) and RBP with its residual."""

from __future__ import annotations

import numpy as np

from ranklens.engine.kernels._common import rel_threshold, segment_cumsum, within
from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure


def err(lists: RankedLists, m: Measure) -> np.ndarray:
    """ERR@k = Σ_r (1/r)·R_r·Π_{i<r}(1 − R_i), R_i = (2^g_i − 1)/2^max_rel (Chapelle et al. 2009).

    ``max_rel`` is the top grade of the scale; 0 means the largest label in the qrels.
    """
    top = int(m.get("max_rel")) or lists.max_label()
    g = np.clip(lists.labels, 0, top if top > 0 else None).astype(np.float64)
    stop = (np.exp2(g) - 1.0) / np.exp2(float(top))
    # Π_{i<r}(1 − R_i) via per-query cumulative sums of logs; a factor of 0 (R_i = 1) is counted apart
    full = stop >= 1.0
    log_cont = np.where(full, 0.0, np.log1p(-np.where(full, 0.0, stop)))
    logs = segment_cumsum(log_cont, lists.offsets) - log_cont
    zeros = segment_cumsum(full.astype(np.float64), lists.offsets) - full
    reach = np.where(zeros > 0, 0.0, np.exp(logs))
    term = stop * reach / (lists.rank0 + 1.0) * within(lists, m.cutoff)
    return lists.per_query_sum(term)


def _rbp_gain(lists: RankedLists, m: Measure) -> np.ndarray:
    top = int(m.get("max_rel"))
    lab = lists.labels
    if top == 0:
        return ((lab >= rel_threshold(m)) & (lab >= 0)).astype(np.float64)
    return np.clip(lab, 0, top).astype(np.float64) / top


def rbp(lists: RankedLists, m: Measure) -> np.ndarray:
    """RBP = (1 − p)·Σ_i r_i·p^(i−1) (Moffat & Zobel 2008), within the cutoff if one is given."""
    p = float(m.get("p"))
    w = (1.0 - p) * np.power(p, lists.rank0.astype(np.float64)) * within(lists, m.cutoff)
    return lists.per_query_sum(_rbp_gain(lists, m) * w)


def rbp_residual(lists: RankedLists, m: Measure) -> np.ndarray:
    """Moffat & Zobel's residual: (1 − p)·Σ_{unjudged i ≤ d} p^(i−1) + p^d, d = ranked depth."""
    p = float(m.get("p"))
    depth = lists.lengths.astype(np.float64)
    if m.cutoff is not None:
        depth = np.minimum(depth, m.cutoff)
    w = (1.0 - p) * np.power(p, lists.rank0.astype(np.float64)) * within(lists, m.cutoff)
    unjudged = lists.labels < 0
    return lists.per_query_sum(np.where(unjudged, w, 0.0)) + np.power(p, depth)
