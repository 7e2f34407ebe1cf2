"""Issue 9, items 1 and 5–8: inputs that trec_eval reads one way and ranklens read another.

Each test reproduces a report: words after the run tag, a column hidden by a doubled delimiter,
hexadecimal labels, a UTF-8 byte-order mark, files with nothing to evaluate, and ``--missing zero``
on measures whose value on an empty ranking differs from trec_eval's ``-c`` placeholder ranking.
Expected values are trec_eval 10.0's (run by hand on the same bytes) or derived in the comments.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import FormatError, InputError


def ranklens_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, text: str | bytes) -> str:
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return str(path)


# --------------------------------------------------------------------------- 1. words after the tag


def test_eval_ignores_words_after_the_tag_and_says_how_many_lines_had_them(tmp_path: Path) -> None:
    qrels = write(tmp_path / "q.qrels", "q1 0 d1 1\nq1 0 d2 0\n")
    plain = write(tmp_path / "plain.run", "q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\n")
    extra = write(tmp_path / "extra.run", "q1 Q0 d2 1 2.0 t words here\nq1\tQ0\td1\t2\t1.0\tt  1 2\n")
    for streamed in ("--stream", "--no-stream"):
        code, out, err = ranklens_cli("eval", qrels, extra, "-m", "RR", "-f", "tsv", streamed)
        assert code == 0, err
        assert out == ranklens_cli("eval", qrels, plain, "-m", "RR", "-f", "tsv")[1] == "RR\tall\t0.5\n"
        assert err.count("words after the tag") == 1
        assert "2 lines" in err


def test_python_reader_accepts_words_after_the_tag_but_qrels_must_have_four_columns(tmp_path: Path) -> None:
    run = ranklens.read_run(write(tmp_path / "r.run", "q1 Q0 d1 1 2.0 t x y z\n"))
    assert run.to_dict() == {"q1": {"d1": 2.0}}
    with pytest.raises(FormatError, match=r"q\.qrels:1: expected 4 columns .* got 5"):
        ranklens.read_qrels(write(tmp_path / "q.qrels", "q1 0 d1 1 extra\n"))


# --------------------------------------------------------------------------- 6. doubled delimiters


@pytest.mark.parametrize(
    ("name", "text", "found"),
    [
        ("r.run", "q1  Q0 d2 2.0 t\n", "got 5"),  # rank missing, hidden by two spaces
        ("r.run", "q1\t\tQ0\td2\t2.0\tt\n", "got 5"),
        ("r.run", "q1 Q0 d2 1 2.0 \n", "got 5"),  # trailing delimiter, no tag
        ("q.qrels", "q1  0 2\n", "got 3"),  # docid missing: not a judgement for document '0'
        ("q.qrels", "q1\t0\t\t2\n", "got 3"),
    ],
)
def test_an_empty_field_never_shifts_the_columns(tmp_path: Path, name: str, text: str, found: str) -> None:
    path = write(tmp_path / name, text)
    reader = ranklens.read_run if name.endswith(".run") else ranklens.read_qrels
    with pytest.raises(FormatError, match=rf"{name}:1: expected \d columns .*{found}"):
        reader(path)


def test_doubled_delimiter_is_malformed_in_eval_and_trec_eval(tmp_path: Path) -> None:
    qrels = write(tmp_path / "q.qrels", "q1 0 d2 1\n")
    run = write(tmp_path / "r.run", "q1 Q0 d1 1 3.0 t\nq1  Q0 d2 2.0 t\n")
    code, out, err = ranklens_cli("eval", qrels, run, "-m", "P@1")
    assert (code, out) == (2, "")
    assert "r.run:2: expected 6 columns" in err and err.count("\n") == 1
    code, out, err = ranklens_cli("trec-eval", qrels, run)
    assert (code, out) == (2, "")
    assert "r.run:2" in err


# --------------------------------------------------------------------------- 7. hex labels and the BOM


@pytest.mark.parametrize("label", ["0x10", "0X1", "1e3", "2.5", "99999999999999999999"])
def test_labels_are_decimal_integers(tmp_path: Path, label: str) -> None:
    path = write(tmp_path / "q.qrels", f"q1 0 d0 1\nq1 0 d1 {label}\n")
    with pytest.raises(FormatError, match=rf"q\.qrels:2: expected .*relevance label.*'{label}'"):
        ranklens.read_qrels(path)


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    ("name", "qrels", "run"),
    [
        ("trec", b"q1 0 d1 1\n", b"q1 Q0 d1 1 1.0 t\n"),
        ("csv", b"query_id,doc_id,relevance\nq1,d1,1\n", b"query_id,doc_id,score\nq1,d1,1.0\n"),
        ("tsv", b"query_id\tdoc_id\trelevance\nq1\td1\t1\n", b"query_id\tdoc_id\tscore\nq1\td1\t1.0\n"),
        ("json", b'{"q1": {"d1": 1}}', b'{"q1": {"d1": 1.0}}'),
        ("jsonl", b'{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n',
         b'{"query_id": "q1", "doc_id": "d1", "score": 1.0}\n'),
    ],
)
def test_a_utf8_bom_is_dropped_by_every_reader(tmp_path: Path, name: str, qrels: bytes, run: bytes) -> None:
    q = ranklens.read_qrels(write(tmp_path / f"q.{name}", BOM + qrels))
    r = ranklens.read_run(write(tmp_path / f"r.{name}", BOM + run))
    assert q.to_dict() == {"q1": {"d1": 1}}
    assert r.to_dict() == {"q1": {"d1": 1.0}}
    gz = ranklens.read_qrels(write(tmp_path / f"q.{name}.gz", gzip.compress(BOM + qrels)))
    assert gz.to_dict() == {"q1": {"d1": 1}}


def test_a_bom_is_dropped_on_the_streaming_path(tmp_path: Path) -> None:
    qrels = write(tmp_path / "q.qrels", BOM + b"q1 0 d1 1\n")
    run = write(tmp_path / "r.run", BOM + b"q1 Q0 d1 1 1.0 t\n")
    for mode in ("--stream", "--no-stream"):
        code, out, err = ranklens_cli("eval", qrels, run, "-m", "P@1", "-f", "tsv", mode)
        assert (code, out) == (0, "P@1\tall\t1.0\n"), err


# --------------------------------------------------------------------------- 8. nothing to evaluate


def test_qrels_of_only_comments_is_an_error_everywhere(tmp_path: Path) -> None:
    qrels = write(tmp_path / "q.qrels", "# judged later\n\n")
    run = write(tmp_path / "r.run", "q1 Q0 d1 1 1.0 t\n")
    with pytest.raises(FormatError, match=r"q\.qrels: expected at least one judgement"):
        ranklens.read_qrels(qrels)
    for command in (("eval", qrels, run, "-m", "P@1"), ("trec-eval", qrels, run)):
        code, out, err = ranklens_cli(*command)
        assert (code, out) == (2, ""), command
        assert "q.qrels" in err and "at least one" in err


@pytest.mark.parametrize("text", ["", "  \n \n", "# a comment\n", "\n\n\n"])
def test_a_run_with_no_result_line_is_an_error(tmp_path: Path, text: str) -> None:
    qrels = write(tmp_path / "q.qrels", "q1 0 d1 1\n")
    run = write(tmp_path / "r.run", text)
    for command in (
        ("eval", qrels, run, "-m", "P@1", "--stream"),
        ("eval", qrels, run, "-m", "P@1", "--no-stream"),
        ("trec-eval", qrels, run),
        ("trec-eval", "-c", qrels, run),
    ):
        code, out, err = ranklens_cli(*command)
        assert (code, out) == (2, ""), (command, out, err)
        assert "r.run" in err and "at least one" in err


def test_an_evaluation_over_no_query_is_an_error(tmp_path: Path) -> None:
    qrels = write(tmp_path / "q.qrels", "q1 0 d1 1\n")
    run = write(tmp_path / "r.run", "q2 Q0 d1 1 1.0 t\n")  # shares no query with the qrels
    for mode in ("--stream", "--no-stream"):
        code, out, err = ranklens_cli("eval", qrels, run, "-m", "P@1", mode)
        assert (code, out) == (2, ""), err
        assert "no query" in err
    with pytest.raises(InputError, match="no query"):
        ranklens.evaluate({"q1": {"d1": 1}}, {"q2": {"d1": 1.0}}, ["P@1"])


# --------------------------------------------------------------------------- 5. --missing zero


def test_missing_zero_scores_an_absent_query_like_trec_eval_c(tmp_path: Path) -> None:
    """trec_eval -c ranks an absent query against one unjudged placeholder document: interpolated precision
    is max over an empty set of recall points ≥ r of nothing but precision 0 at rank 1, i.e. 0 (not NaN).
    Query a is perfect (1.0 everywhere), query b absent: the means are 0.5."""
    qrels = write(tmp_path / "z.qrels", "a 0 d1 1\nb 0 d1 1\n")
    run = write(tmp_path / "z.run", "a Q0 d1 1 1.0 t\n")
    measures = ["IPrecAvg", "IPrec(recall=0)", "IPrec(recall=0.5)", "AP", "bpref", "Rprec", "infAP", "nDCG", "RR"]
    for mode in ("--stream", "--no-stream"):
        code, out, err = ranklens_cli(
            "eval", qrels, run, "-m", *measures, "--missing", "zero", "--per-query", "-f", "tsv", mode
        )
        assert code == 0, err
        rows = {(m, q): float(v) for m, q, v in (line.split("\t") for line in out.splitlines())}
        printed = {m for m, _ in rows}
        assert len(printed) == len(measures)
        for m in printed:
            assert rows[(m, "a")] == 1.0, m
            assert rows[(m, "b")] == 0.0, m
            assert rows[(m, "all")] == 0.5, m
    with pytest.warns(ranklens.RanklensWarning, match="1 qrels query with no retrieved document: scored 0"):
        res = ranklens.evaluate({"a": {"d1": 1}, "b": {"d1": 1}}, {"a": {"d1": 1.0}}, measures, missing="zero")
    assert res.per_query("IPrecAvg") == {"a": 1.0, "b": 0.0}


def test_missing_zero_keeps_na_for_set_measures_that_are_na_by_definition() -> None:
    """RA-nWG is NA on a query with no relevant document whatever the run: --missing zero must not turn
    that NA into a 0 (it is excluded from the mean and counted in the notes)."""
    qrels = {"a": {"d1": 3, "d2": 1}, "b": {"d1": 0}}
    with pytest.warns(ranklens.RanklensWarning):  # b scored 0, and NA for RA-nWG
        res = ranklens.evaluate(qrels, {"a": {"d1": 1.0, "d2": 0.5}}, ["RAnWG@5"], missing="zero")
    values = res.per_query("RAnWG@5")
    assert values["a"] == 1.0
    assert values["b"] != values["b"]  # NaN: NA
    assert any("NA" in note for note in res.notes)


def test_json_report_of_extra_fields_note(tmp_path: Path) -> None:
    """The note reaches machine formats' readers through stderr only; stdout stays parseable."""
    qrels = write(tmp_path / "q.qrels", "q1 0 d1 1\n")
    run = write(tmp_path / "r.run", "q1 Q0 d1 1 1.0 t extra\n")
    code, out, err = ranklens_cli("eval", qrels, run, "-m", "P@1", "-f", "json")
    assert code == 0
    json.loads(out)
    assert "1 line " in err and "words after the tag" in err


