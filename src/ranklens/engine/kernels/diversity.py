"""Kernels of α-nDCG@k (Clarke et al., SIGIR 2008; spec §7.10) over :class:`RankedLists` and intent coverage.

α-nDCG reads more than the ranked labels: which intents each document covers. The caller
(:func:`ranklens.diversity.evaluate_diversity`) joins the intent-level qrels to the ranked lists and hands
the result over as :class:`IntentPairs`; everything here is numpy over those arrays. The greedy ideal runs
one vectorised step per rank (k steps), each over all queries at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure

__all__ = ["IntentPairs", "alpha_dcg_rows", "alpha_ndcg_values", "greedy_ideal_gains"]


@dataclass(frozen=True, eq=False)
class IntentPairs:
    """(document, intent) coverage: for retrieved rows and for the judged candidates of the ideal."""

    row: np.ndarray
    """retrieved row of each (row, intent) pair, sorted by (intent, rank)"""
    row_intent: np.ndarray
    """global (query, intent) code of each pair"""
    cand_query: np.ndarray
    """query of each candidate document, sorted by (query, doc id ascending)"""
    pair_cand: np.ndarray
    """candidate of each (candidate, intent) pair"""
    pair_intent: np.ndarray
    """global (query, intent) code of each (candidate, intent) pair"""
    num_intents: int
    intent_query: np.ndarray
    """query of each (query, intent) code: the intents a query has (S, ndeval's actual subtopics) are those
    with a relevant document"""


def alpha_dcg_rows(pairs_row: np.ndarray, pairs_intent: np.ndarray, num_rows: int, alpha: float) -> np.ndarray:
    """G[j] of every retrieved row, from its (row, intent) pairs sorted by (intent, rank).

    The c-th coverage of an intent (0-based) gains (1 − α)^c.

    >>> alpha_dcg_rows(np.array([0, 1, 1, 3]), np.array([0, 0, 1, 1]), 4, 0.5).tolist()
    [1.0, 1.5, 0.0, 0.5]
    """
    if pairs_row.size == 0:
        return np.zeros(num_rows)
    new = np.ones(pairs_intent.shape[0], dtype=bool)
    new[1:] = pairs_intent[1:] != pairs_intent[:-1]
    starts = np.flatnonzero(new)
    seen_before = np.arange(pairs_intent.shape[0]) - np.repeat(starts, np.diff(np.append(starts, pairs_intent.shape[0])))
    return np.bincount(pairs_row, weights=np.power(1.0 - alpha, seen_before), minlength=num_rows)


def greedy_ideal_gains(
    cand_query: np.ndarray, pair_cand: np.ndarray, pair_intent: np.ndarray, num_queries: int, num_intents: int,
    k: int, alpha: float,
) -> np.ndarray:
    """(queries × k) marginal gains of the greedy ideal; candidates sorted by (query, doc id ascending).

    Each step picks, in every query at once, the unused candidate with the largest marginal gain
    Σ_{its intents} (1 − α)^{times covered so far}; equal gains (to 12 decimals) go to the larger doc id in
    byte order, as ndeval's ``idealResult`` breaks them.

    >>> # spec §7.10: candidates d1{i1,i2}, d2{i1}, d3{i3}, d5{i2,i3} of one query
    >>> greedy_ideal_gains(np.zeros(4, int), np.array([0, 0, 1, 2, 3, 3]), np.array([0, 1, 0, 2, 1, 2]),
    ...                    1, 3, 5, 0.5).tolist()
    [[2.0, 1.5, 0.5, 0.5, 0.0]]

    A tie that matters: a{i1, i3}, b{i1}, c{i0, i2}, d{i0, i3}, α = 0.5. a, c and d tie at 2; ndeval takes d,
    then c and a tie at 1.5 and c is taken: 2, 1.5, 1.5, 0.5 (the smallest id first would give 2, 2, 1, 0.5).

    >>> greedy_ideal_gains(np.zeros(4, int), np.array([0, 0, 1, 2, 2, 3, 3]), np.array([1, 3, 1, 0, 2, 0, 3]),
    ...                    1, 4, 4, 0.5).tolist()
    [[2.0, 1.5, 1.5, 0.5]]
    """
    out = np.zeros((num_queries, k))
    ncand = cand_query.shape[0]
    if ncand == 0 or k == 0:
        return out
    covered = np.zeros(num_intents)
    used = np.zeros(ncand, dtype=bool)
    starts = np.flatnonzero(np.concatenate(([True], cand_query[1:] != cand_query[:-1])))
    segment = np.repeat(np.arange(starts.shape[0]), np.diff(np.append(starts, ncand)))
    decay = 1.0 - alpha
    for rank in range(k):  # one vectorised step per rank, over every query
        gain = np.bincount(pair_cand, weights=np.power(decay, covered[pair_intent]), minlength=ncand)
        key = np.where(used, -1.0, np.round(gain, 12))
        best = np.maximum.reduceat(key, starts)
        if not (best > 0).any():
            break
        is_best = (key == best[segment]) & (key > 0)
        chosen_all = np.flatnonzero(is_best)  # (ascending: the last of each query is its largest doc id)
        last = np.append(cand_query[chosen_all][1:] != cand_query[chosen_all][:-1], True)
        chosen = chosen_all[last]
        out[cand_query[chosen], rank] = gain[chosen]
        used[chosen] = True
        picked = np.isin(pair_cand, chosen)
        np.add.at(covered, pair_intent[picked], 1.0)
    return out


def alpha_ndcg_values(lists: RankedLists, pairs: IntentPairs, m: Measure) -> np.ndarray:
    """α-nDCG@k of every query: α-DCG@k / α-IDCG@k of the greedy ideal (0 when α-IDCG@k = 0)."""
    alpha = float(m.get("alpha"))
    k = int(m.cutoff or 0)
    g = alpha_dcg_rows(pairs.row, pairs.row_intent, lists.labels.shape[0], alpha)
    inside = lists.rank0 < k
    dcg = lists.per_query_sum(np.where(inside, g / np.log2(lists.rank0 + 2.0), 0.0))
    ideal = greedy_ideal_gains(
        pairs.cand_query, pairs.pair_cand, pairs.pair_intent, lists.num_queries, pairs.num_intents, k, alpha
    )
    idcg = (ideal / np.log2(np.arange(k) + 2.0)).sum(axis=1)
    out = np.zeros(lists.num_queries)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out
