"""trec_eval 10.0's preference measures for one query (``form_prefs_counts.c``, ``m_prefs_*.c``).

Every judged document gets an internal rank: the retrieved ones 0, 1, … in ranking order, then the
others in ``strcmp`` order of docno. A judgment group (JG) whose lines share one sub-group (JSG) is a
list of equivalence classes (ECs, one per level, highest first): each document of a higher class is
preferred to each of a lower one, and a document listed twice counts twice. A JG with several
sub-groups is a preference matrix: the preferences of each sub-group, closed under transitivity.
A preference "a over b" is *fulfilled* if a ranks above b (an unretrieved b counts as below every
retrieved document); it is *ret* if both are retrieved, *imp* if exactly one is, *not occurring* if
neither is. Documents of level > 0 are relevant; level 0 is nonrelevant (and so is a negative level,
in an EC group only).

trec_eval's own behaviour is kept where it is surprising:

* its ranking breaks score ties by docno *ascending*, unlike the other measures (use
  :func:`prefs_ranking`, which also applies ``-M`` after that order);
* ``prefs_avgjg_Rnonrel*`` with fewer relevant than nonrelevant documents in an EC group also compare
  the nonrelevant class with its own first R documents (``recalculate()`` loops over every EC); a group
  whose ratio is 0/0 makes the whole query 0; ``prefs_avgjg_Rnonrel_ret`` adds
  ``num_rel * (R - N)`` possible preferences with the *total* ``num_rel``, and its matrix variant keeps
  the first ``num_rel`` retrieved nonrelevant documents (the total again, not ``num_rel_ret``);
* when R exceeds the size of the last class (possible only with negative levels), trec_eval reads past
  it (undefined); here the class is simply used whole.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ranklens.errors import FormatError, InputError
from ranklens.trec_eval.prefs_read import PrefLine, QueryPrefs

__all__ = ["PREFS_MEASURES", "prefs_query_values", "prefs_ranking"]

#: the measures of the ``all_prefs`` nickname, in trec_eval's table order (measures.c)
PREFS_MEASURES: tuple[str, ...] = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
)  # fmt: skip


def prefs_ranking(docs: Sequence[str], scores: Sequence[float], max_docs: int | None = None) -> list[str]:
    """The order form_prefs_counts.c ranks a query's results in: score descending, ties by docno
    ascending (the other measures break ties descending), then the first ``max_docs`` (``-M``).

    >>> prefs_ranking(["d2", "d1", "d3"], [1.0, 1.0, 2.0])
    ['d3', 'd1', 'd2']
    >>> prefs_ranking(["d2", "d1", "d3"], [1.0, 1.0, 2.0], max_docs=2)
    ['d3', 'd1']
    """
    order = sorted(zip(docs, scores), key=lambda ds: (-ds[1], ds[0]))
    if max_docs is not None:
        order = order[: max(max_docs, 0)]
    return [d for d, _ in order]


#: (preferred, other) internal ranks of every preference of every group, duplicates included
_Pairs = list[tuple[np.ndarray, np.ndarray]]


@dataclass
class _Group:
    """The counts of one judgment group (the JG struct of trec_format.h)."""

    ful_ret: int = 0
    miss_ret: int = 0  # both retrieved, wrong order
    ful_imp: int = 0
    miss_imp: int = 0  # only the less preferred one retrieved
    notoccur: int = 0
    num_rel: int = 0
    num_nonrel: int = 0
    num_rel_ret: int = 0
    num_nonrel_ret: int = 0
    rnonrel: tuple[int, int] = (0, 0)  # (fulfilled, possible) for prefs_avgjg_Rnonrel
    rnonrel_ret: tuple[int, int] = (0, 0)
    # the five counts above over distinct document pairs (a document listed twice in an EC counts once)
    distinct: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)


def prefs_query_values(prefs: QueryPrefs, ranked: Sequence[str]) -> dict[str, float]:
    """Every measure of :data:`PREFS_MEASURES` for one query.

    ``ranked`` is the query's retrieved docnos in :func:`prefs_ranking` order, already cut at ``-M``;
    it may be empty. With ``-c``, a query the run lacks is ranked ``["ceci_nest_pas_un_docno"]``.

    Raises:
        FormatError: the judgments are inconsistent the way trec_eval rejects (a document with two
            levels in one sub-group, 0 and non-0 levels in one group, contradictory preferences).
        InputError: a docno appears twice in ``ranked``.

    d1 is preferred to d2 and d3 (3 preferences); the run ranks d2 above d1 and misses d3:

    >>> q = QueryPrefs("q1", (PrefLine("u", "s", "d1", 1.0), PrefLine("u", "s", "d2", 0.0),
    ...                       PrefLine("u", "s", "d3", 0.0)))
    >>> v = prefs_query_values(q, ["d2", "x", "d1"])
    >>> v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"], v["prefs_simp_ret"]
    (2.0, 1.0, 0.0)
    """
    if len(set(ranked)) != len(ranked):
        raise InputError(f"query '{prefs.qid}': a document is ranked twice")
    judged = {j.docno for j in prefs.judgments}
    rank_of: dict[str, int] = {}
    for docno in ranked:
        if docno in judged:
            rank_of[docno] = len(rank_of)
    njr = len(rank_of)
    for docno in sorted(judged.difference(rank_of)):
        rank_of[docno] = len(rank_of)
    by_jg: dict[str, list[PrefLine]] = {}
    for j in prefs.judgments:
        by_jg.setdefault(j.jg, []).append(j)
    pairs: _Pairs | None = [] if len(by_jg) > 1 else None
    groups: list[_Group] = []
    for jg in sorted(by_jg):
        lines = by_jg[jg]
        if len({j.jsg for j in lines}) > 1:
            groups.append(_matrix_group(prefs, jg, lines, rank_of, njr, pairs))
        else:
            groups.append(_class_group(prefs, jg, lines, rank_of, njr, pairs))
    return _values(groups, pairs, njr, len(rank_of))


def _values(groups: list[_Group], pairs: _Pairs | None, njr: int, n: int) -> dict[str, float]:
    ful_ret = sum(g.ful_ret for g in groups)
    ful = ful_ret + sum(g.ful_imp for g in groups)
    poss_ret = ful_ret + sum(g.miss_ret for g in groups)
    poss_imp = poss_ret + sum(g.ful_imp + g.miss_imp for g in groups)
    poss = poss_imp + sum(g.notoccur for g in groups)
    if pairs is None:  # one group: no pair is judged both ways, every pair ratio is 0 or 1
        d_ful_ret, d_miss_ret, d_ful_imp, d_miss_imp, n_all = groups[0].distinct if groups else (0,) * 5
        n_ret, n_imp = d_ful_ret + d_miss_ret, d_ful_imp + d_miss_imp
        s_ret, s_imp = float(d_ful_ret), float(d_ful_ret + d_ful_imp)
    else:
        n_ret, n_imp, n_all, s_ret, s_imp = _pair_sums(pairs, njr, n)
    n_imp += n_ret
    n_all += n_imp
    return {
        "prefs_num_prefs_poss": float(poss),
        "prefs_num_prefs_ful": float(ful),
        "prefs_num_prefs_ful_ret": float(ful_ret),
        "prefs_simp": ful / poss if poss else 0.0,
        "prefs_pair": s_imp / n_all if n_all else 0.0,
        "prefs_avgjg": _avg(groups, [(g.ful_ret + g.ful_imp, _poss(g)) for g in groups], nan_kills=False),
        "prefs_avgjg_Rnonrel": _avg(groups, [g.rnonrel for g in groups], nan_kills=True),
        "prefs_simp_ret": ful_ret / poss_ret if poss_ret else 0.0,
        "prefs_pair_ret": s_ret / n_ret if n_ret else 0.0,
        "prefs_avgjg_ret": _avg(groups, [(g.ful_ret, g.ful_ret + g.miss_ret) for g in groups], nan_kills=False),
        "prefs_avgjg_Rnonrel_ret": _avg(groups, [g.rnonrel_ret for g in groups], nan_kills=True),
        "prefs_simp_imp": ful / poss_imp if poss_imp else 0.0,
        "prefs_pair_imp": s_imp / n_imp if n_imp else 0.0,
        "prefs_avgjg_imp": _avg(
            groups, [(g.ful_ret + g.ful_imp, g.ful_ret + g.miss_ret + g.ful_imp + g.miss_imp) for g in groups],
            nan_kills=False,
        ),
    }


def _poss(g: _Group) -> int:
    return g.ful_ret + g.miss_ret + g.ful_imp + g.miss_imp + g.notoccur


def _avg(groups: list[_Group], ratios: list[tuple[int, int]], *, nan_kills: bool) -> float:
    """Σ fulfilled/possible over groups (in group order) / number of groups, 0 unless the sum is > 0.
    ``nan_kills``: a 0/0 group is NaN (C), which makes the sum NaN and so the value 0; else it is skipped."""
    total = 0.0
    for ful, poss in ratios:
        if poss:
            total += ful / poss
        elif nan_kills:
            total = float("nan")
    return total / len(groups) if total > 0.0 else 0.0


def _pair_sums(pairs: _Pairs, njr: int, n: int) -> tuple[int, int, int, float, float]:
    """(pairs both retrieved, pairs one retrieved, pairs none retrieved, Σ ratio over the first kind,
    Σ over the first two kinds): the loops of m_prefs_pair*.c, summed in their order.

    The ratio of a pair i < j (internal ranks) is c[i][j] / (c[i][j] + c[j][i]), where c[a][b] counts the
    groups (and duplicate lines) preferring a to b."""
    if not pairs:
        return 0, 0, 0, 0.0, 0.0
    first = np.concatenate([p for p, _ in pairs])
    second = np.concatenate([q for _, q in pairs])
    key = np.minimum(first, second) * n + np.maximum(first, second)
    if n * n <= 1 << 24:  # count by direct indexing
        total = np.bincount(key, minlength=n * n)
        keys = np.flatnonzero(total)
        ratio = np.bincount(key, weights=first < second, minlength=n * n)[keys] / total[keys]
    else:
        keys, where = np.unique(key, return_inverse=True)
        ratio = np.bincount(where, weights=first < second) / np.bincount(where)
    # keys ascend: pairs in (i, j) order
    i, j = np.divmod(keys, n)
    both, one = j < njr, (i < njr) & (j >= njr)
    n_both, n_one = int(both.sum()), int(one.sum())
    sums = np.cumsum(np.concatenate((ratio[both], ratio[one])))  # left to right, as C adds
    s_ret = float(sums[n_both - 1]) if n_both else 0.0
    s_imp = float(sums[-1]) if sums.size else 0.0
    return n_both, n_one, keys.size - n_both - n_one, s_ret, s_imp


def _rnonrel_counts(g: _Group, *, ret_only: bool) -> tuple[int, int] | None:
    """prefs_avgjg_Rnonrel(_ret)'s (fulfilled, possible) when R >= N; ``None`` when it must recount."""
    r, n = (g.num_rel_ret, g.num_nonrel_ret) if ret_only else (g.num_rel, g.num_nonrel)
    if r < n:
        return None
    if ret_only:
        return g.ful_ret + g.num_rel_ret * (r - n), g.ful_ret + g.miss_ret + g.num_rel * (r - n)
    return g.ful_ret + g.ful_imp + g.num_rel_ret * (r - n), _poss(g) + g.num_rel * (r - n)


