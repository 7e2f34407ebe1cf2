"""Kernels of the RAG set measures (RA-nWG@K and companions, spec §6) over :class:`RankedLists`.

Layering: the measure kernels (:func:`ra_nwg`, :func:`proc`, …) → per-query weights
(:func:`rag_weights`), grade levels (:func:`grade_levels`), the top-K set sum (:func:`set_sum`) and the
greedy best-K sum over level counts (:func:`best_k_sum`). All numpy, no loop over queries or documents.

Grade levels (``top`` = the label playing grade 5): level 0 = grade 5 (label ≥ top), 1 = grade 4,
2 = grade 3, 3 = a judged label ≤ top − 3 (grades 2 and 1), −1 = not judged (not in the qrels, or a
negative "pooled but unjudged" label under the default negative policy).

Worked example (spec §6.2): pool 2×g5, 4×g4, 6×g3, 4×g2, 4×g1; top-5 grades ``[5,3,4,2,3]``:

>>> from ranklens import Evaluator
>>> from ranklens.measures.rag import RAG_FAMILIES
>>> from ranklens.measures import parse
>>> grades = [5] * 2 + [4] * 4 + [3] * 6 + [2] * 4 + [1] * 4
>>> qrels = {"q": {f"p{i:02d}": g for i, g in enumerate(grades)}}
>>> top5 = ["p00", "p06", "p02", "p12", "p07"]   # grades 5, 3, 4, 2, 3
>>> lists, _ = Evaluator("P@5", qrels).align({"q": {d: 10.0 - i for i, d in enumerate(top5)}})
>>> ra_nwg(lists, parse("RAnWG@5")).round(6).tolist(), harm(lists, parse("Harm@5")).tolist()
([0.478788], [0.2])
"""

from __future__ import annotations

import numpy as np

from ranklens.engine.kernels._common import tie_groups
from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure

__all__ = [
    "best_k_sum",
    "grade_levels",
    "harm",
    "nrecall4p",
    "nrecall5",
    "pct_proc",
    "precision4p",
    "proc",
    "ra_nwg",
    "rag_weights",
    "set_sum",
]

NLEVELS = 3  # grades 5, 4, 3 carry weight; lower grades weigh 0


def grade_levels(labels: np.ndarray, top: int) -> np.ndarray:
    """Level of each label: 0 (grade 5), 1 (grade 4), 2 (grade 3), 3 (judged, grade ≤ 2), −1 (unjudged).

    A real-valued label (``labels="float"``) counts at the highest grade it reaches, the grade of
    ⌊label⌋: with top = 5, 4.7 is grade 4 (it is ≥ 4 and < 5), as a threshold ``label ≥ grade`` reads it.

    >>> grade_levels(np.array([5, 4, 3, 2, 0, 7, -1, -2]), 5).tolist()
    [0, 1, 2, 3, 3, 0, -1, -1]
    >>> grade_levels(np.array([4.99, 4.0, 3.5, 0.2, -0.5]), 5).tolist()
    [1, 1, 2, 3, -1]
    """
    judged = labels >= 0
    lab = np.floor(labels).astype(np.int64) if labels.dtype.kind == "f" else labels.astype(np.int64)
    level = np.clip(top - lab, 0, NLEVELS)
    return np.where(judged, level, -1).astype(np.int64)


def _level_counts(levels: np.ndarray, query: np.ndarray, num_queries: int) -> np.ndarray:
    """(queries × 3) counts of levels 0, 1, 2 per query."""
    keep = (levels >= 0) & (levels < NLEVELS)
    flat = query[keep].astype(np.int64) * NLEVELS + levels[keep]
    return np.bincount(flat, minlength=num_queries * NLEVELS).reshape(num_queries, NLEVELS).astype(np.float64)


