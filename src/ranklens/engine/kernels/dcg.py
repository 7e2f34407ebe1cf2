"""DCG, IDCG and nDCG with explicit gain, discount, ideal flavour and tie policy.

Layering as scikit-learn's ``ndcg_score → _ndcg_sample_scores → _dcg_sample_scores →
_tie_averaged_dcg``: :func:`ndcg` → :func:`dcg` / :func:`idcg` → primitives in ``_common``.

Formulas (spec §2.3): DCG@k = Σ_{i ≤ min(k,n)} g(rel_i)·D(i); IDCG@k = Σ_{i ≤ min(k,|J+|)} g(rel*_i)·D(i)
over the chosen ideal pool sorted by gain; nDCG = DCG/IDCG, 0 when IDCG = 0. With ``ties=average`` DCG is
the expectation over orderings of tied documents (McSherry & Najork, ECIR 2008):
Σ_groups mean_gain(group) · Σ_{ranks of group ≤ k} D(rank). The local and recall ideals then take whole
tie groups: their pool is every document that is within the depth in at least one ordering of the ties,
so IDCG is the same for every ordering and 0 ≤ nDCG ≤ 1.
"""

from __future__ import annotations

import numpy as np

from ranklens.engine.kernels._common import discount_divisors, gains, sort_desc_per_query, tie_groups, within
from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure


def dcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """DCG@k per query."""
    g = gains(lists.labels, m.get("gain"))
    div = discount_divisors(lists.rank0, m)
    top = within(lists, m.cutoff)
    if m.get("ties") == "average" and g.size:
        gid, gstart = tie_groups(lists)
        sizes = np.diff(gstart)
        mean_gain = np.bincount(gid, weights=g) / sizes
        disc_sum = np.bincount(gid, weights=np.where(top, 1.0 / div, 0.0))
        group_query = lists.row_query[gstart[:-1]]
        return np.bincount(group_query, weights=mean_gain * disc_sum, minlength=lists.num_queries)
    return lists.per_query_sum(np.where(top, g / div, 0.0))


def idcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """IDCG@k per query for the measure's ideal flavour (global, local, recall, max)."""
    ideal = m.get("ideal")
    k = m.cutoff
    if ideal == "max":
        top = m.get("max_rel") or lists.max_label()
        g_top = float(gains(np.array([top]), m.get("gain"))[0])
        n = np.full(lists.num_queries, k, dtype=np.int64) if k is not None else lists.lengths
        return _discount_prefix(n, m) * g_top
    if ideal == "global":
        g = gains(lists.ideal_labels, m.get("gain"))
        query = lists.ideal_query
    else:
        depth = k if ideal == "local" else int(m.get("depth"))
        mask = within(lists, depth)
        if depth is not None and dict(m.params).get("ties") == "average":
            # the pool is every document that is within the depth in some ordering of the ties: whole
            # tie groups that start within it (else the pool, hence IDCG, would follow the doc-id
            # tie-break that ties=average averages away, and nDCG could exceed 1)
            gid, gstart = tie_groups(lists)
            mask = mask[gstart[:-1]][gid]
        g = gains(lists.labels[mask], m.get("gain"))
        query = lists.row_query[mask]
    perm = sort_desc_per_query(g, query)
    g, query = g[perm], query[perm]
    positive = g > 0
    g, query = g[positive], query[positive]
    counts = np.bincount(query, minlength=lists.num_queries)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    rank0 = np.arange(g.size) - np.repeat(offsets[:-1], counts)
    contribution = g / discount_divisors(rank0, m)
    if k is not None:
        contribution = np.where(rank0 < k, contribution, 0.0)
    return np.bincount(query, weights=contribution, minlength=lists.num_queries)


def ndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """nDCG@k per query: DCG/IDCG, 0 where IDCG = 0 (the query still counts in the mean)."""
    num = dcg(lists, m)
    den = idcg(lists, m)
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _discount_prefix(n: np.ndarray, m: Measure) -> np.ndarray:
    """Σ_{i < n_q} D(i) per query."""
    top = int(n.max()) if n.size else 0
    prefix = np.concatenate(([0.0], np.cumsum(1.0 / discount_divisors(np.arange(top), m))))
    return prefix[n]