# --------------------------------------------------------------------------- 4. options and stdin

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "trec_eval"


def test_run_read_from_stdin_gives_the_same_output(tmp_path: Path) -> None:
    qrels, run = str(GOLDEN / "case1.qrels"), GOLDEN / "case1.run"
    from_file = CliRunner().invoke(cli, ["trec-eval", "-q", qrels, str(run)])
    from_pipe = CliRunner().invoke(cli, ["trec-eval", "-q", qrels, "-"], input=run.read_bytes())
    assert from_pipe.exit_code == 0 and from_pipe.stdout == from_file.stdout
    assert "runid                 \tall\t" in from_pipe.stdout
    e_file = CliRunner().invoke(cli, ["eval", qrels, str(run), "-m", "nDCG@10", "AP", "-f", "tsv"])
    e_pipe = CliRunner().invoke(cli, ["eval", qrels, "-", "-m", "nDCG@10", "AP", "-f", "tsv"], input=run.read_bytes())
    assert e_pipe.exit_code == 0 and e_pipe.stdout == e_file.stdout


def test_debug_query_evaluates_only_that_query() -> None:
    qrels, run = str(GOLDEN / "case1.qrels"), str(GOLDEN / "case1.run")
    full = CliRunner().invoke(cli, ["trec-eval", "-q", "-m", "map", qrels, run]).stdout.splitlines()
    qid = full[0].split("\t")[1]
    one = CliRunner().invoke(cli, ["trec-eval", "-q", "-m", "map", f"-D1.{qid}", qrels, run])
    assert one.exit_code == 0
    value = full[0].split("\t")[2]
    assert one.stdout.splitlines() == [f"map                   \t{qid}\t{value}", f"map                   \tall\t{value}"]
    none = CliRunner().invoke(cli, ["trec-eval", "-D1.nope", qrels, run])
    assert (none.exit_code, none.stdout) == (7, "")
    assert "No queries with both results and relevance info" in none.stderr
    assert CliRunner().invoke(cli, ["trec-eval", "-D", "3", qrels, run]).exit_code == 0  # a level alone: accepted


