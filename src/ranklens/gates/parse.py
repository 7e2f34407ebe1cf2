"""The one text syntax of a rule, and its parser.

::

    nDCG@10 >= 0.85                      a minimum (also >)
    ERR@10 <= 0.4                        a maximum (also <)
    nDCG@10 drop <= 0.01                 a drop of at most 0.01 vs the baseline
    nDCG@10 drop <= 0.01 alpha=0.05      … failing only when the drop is significant
    nDCG@10 drop <= 0.02 window=7        … in the monitor: vs the mean of the trailing 7 days
    nDCG@10 drop <= 0 vs=bm25 alpha=0.05 … in the monitor: vs the latest snapshot of system bm25
    P@5 >= 0.4 segment=navigational      the rule of one segment

The command-line spelling ``nDCG@10=0.85`` (``--min``, ``--max``, ``--max-drop``) is the same rule with its
kind given by the flag.
"""

from __future__ import annotations

import math
import re

from ranklens.errors import InputError
from ranklens.gates.model import COVERAGE, KINDS, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["one_measure", "parse_number", "parse_rule"]

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_RULE = re.compile(
    r"\s*(?P<measure>.+?)\s*(?P<drop>\bdrop\b)?\s*(?P<op>>=|<=|≥|≤|>|<)\s*(?P<value>\S*)(?P<options>(?:\s+\S+)*)\s*"
)
_OPS = {">=": ("min", False), "≥": ("min", False), ">": ("min", True),
        "<=": ("max", False), "≤": ("max", False), "<": ("max", True)}
_OPTIONS = {"segment": "segment", "alpha": "alpha", "window": "window", "vs": "reference"}
_FLAGS = {"min": "--min", "max": "--max", "max_drop": "--max-drop"}
_SHAPE = "'nDCG@10 >= 0.85', 'nDCG@10 <= 0.9' or 'nDCG@10 drop <= 0.01 [alpha=0.05] [window=7]'"


def parse_number(value: Any, what: str) -> float:
    """A finite number from a TOML number or a decimal text (``.``, ``1e``, ``--1``, ``nan`` are refused).

    >>> parse_number("0.85", "x"), parse_number(1, "x")
    (0.85, 1.0)
    >>> parse_number("1e", "--min 'AP=1e'")
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: --min 'AP=1e': expected a number, got '1e'
    """
    if isinstance(value, bool):
        raise InputError(f"{what}: expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        x = float(value)
    elif isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        x = float(value)
    else:
        raise InputError(f"{what}: expected a number, got {value!r}")
    if not math.isfinite(x):
        raise InputError(f"{what}: expected a finite number, got {value!r}")
    return x


def parse_rule(text: str, *, kind: str | None = None, segment: str | None = None) -> Rule:
    """The :class:`Rule` a text states (see the module docstring). ``kind`` (``min``, ``max``, ``max_drop``)
    is the command-line flag's: then ``MEASURE=VALUE`` is accepted too. The measure is checked (an unknown
    name suggests the nearest) and kept as written.

    >>> parse_rule("nDCG@10 >= 0.85")
    Rule('nDCG@10 >= 0.85')
    >>> parse_rule("nDCG@10=0.01", kind="max_drop")
    Rule('nDCG@10 drop <= 0.01')
    >>> parse_rule("nDCG@10 >= .")
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: rule 'nDCG@10 >= .': expected a number, got '.'
    """
    if not isinstance(text, str):
        raise InputError(f"a rule is a text such as {_SHAPE}; got {text!r}")
    if kind is not None and kind not in KINDS:
        raise InputError(f"unknown rule kind {kind!r}; expected one of {', '.join(KINDS)}")
    m = _RULE.fullmatch(text)
    if m is None and kind is not None:
        return _flag_rule(kind, text, segment)
    if m is None:
        raise InputError(f"rule {text!r} must look like {_SHAPE}")
    where = f"rule {text!r}" if kind is None else f"{_FLAGS[kind]} {text!r}"
    found, strict = _OPS[m["op"]]
    if m["drop"]:
        if m["op"] not in ("<=", "≤"):
            raise InputError(f"{where}: a drop rule reads 'MEASURE drop <= VALUE'")
        found = "max_drop"
    if kind is not None and kind != found:
        raise InputError(f"{where}: {_FLAGS[kind]} takes MEASURE=VALUE, not a {found} rule")
    threshold = parse_number(m["value"], where)
    fields: dict[str, Any] = {"segment": segment}
    for option in m["options"].split():
        key, sep, value = option.partition("=")
        if not sep or key not in _OPTIONS or not value:
            raise InputError(f"{where}: unknown option {option!r}; expected {', '.join(k + '=…' for k in _OPTIONS)}")
        if key in ("alpha", "window") and found != "max_drop":
            raise InputError(f"{where}: {key}= applies to drop rules only")
        fields[_OPTIONS[key]] = parse_number(value, f"{where}: {key}") if key in ("alpha", "window") else value
    return _rule(found, m["measure"], threshold, where, strict=strict and found != "max_drop", **fields)


def _flag_rule(kind: str, text: str, segment: str | None) -> Rule:
    flag = _FLAGS[kind]
    measure, sep, value = text.rpartition("=")  # measure names may hold '='
    if not sep or not measure.strip():
        raise InputError(f"{flag} {text!r}: expected MEASURE=VALUE, e.g. nDCG@10=0.85")
    return _rule(kind, measure, parse_number(value, f"{flag} {text!r}"), f"{flag} {text!r}", segment=segment)


def _rule(kind: str, measure: str, threshold: float, where: str, **fields: Any) -> Rule:
    if kind == "max_drop" and threshold < 0:
        raise InputError(f"{where}: the allowed drop must be ≥ 0")
    alpha = fields.get("alpha")
    if alpha is not None and not 0 < alpha < 1:
        raise InputError(f"{where}: alpha must be between 0 and 1; got {alpha:g}")
    window = fields.get("window")
    if window is not None and not 0 < window <= 366:
        raise InputError(f"{where}: window must be between 0 and 366 days; got {window:g}")
    if measure.strip() != COVERAGE:  # (the coverage series is no measure of the language)
        one_measure(measure.strip(), None)  # raises MeasureError with a suggestion
    return Rule(kind, measure.strip(), threshold, **fields)


def one_measure(text: str, rel_level: float | None) -> Any:
    """The single Measure a rule names (a trec_eval list such as ``ndcg_cut.5,10`` is refused)."""
    from ranklens.measures import parse_many

    found = parse_many([text], rel_level=rel_level)
    if len(found) != 1:
        raise InputError(f"a rule names one measure; {text!r} names {len(found)}: {', '.join(map(str, found))}")
    return found[0].validate()