def rag_weights(lists: RankedLists, m: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Per-query weights ``(w5, w4, w3)`` and pool counts ``(n5, n4, n3)``, both (queries × 3).

    ``w4 = min((b4/b5)·(n5/n4)^alpha, cap4)``, ``w3 = min((b3/b5)·(n5/n3)^alpha, cap3)`` (= r_g/r5 with
    p_g = n_g/N; N cancels); a grade absent from the pool weighs 0; no grade 5 → (1, fallback4, fallback3).
    """
    top = int(m.get("top"))
    counts = _level_counts(grade_levels(lists.ideal_labels, top), lists.ideal_query, lists.num_queries)
    n5, n4, n3 = counts[:, 0], counts[:, 1], counts[:, 2]
    b5, b4, b3, alpha = (float(m.get(name)) for name in ("b5", "b4", "b3", "alpha"))
    with np.errstate(divide="ignore", invalid="ignore"):
        w4 = np.where(n4 > 0, (b4 / b5) * np.power(n5 / np.where(n4 > 0, n4, 1.0), alpha), 0.0)
        w3 = np.where(n3 > 0, (b3 / b5) * np.power(n5 / np.where(n3 > 0, n3, 1.0), alpha), 0.0)
    w4 = np.minimum(w4, float(m.get("cap4")))
    w3 = np.minimum(w3, float(m.get("cap3")))
    fallback = n5 == 0
    w4 = np.where(fallback, float(m.get("fallback4")), w4)
    w3 = np.where(fallback, float(m.get("fallback3")), w3)
    weights = np.column_stack((np.ones_like(w4), w4, w3))
    return weights, counts


def row_values(lists: RankedLists, per_level: np.ndarray, top: int) -> np.ndarray:
    """The value of each retrieved row: ``per_level[query, level]`` for levels 0–2, else 0."""
    levels = grade_levels(lists.labels, top)
    ok = (levels >= 0) & (levels < NLEVELS)
    out = np.zeros(levels.shape[0], dtype=np.float64)
    if per_level.ndim == 1:
        out[ok] = per_level[levels[ok]]
    else:
        out[ok] = per_level[lists.row_query[ok], levels[ok]]
    return out


def set_sum(lists: RankedLists, values: np.ndarray, k: int, ties: str) -> np.ndarray:
    """Σ of ``values`` over each query's top-``k`` set.

    ``ties="trec"`` cuts the engine's order (score desc, doc id desc); ``"average"`` gives a tie group
    straddling the cut its mean value times its number of slots inside the cut (the expectation over the
    orderings of the tied documents).
    """
    inside = lists.rank0 < k
    if ties != "average" or values.size == 0:
        return lists.per_query_sum(np.where(inside, values, 0.0))
    gid, gstart = tie_groups(lists)
    sizes = np.diff(gstart)
    mean_value = np.bincount(gid, weights=values) / sizes
    slots = np.bincount(gid, weights=inside.astype(np.float64))
    group_query = lists.row_query[gstart[:-1]]
    return np.bincount(group_query, weights=mean_value * slots, minlength=lists.num_queries)


def best_k_sum(weights: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """max over sets S of ≤ k items of Σ_{S} w: fill k slots greedily from the heaviest level down.

    >>> best_k_sum(np.array([[1.0, 0.25, 1 / 30]]), np.array([[2.0, 4.0, 6.0]]), 5).round(6).tolist()
    [2.75]
    """
    order = np.argsort(-weights, axis=1, kind="stable")
    w = np.take_along_axis(weights, order, axis=1)
    n = np.take_along_axis(counts, order, axis=1)
    before = np.cumsum(n, axis=1) - n
    take = np.clip(k - before, 0.0, n)
    return np.asarray((w * take).sum(axis=1), dtype=np.float64)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den, NaN (NA) where den = 0."""
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _cutoff(m: Measure) -> int:
    assert m.cutoff is not None  # the families require a cutoff: Measure.validate checked it
    return int(m.cutoff)


def _observed(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    return set_sum(lists, row_values(lists, weights, int(m.get("top"))), _cutoff(m), str(m.get("ties")))


def ra_nwg(lists: RankedLists, m: Measure) -> np.ndarray:
    """RA-nWG@K = G_obs(K) / G_ideal(K) per query; NaN (NA) when G_ideal(K) = 0."""
    weights, counts = rag_weights(lists, m)
    return _ratio(_observed(lists, m, weights), best_k_sum(weights, counts, _cutoff(m)))


def _pool_best(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    depth = int(m.get("depth"))
    levels = grade_levels(lists.labels, int(m.get("top")))
    if depth:
        levels = np.where(lists.rank0 < depth, levels, -1)
    pool = _level_counts(levels, lists.row_query, lists.num_queries)
    return best_k_sum(weights, pool, _cutoff(m))


def proc(lists: RankedLists, m: Measure) -> np.ndarray:
    """PROC@K = best K-subset weight of the candidate pool / G_ideal(K); NaN when G_ideal(K) = 0."""
    weights, counts = rag_weights(lists, m)
    return _ratio(_pool_best(lists, m, weights), best_k_sum(weights, counts, _cutoff(m)))


def pct_proc(lists: RankedLists, m: Measure) -> np.ndarray:
    """%PROC = RA-nWG@K / PROC@K = G_obs(K) / best K of the pool; NaN when that is 0 or the ideal is 0."""
    weights, counts = rag_weights(lists, m)
    ideal = best_k_sum(weights, counts, _cutoff(m))
    out = _ratio(_observed(lists, m, weights), _pool_best(lists, m, weights))
    out[~(ideal > 0)] = np.nan
    return out


def _set_count(lists: RankedLists, m: Measure, levels_wanted: tuple[int, ...]) -> np.ndarray:
    marks = np.zeros(NLEVELS + 1)
    marks[list(levels_wanted)] = 1.0
    levels = grade_levels(lists.labels, int(m.get("top")))
    values = np.where(levels >= 0, marks[np.maximum(levels, 0)], 0.0)
    return set_sum(lists, values, _cutoff(m), str(m.get("ties")))


def _pool_count(lists: RankedLists, m: Measure, levels_wanted: tuple[int, ...]) -> np.ndarray:
    counts = _level_counts(grade_levels(lists.ideal_labels, int(m.get("top"))), lists.ideal_query, lists.num_queries)
    return counts[:, list(levels_wanted)].sum(axis=1)


def nrecall4p(lists: RankedLists, m: Measure) -> np.ndarray:
    """N-Recall4+@K = #(grade ≥ 4 in TopK) / min(K, n4 + n5); NaN when n4 + n5 = 0."""
    return _ratio(_set_count(lists, m, (0, 1)), np.minimum(float(_cutoff(m)), _pool_count(lists, m, (0, 1))))


def nrecall5(lists: RankedLists, m: Measure) -> np.ndarray:
    """N-Recall5@K = #(grade 5 in TopK) / min(K, n5); NaN when n5 = 0."""
    return _ratio(_set_count(lists, m, (0,)), np.minimum(float(_cutoff(m)), _pool_count(lists, m, (0,))))


def precision4p(lists: RankedLists, m: Measure) -> np.ndarray:
    """Precision4+@K = #(grade ≥ 4 in TopK) / K."""
    return _set_count(lists, m, (0, 1)) / _cutoff(m)


def harm(lists: RankedLists, m: Measure) -> np.ndarray:
    """Harm@K = #(judged grade ≤ 2 in TopK) / K."""
    return _set_count(lists, m, (3,)) / _cutoff(m)


RAG_KERNELS = {
    "RAnWG": ra_nwg,
    "NRecall4p": nrecall4p,
    "NRecall5": nrecall5,
    "Precision4p": precision4p,
    "Harm": harm,
    "PROC": proc,
    "PctPROC": pct_proc,
}
