"""Checking rules: per-query Results (CI) or single values (the monitor) → pass/fail with value and n.

A check over no query fails (a gate must not pass on nothing), and a check says on how many queries it was
made when some were left out: ``nDCG@10 ≥ 0.85 on 5 of 12 queries: 0.8123 is 0.0377 below the minimum (n=5)``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ranklens.errors import InputError, did_you_mean
from ranklens.gates.model import COVERAGE, Check, GateSettings, Rule
from ranklens.gates.scope import rule_scopes
from ranklens.stats.sums import np_mean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["GateReport", "bound_holds", "check_rules", "drop_within"]

#: Slack on threshold comparisons, so that a value equal to the threshold up to float rounding counts as equal.
_EPS = 1e-12
_SYMBOL = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}


def _slack(threshold: float) -> float:
    return _EPS * max(1.0, abs(threshold))


def bound_holds(op: str, value: float, threshold: float) -> bool:
    """Whether ``value op threshold`` holds, with equality up to float rounding (``>`` and ``<`` are strict).

    >>> bound_holds(">=", 0.1 + 0.2, 0.3), bound_holds(">", 0.1 + 0.2, 0.3), bound_holds("<=", 0.5, 0.4)
    (True, False, False)
    """
    s = _slack(threshold)
    if op == ">=":
        return value + s >= threshold
    if op == ">":
        return value > threshold + s
    if op == "<=":
        return value - s <= threshold
    if op == "<":
        return value < threshold - s
    raise InputError(f"unknown comparison {op!r}; expected >=, >, <= or <")


def drop_within(drop: float, limit: float) -> bool:
    """Whether a drop (baseline − value) stays within ``limit``, up to float rounding."""
    return not drop > limit + _slack(limit)


@dataclass(frozen=True)
class GateReport:
    """The checks of a gate, and the notes of its paired comparison."""

    checks: tuple[Check, ...]
    notes: tuple[str, ...] = ()

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def passed(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "failed": len(self.failed), "checks": [c.to_dict() for c in self.checks]}

    def lines(self) -> list[str]:
        """``PASS …``/``FAIL …`` per check and the verdict line."""
        out = [f"{c.status.upper():4} {c.message}" for c in self.checks]
        n, bad = len(self.checks), len(self.failed)
        out.append(f"gate: {bad} of {n} checks failed" if bad else f"gate: all {n} checks passed")
        return out


def check_rules(
    rules: Sequence[Rule],
    run: Any,
    baseline: Any = None,
    segments: Any = None,
    settings: GateSettings | None = None,
    *,
    run_path: str = "run",
    baseline_path: str | None = None,
    universe: Sequence[str] | None = None,
) -> GateReport:
    """Check every rule on ``run`` (per-query :class:`~ranklens.results.Results`) over all queries and,
    with segments, in every segment (segment-specific rules replace the general rule of the same kind and
    measure in their segment); drops are paired query by query against ``baseline`` (Results).

    ``universe`` is every query a check could count (the qrels queries; default: the run's). A check says
    on how many of them it was made, and a check over none fails. ``segments`` go through
    :func:`ranklens.comparison.load_segments`; labelling none of the universe is an InputError."""
    settings = settings or GateSettings()
    queries = list(universe) if universe is not None else list(run.query_ids)
    segment_of = None
    if segments is not None:  # (the comparison's reader; a gate without segments or drops needs no comparison)
        from ranklens.comparison import load_segments
        from ranklens.data.segments import check_overlap

        segment_of = load_segments(segments)
        source = str(segments) if isinstance(segments, (str, os.PathLike)) else "segments"
        check_overlap(segment_of, queries, source=source)  # type: ignore[arg-type]
    labels = sorted(set(segment_of.values())) if segment_of else []
    for r in rules:
        if r.measure == COVERAGE:
            raise InputError(
                f"rule {str(r)!r}: {COVERAGE} is the monitor's series of answered / expected queries; the gate "
                "counts every qrels query (unanswered ones score 0), so it has no coverage to check"
            )
        if r.segment is None:
            continue
        if segment_of is None:
            raise InputError(f"the rule for segment {r.segment!r} needs --segments FILE")
        if r.segment not in labels:
            raise InputError(
                f"the rule for segment {r.segment!r} names no segment of the segments file "
                f"({', '.join(labels)})" + did_you_mean(r.segment, labels)
            )
    # every segment with a query to count, evaluated or not: a segment the run skipped entirely fails
    seg_names = sorted({segment_of[q] for q in queries if q in segment_of}) if segment_of else []
    scoped = rule_scopes(rules, seg_names)  # (no segments file: no segment names)
    drops = [r for r, _ in scoped if r.kind == "max_drop"]
    if drops and baseline is None:
        raise InputError("--max-drop rules need --baseline BASE.run")
    comparison = None
    if drops:
        from ranklens.comparison import compare, unique_names

        names = unique_names([(baseline.run, baseline_path), (run.run, run_path)])
        comparison = compare(
            None,
            dict(zip(names, (baseline, run))),
            [r.measure for r in drops],
            baseline=0,
            test=settings.test,
            correction=settings.correction,
            segments=segment_of,
            alpha=settings.alpha or 0.05,
            samples=settings.samples,
            seed=settings.seed,
        )
    checks = []
    for rule, scope in scoped:
        total = sum(1 for q in queries if scope is None or (segment_of or {}).get(q) == scope)
        if rule.kind == "max_drop":
            alpha = rule.alpha if rule.alpha is not None else settings.alpha
            checks.append(_check_drop(rule, scope, comparison, alpha, total))
        else:
            checks.append(_check_bound(rule, scope, run, segment_of, total))
    if comparison is None:
        return GateReport(tuple(checks))
    own = tuple(f"{name}: " for name in comparison.systems)  # the runs' own notes, already printed
    return GateReport(tuple(checks), tuple(n for n in comparison.notes if not n.startswith(own)))


def _where(segment: str | None, n: int, total: int) -> str:
    """``all queries`` / ``segment 'nav'`` when the check counts every query in scope, else how many:
    ``5 of 12 queries`` / ``0 of 1 query of segment 'nav'``."""
    if n == total:
        return "all queries" if segment is None else f"segment {segment!r}"
    of = f"{n} of {total} quer{'y' if total == 1 else 'ies'}"
    return of if segment is None else f"{of} of segment {segment!r}"


def _check_bound(rule: Rule, segment: str | None, run: Any, segment_of: dict[str, str] | None, total: int) -> Check:
    col = run.column_values(rule.measure)
    values = [v for v, q in zip(col, run.query_ids) if segment is None or (segment_of or {}).get(q) == segment]
    n = len(values)
    head = f"{rule.measure} {_SYMBOL[rule.op]} {rule.threshold:g} on {_where(segment, n, total)}"

    def check(value: float, status: str, message: str) -> Check:
        return Check(rule.kind, rule.measure, segment, rule.threshold, value, n, status, message, None, total)

    if n == 0:  # a check over nothing must not pass a gate
        return check(math.nan, "fail", f"{head}: no evaluated query")
    mean = _value(run, rule.measure, values)
    if mean is None:
        return check(math.nan, "fail", f"{head}: {rule.measure} is system-level (one value per run), not computed per segment")
    if bound_holds(rule.op, mean, rule.threshold):
        return check(mean, "pass", f"{head}: {mean:.4f} (n={n})")
    if rule.kind == "min":
        return check(mean, "fail", f"{head}: {mean:.4f} is {rule.threshold - mean:.4f} below the minimum (n={n})")
    return check(mean, "fail", f"{head}: {mean:.4f} is {mean - rule.threshold:.4f} above the maximum (n={n})")


def _value(run: Any, measure: str, values: list[float]) -> float | None:
    """The value a bound checks: the mean of the per-query values, or for a system-level measure its
    value on the run (None on a segment), or for a measure that takes ``agg=`` (the recommender measures,
    which also leave NA users out) its own aggregate."""
    from ranklens.measures import parse
    from ranklens.results.core import aggregate

    m = parse(measure)
    if m.family.is_system(m):
        return float(run[measure]) if len(values) == len(run.query_ids) else None
    if any(p.name == "agg" for p in m.family.params):  # (other measures: the plain mean, as always)
        return aggregate(m, values)
    return np_mean(values)  # (numpy's mean, bit for bit, without numpy)


def _check_drop(rule: Rule, segment: str | None, comparison: Any, alpha: float | None, total: int) -> Check:
    base, system = comparison.systems
    try:
        row = comparison.row(base, system, rule.measure, segment)
    except InputError:
        head = f"{rule.measure} drop ≤ {rule.threshold:g} vs baseline {base!r} on {_where(segment, 0, total)}"
        # a check over nothing must not pass a gate
        return Check("max_drop", rule.measure, segment, rule.threshold, math.nan, 0, "fail",
                     f"{head}: no query both runs answered", None, total)
    head = f"{rule.measure} drop ≤ {rule.threshold:g} vs baseline {base!r} on {_where(segment, row.n, total)}"
    drop = -row.diff
    p = row.p_value_adjusted
    p_out = None if math.isnan(p) else p
    detail = f"{row.mean_system:.4f} vs {row.mean_baseline:.4f}, n={row.n}"

    def check(status: str, message: str) -> Check:
        return Check("max_drop", rule.measure, segment, rule.threshold, drop, row.n, status, message, p_out, total)

    if drop_within(drop, rule.threshold):
        what = f"dropped {drop:.4f}" if drop > 0 else f"gained {-drop:.4f}"
        return check("pass", f"{head}: {what} ({detail})")
    over = drop - rule.threshold
    p_text = "p=—" if math.isnan(p) else f"p={p:.4g}"
    if alpha is not None and not p <= alpha:  # a NaN p is never significant
        return check(
            "pass",
            f"{head}: dropped {drop:.4f} ({over:.4f} over the limit) but not significantly "
            f"({p_text} > α={alpha:g}; {detail})",
        )
    sig = f", {p_text} ≤ α={alpha:g}" if alpha is not None else ""
    return check("fail", f"{head}: dropped {drop:.4f}, {over:.4f} over the limit ({detail}{sig})")
