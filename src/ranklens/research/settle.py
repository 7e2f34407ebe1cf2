"""The fewest unjudged documents to judge to settle which of two runs is better on a measure.

Per query ``q``, ``U_q`` is the union of the two runs' unjudged documents within the measure's cutoff; a
labelling gives each of them the qrels' lowest or highest grade. The mean difference ``Δ = B − A`` over the
queries both runs answered depends on the labelling; its sign (−, 0, +) says which run is better. A set ``S``
of documents *settles* the comparison when, whatever grades ``S`` turns out to have, the sign is the same for
every labelling of the rest.

A document is *pivotal* when two labellings differing in its grade alone give Δ different signs. ``S``
settles the comparison exactly when it holds every pivotal document, so the pivotal set is the unique
smallest such set (proof in docs/research.md). Computing it: the queries are independent, so with
``δ_q(L)`` the per-query difference under labelling ``L`` of ``U_q`` (every labelling evaluated by the
engine, as in :mod:`ranklens.research.bounds`) and ``T`` the achievable sums of the other queries'
differences, document ``d`` of ``q`` is pivotal iff some pair ``x = δ_q(L)``, ``y = δ_q(L with d flipped)``,
``x < y``, has a ``T`` in ``[−y, −x]``. The sums ``T`` are enumerated exactly (sets of distinct values, to
1e-12) while they stay below ``max_sums``; beyond, they are thinned to achievable values a step apart (the
extremes kept): a thinned value in the interval still proves the document pivotal, the range outside it
still proves it is not, and a document neither proves is kept (``exact`` false, a note).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.evaluator import Evaluator
from ranklens.engine.ranked import NONPOOL, RankedLists
from ranklens.errors import InputError
from ranklens.measures.language import parse_many
from ranklens.research.bounds import _labellings

__all__ = ["Settle", "settle", "write_to_judge"]

_TOL = 1e-12


@dataclass(frozen=True)
class Settle:
    """What :func:`settle` returns (``to_json`` is the ``settle`` part of ``ranklens bounds --settle -f json``).

    Attributes:
        systems: the two runs' names (the difference is the second minus the first).
        measure: the measure.
        difference: ``value`` (as judged, unjudged documents non-relevant as the engine scores them), ``low``
            and ``high`` over every labelling.
        settled: whether the sign of the difference is the same for every labelling.
        to_judge: the pivotal documents, ``(query, doc)``, sorted: judging them settles the comparison.
        unjudged: the number of unjudged documents of both runs' top k (per query, the union).
        exact: False when some document could be shown neither necessary nor unneeded (``to_judge`` keeps it,
            so it may hold more documents than needed).
    """

    systems: tuple[str, str]
    measure: str
    difference: dict[str, float]
    settled: bool
    to_judge: tuple[tuple[str, str], ...]
    unjudged: int
    exact: bool
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "systems": list(self.systems), "measure": self.measure, "difference": self.difference,
            "settled": self.settled, "fewest": len(self.to_judge), "unjudged": self.unjudged, "exact": self.exact,
            "to_judge": [{"query": q, "doc": d} for q, d in self.to_judge], "notes": self.notes,
        }


def settle(qrels: Any, runs: Mapping[str, Any], measure: Any, *, exhaustive_limit: int = 16,
           max_sums: int = 200_000, **options: Any) -> Settle:
    """The documents to judge to settle which of the two ``runs`` is better on ``measure``.

    >>> qrels = {"q": {"a": 1, "b": 0}}
    >>> runs = {"A": {"q": {"a": 2.0, "x": 1.0}}, "B": {"q": {"y": 2.0, "a": 1.0}}}
    >>> s = settle(qrels, runs, "P@1")
    >>> s.settled, s.to_judge
    (False, (('q', 'y'),))
    """
    parsed = parse_many(measure)
    if len(parsed) != 1:
        raise InputError(f"--settle takes one measure; got {len(parsed)}")
    if len(runs) != 2:
        raise InputError(f"--settle compares two runs; got {len(runs)}")
    m = parsed[0]
    ev = Evaluator([m], qrels, **options)
    judged = ev.qrels.label[ev.qrels.label >= 0]
    grades = (float(judged.min()) if judged.size else 0.0, float(judged.max()) if judged.size else 0.0)
    names = tuple(runs)
    aligned = [ev.align(r, order="score")[0] for r in runs.values()]
    values = [{str(q): v for q, v in ev(r, warn=False).per_query(m).items()} for r in runs.values()]
    common = sorted(set(values[0]) & set(values[1]))
    unjudged = {q: _unjudged(aligned, q, m.cutoff) for q in common}
    too_many = [q for q, u in unjudged.items() if len(u) > exhaustive_limit]
    if too_many:
        raise InputError(f"--settle: query {too_many[0]} has {len(unjudged[too_many[0]])} unjudged documents in the two "
                         f"runs' top k, more than --exhaustive-limit {exhaustive_limit} (2^n labellings each)")
    deltas = {q: _deltas(ev, aligned, runs, q, unjudged[q], grades, m, options) for q in common}
    n = max(len(common), 1)
    per_q = [deltas[q] / n for q in common]
    value = float(np.mean([values[1][q] - values[0][q] for q in common])) if common else 0.0
    low = float(sum(d.min() for d in per_q)) if per_q else 0.0
    high = float(sum(d.max() for d in per_q)) if per_q else 0.0
    prefix, suffix = _partial_sums(per_q, max_sums)
    pivotal: list[tuple[str, str]] = []
    unsure = 0
    for i, q in enumerate(common):
        others = (prefix[i], suffix[i + 1])
        for t, doc in enumerate(unjudged[q]):
            found = _pivotal(per_q[i], t, others)
            if found is not False:
                pivotal.append((q, doc))
                unsure += found is None
    exact = unsure == 0
    settled = (low > _TOL) or (high < -_TOL) or (abs(low) <= _TOL and abs(high) <= _TOL)  # (== no pivotal document)
    notes = [] if exact else [f"{unsure} of the documents to judge could not be shown necessary (the other queries' "
                              f"sums exceeded {max_sums} values): the set may be more than the fewest"]
    return Settle((str(names[0]), str(names[1])), str(m), {"value": value, "low": low, "high": high}, settled,
                  tuple(sorted(pivotal)), sum(len(u) for u in unjudged.values()), exact, notes)


def _unjudged(aligned: list[RankedLists], q: str, cutoff: int | None) -> list[str]:
    docs: set[str] = set()
    for lists in aligned:
        ids = [str(x) for x in lists.query_ids.to_pylist()]
        if q not in ids:
            continue
        i = ids.index(q)
        lo, hi = int(lists.offsets[i]), int(lists.offsets[i + 1])
        top = hi if cutoff is None else min(hi, lo + cutoff)
        rows = lo + np.flatnonzero(lists.labels[lo:top] == NONPOOL)
        docs.update(str(d) for d in lists.doc_ids.take(lists.docs[rows]).to_pylist())
    return sorted(docs)


def _deltas(ev: Evaluator, aligned: list[RankedLists], runs: Mapping[str, Any], q: str, unjudged: list[str],
            grades: tuple[float, float], m: Any, options: dict[str, Any]) -> np.ndarray:
    """``δ_q`` for every labelling of ``unjudged`` (in :func:`_labellings` order): B − A evaluated by the engine."""
    bits = _labellings(len(unjudged), len(unjudged))
    count = bits.shape[0]
    lists = aligned[0] if q in [str(x) for x in aligned[0].query_ids.to_pylist()] else aligned[1]
    i = [str(x) for x in lists.query_ids.to_pylist()].index(q)
    ilo, ihi = int(lists.ideal_offsets[i]), int(lists.ideal_offsets[i + 1])
    judged_docs = np.asarray(lists.qrels_doc_ids.take(lists.ideal_docs[ilo:ihi]).to_pylist(), dtype=object)
    judged_labels = lists.ideal_labels[ilo:ihi].astype(np.float64)
    pids = np.arange(count)
    qq = np.repeat(pids, judged_docs.size + len(unjudged))
    qd = np.tile(np.concatenate((judged_docs, np.asarray(unjudged, dtype=object))), count)
    ql = np.hstack((np.tile(judged_labels, (count, 1)), np.where(bits, grades[1], grades[0]))).ravel()
    kind = "float" if lists.labels.dtype.kind == "f" else "int"
    pseudo = Qrels.from_arrays(qq.astype(str), qd, ql if kind == "float" else ql.astype(np.int64), label_kind=kind)
    kept = {k: v for k, v in options.items() if k not in ("qrels_columns", "run_columns", "labels")}
    evaluator = Evaluator([m], pseudo, labels=kind, **kept)
    out = []
    for lists_r in aligned:
        ids = [str(x) for x in lists_r.query_ids.to_pylist()]
        j = ids.index(q)
        lo, hi = int(lists_r.offsets[j]), int(lists_r.offsets[j + 1])
        docs = np.asarray(lists_r.doc_ids.take(lists_r.docs[lo:hi]).to_pylist(), dtype=object)
        run = Run.from_arrays(np.repeat(pids, docs.size).astype(str), np.tile(docs, count),
                              np.tile(lists_r.scores[lo:hi], count), name="labellings")
        per = evaluator(run, warn=False).per_query(m)
        out.append(np.array([per.get(str(p), 0.0) for p in pids]))
    return out[1] - out[0]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _Sums:
    """Achievable sums of some queries' differences: ``values`` (sorted, each exactly achievable) and whether
    they are all of them (``complete``; else thinned to values at least a step apart, the smallest and the
    largest kept, so a value found is a witness but a gap proves nothing)."""

    values: np.ndarray
    complete: bool


def _thin(values: np.ndarray, cap: int) -> np.ndarray:
    """At most ``cap + 1`` of the sorted ``values``: the first of each of ``cap`` equal bins, and the last.

    >>> _thin(np.array([0.0, 0.1, 0.2, 0.5, 0.55, 1.0]), 2).tolist()
    [0.0, 0.5, 1.0]
    """
    step = (values[-1] - values[0]) / cap
    if step <= 0:
        return values[:1]
    _, first = np.unique(np.floor((values - values[0]) / step), return_index=True)
    return np.unique(np.r_[values[first], values[-1]])


def _add(sums: _Sums, delta: np.ndarray, cap: int) -> _Sums:
    own = np.unique(np.round(delta, 12))
    values = np.unique(np.round((sums.values[:, None] + own[None, :]).ravel(), 12))
    if values.size <= cap:
        return _Sums(values, sums.complete)
    return _Sums(_thin(values, cap), False)


def _partial_sums(per_q: list[np.ndarray], cap: int) -> tuple[list[_Sums], list[_Sums]]:
    """The achievable sums of the first ``i`` queries (``prefix[i]``) and of the queries from ``i`` on
    (``suffix[i]``)."""

    def run(seq: list[np.ndarray]) -> list[_Sums]:
        out = [_Sums(np.zeros(1), True)]
        for d in seq:
            out.append(_add(out[-1], d, cap))
        return out

    return run(per_q), run(per_q[::-1])[::-1]


def _hits(a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> bool:
    """Is some ``x + y`` (``x`` in ``a``, ``y`` in ``b``, both sorted) in ``[lo, hi]`` (to the tolerance)?"""
    if a.size > b.size:
        a, b = b, a
    left = np.searchsorted(b, lo - a - _TOL, side="left")
    right = np.searchsorted(b, hi - a + _TOL, side="right")
    return bool(np.any(right > left))


def _pivotal(delta: np.ndarray, t: int, others: tuple[_Sums, _Sums]) -> bool | None:
    """Can flipping document ``t``'s grade alone change the sign of the total, for some labelling? None when
    the thinned sums can neither show a witness nor rule one out."""
    a, b = others
    low, high = a.values[0] + b.values[0], a.values[-1] + b.values[-1]  # (exact: the extremes are kept)
    idx = np.arange(delta.size)
    off = idx[(idx >> t) & 1 == 0]
    pairs = np.unique(np.round(np.stack((delta[off], delta[off | (1 << t)]), axis=1), 12), axis=0)
    unsure = False
    for x, y in pairs:
        lo, hi = (x, y) if x < y else (y, x)
        if hi - lo <= _TOL or low > -lo + _TOL or high < -hi - _TOL:
            continue
        if _hits(a.values, b.values, -hi, -lo):
            return True
        unsure = unsure or not (a.complete and b.complete)
    return None if unsure else False


def write_to_judge(result: Settle, path: str) -> None:
    """Write the documents to judge as a TREC run (``query Q0 doc rank score to-judge``): the input of
    ``ranklens judge pairs PATH --depth K`` (K at least the most documents of one query)."""
    lines = []
    by_query: dict[str, list[str]] = {}
    for q, d in result.to_judge:
        by_query.setdefault(q, []).append(d)
    for q, docs in by_query.items():
        for rank, d in enumerate(docs, 1):
            lines.append(f"{q} Q0 {d} {rank} {len(docs) - rank + 1} to-judge")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + ("\n" if lines else ""))
