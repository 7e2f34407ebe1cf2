"""Engagement events → graded qrels: aggregate per (query, item), apply minimum support, map with rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.data.qrels import Qrels
from ranklens.labels.events import EventLog, read_events
from ranklens.labels.rules import _OPS, LabelRules, load_rules

__all__ = ["LabelResult", "grade_pairs", "labels_from_events", "pair_aggregations"]

LABELLED = "labelled"
LOW_SUPPORT = "low support"
NO_RULE = "no rule matched"


@dataclass(frozen=True, eq=False)
class LabelResult:
    """What :func:`labels_from_events` produced.

    Attributes:
        qrels: the labelled pairs as :class:`~ranklens.Qrels`.
        pairs: a polars DataFrame, one row per (query, item): ``impressions``, each signal's aggregate
            (rates for events, with ``<signal>_count``), ``grade`` (null when unlabelled) and ``status``
            (``labelled``, ``low support``, ``no rule matched``).
        rows: event rows read.
    """

    qrels: Qrels
    pairs: Any
    rows: int
    source: str = ""
    rules_source: str = ""
    grade_counts: dict[int, int] = field(default_factory=dict)

    @property
    def num_pairs(self) -> int:
        return int(self.pairs.height)

    @property
    def low_support(self) -> int:
        """Pairs left unlabelled for lack of support."""
        return int((self.pairs["status"] == LOW_SUPPORT).sum())

    @property
    def no_rule(self) -> int:
        """Supported pairs no rule matched (unlabelled when the rules give no default grade)."""
        return int((self.pairs["status"] == NO_RULE).sum())

    def summary(self) -> dict[str, Any]:
        """Counts: rows, pairs, pairs per grade, unlabelled pairs (by reason)."""
        return {
            "rows": self.rows,
            "pairs": self.num_pairs,
            "labelled": len(self.qrels),
            "grades": {str(g): n for g, n in sorted(self.grade_counts.items())},
            "unlabelled_low_support": self.low_support,
            "unlabelled_no_rule": self.no_rule,
            "queries": int(self.pairs["query"].n_unique()) if self.num_pairs else 0,
        }

    def summary_text(self) -> str:
        """The summary as lines of text."""
        s = self.summary()
        lines = [
            f"{s['rows']} event rows → {s['pairs']} (query, item) pairs over {s['queries']} queries",
            f"labelled: {s['labelled']}",
        ]
        for grade, n in s["grades"].items():
            lines.append(f"  grade {grade}: {n}")
        lines.append(f"unlabelled, too little support: {s['unlabelled_low_support']}")
        if s["unlabelled_no_rule"]:
            lines.append(f"unlabelled, no rule matched: {s['unlabelled_no_rule']}")
        return "\n".join(lines) + "\n"


def labels_from_events(events: Any, rules: Any, *, format: str | None = None) -> LabelResult:
    """Derive graded relevance labels from an engagement log.

    Args:
        events: the log (path to CSV/TSV/JSONL/Parquet, DataFrame, Arrow table, dict of columns): one row
            per impression with the query, item and position columns and a column per signal.
        rules: a TOML path, a dict of the same shape or :class:`~ranklens.labels.LabelRules`.

    Raises:
        FormatError: a missing column, a position < 1, an event value not 0/1, a fraction outside [0, 1]
            (each naming the file and row), or invalid rules (unknown signals name the nearest one).

    >>> events = {"query": ["q"] * 4 + ["r"], "item": ["a", "a", "a", "b", "a"], "position": [1, 2, 1, 3, 1],
    ...           "click": [1, 1, 0, 0, 1], "purchase": [1, 0, 0, 0, 0]}
    >>> rules = {"signals": {"click": "event", "purchase": "event"}, "support": {"min_impressions": 2},
    ...          "grade": [{"grade": 2, "when": {"purchase": ">= 0.2"}}, {"grade": 1, "when": {"click": 0.5}}],
    ...          "default_grade": 0}
    >>> res = labels_from_events(events, rules)
    >>> res.qrels.to_dict(), res.summary()["unlabelled_low_support"]
    ({'q': {'a': 2}}, 2)
    """
    import polars as pl

    r = load_rules(rules)
    log = read_events(events, format=format)
    log.require(
        {
            r.query: "the query of each impression ([columns] query)",
            r.item: "the item shown ([columns] item)",
            r.position: "its 1-based position ([columns] position)",
            **{s.source_column: f"signal '{s.name}' ({s.kind})" for s in r.signals},
        }
    )
    log.positions(r.position)  # validates: integers ≥ 1
    cols: dict[str, Any] = {"query": log.ids(r.query), "item": log.ids(r.item)}
    for s in r.signals:
        cols[s.name] = _signal_values(log, s.kind, s.source_column)
    frame = pl.DataFrame({k: (v.astype(str) if v.dtype == object else v) for k, v in cols.items()})

    pairs = frame.group_by(["query", "item"], maintain_order=True).agg(pair_aggregations(r)).sort(["query", "item"])
    pairs = grade_pairs(pairs, r)
    chosen = pairs.filter(pl.col("status") == LABELLED)
    qrels = Qrels.from_arrays(
        chosen["query"].to_arrow(), chosen["item"].to_arrow(), chosen["grade"].to_numpy(), source=f"labels from {log.source}"
    )
    counts = {int(g): int(c) for g, c in zip(*np.unique(chosen["grade"].to_numpy(), return_counts=True))}
    return LabelResult(qrels, pairs, int(frame.height), log.source, r.source, counts)


def pair_aggregations(r: LabelRules) -> list[Any]:
    """The polars aggregations of a (query, item) group of impressions that :func:`grade_pairs` needs: the
    ``impressions`` count and, per signal named in ``r``, its mean (events also their ``NAME_count``) — over the
    columns named by the signals' names.

    >>> import polars as pl
    >>> rules = load_rules({"signals": {"click": "event"}, "grade": [{"grade": 1, "when": {"click": 0.5}}]})
    >>> pl.DataFrame({"q": ["a", "a"], "click": [1.0, 0.0]}).group_by("q").agg(pair_aggregations(rules)).row(0)
    ('a', 2, 1.0, 0.5)
    """
    import polars as pl

    aggs: list[Any] = [pl.len().alias("impressions")]
    for s in r.signals:
        if s.kind == "event":
            aggs += [pl.col(s.name).sum().alias(f"{s.name}_count"), pl.col(s.name).mean().alias(s.name)]
        elif s.over is not None:
            aggs.append(pl.col(s.name).filter(pl.col(s.over) == 1).mean().alias(s.name))
        else:
            aggs.append(pl.col(s.name).mean().alias(s.name))
    return aggs


def grade_pairs(pairs: Any, r: LabelRules) -> Any:
    """The rules applied to aggregated pairs (:func:`pair_aggregations`): adds ``grade`` (null unless
    labelled) and ``status`` (labelled, low support, no rule) — the one place the rules grade.

    >>> import polars as pl
    >>> rules = load_rules({"signals": {"click": "event"}, "grade": [{"grade": 1, "when": {"click": 0.5}}], "default_grade": 0})
    >>> grade_pairs(pl.DataFrame({"impressions": [2, 2], "click_count": [1.0, 0.0], "click": [0.5, 0.0]}), rules)["grade"].to_list()
    [1, 0]
    """
    import polars as pl

    n = pairs.height
    supported = pairs["impressions"].to_numpy() >= r.min_impressions
    for name, count in r.min_events:
        supported &= pairs[f"{name}_count"].to_numpy() >= count
    grade = np.full(n, -1, dtype=np.int64)
    unset = supported.copy()

    def values(name: str) -> np.ndarray:
        return np.asarray(pairs[name].to_numpy(), dtype=np.float64)

    for rule in r.rules:  # precedence: the first rule that matches a pair sets its grade
        match = unset.copy()
        for c in rule.conditions:
            v = values(c.signal)
            with np.errstate(invalid="ignore"):
                match &= ~np.isnan(v) & _OPS[c.op](v, c.threshold)
        grade[match] = rule.grade
        unset &= ~match
    if r.score is not None and unset.any():
        score = np.zeros(n)
        for name, weight in r.score.weights:
            score += weight * np.nan_to_num(values(name))
        binned = np.asarray(r.score.grades)[np.searchsorted(np.asarray(r.score.bins), score, side="right")]
        grade[unset] = binned[unset]
        unset[:] = False
    if r.default_grade is not None:
        grade[unset] = r.default_grade
        unset[:] = False
    status = np.where(~supported, LOW_SUPPORT, np.where(unset, NO_RULE, LABELLED))
    return pairs.with_columns(pl.Series("grade", grade).cast(pl.Int64), pl.Series("status", status)).with_columns(
        pl.when(pl.col("status") == LABELLED).then(pl.col("grade")).otherwise(None).alias("grade")
    )


def _signal_values(log: EventLog, kind: str, column: str) -> np.ndarray:
    if kind == "event":
        return log.indicator(column)
    if kind == "fraction":
        return log.fraction(column)
    return log.nonnegative(column)
