"""The one rules file, read by ``ranklens gate --rules FILE`` and by the monitor alike::

    # rules.toml
    alpha = 0.05            # optional: a drop fails only when it is also significant
    test = "t"              # paired test for drops (t, randomisation, bootstrap, wilcoxon, sign)
    correction = "holm"     # across segments
    window = 7              # the monitor: drops are measured against the trailing mean of 7 days
    rules = ["P@5 >= 0.4", "nDCG@10 drop <= 0.02 alpha=0.01"]   # rules in the text syntax

    [min]                   # the mean must be at least this (overall and in every segment)
    "nDCG@10" = 0.85

    [max]                   # … at most this
    "ERR@10" = 0.9

    [max_drop]              # it may trail the baseline by at most this much
    "nDCG@10" = 0.01

    [segment.navigational]  # per-segment rules replace the general ones of the same kind and measure
    min = { "nDCG@10" = 0.9 }
    rules = ["P@5 >= 0.5"]
"""

from __future__ import annotations

import sys

from ranklens.errors import FormatError, InputError, MissingDependencyError, did_you_mean
from ranklens.gates.model import GateSettings, Rule
from ranklens.gates.parse import parse_number, parse_rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["read_rules"]

_TABLES = ("min", "max", "max_drop")
_SEGMENT_KEYS = (*_TABLES, "rules")
_TOP_KEYS = ("alpha", "test", "correction", "seed", "samples", "window", *_SEGMENT_KEYS, "segment")


def read_rules(path: str) -> tuple[list[Rule], GateSettings]:
    """The rules and settings of a TOML rules file (format in the module docstring); a bad file is a
    :class:`~ranklens.errors.FormatError` naming the file and the key."""
    data = _load_toml(path)
    settings = GateSettings()
    for key in data:
        if key not in _TOP_KEYS:
            raise FormatError(
                path, f"unknown key {key!r}; expected one of {', '.join(_TOP_KEYS)}" + did_you_mean(key, _TOP_KEYS)
            )
    try:
        if "alpha" in data:
            settings.alpha = parse_number(data["alpha"], f"{path}: alpha")
            if not 0 < settings.alpha < 1:
                raise FormatError(path, f"alpha must be between 0 and 1; got {data['alpha']!r}")
        if "window" in data:
            settings.window = parse_number(data["window"], f"{path}: window")
            if not 0 < settings.window <= 366:
                raise FormatError(path, f"window must be between 0 and 366 days; got {data['window']!r}")
    except FormatError:
        raise
    except InputError as e:
        raise FormatError(path, str(e).removeprefix(f"{path}: ")) from None
    for key in ("test", "correction"):
        if key in data:
            if not isinstance(data[key], str):
                raise FormatError(path, f"{key} must be a string; got {data[key]!r}")
            setattr(settings, key, data[key])
    for key in ("seed", "samples"):
        if key in data:
            value = data[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < (1 if key == "samples" else 0):
                raise FormatError(path, f"{key} must be a non-negative integer; got {value!r}")
            setattr(settings, key, value)
    rules = _table_rules(data, path, None)
    segments = data.get("segment", {})
    if not isinstance(segments, dict):
        raise FormatError(path, "[segment] must be a table of segments, e.g. [segment.navigational.min]")
    for name, body in segments.items():
        if not isinstance(body, dict):
            raise FormatError(path, f"[segment.{name}] must be a table with min, max, max_drop and/or rules")
        for key in body:
            if key not in _SEGMENT_KEYS:
                raise FormatError(
                    path, f"[segment.{name}]: unknown key {key!r}; expected one of {', '.join(_SEGMENT_KEYS)}"
                )
        rules.extend(_table_rules(body, path, str(name)))
    return rules, settings


def _table_rules(data: dict[str, Any], path: str, segment: str | None) -> list[Rule]:
    where = "" if segment is None else f"segment.{segment}."
    out = []
    for kind in _TABLES:
        table = data.get(kind, {})
        if not isinstance(table, dict):
            raise FormatError(path, f'[{where}{kind}] must be a table of "MEASURE" = VALUE lines')
        for measure, value in table.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise FormatError(path, f"[{where}{kind}] {measure!r}: expected a number, got {value!r}")
            out.append(parse_rule(f"{measure}={value}", kind=kind, segment=segment))
    texts = data.get("rules", [])
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise FormatError(path, f"{where}rules must be a list of rule texts such as \"nDCG@10 >= 0.85\"")
    for text in texts:
        rule = parse_rule(text)
        if segment is not None and rule.segment not in (None, segment):
            raise FormatError(path, f"[segment.{segment}] rules: {text!r} names segment {rule.segment!r}")
        out.append(rule if segment is None else _with_segment(rule, segment))
    return out


def _with_segment(rule: Rule, segment: str) -> Rule:
    from dataclasses import replace

    return replace(rule, segment=segment)


def _load_toml(path: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise MissingDependencyError("tomli", "gate", "reading rules files on Python 3.10") from None
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)  # type: ignore[no-any-return]
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise FormatError(path, f"not valid TOML: {e}") from None
