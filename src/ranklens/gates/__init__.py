"""One rule model for CI gates (``ranklens gate``) and monitor alerts.

A :class:`Rule` bounds a measure (``nDCG@10 >= 0.85``, ``ERR@10 <= 0.4``) or how far it may drop against a
baseline (``nDCG@10 drop <= 0.01 alpha=0.05``; in the monitor the baseline is the trailing window,
``window=7``, or a reference system, ``vs=bm25``), overall or in one segment. :func:`parse_rule` reads the
one text syntax (:mod:`ranklens.gates.parse`), :func:`read_rules` the one TOML file
(:mod:`ranklens.gates.files`) and :func:`check_rules` checks rules on per-query Results.

>>> rules = [parse_rule("P@5 >= 0.4"), parse_rule("nDCG@10=0.01", kind="max_drop")]
>>> [str(r) for r in rules]
['P@5 >= 0.4', 'nDCG@10 drop <= 0.01']
"""

from __future__ import annotations

from ranklens.gates.check import GateReport, bound_holds, check_rules, drop_within
from ranklens.gates.files import read_rules
from ranklens.gates.inputs import gate_results, saved_as_run
from ranklens.gates.model import COVERAGE, KINDS, Check, GateSettings, Rule
from ranklens.gates.parse import one_measure, parse_number, parse_rule
from ranklens.gates.scope import rule_scopes, scope_key

__all__ = [
    "COVERAGE",
    "KINDS",
    "Check",
    "GateReport",
    "GateSettings",
    "Rule",
    "bound_holds",
    "check_rules",
    "drop_within",
    "gate_results",
    "one_measure",
    "parse_number",
    "parse_rule",
    "read_rules",
    "rule_scopes",
    "saved_as_run",
    "scope_key",
]