def test_malformed_zscore_file_names_file_and_line(tmp_path: Path) -> None:
    z = write(tmp_path / "z.txt", "q1 map 0.5 0.1\nq1 P_5 high 0.1\n")
    code, out, err = ranklens_cli("trec-eval", "-Z", z, str(GOLDEN / "case1.qrels"), str(GOLDEN / "case1.run"))
    assert (code, out) == (2, "")
    assert "z.txt:2: expected two numbers" in err


def test_zscores_by_hand(tmp_path: Path) -> None:
    """q1: P_5 = 2/5 = 0.4; reference mean 0.3, stddev 0.05 → (0.4 - 0.3)/0.05 = 2.0. q1's map has no
    reference line → -1000000; a zero deviation with the value equal to the mean → 0."""
    qrels = write(tmp_path / "q.qrels", "q1 0 a 1\nq1 0 b 1\nq1 0 c 0\n")
    run = write(tmp_path / "r.run", "q1 Q0 a 1 5 t\nq1 Q0 c 2 4 t\nq1 Q0 b 3 3 t\n")
    z = write(tmp_path / "z.txt", "q1 P_5 0.3 0.05\nq1 num_rel 2 0\n")
    code, out, _ = ranklens_cli("trec-eval", "-q", "-Z", z, "-m", "P.5", "-m", "map", "-m", "num_rel", qrels, run)
    assert code == 0
    assert out.splitlines() == [
        "Znum_rel               \tq1\t0.0000",
        "Zmap                   \tq1\t-1000000.0000",
        "ZP_5                   \tq1\t2.0000",
        "Znum_rel               \tall\t0.0000",
        "Zmap                   \tall\t-1000000.0000",
        "ZP_5                   \tall\t2.0000",
    ]


def test_trec_eval_reads_a_fifo_run_once(tmp_path: Path) -> None:
    """A FIFO written once cannot be opened twice: the run id (last line's tag) comes from the same read."""
    import os
    import threading

    qrels, run = GOLDEN / "case1.qrels", GOLDEN / "case1.run"
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(run.read_bytes()), daemon=True)
    writer.start()
    got = CliRunner().invoke(cli, ["trec-eval", "-q", str(qrels), str(fifo)])
    writer.join(timeout=10)
    assert not writer.is_alive()
    assert got.exit_code == 0, got.stderr
    assert got.stdout == CliRunner().invoke(cli, ["trec-eval", "-q", str(qrels), str(run)]).stdout