# ---------------------------------------------------------------------------------- equivalence classes


def _class_group(
    prefs: QueryPrefs, jg: str, lines: list[PrefLine], rank_of: dict[str, int], njr: int,
    pairs: _Pairs | None,
) -> _Group:  # fmt: skip
    by_level: dict[float, list[int]] = {}
    first_line: dict[int, PrefLine] = {}
    for j in lines:
        rank = rank_of[j.docno]
        first = first_line.setdefault(rank, j)
        if first.rel_level != j.rel_level:
            raise FormatError(
                prefs.source,
                f"expected one relevance level per document in query '{prefs.qid}' group '{jg}', "
                f"got {first.rel_level:g} (line {first.line}) and {j.rel_level:g} for '{j.docno}'",
                line=j.line,
            )
        by_level.setdefault(j.rel_level, []).append(rank)
    levels = sorted(by_level, reverse=True)
    ecs = [sorted(by_level[v]) for v in levels]
    g = _Group()
    for ec, level in zip(ecs, levels):
        ret = bisect_left(ec, njr)
        if level > 0.0:
            g.num_rel, g.num_rel_ret = g.num_rel + len(ec), g.num_rel_ret + ret
        else:
            g.num_nonrel, g.num_nonrel_ret = g.num_nonrel + len(ec), g.num_nonrel_ret + ret
    g.ful_ret, g.miss_ret, g.ful_imp, g.miss_imp, g.notoccur = _class_counts(ecs, njr)
    if pairs is not None:
        for a in range(len(ecs)):
            for b in range(a + 1, len(ecs)):
                hi, lo = np.asarray(ecs[a], np.int64), np.asarray(ecs[b], np.int64)
                pairs.append((np.repeat(hi, lo.size), np.tile(lo, hi.size)))
    elif sum(map(len, ecs)) == len(first_line):
        g.distinct = (g.ful_ret, g.miss_ret, g.ful_imp, g.miss_imp, g.notoccur)
    else:
        g.distinct = _class_counts([sorted(set(ec)) for ec in ecs], njr)
    if (rn := _rnonrel_counts(g, ret_only=False)) is None:
        rn = _class_recount(ecs, njr, g.num_rel)
    g.rnonrel = rn
    if (rn := _rnonrel_counts(g, ret_only=True)) is None:
        rn = _class_recount([ec[: bisect_left(ec, njr)] for ec in ecs], njr, g.num_rel_ret)
    g.rnonrel_ret = rn
    return g


