"""Relevance labels from engagement logs: aggregate events per (query, item), keep the pairs with enough
support, and map rates to graded labels with declarative rules (TOML or Python).

* :func:`read_events` — read and validate an event log (CSV, TSV, JSONL, Parquet, DataFrame);
* :func:`load_rules` / :class:`LabelRules` — the rule set;
* :func:`labels_from_events` — events + rules → :class:`LabelResult` (qrels, the per-pair table, a summary).

Command line: ``ranklens labels from-events EVENTS --rules RULES.toml -o qrels.trec``.
"""

from ranklens.labels.engagement import LabelResult, labels_from_events
from ranklens.labels.events import EventLog, read_events
from ranklens.labels.rules import Condition, GradeRule, LabelRules, ScoreBins, Signal, load_rules

__all__ = [
    "Condition",
    "EventLog",
    "GradeRule",
    "LabelResult",
    "LabelRules",
    "ScoreBins",
    "Signal",
    "labels_from_events",
    "load_rules",
    "read_events",
]
