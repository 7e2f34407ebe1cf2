"""Notes as data (issue 26, first step): what joining a run to the qrels left out is a :class:`Note` with a kind,
a count and fields; the command line's words come from one function, :func:`cli_wording`. The engine's
alignment and the compiled pass both say their notes through it."""

from __future__ import annotations

from pathlib import Path

import pytest

import ranklens
from ranklens.errors import Note, alignment_note_data, cli_wording
from ranklens.evaluation import evaluate_files
from ranklens.express import available

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
RUN = {"q1": {"a": 2.0, "x": 1.0}, "r1": {"d": 1.0, "e": 0.5, "f": 0.1}, "r2": {"g": 1.0}}
# counted by hand: run-only queries r1 (3 rows) and r2 (1 row); qrels queries q2, q3 have no retrieved document
EXPECTED = [Note("run_only_queries", 2, rows=4), Note("qrels_only_queries", 2, scored_zero=False)]
WORDS = [
    "2 run queries (4 rows) not in the qrels: ignored",
    "2 qrels queries with no retrieved document: skipped; use --missing zero (trec_eval -c) to count them as 0",
]


def test_the_counts_are_data() -> None:
    assert alignment_note_data(2, 4, 2) == EXPECTED
    assert alignment_note_data(0, 0, 1, True, 5, 6) == [
        Note("qrels_only_queries", 1, scored_zero=True), Note("truncated_rows", 5), Note("unjudged_rows_removed", 6)
    ]
    assert alignment_note_data(0, 0, 0) == []


def test_the_command_lines_words() -> None:
    assert [cli_wording(n) for n in EXPECTED] == WORDS
    assert cli_wording(Note("run_only_queries", 1, rows=1)) == "1 run query (1 rows) not in the qrels: ignored"
    assert cli_wording(Note("truncated_rows", 3)) == "3 rows beyond the per-query depth limit: not evaluated"
    assert cli_wording(Note("unjudged_rows_removed", 2)) == "2 unjudged rows removed (judged-only)"


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="a note kind is one of"):
        Note("skipped_rows", 1)


def test_the_engine_says_its_notes_in_these_words() -> None:
    res = ranklens.Evaluator(["P@1"], QRELS)(RUN, warn=False)
    assert list(res.notes) == WORDS


@pytest.mark.parametrize("backend", ["reference", "compiled"])
def test_both_backends_say_the_same_notes(tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if backend == "compiled" and not available():
        pytest.skip("ranklens._cexpress is not built")
    monkeypatch.setenv("RANKLENS_BACKEND", backend)
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {lab}\n" for q, docs in QRELS.items() for d, lab in docs.items()))
    lines = [f"{q} Q0 {d} {i + 1} {s} run\n" for q, docs in RUN.items() for i, (d, s) in enumerate(docs.items())]
    (tmp_path / "r.txt").write_text("".join(lines))
    (res,) = evaluate_files(str(tmp_path / "q.txt"), [str(tmp_path / "r.txt")], ["P@1"]).results
    assert list(res.notes) == WORDS