def _class_counts(ecs: list[list[int]], njr: int) -> tuple[int, int, int, int, int]:
    """(fulfilled ret, missed ret, fulfilled imp, missed imp, not occurring) over every pair of classes."""
    ful_ret = miss_ret = ful_imp = miss_imp = notoccur = 0
    for a in range(len(ecs)):
        hi = ecs[a]
        k1 = bisect_left(hi, njr)
        for b in range(a + 1, len(ecs)):
            lo = ecs[b]
            k2 = bisect_left(lo, njr)
            ful = sum(bisect_left(hi, r, 0, k1) for r in lo[:k2])
            ful_ret += ful
            miss_ret += k1 * k2 - ful
            ful_imp += k1 * (len(lo) - k2)
            miss_imp += (len(hi) - k1) * k2
            notoccur += (len(hi) - k1) * (len(lo) - k2)
    return ful_ret, miss_ret, ful_imp, miss_imp, notoccur


def _class_recount(ecs: list[list[int]], njr: int, keep: int) -> tuple[int, int]:
    """recalculate() of m_prefs_avgjg_Rnonrel(_ret).c for an EC group: the pairs of all classes but the
    last, plus every class (the last one too) against the first ``keep`` documents of the last class.
    A pair is fulfilled if the first document is retrieved and ranks above the second."""
    ful = poss = 0
    last = len(ecs) - 1
    new_last = ecs[last][:keep]
    for a in range(len(ecs)):
        for lo in [*ecs[a + 1 : last], new_last]:
            hi = ecs[a]
            ful += sum(len(lo) - bisect_right(lo, r) for r in hi[: bisect_left(hi, njr)])
            poss += len(hi) * len(lo)
    return ful, poss


