"""Streaming evaluation gives exactly the one-pass result, with errors naming lines of the whole file."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.engine.stream import evaluate_stream
from ranklens.errors import DuplicateError, FormatError, NotGroupedError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
MEASURES = ["nDCG@10", "nDCG(ties=average)@5", "AP", "RR", "P@5", "R@100", "ERR@10", "Bpref", "NumRet", "NumQ"]


@pytest.mark.parametrize("block_bytes", [64, 1000, 7777, 1 << 20])
@pytest.mark.parametrize("policy", [{}, {"missing": "zero"}, {"judged_only": True, "max_docs": 7}])
def test_streaming_equals_one_pass(block_bytes: int, policy: dict[str, object]) -> None:
    for run in ("toy_bm25.run", "toy_dense.run"):
        path = str(EXAMPLES / run)
        ev = ranklens.Evaluator(MEASURES, QRELS, **policy)  # type: ignore[arg-type]
        whole = ev(path, warn=False)  # the notes are compared below
        streamed = evaluate_stream(ev, path, block_bytes=block_bytes)
        assert streamed.query_ids == whole.query_ids
        np.testing.assert_array_equal(streamed.values, whole.values)  # bit for bit
        assert streamed.aggregates == whole.aggregates
        assert streamed.run == whole.run
        assert streamed.notes == whole.notes


def test_gzip_is_streamed(tmp_path: Path) -> None:
    target = tmp_path / "bm25.run.gz"
    target.write_bytes(gzip.compress((EXAMPLES / "toy_bm25.run").read_bytes()))
    ev = ranklens.Evaluator(["AP"], QRELS)
    assert evaluate_stream(ev, str(target), block_bytes=500)["AP"] == ev(str(EXAMPLES / "toy_bm25.run"))["AP"]


@pytest.mark.parametrize("block_bytes", [1, 7, 30, 64, 1 << 20])
def test_a_byte_order_mark_inside_the_file_is_refused_in_every_block(tmp_path: Path, block_bytes: int) -> None:
    """Only the marks that begin the file are dropped; one that begins a later line (files joined with cat)
    is an error naming its line, whether that line begins a block or not, as when the file is read whole
    (issue 22 item 3: it used to become part of that line's query id, and the query went missing)."""
    target = tmp_path / "marked.run"
    target.write_bytes(b"\xef\xbb\xbfq1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n\xef\xbb\xbfq2 Q0 d3 1 1.5 t\nq3 Q0 d1 1 1.0 t\n")
    ev = ranklens.Evaluator(["AP", "NumRet"], QRELS)
    for evaluate in (lambda: ev(str(target), warn=False), lambda: evaluate_stream(ev, str(target), block_bytes=block_bytes)):
        with pytest.raises(FormatError, match=r"marked\.run:3: found a byte-order mark"):
            evaluate()


@pytest.mark.parametrize("block_bytes", [1, 5, 64])
def test_a_first_block_of_marks_and_blank_lines_is_blank(tmp_path: Path, block_bytes: int) -> None:
    """A file that starts with a byte-order mark and a blank line: a block holding only those is blank, as
    the whole read drops the mark (found by the fuzz tests: the block was read as an empty file)."""
    target = tmp_path / "marked.run"
    target.write_bytes(b"\xef\xbb\xbf\r\n\nq1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.5 t\n")
    ev = ranklens.Evaluator(["AP", "NumRet"], QRELS)
    whole = ev(str(target), warn=False)
    streamed = evaluate_stream(ev, str(target), block_bytes=block_bytes)
    assert list(streamed.query_ids) == list(whole.query_ids) == ["q1", "q2"]
    np.testing.assert_array_equal(streamed.values, whole.values)


def _interleaved(tmp_path: Path) -> Path:
    lines = (EXAMPLES / "toy_dense.run").read_text().splitlines()
    moved = lines[:5] + lines[40:45] + lines[5:40] + lines[45:]  # q1 rows come back after q10's
    target = tmp_path / "interleaved.run"
    target.write_text("\n".join(moved) + "\n")
    return target


def test_interleaved_queries_are_an_error_naming_the_line(tmp_path: Path) -> None:
    target = _interleaved(tmp_path)
    ev = ranklens.Evaluator(["AP"], QRELS)
    with pytest.raises(NotGroupedError, match=r"interleaved.run:11: query 'q1' appears again after other queries"):
        evaluate_stream(ev, str(target), block_bytes=100)


def test_cli_falls_back_to_one_pass_when_not_grouped(tmp_path: Path) -> None:
    target = str(_interleaved(tmp_path))
    runner = CliRunner()
    auto = runner.invoke(cli, ["eval", QRELS, target, "-m", "AP", "nDCG@10", "-f", "tsv", "--per-query"])
    whole = runner.invoke(cli, ["eval", QRELS, target, "-m", "AP", "nDCG@10", "-f", "tsv", "--per-query", "--no-stream"])
    assert auto.exit_code == whole.exit_code == 0
    assert auto.stdout == whole.stdout
    forced = runner.invoke(cli, ["eval", QRELS, target, "-m", "AP", "--stream"])
    assert forced.exit_code == 2 and "appears again after other queries" in forced.stderr


def test_bad_line_in_a_late_block_names_its_line(tmp_path: Path) -> None:
    lines = (EXAMPLES / "toy_bm25.run").read_text().splitlines()
    lines[300] = "q11 Q0 doc11000 1 notanumber bm25"
    target = tmp_path / "bad.run"
    target.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"bad.run:301: .*notanumber"):
        evaluate_stream(ranklens.Evaluator(["AP"], QRELS), str(target), block_bytes=300)


def test_duplicate_in_a_late_block_names_its_line(tmp_path: Path) -> None:
    lines = (EXAMPLES / "toy_bm25.run").read_text().splitlines()
    lines[301] = lines[300].replace(" 1 ", " 2 ", 1) if " 1 " in lines[300] else lines[300]
    target = tmp_path / "dup.run"
    target.write_text("\n".join(lines) + "\n")
    with pytest.raises(DuplicateError, match=r"dup.run:302: document"):
        evaluate_stream(ranklens.Evaluator(["AP"], QRELS), str(target), block_bytes=300)


def test_streaming_keeps_the_na_notes_of_set_measures(tmp_path: Path) -> None:
    """Issue 11 V1: RA-nWG is NA on a query with nothing relevant; the streamed result says so, as the
    whole-file result does (the streaming path assembled Results by hand and dropped the note)."""
    from click.testing import CliRunner

    from ranklens.cli.main import cli

    (tmp_path / "q.qrels").write_text("a 0 d1 3\na 0 d2 1\nb 0 d1 0\n")
    (tmp_path / "r.run").write_text("a Q0 d1 1 2 t\na Q0 d2 2 1 t\nb Q0 d1 1 1 t\n")
    for mode in ("--stream", "--no-stream"):
        result = CliRunner().invoke(cli, ["eval", str(tmp_path / "q.qrels"), str(tmp_path / "r.run"), "-m", "RAnWG@5", mode])
        assert result.exit_code == 0
        assert "RAnWG@5: 1 of 2 queries NA (excluded from the mean)" in result.stderr, mode
