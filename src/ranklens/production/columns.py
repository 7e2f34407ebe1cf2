"""A batch of production events checked a column at a time: the fast path for a well-formed batch.

A service's batch is almost always entirely valid. Checking it field by field per event
(:func:`~ranklens.production.events.validate_impression`) costs a few microseconds an event in Python; here
each field is taken out of every event once and checked as a column (types, lengths, NUL, ranges, finiteness
by built-ins that loop in C). The answer is the batch's columns in the stored order, or ``None`` when any event
would not pass the one-by-one checks: the caller then runs those, which name each refusal. So the column path
decides only "all valid"; what is refused, and why, is always the one-by-one checks' answer.

>>> cols = impression_columns([{"id": "i1", "request": "r1", "query": "q", "item": "a", "position": 1,
...                             "score": 2, "timestamp": 1767607200}])
>>> [c[0] for c in cols]
['i1', 'r1', 'q', 'a', 1, 2.0, 1767607200.0, 'all', 'all']
>>> impression_columns([{"id": "i1", "request": "r1", "query": "q", "item": "a", "position": 0,
...                      "score": 2, "timestamp": 1767607200}]) is None
True
>>> [c[0] for c in event_columns([{"id": "e1", "request": "r1", "item": "a", "event": "click", "timestamp": 5}])]
['e1', 'r1', 'a', 'click', 5.0, 1.0]
"""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any

from ranklens.production.events import MAX_TEXT, MAX_TIME

__all__ = ["event_columns", "impression_columns"]

_TEXT = 200  # the default width of a text column (events.MAX_TEXT names the others)
Columns = tuple[list[Any], ...]


def _column(events: list[dict[str, Any]], name: str, default: Any = None) -> list[Any] | None:
    if default is not None:
        return [e.get(name, default) for e in events]
    try:
        return list(map(itemgetter(name), events))
    except KeyError:
        return None


def _texts(col: list[Any] | None, name: str) -> bool:
    """Every value a string of 1 to the column's width characters, without NUL."""
    if col is None:
        return False
    try:
        joined = "\x00".join(col)  # refuses anything but strings
    except TypeError:
        return False
    return joined.count("\x00") == len(col) - 1 and "" not in col and max(map(len, col)) <= MAX_TEXT.get(name, _TEXT)


def _floats(col: list[Any] | None) -> list[float] | None:
    if col is None or not set(map(type, col)) <= {int, float}:  # bool is its own type: refused, as one by one
        return None
    try:
        out = list(map(float, col))
    except OverflowError:  # an integer beyond a float
        return None
    # a finite sum means every value is finite (an infinity or NaN would carry through; a sum that overflows
    # only sends the batch to the one-by-one checks)
    return out if math.isfinite(sum(out)) else None


def _times(col: list[Any] | None) -> list[float] | None:
    out = _floats(col)
    if out is None or min(out) < 0 or max(out) > MAX_TIME:
        return None
    return out


def impression_columns(events: list[Any]) -> Columns | None:
    """``(id, request, query, item, position, score, ts, segment, system)`` as columns, or ``None`` when any
    impression is not plainly valid (as :func:`~ranklens.production.events.validate_impression` has it)."""
    if not events or set(map(type, events)) != {dict}:
        return None
    ids, requests, queries, items = (_column(events, name) for name in ("id", "request", "query", "item"))
    segments, systems = _column(events, "segment", "all"), _column(events, "system", "all")
    positions = _column(events, "position")
    scores, ts = _floats(_column(events, "score")), _times(_column(events, "timestamp"))
    if (scores is None or ts is None or positions is None or set(map(type, positions)) != {int}
            or min(positions) < 1 or max(positions) > 1_000_000
            or not all(_texts(col, name) for col, name in ((ids, "id"), (requests, "request"), (queries, "query"),
                                                          (items, "item"), (segments, "segment"), (systems, "system")))):
        return None
    return ids, requests, queries, items, positions, scores, ts, segments, systems  # type: ignore[return-value]


def event_columns(events: list[Any]) -> Columns | None:
    """``(id, request, item, event, ts, value)`` as columns, or ``None`` when any engagement event is not
    plainly valid (as :func:`~ranklens.production.events.validate_event` has it)."""
    if not events or set(map(type, events)) != {dict}:
        return None
    ids, requests, items, kinds = (_column(events, name) for name in ("id", "request", "item", "event"))
    ts, values = _times(_column(events, "timestamp")), _floats(_column(events, "value", 1.0))
    if (ts is None or values is None
            or not all(_texts(col, name) for col, name in ((ids, "id"), (requests, "request"), (items, "item"), (kinds, "event")))):
        return None
    return ids, requests, items, kinds, ts, values  # type: ignore[return-value]
