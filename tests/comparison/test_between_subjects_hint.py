"""compare detects runs over different users (a between-subjects experiment) and points to ``ranklens ab``
instead of suggesting ``--missing zero`` (issue 25)."""

from __future__ import annotations

import warnings

import pytest

from ranklens.comparison import compare
from ranklens.errors import InputError, RanklensWarning

QRELS = {f"u{i}": {"a": 1} for i in range(20)}


def test_no_common_query_points_to_ab() -> None:
    a = {f"u{i}": {"a": 1.0} for i in range(10)}
    b = {f"u{i}": {"a": 1.0} for i in range(10, 20)}
    with pytest.raises(InputError) as exc:
        compare(QRELS, {"a": a, "b": b}, ["P@1"])
    message = str(exc.value)
    assert "between-subjects" in message and "ranklens ab" in message
    assert "missing zero" not in message


def test_few_common_queries_note_points_to_ab() -> None:
    a = {f"u{i}": {"a": 1.0} for i in range(11)}
    b = {f"u{i}": {"a": 1.0} for i in range(9, 20)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        cmp = compare(QRELS, {"a": a, "b": b}, ["P@1"])
    joined = " ".join(cmp.notes)
    assert "between-subjects" in joined and "ranklens ab" in joined


def test_mostly_shared_queries_keep_the_missing_zero_hint() -> None:
    a = {f"u{i}": {"a": 1.0} for i in range(20)}
    b = {f"u{i}": {"a": 1.0} for i in range(19)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        cmp = compare(QRELS, {"a": a, "b": b}, ["P@1"])
    joined = " ".join(cmp.notes)
    assert "missing zero" in joined and "ranklens ab" not in joined
