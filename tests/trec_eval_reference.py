"""Plain-loop references for the rest of trec_eval's default and ``all_trec`` sets, one query at a time, written
from trec_eval 10.0's ``m_*.c`` loops (independent of the ranklens kernels and of ``_cexpress.c``), in the
conventions of :mod:`reference_impl`: a *ranking* is the labels in rank order (``None`` not in the qrels), the
gains linear (a label's gain is the label; ``None`` and negative labels 0), relevant means a label ≥ ``rel``.

Used by ``tests/engine/test_backend_parity.py`` for every family the compiled pass declares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from reference_impl import Label, is_rel, num_rel

ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _gain(label: Label) -> float:
    return float(label) if label is not None and label > 0 else 0.0


def _lround(x: float) -> int:
    """C's lround for x ≥ 0: halves away from zero."""
    return int(math.floor(x + 0.5))


def num_ret(ranking: Sequence[Label], k: int | None = None) -> float:
    return float(len(ranking) if k is None else min(k, len(ranking)))


def iprec(ranking: Sequence[Label], judged: Sequence[int], level: float, rel: int = 1) -> float:
    """m_iprec_at_recall.c: walk the ranking from the bottom keeping the best precision seen; the value of a
    level is that best precision when the walk passes its c-th relevant document (c = lround(level·R)); a
    level whose c exceeds the relevant retrieved stays 0; one never passed gets the best precision overall."""
    c = _lround(level * num_rel(judged, rel))
    rel_ret = sum(is_rel(lab, rel) for lab in ranking)
    if c > rel_ret:
        return 0.0
    best = rel_ret / len(ranking)
    so_far = rel_ret
    for i in range(len(ranking), 0, -1):
        if so_far == 0:
            break
        best = max(best, so_far / i)
        if is_rel(ranking[i - 1], rel):
            if so_far == c:
                return best
            so_far -= 1
    return best


def iprec_avg(ranking: Sequence[Label], judged: Sequence[int], rel: int = 1) -> float:
    """m_11pt_avg.c: the mean of iprec at the eleven levels."""
    return sum(iprec(ranking, judged, level, rel) for level in reversed(ELEVEN)) / len(ELEVEN)


def rprec_mult(ranking: Sequence[Label], judged: Sequence[int], mult: float, rel: int = 1) -> float:
    """m_Rprec_mult.c: precision at c = (long)(mult·R + 0.9) documents, missing ranks not relevant."""
    c = int(mult * num_rel(judged, rel) + 0.9)
    return sum(is_rel(lab, rel) for lab in ranking[:c]) / c if c else 0.0


def utility(ranking: Sequence[Label], judged: Sequence[int], rel: int = 1) -> float:
    """m_utility.c at its defaults (1, -1, 0, 0): relevant retrieved minus non-relevant retrieved."""
    hits = sum(is_rel(lab, rel) for lab in ranking)
    return float(hits - (len(ranking) - hits))


def bin_g(ranking: Sequence[Label], judged: Sequence[int], rel: int = 1) -> float:
    """m_binG.c: Σ over relevant retrieved of 1/log2(3 + i − relevant so far), i 0-based, over R."""
    so_far, total = 0, 0.0
    for i, lab in enumerate(ranking):
        if is_rel(lab, rel):
            so_far += 1
            total += 1.0 / math.log2(3 + i - so_far)
    return total / num_rel(judged, rel) if so_far else 0.0


def _ideal(judged: Sequence[int]) -> list[float]:
    return sorted((float(lab) for lab in judged if lab > 0), reverse=True)


def g_measure(ranking: Sequence[Label], judged: Sequence[int]) -> float:
    """m_G.c: Σ_i g_i / log2(2 + cost_i − gained_i), cost adding max(ideal gain at i, 1); over Σ ideal gains."""
    ideal = _ideal(judged)
    cost = gained = total = 0.0
    for i, lab in enumerate(ranking):
        g = _gain(lab)
        gained += g
        cost += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
        if g != 0:
            total += g / math.log2(2 + cost - gained)
    return total / sum(ideal) if sum(ideal) > 0 else 0.0