# ---------------------------------------------------------------------------------- preference matrix


def _matrix_group(
    prefs: QueryPrefs, jg: str, lines: list[PrefLine], rank_of: dict[str, int], njr: int,
    pairs: _Pairs | None,
) -> _Group:  # fmt: skip
    n = len(rank_of)
    ordered = sorted(lines, key=lambda j: (j.jsg, -j.rel_level, rank_of[j.docno]))
    level: dict[int, float] = {}  # the last level seen per document (rel_array), checked 0 vs non-0
    for j in ordered:
        rank = rank_of[j.docno]
        prev = level.get(rank, -1.0)
        if (prev > 0.0 and j.rel_level == 0.0) or (prev == 0.0 and j.rel_level > 0.0):
            raise FormatError(
                prefs.source,
                f"expected '{j.docno}' to be relevant in every sub-group or in none (query '{prefs.qid}' "
                f"group '{jg}'), got levels {prev:g} and {j.rel_level:g}",
                line=j.line,
            )
        level[rank] = j.rel_level
    rows = [0] * n  # rows[i] bit j: document i preferred to document j
    start = 0
    while start < len(ordered):  # one sub-group: every level over all lower levels of it
        end = start
        while end < len(ordered) and ordered[end].jsg == ordered[start].jsg:
            end += 1
        below = 0
        top = end
        while top > start:
            bottom = top - 1
            while bottom > start and ordered[bottom - 1].rel_level == ordered[top - 1].rel_level:
                bottom -= 1
            block = [rank_of[j.docno] for j in ordered[bottom:top]]
            for rank in block:
                rows[rank] |= below
            for rank in block:
                below |= 1 << rank
            top = bottom
        start = end
    cycle = _close(rows)
    if cycle is not None:
        a, b = (next(j for j in lines if rank_of[j.docno] == r) for r in cycle)
        raise FormatError(
            prefs.source,
            f"expected consistent preferences in query '{prefs.qid}' group '{jg}', got '{a.docno}' over "
            f"'{b.docno}' and '{b.docno}' over '{a.docno}' (directly or by transitivity)",
            line=b.line,
        )
    g = _Group()
    for rank, v in level.items():
        if v > 0.0:
            g.num_rel += 1
            g.num_rel_ret += rank < njr
        elif v == 0.0:
            g.num_nonrel += 1
            g.num_nonrel_ret += rank < njr
    g.ful_ret, g.miss_ret, g.ful_imp, g.miss_imp, g.notoccur = _matrix_counts(rows, njr, 0)
    g.distinct = (g.ful_ret, g.miss_ret, g.ful_imp, g.miss_imp, g.notoccur)
    if pairs is not None:
        first, second = [], []
        for i, row in enumerate(rows):
            while row:
                bit = row & -row
                first.append(i)
                second.append(bit.bit_length() - 1)
                row ^= bit
        pairs.append((np.asarray(first, np.int64), np.asarray(second, np.int64)))
    nonrel = [rank for rank in range(n) if level.get(rank) == 0.0]
    if (rn := _rnonrel_counts(g, ret_only=False)) is None:
        # drop the nonrelevant documents after the num_rel-th one (all judged documents, internal order)
        drop = sum(1 << r for r in nonrel[g.num_rel :])
        ful_ret, miss_ret, ful_imp, miss_imp, notoccur = _matrix_counts(rows, njr, drop)
        rn = (ful_ret + ful_imp, ful_ret + miss_ret + ful_imp + miss_imp + notoccur)
    g.rnonrel = rn
    if (rn := _rnonrel_counts(g, ret_only=True)) is None:
        # the same among the retrieved ones, but cut after the (total) num_rel-th, as trec_eval does
        drop = sum(1 << r for r in [r for r in nonrel if r < njr][g.num_rel :])
        ful_ret, miss_ret, *_ = _matrix_counts(rows, njr, drop)
        rn = (ful_ret, ful_ret + miss_ret)
    g.rnonrel_ret = rn
    return g


