"""Kernels of the intent-aware measures (ndeval's set; definitions in :mod:`ranklens.measures.diversity`).

Every kernel reads the ranked lists and their :class:`~ranklens.engine.kernels.diversity.IntentPairs`: which
intents each retrieved row covers, and the judged candidates of the greedy ideal. S is the number of intents
of a query with at least one relevant document (ndeval's "actual subtopics"); every measure is 0 when S = 0.
Per-row quantities come from one pass over the (row, intent) pairs sorted by (intent, rank); sums per query
are bincounts; the greedy ideal runs one vectorised step per rank (:func:`greedy_ideal_gains`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ranklens.engine.kernels.diversity import IntentPairs, alpha_dcg_rows, alpha_ndcg_values, greedy_ideal_gains
from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure

__all__ = ["INTENT_KERNELS", "IntentKernel", "intents_per_query"]

IntentKernel = Callable[[RankedLists, IntentPairs, Measure], np.ndarray]


def intents_per_query(lists: RankedLists, pairs: IntentPairs) -> np.ndarray:
    """S per query: its intents with a relevant document."""
    return np.bincount(pairs.intent_query, minlength=lists.num_queries).astype(np.float64)


def _per_s(lists: RankedLists, pairs: IntentPairs, total: np.ndarray, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """total / (S·scale) per query, 0 where S = 0."""
    den = intents_per_query(lists, pairs) * scale
    out = np.zeros(lists.num_queries)
    np.divide(total, den, out=out, where=den > 0)
    return out


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.shape[0])
    np.divide(num, den, out=out, where=den > 0)
    return out


def _gains(lists: RankedLists, pairs: IntentPairs, alpha: float) -> np.ndarray:
    return alpha_dcg_rows(pairs.row, pairs.row_intent, lists.labels.shape[0], alpha)


def _first_cover(pairs: IntentPairs) -> np.ndarray:
    """Mask of the (row, intent) pairs that cover their intent for the first time (pairs sorted by intent, rank)."""
    new = np.ones(pairs.row_intent.shape[0], dtype=bool)
    new[1:] = pairs.row_intent[1:] != pairs.row_intent[:-1]
    return new


def _ideal_ideal(alpha: float, k: int, discount: np.ndarray) -> float:
    """Σ_{i<k} (1 − α)^i·discount_i: the gain of one intent covered at every rank (ndeval's "ideal ideal")."""
    return float((np.power(1.0 - alpha, np.arange(k, dtype=np.float64)) * discount[:k]).sum())


def alpha_dcg(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """α-DCG@k / (S·Σ_{i≤k} (1−α)^(i−1)/log2(i+1)) (ndeval's normalisation by the "ideal ideal")."""
    alpha, k = float(m.get("alpha")), int(m.cutoff or 0)
    inside = lists.rank0 < k
    disc = 1.0 / np.log2(np.arange(k, dtype=np.float64) + 2.0)
    dcg = lists.per_query_sum(np.where(inside, _gains(lists, pairs, alpha) / np.log2(lists.rank0 + 2.0), 0.0))
    return _per_s(lists, pairs, dcg, _ideal_ideal(alpha, k, disc))


def _err_sum(lists: RankedLists, pairs: IntentPairs, alpha: float, k: int) -> np.ndarray:
    inside = lists.rank0 < k
    return lists.per_query_sum(np.where(inside, _gains(lists, pairs, alpha) / (lists.rank0 + 1.0), 0.0))


def err_ia(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """ERR-IA@k = Σ_{j≤k} G[j]/j / (S·Σ_{j≤k} (1−α)^(j−1)/j) (ndeval)."""
    alpha, k = float(m.get("alpha")), int(m.cutoff or 0)
    disc = 1.0 / (np.arange(k, dtype=np.float64) + 1.0)
    return _per_s(lists, pairs, _err_sum(lists, pairs, alpha, k), _ideal_ideal(alpha, k, disc))


def _ideal(lists: RankedLists, pairs: IntentPairs, alpha: float, k: int) -> np.ndarray:
    return greedy_ideal_gains(
        pairs.cand_query, pairs.pair_cand, pairs.pair_intent, lists.num_queries, pairs.num_intents, k, alpha
    )


def nerr_ia(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """nERR-IA@k = Σ_{j≤k} G[j]/j over the same sum for the greedy ideal."""
    alpha, k = float(m.get("alpha")), int(m.cutoff or 0)
    ideal = (_ideal(lists, pairs, alpha, k) / (np.arange(k) + 1.0)).sum(axis=1)
    return _ratio(_err_sum(lists, pairs, alpha, k), ideal)


def _rbp_sum(lists: RankedLists, pairs: IntentPairs, alpha: float, beta: float) -> np.ndarray:
    return lists.per_query_sum(_gains(lists, pairs, alpha) * np.power(beta, lists.rank0.astype(np.float64)))


def nrbp(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """NRBP = (1 − (1−α)β)/S · Σ_j β^(j−1)·G[j] over the whole ranking (Clarke et al., ICTIR 2009)."""
    alpha, beta = float(m.get("alpha")), float(m.get("beta"))
    return _per_s(lists, pairs, _rbp_sum(lists, pairs, alpha, beta) * (1.0 - (1.0 - alpha) * beta))


def nnrbp(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """nNRBP = NRBP / NRBP of the greedy ideal of every judged document (0 when that is 0)."""
    alpha, beta = float(m.get("alpha")), float(m.get("beta"))
    depth = int(np.bincount(pairs.cand_query).max()) if pairs.cand_query.size else 0
    ideal = (_ideal(lists, pairs, alpha, depth) * np.power(beta, np.arange(depth, dtype=np.float64))).sum(axis=1)
    return _ratio(_rbp_sum(lists, pairs, alpha, beta), ideal)


def p_ia(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """P-IA@k = (1/S)·Σ_intents P@k of the intent = Σ_{j≤k} |intents of d_j| / (k·S)."""
    k = int(m.cutoff or 0)
    covered = np.bincount(pairs.row, minlength=lists.labels.shape[0]).astype(np.float64)
    return _per_s(lists, pairs, lists.per_query_sum(np.where(lists.rank0 < k, covered, 0.0)), float(k))


def st_recall(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """StRecall@k (subtopic recall) = |intents covered by the top k| / S (Zhai, Cohen & Lafferty, SIGIR 2003)."""
    k = int(m.cutoff or 0)
    first = _first_cover(pairs)
    new = np.bincount(pairs.row[first], minlength=lists.labels.shape[0]).astype(np.float64)
    return _per_s(lists, pairs, lists.per_query_sum(np.where(lists.rank0 < k, new, 0.0)))


def ap_ia(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """AP-IA = (1/S)·Σ_intents AP of the intent, over the whole ranking (ndeval's MAP-IA per query)."""
    n = pairs.row_intent.shape[0]
    if n == 0:
        return np.zeros(lists.num_queries)
    first = _first_cover(pairs)
    starts = np.flatnonzero(first)
    seen = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))  # relevant above, same intent
    precision = (seen + 1.0) / (lists.rank0[pairs.row] + 1.0)
    per_intent = np.bincount(pairs.row_intent, weights=precision, minlength=pairs.num_intents)
    relevant = np.bincount(pairs.pair_intent, minlength=pairs.num_intents).astype(np.float64)
    ap = _ratio(per_intent, relevant)
    return _per_s(lists, pairs, np.bincount(pairs.intent_query, weights=ap, minlength=lists.num_queries))


INTENT_KERNELS: dict[str, IntentKernel] = {
    "alpha-nDCG": alpha_ndcg_values,
    "alpha-DCG": alpha_dcg,
    "ERR-IA": err_ia,
    "nERR-IA": nerr_ia,
    "NRBP": nrbp,
    "nNRBP": nnrbp,
    "P-IA": p_ia,
    "AP-IA": ap_ia,
    "StRecall": st_recall,
}
