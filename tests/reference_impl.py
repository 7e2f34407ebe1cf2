"""A straightforward pure-Python reference implementation of the measures, written from
``spec/METRICS.md`` (§1–§4, §7), independent of the ranklens kernels.

Everything works on one query at a time, with plain lists and loops, so that it can be read against the
formulas. Conventions (trec_eval, spec §1.2):

* a *ranking* is a list of labels in rank order; ``None`` marks a retrieved document that is not in the
  qrels ("non-pool"), a negative label a document the qrels give a negative value ("pooled, unjudged");
* a document is relevant at threshold ``rel`` when its label is not ``None``, ≥ 0 and ≥ ``rel``;
* ``judged`` is the list of every label of the query in the qrels (retrieved or not).

The tie-averaged values are computed by brute force: the mean of a measure over every ordering of the
documents that share a score (:func:`tie_average`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

Label = int | None


# --- rankings ---------------------------------------------------------------------------------------


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """Document ids by score descending, ties by document id descending, byte-wise (spec §1.1)."""
    return sorted(scores, key=lambda d: (scores[d], d.encode("utf-8")), reverse=True)


def ranked_labels(qrels: Mapping[str, int], order: Sequence[str]) -> list[Label]:
    """Label of each ranked document (``None`` when the qrels do not list it)."""
    return [qrels.get(d) for d in order]


def tie_groups(scores: Mapping[str, float]) -> list[list[str]]:
    """Documents grouped by equal score, groups by score descending."""
    groups: dict[float, list[str]] = {}
    for d, s in scores.items():
        groups.setdefault(s, []).append(d)
    return [groups[s] for s in sorted(groups, reverse=True)]


def all_tie_orders(scores: Mapping[str, float]) -> list[list[str]]:
    """Every ranking obtained by ordering each tie group in every possible way."""
    groups = tie_groups(scores)
    out = []
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        out.append([d for group in combo for d in group])
    return out


def tie_average(
    qrels: Mapping[str, int], scores: Mapping[str, float], measure: Callable[[list[Label]], float]
) -> float:
    """Mean of ``measure(ranking)`` over every ordering of tied documents (brute force)."""
    orders = all_tie_orders(scores)
    return math.fsum(measure(ranked_labels(qrels, o)) for o in orders) / len(orders)


# --- gains, discounts -------------------------------------------------------------------------------


def gain(label: Label, kind: object = "linear") -> float:
    """g(label): linear, exp (2^label − 1) or a {label: gain} map (unlisted labels keep g = label);
    non-pool and negative (pooled-unjudged) labels have gain 0 (spec §1.2, §2.1)."""
    if label is None or label < 0:
        return 0.0
    if kind == "linear":
        return float(label)
    if kind == "exp":
        return 2.0**label - 1.0
    assert isinstance(kind, Mapping)
    return float(kind.get(label, label))


def discount(rank: int, kind: str = "log2", base: int = 2) -> float:
    """D(rank) for a 1-based rank: 1/log2(rank+1), or Järvelin–Kekäläinen (ranks < b undiscounted,
    then 1/log_b(rank)) (spec §2.2)."""
    if kind == "log2":
        return 1.0 / math.log2(rank + 1)
    if kind == "ln":
        return 1.0 / math.log(rank + 1)
    if kind == "jk":
        return 1.0 if rank < base else 1.0 / math.log(rank, base)
    raise ValueError(kind)


def _cut(ranking: Sequence[Label], k: int | None) -> Sequence[Label]:
    return ranking if k is None else ranking[:k]


def dcg(ranking: Sequence[Label], k: int | None = None, *, gain_kind: object = "linear",
        discount_kind: str = "log2", base: int = 2) -> float:
    """DCG@k = Σ_{i ≤ min(k, n)} g(rel_i)·D(i) (spec §2.3)."""
    return math.fsum(
        gain(lab, gain_kind) * discount(i, discount_kind, base) for i, lab in enumerate(_cut(ranking, k), 1)
    )


def idcg_from_pool(pool: Sequence[Label], k: int | None = None, *, gain_kind: object = "linear",
                   discount_kind: str = "log2", base: int = 2) -> float:
    """IDCG@k of an ideal pool: its positive gains sorted descending, at ranks 1, 2, … ≤ k (spec §1.4)."""
    gains = sorted((g for g in (gain(lab, gain_kind) for lab in pool) if g > 0), reverse=True)
    return math.fsum(g * discount(i, discount_kind, base) for i, g in enumerate(_cut(gains, k), 1))  # type: ignore[arg-type]


def ideal_pool(ranking: Sequence[Label], judged: Sequence[int], ideal: str, k: int | None,
               depth: int | None = None, max_rel: int | None = None) -> list[Label]:
    """The labels the ideal ranking is built from (spec §4): global = all judged labels; local = the
    retrieved top k; recall = the retrieved top ``depth``; max = ``max_rel`` at each of k ranks (all
    retrieved ranks without a cutoff)."""
    if ideal == "global":
        return list(judged)
    if ideal == "local":
        return list(_cut(ranking, k))
    if ideal == "recall":
        return list(ranking[:depth])
    if ideal == "max":
        n = k if k is not None else len(ranking)
        return [max_rel] * n
    raise ValueError(ideal)


def ndcg(ranking: Sequence[Label], judged: Sequence[int], k: int | None = None, *, gain_kind: object = "linear",
         discount_kind: str = "log2", base: int = 2, ideal: str = "global", depth: int | None = None,
         max_rel: int | None = None) -> float:
    """nDCG@k = DCG@k / IDCG@k, 0 when IDCG = 0."""
    kw = {"gain_kind": gain_kind, "discount_kind": discount_kind, "base": base}
    top = idcg_from_pool(ideal_pool(ranking, judged, ideal, k, depth, max_rel), k, **kw)  # type: ignore[arg-type]
    return dcg(ranking, k, **kw) / top if top > 0 else 0.0  # type: ignore[arg-type]


# --- binary measures (spec §1.6, §7.1–7.5) --------------------------------------------------------------


def is_rel(label: Label, rel: int = 1) -> bool:
    return label is not None and label >= 0 and label >= rel


def num_rel(judged: Sequence[int], rel: int = 1) -> int:
    """R: judged documents with a label ≥ rel (never a negative label)."""
    return sum(1 for lab in judged if is_rel(lab, rel))


def precision(ranking: Sequence[Label], k: int, rel: int = 1) -> float:
    return sum(is_rel(lab, rel) for lab in ranking[:k]) / k


def recall(ranking: Sequence[Label], judged: Sequence[int], k: int | None = None, rel: int = 1) -> float:
    big_r = num_rel(judged, rel)
    return sum(is_rel(lab, rel) for lab in _cut(ranking, k)) / big_r if big_r else 0.0


def success(ranking: Sequence[Label], k: int, rel: int = 1) -> float:
    return 1.0 if any(is_rel(lab, rel) for lab in ranking[:k]) else 0.0


def reciprocal_rank(ranking: Sequence[Label], k: int | None = None, rel: int = 1) -> float:
    for i, lab in enumerate(_cut(ranking, k), 1):
        if is_rel(lab, rel):
            return 1.0 / i
    return 0.0


def average_precision(ranking: Sequence[Label], judged: Sequence[int], k: int | None = None, rel: int = 1) -> float:
    """AP@k = (1/R)·Σ_{relevant i ≤ k} P@i; unretrieved relevant documents contribute 0."""
    big_r = num_rel(judged, rel)
    if not big_r:
        return 0.0
    hits = 0
    total = 0.0
    for i, lab in enumerate(_cut(ranking, k), 1):
        if is_rel(lab, rel):
            hits += 1
            total += hits / i
    return total / big_r


def r_precision(ranking: Sequence[Label], judged: Sequence[int], rel: int = 1) -> float:
    big_r = num_rel(judged, rel)
    return sum(is_rel(lab, rel) for lab in ranking[:big_r]) / big_r if big_r else 0.0


def num_rel_ret(ranking: Sequence[Label], k: int | None = None, rel: int = 1) -> float:
    return float(sum(is_rel(lab, rel) for lab in _cut(ranking, k)))


# --- incomplete judgements (spec §7.6, §7.7) -----------------------------------------------------------


def bpref(ranking: Sequence[Label], judged: Sequence[int], rel: int = 1) -> float:
    """trec_eval bpref: over judged retrieved docs, each relevant one adds
    1 − min(nonrel_so_far, R)/min(N, R) (1 when nonrel_so_far = 0); divided by R."""
    big_r = num_rel(judged, rel)
    big_n = sum(1 for lab in judged if 0 <= lab < rel)
    if not big_r:
        return 0.0
    nonrel = 0
    total = 0.0
    for lab in ranking:
        if lab is None or lab < 0:
            continue
        if lab >= rel:
            total += 1.0 if nonrel == 0 else 1.0 - min(nonrel, big_r) / min(big_n, big_r)
        else:
            nonrel += 1
    return total / big_r


INFAP_EPSILON = 1e-5


def inf_ap(ranking: Sequence[Label], judged: Sequence[int], rel: int = 1) -> float:
    """trec_eval infAP (spec §7.7): j is the 0-based index in the full ranking; non-pool docs are skipped,
    pooled-unjudged docs counted."""
    big_r = num_rel(judged, rel)
    if not big_r:
        return 0.0
    rel_so_far = nonrel = unj = 0
    total = 0.0
    eps = INFAP_EPSILON
    for j, lab in enumerate(ranking):
        if lab is None:
            continue
        if lab < 0:
            unj += 1
            continue
        if lab >= rel:
            rel_so_far += 1
            if j == 0:
                total += 1.0
            else:
                a = rel_so_far - 1
                total += 1.0 / (j + 1) + (j / (j + 1)) * ((a + nonrel + unj) / j) * ((a + eps) / (a + nonrel + 2 * eps))
        else:
            nonrel += 1
    return total / big_r


# --- user models (spec §7.8, §7.9) ---------------------------------------------------------------------


def err(ranking: Sequence[Label], max_rel: int, k: int | None = None) -> float:
    """ERR@k = Σ_r (1/r)·R_r·Π_{i<r}(1 − R_i), R_i = (2^g_i − 1)/2^max_rel."""
    total = 0.0
    reach = 1.0
    for r, lab in enumerate(_cut(ranking, k), 1):
        g = 0 if lab is None or lab < 0 else min(lab, max_rel)
        stop = (2.0**g - 1.0) / 2.0**max_rel
        total += reach * stop / r
        reach *= 1.0 - stop
    return total


def rbp(ranking: Sequence[Label], p: float, *, max_rel: int | None = None, rel: int = 1) -> float:
    """RBP = (1 − p)·Σ r_i·p^(i−1); r_i binary at ``rel``, or label/max_rel when max_rel is given."""
    total = 0.0
    for i, lab in enumerate(ranking, 1):
        if max_rel:
            r = 0.0 if lab is None or lab < 0 else min(lab, max_rel) / max_rel
        else:
            r = 1.0 if is_rel(lab, rel) else 0.0
        total += r * p ** (i - 1)
    return (1 - p) * total


def rbp_residual(ranking: Sequence[Label], p: float) -> float:
    """Moffat & Zobel's residual: (1 − p)·Σ_{unjudged i ≤ d} p^(i−1) + p^d."""
    unjudged = sum(p ** (i - 1) for i, lab in enumerate(ranking, 1) if lab is None or lab < 0)
    return (1 - p) * unjudged + p ** len(ranking)