def ndcg_rel(ranking: Sequence[Label], judged: Sequence[int]) -> float:
    """m_ndcg_rel.c: nDCG at each retrieved document of positive gain, and at the end for each one not
    retrieved, averaged over the documents of positive gain."""
    ideal = _ideal(judged)
    if not ideal:
        return 0.0
    dcg = idcg = total = 0.0
    found = 0
    for i, lab in enumerate(ranking):
        g = _gain(lab)
        if g != 0:
            dcg += g / math.log2(i + 2)
        if i < len(ideal):
            idcg += ideal[i] / math.log2(i + 2)
        if g > 0:
            total += dcg / idcg
            found += 1
    full = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    total += (len(ideal) - found) * dcg / full
    return total / len(ideal) if total > 0 else 0.0


def rndcg(ranking: Sequence[Label], judged: Sequence[int], rel: int = 1) -> float:
    """m_Rndcg.c: nDCG averaged at the R levels (the last position of each gain level of the ideal), DCG
    taken at min(position, retrieved); plus at the end of the ranking when it runs past the ideal by more than
    one document; 0 when R = 0."""
    if not num_rel(judged, rel):
        return 0.0
    ideal = _ideal(judged)
    gains = [_gain(lab) for lab in ranking]

    def dcg(k: int) -> float:
        return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]) if g != 0)

    def idcg(k: int) -> float:
        return sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))

    points = [j + 1 for j in range(len(ideal)) if j == len(ideal) - 1 or ideal[j + 1] != ideal[j]]
    values = [dcg(min(p, len(ranking))) / idcg(p) for p in points]
    if len(ranking) > len(ideal) + 1:
        values.append(dcg(len(ranking)) / idcg(len(ideal)))
    return sum(values) / len(values) if values else math.nan


def relative_p(ranking: Sequence[Label], judged: Sequence[int], k: int, rel: int = 1) -> float:
    """relative_P: relevant in the top k over min(k, R)."""
    den = min(k, num_rel(judged, rel))
    return sum(is_rel(lab, rel) for lab in ranking[:k]) / den if den else 0.0


def set_values(ranking: Sequence[Label], judged: Sequence[int], beta2: float = 1.0, rel: int = 1) -> dict[str, float]:
    """set_P, set_relative_P, set_map, set_F over the whole retrieved set."""
    n, big_r = len(ranking), num_rel(judged, rel)
    hits = sum(is_rel(lab, rel) for lab in ranking)
    p = hits / n if n else 0.0
    r = hits / big_r if big_r else 0.0
    f = (beta2 + 1) * p * r / (beta2 * p + r) if hits else 0.0
    return {
        "SetP": p,
        "SetRelativeP": hits / min(n, big_r) if min(n, big_r) else 0.0,
        "SetAP": hits * hits / (n * big_r) if n * big_r else 0.0,
        "SetF": f,
    }


def unjudged(ranking: Sequence[Label], k: int) -> float:
    """unj.k: documents of the top k without a judgement, over k."""
    return sum(lab is None or lab < 0 for lab in ranking[:k]) / k


def num_nonrel_judged_ret(ranking: Sequence[Label], rel: int = 1) -> float:
    return float(sum(lab is not None and 0 <= lab < rel for lab in ranking))


def trec_rbp(ranking: Sequence[Label], judged: Sequence[int], p: float = 0.9) -> float:
    """m_rbp.c with min/max over the gain table (levels 0 … the largest judged label): gains scaled to [0, 1]
    by the largest label when it exceeds 1."""
    top = max((lab for lab in judged if lab >= 0), default=0)
    total, weight = 0.0, 1.0
    for lab in ranking:
        g = _gain(lab)
        if top > 1:
            g = g / top
        total += g * weight
        weight *= p
    return (1 - p) * total


def trec_rbp_residual(ranking: Sequence[Label], p: float = 0.9) -> float:
    """m_rbp_resid.c: p^n + (1 − p)·Σ over unjudged ranks of p^(i−1), when any retrieved is unjudged; else 0."""
    total, weight, unj = 0.0, 1.0, 0
    for lab in ranking:
        if lab is None or lab < 0:
            unj += 1
            total += weight
        weight *= p
    return weight + (1 - p) * total if unj else 0.0
