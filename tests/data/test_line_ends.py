"""Issue 22 item 3: a carriage return that ends no line, and a byte-order mark after the start of a file, are
refused with one line naming the file and the line, on every path that reads text.

Before, a TREC run with CR-only line ends (an old Mac file) was read as one line of hundreds of words, the
words after its sixth ignored, and evaluated to nDCG 0 with a note: a silent wrong number. A byte-order
mark that begins a later line (files concatenated with ``cat``) became part of that line's query id, so
the query silently went missing. Lines end in LF or CRLF (as CSV and TSV already required), and the only
byte-order mark read is the one that starts the file (docs/inputs.md §5).

The paths: ``ranklens eval`` (streamed, and the express path, which must decline so that the general path
says what is wrong), ``eval --no-stream``, ``trec-eval``, ``ranklens.evaluate()``, the readers (pure, compiled
tokenizer, memory-mapped tokenizer of a run of 1 MiB or more) and :func:`evaluate_stream` in small blocks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.express import run as express_run
from ranklens.cli.main import cli
from ranklens.data.io import read_qrels, read_run
from ranklens.engine.evaluator import Evaluator
from ranklens.engine.stream import evaluate_stream
from ranklens.errors import FormatError

BOM = b"\xef\xbb\xbf"
QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq3 0 d5 2\n"
RUN = b"q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 1.5 t\nq3 Q0 d5 1 1.0 t\n"
CR = "carriage return"
MARK = "byte-order mark"

# (name, bytes, line named, what the message says)
BAD_RUNS = [
    ("cr_only", RUN.replace(b"\n", b"\r"), 1, CR),
    ("cr_inside_a_line", RUN.replace(b"d3 1 1.5", b"d3 1\r1.5"), 3, CR),
    ("cr_before_crlf", RUN.replace(b"t\nq2", b"t \r\r\nq2"), 2, CR),
    ("mark_on_line_3", RUN.replace(b"\nq2", b"\n" + BOM + b"q2"), 3, MARK),
    ("mark_on_line_3_after_a_leading_one", BOM + RUN.replace(b"\nq2", b"\n" + BOM + b"q2"), 3, MARK),
    ("mark_inside_an_id", RUN.replace(b"d5", b"d" + BOM + b"5"), 4, MARK),
]
BAD_QRELS = [
    ("cr_only", QRELS.replace(b"\n", b"\r"), 1, CR),
    ("cr_inside_a_line", QRELS.replace(b"q2 0 d3", b"q2\r0 d3"), 3, CR),
    ("mark_on_line_2", QRELS.replace(b"\nq1 0 d2", b"\n" + BOM + b"q1 0 d2"), 2, MARK),
]


def _one_line_error(result: object, path: Path, line: int, what: str) -> None:
    code, out, err = result.exit_code, result.stdout, result.stderr  # type: ignore[attr-defined]
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    assert re.search(rf"{re.escape(str(path))}:{line}: .*{what}", err), err
    assert "\r" not in err and "\ufeff" not in err


def _refused_by_every_face(q: Path, r: Path, bad: Path, line: int, what: str) -> None:
    """``eval`` (streamed and ``--no-stream``), ``trec-eval`` and ``evaluate()`` name ``bad`` and ``line``; the
    express path declines (so the general path says what is wrong)."""
    runner = CliRunner()
    for extra in ([], ["--no-stream"]):
        _one_line_error(runner.invoke(cli, ["eval", str(q), str(r), "-m", "nDCG@10", *extra]), bad, line, what)
    result = runner.invoke(cli, ["trec-eval", "-m", "ndcg_cut.10", str(q), str(r)])
    assert result.exit_code == 2 and re.search(rf"{re.escape(str(bad))}:{line}: .*{what}", result.stderr), result.stderr
    assert express_run(["eval", str(q), str(r), "-m", "nDCG@10"]) is None
    with pytest.raises(FormatError, match=rf"{re.escape(str(bad))}:{line}: .*{what}"):
        ranklens.evaluate(str(q), str(r), ["nDCG@10"])


def _files(tmp_path: Path, qrels: bytes, run: bytes) -> tuple[Path, Path]:
    (tmp_path / "q.qrels").write_bytes(qrels)
    (tmp_path / "r.run").write_bytes(run)
    return tmp_path / "q.qrels", tmp_path / "r.run"


@pytest.mark.parametrize(("name", "data", "line", "what"), BAD_RUNS, ids=[b[0] for b in BAD_RUNS])
def test_a_bad_run_is_refused_on_every_path(
    tmp_path: Path, name: str, data: bytes, line: int, what: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    q, r = _files(tmp_path, QRELS, data)
    _refused_by_every_face(q, r, r, line, what)
    assert capsys.readouterr() == ("", "")  # (the express path printed nothing)
    for pure in ("1", "0"):  # the pure reader and the compiled tokenizer
        monkeypatch.setenv("RANKLENS_PURE", pure)
        for fmt in (None, "trec"):
            with pytest.raises(FormatError, match=rf":{line}: .*{what}"):
                read_run(r, format=fmt)
    monkeypatch.delenv("RANKLENS_PURE")
    evaluator = Evaluator(["nDCG@10"], read_qrels(q))
    for block in (7, 40, 1 << 20):
        with pytest.raises(FormatError, match=rf"{re.escape(str(r))}:{line}: .*{what}"):
            evaluate_stream(evaluator, str(r), block_bytes=block)


@pytest.mark.parametrize(("name", "data", "line", "what"), BAD_QRELS, ids=[b[0] for b in BAD_QRELS])
def test_bad_qrels_are_refused_on_every_path(tmp_path: Path, name: str, data: bytes, line: int, what: str) -> None:
    q, r = _files(tmp_path, data, RUN)
    _refused_by_every_face(q, r, q, line, what)


def _big_run(lines: int) -> bytes:
    return b"".join(b"q%d Q0 d%d %d %d.5 t\n" % (i // 1000, i, i % 1000 + 1, 1000 - i % 1000) for i in range(lines))


@pytest.mark.parametrize(("bad", "what"), [(b"q9 Q0 x\r1 1 1.0 t\n", CR), (BOM + b"q9 Q0 x 1 1.0 t\n", MARK)])
def test_the_memory_mapped_tokenizer_hands_them_to_the_reader_that_refuses(
    tmp_path: Path, bad: bytes, what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _big_run(60_000)  # > 1 MiB: read_run maps the file and tokenizes it in C
    assert len(body) > 1 << 20
    line = body.count(b"\n") + 1
    path = tmp_path / "big.run"
    path.write_bytes(body + bad + b"q9 Q0 y 2 0.5 t\n")
    monkeypatch.delenv("RANKLENS_PURE", raising=False)
    with pytest.raises(FormatError, match=rf"big\.run:{line}: .*{what}"):
        read_run(path)


@pytest.mark.parametrize(
    ("name", "data", "line", "what"),
    [
        ("q.jsonl", b'{"query_id": "q1", "doc_id": "d1", "relevance": 1}\r{"query_id": "q1", "doc_id": "d2", "relevance": 0}\r', 1, CR),
        ("q.jsonl", b'{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n' + BOM + b'{"query_id": "q1", "doc_id": "d2", "relevance": 0}\n', 2, MARK),
        ("q.csv", b"query_id,doc_id,relevance\nq1,d1,1\n" + BOM + b"q1,d2,0\n", 3, MARK),
        ("q.tsv", b"query_id\tdoc_id\trelevance\nq1\td1\t1\nq1\td2\t0\r\n" + BOM + b"q2\td3\t1\r\n", 4, MARK),
        ("q.json", b'{"q1": {"d1": 1,\n' + BOM + b'"d2": 0}}\n', 2, MARK),
    ],
)
def test_other_text_formats_follow_the_same_rules(tmp_path: Path, name: str, data: bytes, line: int, what: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(FormatError, match=rf"{re.escape(name)}:{line}: .*{what}"):
        read_qrels(path)
    result = CliRunner().invoke(cli, ["eval", str(path), str(_files(tmp_path, QRELS, RUN)[1]), "-m", "nDCG@10"])
    _one_line_error(result, path, line, what)


def test_crlf_and_a_leading_mark_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What stays accepted: CRLF line ends, marks at the very start, a CR among the trailing whitespace."""
    expected = ranklens.evaluate(QRELS_DICT, RUN_DICT, ["nDCG@10", "AP"]).aggregates
    for qrels, run in (
        (QRELS.replace(b"\n", b"\r\n"), RUN.replace(b"\n", b"\r\n")),
        (BOM + BOM + QRELS, BOM + RUN),
        (QRELS + b"\r", RUN + b"\r \r\n"),
    ):
        q, r = _files(tmp_path, qrels, run)
        for pure in ("1", "0"):
            monkeypatch.setenv("RANKLENS_PURE", pure)
            assert ranklens.evaluate(str(q), str(r), ["nDCG@10", "AP"]).aggregates == expected
        result = CliRunner().invoke(cli, ["eval", str(q), str(r), "-m", "nDCG@10", "AP", "-f", "tsv"])
        assert result.exit_code == 0, result.stderr


QRELS_DICT = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}, "q3": {"d5": 2}}
RUN_DICT = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 1.5}, "q3": {"d5": 1.0}}
