"""Fail closed in Python (issue 10 §1): what the CLI prints as notes, the Python API also warns about, and a
result over zero queries is an error, never a NaN."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import InputError, RanklensWarning, python_wording

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}
#: answers q1 and q2, misses q3, and has a query the qrels lack (q9)
PARTIAL = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 1.0, "c": 0.5}, "q9": {"z": 1.0}}
FULL = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0}}


def _messages(record: pytest.WarningsRecorder) -> list[str]:
    assert all(issubclass(w.category, RanklensWarning) for w in record)
    return [str(w.message) for w in record]


def test_ranklens_warning_is_a_public_user_warning() -> None:
    assert issubclass(RanklensWarning, UserWarning)
    assert "RanklensWarning" in ranklens.__all__ and ranklens.RanklensWarning is RanklensWarning
    assert "RanklensWarning" in ranklens.errors.__all__
    assert "RanklensWarning" in (ranklens.errors.__doc__ or "")


def test_evaluate_warns_once_per_note_pointing_at_the_caller() -> None:
    with pytest.warns(RanklensWarning) as record:
        res = ranklens.evaluate(QRELS, PARTIAL, "P@1")
    # by hand: q3 is skipped (not retrieved) and q9 ignored (not judged): two notes, each warned once
    assert len(res.notes) == 2
    assert _messages(record) == [f"run: {python_wording(note)}" for note in res.notes]
    assert any("1 qrels query with no retrieved document: skipped; pass missing='zero'" in m for m in _messages(record))
    assert any("1 run query" in m and "not in the qrels: ignored" in m for m in _messages(record))
    assert {w.filename for w in record} == {__file__}
    assert res.per_query("P@1") == {"q1": 1.0, "q2": 0.0}


def test_the_evaluator_warns_on_every_call() -> None:
    ev = ranklens.Evaluator(["P@1"], QRELS)
    for _ in range(2):  # the same notes again for the next run: not swallowed after the first time
        with pytest.warns(RanklensWarning) as record:
            res = ev(PARTIAL, name="partial")
        # (in the Python API's words: a note is data, each face words it)
        assert _messages(record) == [f"partial: {python_wording(note)}" for note in res.notes] and len(res.notes) == 2
    with pytest.warns(RanklensWarning) as record:
        ev.evaluate_many([FULL, PARTIAL])
    assert len(record) == 2 and all(m.startswith("run: ") for m in _messages(record))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ev(FULL).notes == ()  # nothing left out: no warning


def test_missing_zero_still_warns_what_it_did() -> None:
    with pytest.warns(RanklensWarning, match="scored 0"):
        res = ranklens.evaluate(QRELS, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, "P@1", missing="zero")
    assert res.per_query("P@1") == {"q1": 1.0, "q2": 1.0, "q3": 0.0}


def test_compare_warns_each_note_once() -> None:
    with pytest.warns(RanklensWarning) as record:
        cmp = ranklens.compare(QRELS, {"partial": PARTIAL, "full": FULL}, ["P@1"])
    # the runs' own notes come once, with the system's name, and the pairing note once: no duplicates
    assert _messages(record) == [python_wording(n) for n in cmp.notes]
    assert len(set(cmp.notes)) == len(cmp.notes)
    assert any(m.startswith("partial: 1 qrels query with no retrieved document") for m in cmp.notes)
    assert any("paired on 2 common queries" in m for m in cmp.notes)


def test_compare_over_no_common_query_is_an_error() -> None:
    a = {"q1": {"a": 1.0}}
    b = {"q2": {"c": 1.0}}
    with pytest.raises(InputError, match="a vs b: no query both answered"):
        ranklens.compare(QRELS, {"a": a, "b": b}, ["P@1"])
    # scoring the unanswered queries 0 pairs them on every qrels query
    with pytest.warns(RanklensWarning):
        cmp = ranklens.compare(QRELS, {"a": a, "b": b}, ["P@1"], missing="zero")
    assert cmp.rows[0].n == 3


def test_compare_with_segments_that_label_no_evaluated_query_is_an_error() -> None:
    with pytest.raises(InputError, match="no evaluated query has a segment"):
        ranklens.compare(QRELS, {"a": FULL, "b": FULL}, ["P@1"], segments={"zz": "x"})


def test_the_cli_prints_notes_once_and_does_not_warn(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq3 0 d 1\n")
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 a 1 2.0 r\nq2 Q0 c 1 1.0 r\n")
    other = tmp_path / "o.run"
    other.write_text("q1 Q0 a 1 2.0 o\nq2 Q0 c 1 1.0 o\nq3 Q0 d 1 1.0 o\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RanklensWarning escaping the CLI would raise here
        for args in (
            ["eval", str(qrels), str(run), "-m", "P@1"],
            ["compare", str(qrels), str(run), str(other), "-m", "P@1"],
            ["gate", str(qrels), str(run), "--min", "P@1=0", "--missing", "skip"],
        ):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 0, (args, result.output)
            notes = [line for line in result.stderr.splitlines() if "no retrieved document" in line]
            assert len(notes) == 1, (args, result.stderr)
            assert "Warning" not in result.stderr