def _close(rows: list[int]) -> tuple[int, int] | None:
    """Transitive closure of ``rows`` in place (add_transitives()); returns a pair of documents each
    preferred to the other if there is one (trec_eval aborts then)."""
    for i in range(len(rows)):
        rows[i] &= ~(1 << i)  # a document over itself (listed twice in a sub-group) adds nothing
    for k in range(len(rows)):  # Warshall, on bit sets
        bit, row_k = 1 << k, rows[k]
        if row_k:
            for i in range(len(rows)):
                if rows[i] & bit:
                    rows[i] |= row_k
    for i, row in enumerate(rows):
        if row >> i & 1:
            return i, next(j for j in range(len(rows)) if j != i and row >> j & 1 and rows[j] >> i & 1)
    return None


def _matrix_counts(rows: list[int], njr: int, drop: int) -> tuple[int, int, int, int, int]:
    """The five areas of the preference matrix (trec_format.h), without the rows and columns in ``drop``."""
    ret = (1 << njr) - 1
    ful_ret = miss_ret = ful_imp = miss_imp = notoccur = 0
    for i, row in enumerate(rows):
        if not row or drop >> i & 1:
            continue
        row &= ~drop
        if i < njr:
            miss_ret += (row & ((1 << i) - 1)).bit_count()
            ful_ret += ((row & ret) >> (i + 1)).bit_count()
            ful_imp += (row >> njr).bit_count()
        else:
            miss_imp += (row & ret).bit_count()
            notoccur += (row >> njr).bit_count()
    return ful_ret, miss_ret, ful_imp, miss_imp, notoccur
