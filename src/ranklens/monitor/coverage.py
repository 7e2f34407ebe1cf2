"""Expected queries and coverage: an outage must never look like a recovery.

A snapshot may say which queries it was expected to answer (the qrels' queries): ``expected_queries`` in
the request, or ``skipped_queries`` in a run of ``ranklens eval --format json`` (the qrels queries the run
did not answer). Then

* the queries it did not answer score 0 in every value stored and checked (the gate's rule: every qrels
  query counts), unless the request says ``missing: "skip"``, and then the values are over the answered
  queries and every page shows "on 35 of 50 queries";
* its coverage (answered / expected, overall and per segment) is stored as the series :data:`COVERAGE`,
  which a rule checks like any measure (each project gets a default rule on it, see
  :func:`ranklens.monitor.rules.ensure_coverage_rule`).

>>> f = fill_unanswered(["q1"], {"P@5": [0.8]}, ["q1", "q2"], "zero")
>>> f.queries, f.per_query, f.unanswered
(['q1', 'q2'], {'P@5': [0.8, 0.0]}, ['q2'])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ranklens.errors import InputError
from ranklens.gates.model import COVERAGE

__all__ = [
    "COVERAGE",
    "MISSING",
    "Filled",
    "coverage_counts",
    "coverage_json",
    "fill_unanswered",
    "on_text",
    "recompute_aggregates",
    "stored_coverage",
]

#: How unanswered expected queries count: scored 0 (default) or left out of the values.
MISSING = ("zero", "skip")


@dataclass
class Filled:
    """Per-query values over the queries that count, and which expected queries had no answer."""

    queries: list[str]
    per_query: dict[str, list[float | None]]
    unanswered: list[str]


def fill_unanswered(
    queries: Sequence[str], per_query: dict[str, list[float | None]], expected: Sequence[str], missing: str
) -> Filled:
    """``missing="zero"``: every expected query the snapshot did not answer gets 0 for every per-query
    measure (the queries stay sorted); ``"skip"``: the values are left as they are."""
    if missing not in MISSING:
        raise InputError(f"missing must be one of {', '.join(MISSING)}; got {missing!r}")
    have = set(queries)
    unanswered = sorted(q for q in set(expected) if q not in have)
    if missing == "skip" or not unanswered:
        return Filled(list(queries), per_query, unanswered)
    order = sorted([*queries, *unanswered])
    index = {q: i for i, q in enumerate(queries)}
    filled = {m: [col[index[q]] if q in index else 0.0 for q in order] for m, col in per_query.items()}
    return Filled(order, filled, unanswered)


def recompute_aggregates(aggregates: dict[str, float], per_query: dict[str, list[float | None]]) -> dict[str, float]:
    """The aggregate of every per-query measure recomputed by the engine's own rule
    (:func:`ranklens.results.aggregate`: mean, sum, gmean, nanmean …); the others kept."""
    import numpy as np

    from ranklens.measures import parse
    from ranklens.results.core import aggregate

    out = dict(aggregates)
    for m, col in per_query.items():
        values = np.array([np.nan if x is None else x for x in col], dtype=np.float64)
        v = aggregate(parse(m), values)
        if np.isfinite(v):
            out[m] = float(v)
        else:
            out.pop(m, None)
    return out


def coverage_counts(
    answered: Sequence[str], expected: Sequence[str], segment_of: dict[str, str] | None
) -> dict[str, tuple[int, int]]:
    """``{scope: (answered, expected)}``: ``""`` for all queries, then every segment with an expected query."""
    exp = set(expected)
    ans = {q for q in answered if q in exp}
    out: dict[str, tuple[int, int]] = {"": (len(ans), len(exp))}
    if segment_of:
        per: dict[str, list[int]] = {}
        for q in exp:
            seg = segment_of.get(q)
            if seg is not None:
                c = per.setdefault(seg, [0, 0])
                c[1] += 1
                c[0] += q in ans
        out.update({s: (a, e) for s, (a, e) in sorted(per.items())})
    return out


def on_text(answered: int, expected: int) -> str:
    """``on 35 of 50 queries`` (or ``on all 50 queries``).

    >>> on_text(35, 50), on_text(1, 1)
    ('on 35 of 50 queries', 'on all 1 query')
    """
    noun = "query" if expected == 1 else "queries"
    return f"on all {expected} {noun}" if answered == expected else f"on {answered} of {expected} {noun}"


def stored_coverage(text: str | None) -> dict[str, tuple[int, int]] | None:
    """The ``snapshots.coverage`` column read back: ``{scope: (answered, expected)}`` or None."""
    if not text:
        return None
    return {k: (int(v[0]), int(v[1])) for k, v in json.loads(text).items()}


def coverage_json(coverage: dict[str, tuple[int, int]] | None, missing: str | None) -> dict[str, Any]:
    """The keys a snapshot's JSON carries about its expected queries: ``coverage`` (``{"answered",
    "expected", "ratio", "segments": {segment: {…}}}``, None when unknown) and ``missing``."""
    if coverage is None:
        return {"coverage": None, "missing": None}

    def one(a: int, e: int) -> dict[str, Any]:
        return {"answered": a, "expected": e, "ratio": a / e if e else None}

    a, e = coverage.get("", (0, 0))
    segs = {k: one(*v) for k, v in coverage.items() if k}
    return {"coverage": {**one(a, e), "segments": segs}, "missing": missing}
