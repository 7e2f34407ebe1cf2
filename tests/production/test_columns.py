"""The column-at-a-time check of a batch (``ranklens.production.columns``) against the one-by-one checks.

The oracle is :func:`validate_impression` / :func:`validate_event` run on every event: whenever the column
path accepts a batch, every event must pass one by one with exactly the values the columns hold; and a plain
service batch must take the column path (else the ingest route silently falls back to the slow one).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens.production.columns import event_columns, impression_columns
from ranklens.production.events import MAX_TIME, validate_event, validate_impression

T0 = 1767607200

# values that one check or another refuses (or accepts only one by one), put into one field of one event
ODD: list[Any] = ["", "a\x00b", "x" * 129, "y" * 201, True, False, None, 0, -1, 1.5, 1_000_001, 7, "3",
                  float("nan"), float("inf"), -float("inf"), 10**400, MAX_TIME + 1, MAX_TIME, -0.0, 2.0**60, [], {}]


def _imp(k: int) -> dict[str, Any]:
    return {"id": f"i{k}", "request": f"r{k // 10}", "query": "q", "item": f"d{k}", "position": 1 + k % 10,
            "score": 1.0 / (1 + k % 10), "timestamp": T0 + k, "segment": "books", "system": "A"}


def _ev(k: int) -> dict[str, Any]:
    return {"id": f"e{k}", "request": f"r{k}", "item": f"d{k}", "event": "click", "timestamp": T0 + k, "value": 1}


def _oracle(check: Any, events: list[Any]) -> list[tuple[Any, ...]] | None:
    rows = []
    for i, e in enumerate(events):
        row, bad = check(e, i)
        if bad is not None:
            return None
        rows.append(row)
    return rows


def _agree(columns: Any, check: Any, events: list[Any]) -> bool:
    cols = columns(events)
    if cols is None:
        return False
    rows = _oracle(check, events)
    assert rows is not None, "the column path accepted a batch the one-by-one checks refuse"
    got = list(zip(*cols))
    assert got == rows and [tuple(map(type, r)) for r in got] == [tuple(map(type, r)) for r in rows]
    return True


def _spoiled(events: list[Any], spoil: list[tuple[int, str, Any]], dropped: tuple[str, str]) -> list[Any]:
    """``events`` with the drawn values put in (``-drop``: the first field of ``dropped`` removed when the value
    is None, else the second)."""
    for k, field, value in spoil:
        if field == "-drop":
            events[k % len(events)].pop(dropped[0] if value is None else dropped[1], None)
        else:
            events[k % len(events)][field] = value
    return events


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 12), spoil=st.lists(st.tuples(st.integers(0, 11), st.sampled_from(
    ["id", "request", "query", "item", "position", "score", "timestamp", "segment", "system", "-drop"]),
    st.sampled_from(ODD)), max_size=2))
def test_impression_columns_agree_with_one_by_one(n: int, spoil: list[tuple[int, str, Any]]) -> None:
    events = _spoiled([_imp(k) for k in range(n)], spoil, ("segment", "item"))
    accepted = _agree(impression_columns, validate_impression, events)
    if not spoil:
        assert accepted  # a plain batch takes the column path


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 12), spoil=st.lists(st.tuples(st.integers(0, 11), st.sampled_from(
    ["id", "request", "item", "event", "timestamp", "value", "-drop"]), st.sampled_from(ODD)), max_size=2))
def test_event_columns_agree_with_one_by_one(n: int, spoil: list[tuple[int, str, Any]]) -> None:
    events = _spoiled([_ev(k) for k in range(n)], spoil, ("value", "event"))
    accepted = _agree(event_columns, validate_event, events)
    if not spoil:
        assert accepted


def test_each_refusal_sends_the_batch_one_by_one() -> None:
    """One odd value anywhere → ``None`` (the caller then names the refusal); the same value in a field that
    accepts it one by one too (a string position, an integer id) also goes one by one."""
    for field, value in [("position", 0), ("position", True), ("score", float("nan")), ("timestamp", -1),
                         ("timestamp", MAX_TIME + 1), ("request", ""), ("item", "a\x00"), ("id", "x" * 129),
                         ("segment", "y" * 201), ("position", "3"), ("id", 7), ("score", 10**400)]:
        events = [_imp(k) for k in range(5)]
        events[3][field] = value
        assert impression_columns(events) is None, (field, value)
    for field, value in [("value", float("inf")), ("event", "z" * 101), ("timestamp", None), ("value", None)]:
        events = [_ev(k) for k in range(5)]
        events[2][field] = value
        assert event_columns(events) is None, (field, value)
    assert impression_columns([]) is None and impression_columns([_imp(0), "x"]) is None
