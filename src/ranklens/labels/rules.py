"""Declarative rules mapping engagement rates to graded labels, from TOML or Python.

A rules file::

    default_grade = 0                # grade of well-supported pairs no rule matches (omit: unlabelled)

    [columns]                        # the key columns of the log (these are the defaults)
    query = "query"
    item = "item"
    position = "position"

    [signals]                        # what to aggregate per (query, item)
    click = "event"                  # short form: the kind; the column has the signal's name
    purchase = { kind = "event", column = "bought" }
    watch = { kind = "fraction", column = "watch_completion" }
    dwell = { kind = "mean", column = "dwell_seconds", over = "click" }

    [support]                        # pairs below this are left unlabelled
    min_impressions = 20
    min_events = { click = 3 }

    [[grade]]                        # first matching rule wins (precedence = file order)
    grade = 5
    when = { purchase = ">= 0.10" }  # every condition must hold; a bare number means ">="

    [[grade]]
    grade = 3
    when = { click = ">= 0.3", dwell = ">= 30" }

    [score]                          # optional: a weighted score binned into grades, for pairs no rule matched
    weights = { click = 1.0, purchase = 10.0 }
    bins = [0.05, 0.2, 0.5]          # score < 0.05 → grades[0]; [0.05, 0.2) → grades[1]; …
    grades = [0, 1, 2, 3]            # default 0, 1, …, len(bins)

Signal kinds: ``event`` — a 0/1 column per impression, aggregated to a rate (events / impressions) and a
count; ``fraction`` — a value in [0, 1] per impression (watch completion), aggregated by its mean;
``mean`` — any value ≥ 0 (dwell seconds), aggregated by its mean, over the rows where the event signal
``over`` is 1 when given. ``impressions`` is always available (the number of rows of the pair).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ranklens.errors import FormatError, did_you_mean

__all__ = ["Condition", "GradeRule", "LabelRules", "ScoreBins", "Signal", "load_rules"]

KINDS = ("event", "fraction", "mean")
_OPS = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}
_COND = re.compile(r"^\s*(>=|<=|>|<)?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


@dataclass(frozen=True)
class Signal:
    """One aggregated signal: its name in the rules, its column in the log, its kind."""

    name: str
    kind: str = "event"
    column: str = ""
    over: str | None = None

    @property
    def source_column(self) -> str:
        return self.column or self.name


@dataclass(frozen=True)
class Condition:
    """``signal op threshold``, e.g. ``purchase >= 0.1``."""

    signal: str
    op: str
    threshold: float

    def __str__(self) -> str:
        return f"{self.signal} {self.op} {self.threshold:g}"


@dataclass(frozen=True)
class GradeRule:
    """``grade`` for the pairs where every condition holds."""

    grade: int
    conditions: tuple[Condition, ...]

    def __str__(self) -> str:
        return f"{self.grade} when " + " and ".join(map(str, self.conditions))


@dataclass(frozen=True)
class ScoreBins:
    """score = Σ weight·signal; grade = ``grades[i]`` for the i-th bin of ``bins`` (right-open)."""

    weights: tuple[tuple[str, float], ...]
    bins: tuple[float, ...]
    grades: tuple[int, ...]


@dataclass(frozen=True)
class LabelRules:
    """A validated rule set. Build with :func:`load_rules` (TOML path, TOML text or a dict)."""

    signals: tuple[Signal, ...]
    rules: tuple[GradeRule, ...] = ()
    score: ScoreBins | None = None
    min_impressions: int = 1
    min_events: tuple[tuple[str, int], ...] = ()
    default_grade: int | None = None
    query: str = "query"
    item: str = "item"
    position: str = "position"
    source: str = "<rules>"

    def signal(self, name: str) -> Signal:
        for s in self.signals:
            if s.name == name:
                return s
        raise KeyError(name)

    @property
    def signal_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.signals)


def load_rules(source: Any) -> LabelRules:
    """Load and validate rules from a TOML file path, a dict of the same shape, or a :class:`LabelRules`.

    >>> rules = load_rules({"signals": {"click": "event"}, "support": {"min_impressions": 5},
    ...                     "grade": [{"grade": 2, "when": {"click": ">= 0.5"}}]})
    >>> [str(r) for r in rules.rules], rules.min_impressions
    (['2 when click >= 0.5'], 5)
    >>> load_rules({"signals": {"click": "event"}, "grade": [{"grade": 2, "when": {"clik": 0.5}}]})
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: <rules>: [[grade]] #1 uses unknown signal 'clik'; did you mean 'click'? The signals are: click, impressions
    """
    if isinstance(source, LabelRules):
        return source
    if isinstance(source, Mapping):
        return _from_dict(source, "<rules>")
    path = os.fspath(source)
    if not os.path.exists(path):
        raise FormatError(path, "no such file")
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            from ranklens.errors import MissingDependencyError

            raise MissingDependencyError("tomli", "labels", "reading TOML rules on Python 3.10") from None
    with open(path, "rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as e:
            raise FormatError(path, f"not valid TOML: {e}") from None
    return _from_dict(data, path)


_TOP_KEYS = ("default_grade", "columns", "signals", "support", "grade", "score")


def _from_dict(data: Mapping[str, Any], src: str) -> LabelRules:
    for key in data:
        if key not in _TOP_KEYS:
            raise FormatError(src, f"unknown key '{key}'{did_you_mean(key, _TOP_KEYS)}; the keys are: {', '.join(_TOP_KEYS)}")
    columns = _table(data, "columns", src)
    for key in columns:
        if key not in ("query", "item", "position"):
            raise FormatError(src, f"[columns] knows query, item and position; got '{key}'")
    signals = []
    raw_signals = _table(data, "signals", src)
    if not raw_signals:
        raise FormatError(src, "no [signals] table: declare what to aggregate, e.g. click = \"event\"")
    for name, spec in raw_signals.items():
        if name == "impressions":
            raise FormatError(src, "'impressions' is built in (the number of rows of a pair); do not declare it")
        if isinstance(spec, str):
            spec = {"kind": spec}
        if not isinstance(spec, Mapping):
            raise FormatError(src, f"[signals] {name}: expected a kind (\"event\") or a table, got {spec!r}")
        unknown = set(spec) - {"kind", "column", "over"}
        if unknown:
            raise FormatError(src, f"[signals] {name}: unknown key(s) {', '.join(sorted(unknown))}; keys are kind, column, over")
        kind = str(spec.get("kind", "event"))
        if kind not in KINDS:
            raise FormatError(src, f"[signals] {name}: kind must be one of {', '.join(KINDS)}; got {kind!r}{did_you_mean(kind, KINDS)}")
        over = spec.get("over")
        if over is not None and kind != "mean":
            raise FormatError(src, f"[signals] {name}: 'over' applies to kind = \"mean\" only")
        signals.append(Signal(str(name), kind, str(spec.get("column", "")), None if over is None else str(over)))
    names = [s.name for s in signals] + ["impressions"]
    by_name = {s.name: s for s in signals}
    for s in signals:
        if s.over is not None:
            if s.over not in by_name:
                raise FormatError(src, f"[signals] {s.name}: over = '{s.over}' is not a signal{did_you_mean(s.over, names)}")
            if by_name[s.over].kind != "event":
                raise FormatError(src, f"[signals] {s.name}: over = '{s.over}' must be an event signal")

    def known(name: str, where: str) -> str:
        if name not in names:
            hint = did_you_mean(name, names)
            listing = f"{' The' if hint else '; the'} signals are: {', '.join(names)}"
            raise FormatError(src, f"{where} uses unknown signal '{name}'{hint}{listing}")
        return name

    support = _table(data, "support", src)
    for key in support:
        if key not in ("min_impressions", "min_events"):
            raise FormatError(src, f"[support] knows min_impressions and min_events; got '{key}'")
    min_impressions = _int(support.get("min_impressions", 1), "[support] min_impressions", src, minimum=1)
    min_events = []
    for name, count in _mapping(support.get("min_events", {}), "[support] min_events", src).items():
        known(str(name), "[support] min_events")
        if name == "impressions" or by_name[str(name)].kind != "event":
            raise FormatError(src, f"[support] min_events: '{name}' is not an event signal")
        min_events.append((str(name), _int(count, f"[support] min_events.{name}", src, minimum=0)))

    rules = []
    raw_rules = data.get("grade", [])
    if not isinstance(raw_rules, list):
        raise FormatError(src, "grade rules are an array of tables: [[grade]]")
    for number, rule in enumerate(raw_rules, start=1):
        where = f"[[grade]] #{number}"
        if not isinstance(rule, Mapping):
            raise FormatError(src, f"{where}: expected a table with grade and when")
        unknown = set(rule) - {"grade", "when"}
        if unknown:
            raise FormatError(src, f"{where}: unknown key(s) {', '.join(sorted(unknown))}; keys are grade, when")
        if "grade" not in rule:
            raise FormatError(src, f"{where}: missing 'grade'")
        grade = _int(rule["grade"], f"{where} grade", src)
        when = _mapping(rule.get("when", {}), f"{where} when", src)
        if not when:
            raise FormatError(src, f"{where}: 'when' needs at least one condition, e.g. when = {{ click = \">= 0.3\" }}")
        conditions = tuple(_condition(known(str(k), where), v, where, src) for k, v in when.items())
        rules.append(GradeRule(grade, conditions))

    score = None
    if "score" in data:
        raw = _table(data, "score", src)
        unknown = set(raw) - {"weights", "bins", "grades"}
        if unknown:
            raise FormatError(src, f"[score]: unknown key(s) {', '.join(sorted(unknown))}; keys are weights, bins, grades")
        weights = tuple((known(str(k), "[score] weights"), _float(v, f"[score] weights.{k}", src))
                        for k, v in _mapping(raw.get("weights", {}), "[score] weights", src).items())
        if not weights:
            raise FormatError(src, "[score]: weights is empty")
        bins = tuple(_float(b, "[score] bins", src) for b in raw.get("bins", []))
        if not bins or any(b2 <= b1 for b1, b2 in zip(bins, bins[1:])):
            raise FormatError(src, "[score]: bins must be a non-empty, increasing list of thresholds")
        grades = tuple(_int(g, "[score] grades", src) for g in raw.get("grades", range(len(bins) + 1)))
        if len(grades) != len(bins) + 1:
            raise FormatError(src, f"[score]: {len(bins)} bins make {len(bins) + 1} grades; got {len(grades)} grades")
        score = ScoreBins(weights, bins, grades)

    default = data.get("default_grade")
    result = LabelRules(
        signals=tuple(signals),
        rules=tuple(rules),
        score=score,
        min_impressions=min_impressions,
        min_events=tuple(min_events),
        default_grade=None if default is None else _int(default, "default_grade", src),
        query=str(columns.get("query", "query")),
        item=str(columns.get("item", "item")),
        position=str(columns.get("position", "position")),
        source=src,
    )
    check_rates(result)
    return result


def _table(data: Mapping[str, Any], key: str, src: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise FormatError(src, f"[{key}] must be a table")
    return value


def _mapping(value: Any, where: str, src: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FormatError(src, f"{where} must be a table like {{ click = 3 }}")
    return value


def _int(value: Any, where: str, src: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(src, f"{where} must be an integer; got {value!r}")
    if minimum is not None and value < minimum:
        raise FormatError(src, f"{where} must be ≥ {minimum}; got {value}")
    return value


def _float(value: Any, where: str, src: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(src, f"{where} must be a number; got {value!r}")
    return float(value)


def _condition(signal: str, value: Any, where: str, src: str) -> Condition:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Condition(signal, ">=", float(value))
    m = _COND.match(str(value))
    if not m:
        raise FormatError(src, f"{where}: condition on '{signal}' must look like \">= 0.1\" or \"< 5\"; got {value!r}")
    return Condition(signal, m.group(1) or ">=", float(m.group(2)))


def check_rates(rules: LabelRules) -> None:
    """Raise when a condition on a rate or fraction signal has a threshold outside [0, 1]."""
    for number, rule in enumerate(rules.rules, start=1):
        for c in rule.conditions:
            if c.signal != "impressions" and rules.signal(c.signal).kind in ("event", "fraction") and not 0 <= c.threshold <= 1:
                raise FormatError(
                    rules.source,
                    f"[[grade]] #{number}: '{c.signal}' is a rate in [0, 1]; the threshold {c.threshold:g} is outside it",
                )
