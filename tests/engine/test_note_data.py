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


# ── the counted notes of the recommender side tables (issue 26: no face parses note text back into counts)

COUNTED = [
    (Note("seen_rows_dropped", 1210, total=4000),
     "exclude-seen: dropped 1,210 of 4,000 recommended rows whose item the user has in the training data"),
    (Note("absent_items", 3, total=40, head="Novelty@10", tail="top-10 recommendations are of items not in the training data: left out of Novelty"),
     "Novelty@10: 3 of 40 top-10 recommendations are of items not in the training data: left out of Novelty"),
    (Note("empty_users", 2, total=5, empty="skip", fill=0.0),
     "empty=skip: 2 of 5 users with no relevant test item left out of the per-user measures (system-level measures "
     "count every user's list)"),
    (Note("empty_users", 2, total=5, empty="one", fill=1.0),
     "empty=one: 2 of 5 users with no relevant test item score 1 on the relevance measures"),
]


@pytest.mark.parametrize(("note", "words"), COUNTED)
def test_counted_notes_are_data_worded_once(note: Note, words: str) -> None:
    assert cli_wording(note) == words
    key, count, total = note.counted()  # type: ignore[misc]
    assert (count, total) == (note.count, note.fields["total"])
    assert Note.from_counted(key, count, total) == note and Note.from_counted(key, count, total).fields == note.fields
    assert Note.from_data(note.data()) == note


def test_spark_sums_bucket_counts_from_the_data_not_the_words() -> None:
    """Two buckets' exclude-seen notes: the driver adds their counts as data (3 + 4 of 10 + 20)."""
    spark_core = pytest.importorskip("ranklens.spark.core")
    a, b = Note("seen_rows_dropped", 3, total=10), Note("seen_rows_dropped", 4, total=20)
    (key_a, xa, ya), (key_b, xb, yb) = spark_core.note_counts(a), spark_core.note_counts(b)
    assert key_a == key_b
    merged = spark_core.merge_notes({"pre": {key_a: [0, xa + xb, ya + yb, False], "said as it is": [1, 0, 0, True]}})
    assert merged["pre"] == [Note("seen_rows_dropped", 7, total=30), "said as it is"]
    assert merged["pre"][0].data() == {"kind": "seen_rows_dropped", "count": 7, "total": 30}


def test_the_recommender_notes_are_data() -> None:
    """exclude-seen by hand: u1's recommendations a, b, c; u1 has seen b → 1 of 3 rows dropped."""
    with pytest.warns(ranklens.RanklensWarning, match="dropped 1 of 3"):
        res = ranklens.evaluate({"u1": {"a": 1}}, {"u1": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["nDCG@3"],
                                train={"u1": ["b"]}, exclude_seen=True)
    counted = [n for n in res.notes if isinstance(n, Note) and n.kind == "seen_rows_dropped"]
    assert [n.data() for n in counted] == [{"kind": "seen_rows_dropped", "count": 1, "total": 3}]


@pytest.mark.parametrize("bad", [{"kind": "nope", "count": 1}, {"kind": "truncated_rows", "count": -1},
                                 {"kind": "absent_items", "count": 1, "total": 2}, {"count": 1}])
def test_data_that_is_no_note_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Note.from_data(bad)


def test_eval_json_carries_the_notes_as_data() -> None:
    """The toy dense run lacks one qrels query (q12, by the note the command prints): its data in the JSON."""
    from click.testing import CliRunner

    from ranklens.cli.main import cli

    ex = Path(__file__).resolve().parents[2] / "examples"
    out = CliRunner().invoke(cli, ["eval", str(ex / "toy.qrels"), str(ex / "toy_dense.run"), "-m", "P@5", "-f", "json"])
    import json

    (run,) = json.loads(out.stdout)["runs"]
    assert run["note_data"] == [{"kind": "qrels_only_queries", "count": 1, "scored_zero": False}]
    assert [cli_wording(Note.from_data(d)) for d in run["note_data"]] == run["notes"]
