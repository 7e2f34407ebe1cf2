"""Reading production logs: impressions (one row per shown item) and engagement events (clicks, purchases …
that arrive later), validated row by row with messages naming the file and the line.

Timestamps are ISO 8601 strings (``2026-01-05T13:00:00Z``; no zone means UTC) or epoch seconds; they are
returned as float epoch seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ranklens.errors import FormatError, InputError
from ranklens.labels.events import EventLog, read_events

__all__ = ["EngagementColumns", "ImpressionColumns", "parse_duration", "read_engagement", "read_impressions"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(text: str) -> float:
    """``30m``, ``1h``, ``24h``, ``1d``, ``2w`` → seconds.

    >>> parse_duration("1d"), parse_duration("24h"), parse_duration("90s")
    (86400.0, 86400.0, 90.0)
    """
    m = _DURATION.match(str(text))
    if not m or float(m.group(1)) < 0:
        raise InputError(f"expected a duration such as 30m, 1h, 24h, 1d or 2w; got {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


@dataclass(frozen=True)
class ImpressionColumns:
    """Column names of the impressions log (one row per item shown in a response)."""

    request: str = "request"
    query: str = "query"
    item: str = "item"
    position: str = "position"
    score: str = "score"
    timestamp: str = "timestamp"
    segment: str | None = None
    system: str | None = None


@dataclass(frozen=True)
class EngagementColumns:
    """Column names of the engagement log (one row per event on a shown item)."""

    request: str = "request"
    item: str = "item"
    event: str = "event"
    timestamp: str = "timestamp"
    value: str = "value"


def timestamps(log: EventLog, column: str) -> np.ndarray:
    """A time column as float epoch seconds: numbers are epoch seconds, strings ISO 8601 (UTC unless zoned)."""
    import polars as pl

    series = log.frame[column]
    if series.dtype.is_numeric():
        return log.numbers(column)
    if series.dtype == pl.Datetime or isinstance(series.dtype, pl.Datetime):
        parsed = series.dt.replace_time_zone(None) if series.dtype.time_zone is None else series.dt.convert_time_zone("UTC")  # type: ignore[attr-defined]
        text = None
    else:
        text = series.cast(pl.Utf8)
        parsed = text.str.strip_chars().str.replace(r"Z$", "+00:00").str.to_datetime(time_zone="UTC", strict=False)
    bad = parsed.is_null().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        found = None if text is None else text[row]
        raise FormatError(log.where(row), f"column '{column}' must be an ISO 8601 time or epoch seconds, got {found!r}")
    return np.asarray(parsed.dt.epoch("us").to_numpy(), dtype=np.float64) / 1e6


def read_impressions(source: Any, columns: ImpressionColumns = ImpressionColumns(), *, format: str | None = None) -> Any:
    """Read an impressions log into a polars DataFrame with the columns ``request, query, item, position,
    score, ts, segment, system`` (``segment``/``system`` are ``"all"`` when no column is named), plus every
    other column as read.

    >>> rows = {"request": ["r1", "r1"], "query": ["q", "q"], "item": ["a", "b"], "position": [1, 2],
    ...         "score": [2.0, 1.0], "timestamp": ["2026-01-05T10:00:00Z"] * 2}
    >>> read_impressions(rows)["ts"].to_list()
    [1767607200.0, 1767607200.0]
    """
    import polars as pl

    log = read_events(source, format=format)
    c = columns
    needed = {c.request: "the request (one response) each row belongs to", c.query: "the user or query of the request",
              c.item: "the item shown", c.position: "its 1-based position", c.score: "the system's score",
              c.timestamp: "when it was shown"}
    if c.segment:
        needed[c.segment] = "the segment (--segment-col)"
    if c.system:
        needed[c.system] = "the system or variant (--system-col)"
    log.require(needed)
    n = log.frame.height
    data = {
        "request": log.id_series(c.request), "query": log.id_series(c.query), "item": log.id_series(c.item),
        "position": log.positions(c.position), "score": log.numbers(c.score), "ts": timestamps(log, c.timestamp),
        "segment": log.id_series(c.segment) if c.segment else pl.repeat("all", n, dtype=pl.Utf8, eager=True),
        "system": log.id_series(c.system) if c.system else pl.repeat("all", n, dtype=pl.Utf8, eager=True),
    }
    frame = pl.DataFrame({k: (v.alias(k) if isinstance(v, pl.Series) else pl.Series(k, v)) for k, v in data.items()})
    dup = frame.select("request", "item").is_duplicated().to_numpy()
    if dup.any():
        row = int(np.flatnonzero(dup)[1] if np.count_nonzero(dup) > 1 else np.flatnonzero(dup)[0])
        raise FormatError(log.where(row), f"item {data['item'][row]!r} shown twice in request {data['request'][row]!r}; expected one row per (request, item)")
    extra = [col for col in log.columns if col not in frame.columns and col not in needed]
    return frame.with_columns(log.frame.select(extra)) if extra else frame


def read_engagement(source: Any, columns: EngagementColumns = EngagementColumns(), *, format: str | None = None,
                    need_value: bool = False) -> Any:
    """Read an engagement log into a polars DataFrame ``request, item, event, ts, value, row`` (``value`` is
    1.0 when the log has no value column; ``row`` is the file row, for messages).

    >>> ev = read_engagement({"request": ["r1"], "item": ["a"], "event": ["click"], "timestamp": [1767607300]})
    >>> ev.select("event", "ts", "value").row(0)
    ('click', 1767607300.0, 1.0)
    """
    import polars as pl

    log = read_events(source, format=format)
    c = columns
    needed = {c.request: "the request the engaged item was shown in", c.item: "the item engaged with",
              c.event: "the event type (click, purchase …)", c.timestamp: "when it happened"}
    if need_value:
        needed[c.value] = "the value of fraction/mean signals (watch completion, dwell seconds)"
    log.require(needed)
    value = log.numbers(c.value) if c.value in log.columns else np.ones(log.frame.height)
    data = {"request": log.id_series(c.request), "item": log.id_series(c.item), "event": log.id_series(c.event),
            "ts": timestamps(log, c.timestamp), "value": value, "row": np.arange(log.frame.height)}
    return pl.DataFrame({k: (v.alias(k) if isinstance(v, pl.Series) else pl.Series(k, v)) for k, v in data.items()})
