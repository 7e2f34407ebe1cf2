"""Issue 10 §2: never a traceback, never a hang, never a silently wrong number.

One test (or parametrised family) per defect of the reliability review, Part 1 (D2, D9, D10, D12, D13,
D15, D16 and the flag names of messages). Each input is made by hand in ``tmp_path``; expected values
are derived in the comments (nDCG by hand) or are the message the user should read.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import gzip
import io
import math
import os
import re
import stat
import sys
import threading
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.data.io import read_qrels, read_run
from ranklens.engine.stream import iter_trec_blocks
from ranklens.errors import FormatError, InputError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from time_limit import deadline  # noqa: E402

QRELS = b"q1 0 d1 0\nq1 0 d2 1\n"
BOM = b"\xef\xbb\xbf"
RUN = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"


def run_cli(*args: str, seconds: float = 60) -> tuple[int, str, str]:
    with deadline(seconds):
        result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, data: str | bytes) -> str:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def assert_one_line_error(code: int, out: str, err: str, pattern: str) -> None:
    """Exit 2, nothing on stdout, exactly one line on stderr, matching ``pattern``."""
    assert (code, out) == (2, ""), err
    assert err.startswith("ranklens: error: ") and err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert re.search(pattern, err), err


# ------------------------------------------------------------------------------ D10: gzip while streaming


def _gz(tmp_path: Path, name: str, mutate: str) -> str:
    data = gzip.compress(RUN, mtime=0)
    if mutate == "truncated":
        data = data[:20]
    elif mutate == "crc":
        data = data[:-6] + bytes([data[-6] ^ 0xFF]) + data[-5:]
    elif mutate == "length":
        data = data[:-2] + bytes([data[-2] ^ 0xFF]) + data[-1:]
    elif mutate == "garbage":
        data += b"garbage after the end"
    return write(tmp_path / name, data)


@pytest.mark.parametrize("mutate", ["truncated", "crc", "length", "garbage"])
@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_a_corrupt_gzip_run_is_a_one_line_error(tmp_path: Path, mutate: str, mode: str) -> None:
    qrels = write(tmp_path / "q.qrels", QRELS)
    run = _gz(tmp_path, "t.run.gz", mutate)
    assert_one_line_error(
        *run_cli("eval", qrels, run, "-m", "AP", mode),
        rf"^ranklens: error: {re.escape(run)}: expected gzip-compressed data, but it is corrupt or truncated",
    )


@pytest.mark.parametrize("mutate", ["truncated", "crc"])
def test_a_corrupt_gzip_qrels_is_a_one_line_error(tmp_path: Path, mutate: str) -> None:
    qrels = _gz(tmp_path, "q.qrels.gz", mutate)
    run = write(tmp_path / "r.run", RUN)
    assert_one_line_error(
        *run_cli("eval", qrels, run, "-m", "AP"),
        rf"^ranklens: error: {re.escape(qrels)}: expected gzip-compressed data, but it is corrupt or truncated",
    )


# ------------------------------------------------------------------- D10, D12: labels outside 32 bits


def _parquet(path: Path, table: pa.Table) -> str:
    pq.write_table(table, path)
    return str(path)


def _labels_file(tmp_path: Path, fmt: str, label: int) -> tuple[str, int]:
    """A qrels file whose second row has ``label``; returns its path and that row's line (row) number."""
    if fmt == "trec":
        return write(tmp_path / "q.qrels", f"q1 0 d1 1\nq1 0 d2 {label}\n"), 2
    if fmt == "csv":
        return write(tmp_path / "q.csv", f"query_id,doc_id,relevance\nq1,d1,1\nq1,d2,{label}\n"), 3
    if fmt == "tsv":
        return write(tmp_path / "q.tsv", f"query_id\tdoc_id\trelevance\nq1\td1\t1\nq1\td2\t{label}\n"), 3
    if fmt == "json":
        return write(tmp_path / "q.json", f'{{"q1": {{"d1": 1,\n "d2": {label}}}}}\n'), 2
    if fmt == "jsonl":
        rows = [f'{{"query_id": "q1", "doc_id": "d{i}", "relevance": {v}}}\n' for i, v in ((1, 1), (2, label))]
        return write(tmp_path / "q.jsonl", "".join(rows)), 2
    column = pa.array([1, label], pa.uint64() if label >= 2**63 else pa.int64())
    return _parquet(tmp_path / "q.parquet", pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "relevance": column})), 2


FORMATS = ["trec", "csv", "tsv", "json", "jsonl", "parquet"]


@pytest.mark.parametrize("label", [2**31, -(2**31) - 1, 2**63, 10**30])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_label_outside_32_bits_is_an_error_naming_line_and_value(tmp_path: Path, fmt: str, label: int) -> None:
    if fmt == "parquet" and label > 2**64:
        label = 2**64 - 1  # the biggest integer Parquet can hold
    path, line = _labels_file(tmp_path, fmt, label)
    pattern = rf"{re.escape(path)}:{line}: (.*: )?expected a relevance label in the 32-bit range \(±2147483647\).*{label}"
    with pytest.raises(FormatError, match=pattern):
        read_qrels(path)
    assert_one_line_error(*run_cli("eval", path, write(tmp_path / "r.run", RUN), "-m", "AP"), pattern)


@pytest.mark.parametrize("fmt", FORMATS)
def test_labels_at_the_edges_of_32_bits_are_read(tmp_path: Path, fmt: str) -> None:
    for label in (2**31 - 1, -(2**31)):
        path, _ = _labels_file(tmp_path, fmt, label)
        assert read_qrels(path).to_dict() == {"q1": {"d1": 1, "d2": label}}


# ------------------------------------------------------------------------------------------ D10: JSON


def test_json_nested_too_deep_is_a_clean_error(tmp_path: Path) -> None:
    deep = write(tmp_path / "deep.json", '{"q1": ' * 5000 + "1" + "}" * 5000 + "\n")
    with pytest.raises(FormatError, match=r"deep\.json: expected JSON .*nested too deeply"):
        read_qrels(deep)
    assert_one_line_error(*run_cli("eval", deep, write(tmp_path / "r.run", RUN), "-m", "AP"), r"deep\.json: .*nested too deeply")


@pytest.mark.parametrize("where", ["first", "second", "ignored key"])
def test_jsonl_nested_too_deep_is_a_clean_error_with_its_line(tmp_path: Path, where: str) -> None:
    row = '{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n'
    deep = '{"query_id": "q1", "doc_id": "d2", "relevance": ' + "[" * 5000 + "]" * 5000 + "}\n"
    if where == "ignored key":
        deep = '{"query_id": "q1", "doc_id": "d2", "relevance": 1, "x": ' + "[" * 5000 + "]" * 5000 + "}\n"
    lines = [deep, row] if where == "first" else [row, deep]
    path = write(tmp_path / "deep.jsonl", "".join(lines))
    line = 1 if where == "first" else 2
    try:
        q = read_qrels(path)
    except FormatError as e:
        assert re.search(rf"deep\.jsonl:{line}: .*nested too deeply", str(e)), str(e)
    else:  # a deeply nested value in an ignored key may be skipped by pyarrow, never misread
        assert where == "ignored key" and q.to_dict() == {"q1": {"d1": 1, "d2": 1}}


@pytest.mark.parametrize(
    ("name", "text", "pattern"),
    [
        ("s.json", '{"q1": {"d\\ud800": 1}}', r"s\.json:1: .*document id \"d\\ud800\".*lone surrogate"),
        ("s.json", '{"q\\udfff": {"d1": 1}}', r"s\.json:1: .*query id \"q\\udfff\".*lone surrogate"),
        ("s.jsonl", '{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n{"query_id": "q1", "doc_id": "d\\ud800", "relevance": 1}\n',
         r"s\.jsonl:2: .*document id \"d\\ud800\".*lone surrogate"),
    ],
)
def test_a_lone_surrogate_in_an_id_is_a_clean_error(tmp_path: Path, name: str, text: str, pattern: str) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(FormatError, match=pattern):
        read_qrels(path)
    assert_one_line_error(*run_cli("eval", path, write(tmp_path / "r.run", RUN), "-m", "AP"), pattern)


def test_a_surrogate_pair_escape_is_one_character(tmp_path: Path) -> None:
    path = write(tmp_path / "p.json", '{"q1": {"d\\ud83d\\ude00": 1}}')
    assert read_qrels(path).to_dict() == {"q1": {"d\U0001f600": 1}}


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_a_json_integer_score_too_big_for_a_float_is_a_clean_error(tmp_path: Path, fmt: str) -> None:
    huge = "1" + "0" * 400
    if fmt == "json":
        path = write(tmp_path / "h.json", '{"q1": {"d1": ' + huge + "}}\n")
    else:
        path = write(tmp_path / "h.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": ' + huge + "}\n")
    pattern = rf"h\.{fmt}:1: .*401-digit integer.*too large for a float64"
    with pytest.raises(FormatError, match=pattern):
        read_run(path)
    assert_one_line_error(*run_cli("eval", write(tmp_path / "q.qrels", QRELS), path, "-m", "AP"), pattern)


def test_a_json_integer_with_more_digits_than_python_converts_is_a_clean_error(tmp_path: Path) -> None:
    path = write(tmp_path / "h.json", '{"q1": {"d1": ' + "9" * 5000 + "}}\n")
    with pytest.raises(FormatError, match=r"h\.json:1: .*5000-digit integer"):
        read_run(path)
    with pytest.raises(FormatError, match=r"h\.json:1: .*5000-digit integer"):
        read_qrels(path)


# ------------------------------------------------------------------------------ D10, D13: CR-only line ends


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("cr.csv", "query_id,doc_id,relevance\rq1,d1,1\r", 1),
        ("cr.tsv", "query_id\tdoc_id\trelevance\rq1\td1\t1\r", 1),
        ("mixed.csv", "query_id,doc_id,relevance\nq1,d1,1\rq1,d2,0\n", 2),
        ("mixed.tsv", "query_id\tdoc_id\trelevance\r\nq1\td1\t1\r\nq1\td2\r0\r\n", 3),
    ],
)
def test_csv_and_tsv_with_cr_only_line_ends_are_a_clean_error(tmp_path: Path, name: str, text: str, line: int) -> None:
    path = write(tmp_path / name, text)
    pattern = rf"{re.escape(name)}:{line}: .*carriage return"
    with pytest.raises(FormatError, match=pattern):
        read_qrels(path)
    code, out, err = run_cli("eval", path, write(tmp_path / "r.run", RUN), "-m", "AP")
    assert_one_line_error(code, out, err, pattern)
    assert "\r" not in err


def test_crlf_csv_and_tsv_still_read(tmp_path: Path) -> None:
    csv_path = write(tmp_path / "q.csv", "query_id,doc_id,relevance\r\nq1,d1,0\r\nq1,d2,1\r\n")
    tsv_path = write(tmp_path / "q.tsv", "query_id\tdoc_id\trelevance\r\nq1\td1\t0\r\nq1\td2\t1\r\n")
    assert read_qrels(csv_path).to_dict() == read_qrels(tsv_path).to_dict() == {"q1": {"d1": 0, "d2": 1}}


# ---------------------------------------------------- D10, D13, D15: special files (loops, dirs, /dev/zero)


@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_a_symlink_loop_as_run_is_a_one_line_error(tmp_path: Path, mode: str) -> None:
    loop = tmp_path / "l.run"
    os.symlink(loop, loop)
    assert_one_line_error(
        *run_cli("eval", write(tmp_path / "q.qrels", QRELS), str(loop), "-m", "AP", mode),
        rf"{re.escape(str(loop))}: cannot read the file: Too many levels of symbolic links",
    )


def test_a_symlink_loop_as_qrels_is_a_one_line_error(tmp_path: Path) -> None:
    loop = tmp_path / "l.qrels"
    os.symlink(loop, loop)
    assert_one_line_error(
        *run_cli("eval", str(loop), write(tmp_path / "r.run", RUN), "-m", "AP"),
        rf"{re.escape(str(loop))}: cannot read the file: Too many levels of symbolic links",
    )
    with pytest.raises(FormatError, match="Too many levels of symbolic links"):
        read_qrels(loop)


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_directory_as_input_is_a_one_line_error(tmp_path: Path, which: str) -> None:
    qrels, run = write(tmp_path / "q.qrels", QRELS), write(tmp_path / "r.run", RUN)
    directory = tmp_path / f"d.{which}"
    directory.mkdir()
    args = (str(directory), run) if which == "qrels" else (qrels, str(directory))
    assert_one_line_error(*run_cli("eval", *args, "-m", "AP"), rf"{re.escape(str(directory))}.* is a directory")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_dev_zero_as_input_stops_quickly_as_binary_data(tmp_path: Path, mode: str, which: str) -> None:
    zero = tmp_path / f"z.{which}"
    os.symlink("/dev/zero", zero)
    qrels, run = write(tmp_path / "q.qrels", QRELS), write(tmp_path / "r.run", RUN)
    args = (str(zero), run) if which == "qrels" else (qrels, str(zero))
    assert_one_line_error(
        *run_cli("eval", *args, "-m", "AP", mode, seconds=60),
        rf"{re.escape(str(zero))}:1: expected UTF-8 text, found a NUL byte \(is this a binary or compressed file\?\)",
    )


def test_streaming_bounds_the_length_of_a_line(tmp_path: Path) -> None:
    path = write(tmp_path / "long.run", RUN + b"q1 Q0 d3 3 0.5 " + b"x" * 10_000 + b"\n")
    with pytest.raises(FormatError, match=r"long\.run:3: expected a line of at most 4096 bytes, found one longer"):
        list(iter_trec_blocks(path, block_bytes=512, max_line_bytes=4096))
    # within the bound, a line longer than a block is read whole
    lines = [cols.doc_id.to_pylist() for cols, _, _ in iter_trec_blocks(path, block_bytes=512, max_line_bytes=20_000)]
    assert sum(lines, []) == ["d1", "d2", "d3"]


def test_a_binary_stream_is_stopped_at_its_first_block(tmp_path: Path) -> None:
    path = write(tmp_path / "b.run", b"\x01" * 5000 + b"\x00" + b"\x01" * 5000)
    with pytest.raises(FormatError, match=r"b\.run:1: expected UTF-8 text, found a NUL byte"):
        next(iter_trec_blocks(path, block_bytes=1024))


# ----------------------------------------------------------------------------------- D10: Parquet types


@pytest.mark.parametrize(
    "column",
    [
        pa.array([1], pa.timestamp("s")),
        pa.array([datetime.date(2020, 1, 1)], pa.date32()),
        pa.array([1], pa.duration("s")),
        pa.array([True]),
    ],
    ids=["timestamp", "date", "duration", "bool"],
)
@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_parquet_values_that_are_not_numbers_are_a_clean_error(tmp_path: Path, column: pa.Array, kind: str) -> None:
    value = "relevance" if kind == "qrels" else "score"
    path = _parquet(tmp_path / f"{kind}.parquet", pa.table({"query_id": ["q1"], "doc_id": ["d1"], value: column}))
    pattern = rf"{kind}\.parquet: expected numbers in column '{value}', got {str(column.type).split('[')[0]}"
    with pytest.raises(FormatError, match=pattern):
        (read_qrels if kind == "qrels" else read_run)(path)
    other = write(tmp_path / ("r.run" if kind == "qrels" else "q.qrels"), RUN if kind == "qrels" else QRELS)
    args = (path, other) if kind == "qrels" else (other, path)
    assert_one_line_error(*run_cli("eval", *args, "-m", "AP"), pattern)


# ------------------------------------------------------------------------------- D9: empty ids in JSON(L)


@pytest.mark.parametrize(
    ("name", "text", "pattern"),
    [
        ("e.jsonl", '{"query_id":"q1","doc_id":"","relevance":3}\n{"query_id":"q1","doc_id":"d2","relevance":1}\n',
         r"e\.jsonl:1: expected a document id \(doc_id\) string, got \"\""),
        ("e.jsonl", '{"query_id":"q1","doc_id":"d1","relevance":3}\n{"query_id":"","doc_id":"d2","relevance":1}\n',
         r"e\.jsonl:2: expected a query id \(query_id\) string, got \"\""),
        ("e.json", '{"q1": {"d1": 1,\n "": 2}}', r"e\.json:2: query 'q1': expected a document id, got an empty key"),
        ("e.json", '{"q1": {"d1": 1},\n "": {"d2": 2}}', r"e\.json:2: expected a query id, got an empty key"),
    ],
)
def test_an_empty_id_in_json_is_rejected_on_every_path(tmp_path: Path, name: str, text: str, pattern: str) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(FormatError, match=pattern):
        read_qrels(path)


def test_jsonl_duplicate_keys_in_a_row_are_rejected(tmp_path: Path) -> None:
    # which doc_id would count? json keeps the last, other parsers the first: refuse to guess
    path = write(tmp_path / "k.jsonl", '{"query_id":"q1","doc_id":"d1","doc_id":"d2","relevance":1}\n')
    with pytest.raises(FormatError, match=r"k\.jsonl:1: key 'doc_id' appears twice"):
        read_qrels(path)


# --------------------------------------------------------------------------- D10: a run of only comments


@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_a_run_of_only_comment_lines_is_a_clean_error(tmp_path: Path, mode: str) -> None:
    run = write(tmp_path / "c.run", "# a\n# b\n")
    assert_one_line_error(
        *run_cli("eval", write(tmp_path / "q.qrels", QRELS), run, "-m", "AP", mode),
        r"c\.run: expected at least one ranked document",
    )


# ------------------------------------------------------------------------------- D2: pipes and FIFOs

# query q1 fills exactly the first 4,096 bytes (a buffered read of a pipe), q2 follows
PIPE_RUN = "".join(
    f"q1 Q0 d{i:05d} {i + 1} {100 - i * 0.01:.2f} tag" + "x" * 18 * (i == 154) + "\n" for i in range(155)
) + "".join(f"q2 Q0 e{j:03d} {j + 1} {50 - j} tag\n" for j in range(20))
PIPE_QRELS = "q1 0 d00000 1\nq1 0 d00003 2\nq2 0 e000 1\nq2 0 e005 1\n"
# q1: relevant d00000 (gain 1) at rank 1 and d00003 (gain 2) at rank 4; q2: e000 and e005 at ranks 1 and 6
NDCG_Q1 = (1 + 2 / math.log2(5)) / (2 + 1 / math.log2(3))
NDCG_Q2 = (1 + 1 / math.log2(7)) / (1 + 1 / math.log2(3))


def test_the_pipe_run_fills_4096_bytes_with_q1() -> None:
    assert PIPE_RUN.index("q2") == 4096


def _expected_pipe_output() -> str:
    return f"nDCG@10\tq1\t{NDCG_Q1!r}\nnDCG@10\tq2\t{NDCG_Q2!r}\nnDCG@10\tall\t{(NDCG_Q1 + NDCG_Q2) / 2!r}\n"


@contextlib.contextmanager
def _pipe_with_writer(data: bytes) -> Iterator[str]:
    """An anonymous pipe whose read end is ``/dev/fd/N``; a thread writes ``data`` once and closes."""
    read_fd, write_fd = os.pipe()

    def writer() -> None:
        with contextlib.suppress(OSError):
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield f"/dev/fd/{read_fd}"
    finally:
        os.close(read_fd)
        thread.join(5)


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_a_run_read_from_a_pipe_keeps_its_first_4096_bytes(tmp_path: Path, mode: str) -> None:
    qrels = write(tmp_path / "pipe.qrels", PIPE_QRELS)
    with _pipe_with_writer(PIPE_RUN.encode()) as path:
        code, out, err = run_cli("eval", qrels, path, "--run-format", "trec", "-m", "nDCG@10", "-f", "tsv", "-q", mode, seconds=60)
    assert (code, out) == (0, _expected_pipe_output()), err


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_gzipped_run_from_a_pipe_is_read_whole(tmp_path: Path, gzipped: bool) -> None:
    qrels = write(tmp_path / "pipe.qrels", PIPE_QRELS)
    data = gzip.compress(PIPE_RUN.encode()) if gzipped else PIPE_RUN.encode()
    with _pipe_with_writer(data) as path:
        code, out, err = run_cli("eval", qrels, path, "--run-format", "trec", "-m", "nDCG@10", "-f", "tsv", "-q", seconds=60)
    assert (code, out) == (0, _expected_pipe_output()), err


@contextlib.contextmanager
def _fifo_with_writer(path: Path, data: bytes, rescue_after: float = 6) -> Iterator[str]:
    """A named FIFO written once by a thread (which blocks until a reader opens it).

    A reader that opens the FIFO a second time would wait for ever, inside C code that no alarm can
    interrupt: after ``rescue_after`` seconds an empty writer opens and closes it, so such a reader
    sees an empty stream and the test fails instead of hanging.
    """
    os.mkfifo(path)

    def writer() -> None:
        with contextlib.suppress(OSError):
            with open(path, "wb") as out:
                out.write(data)

    def rescue() -> None:
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    timer = threading.Timer(rescue_after, rescue)
    timer.daemon = True
    timer.start()
    try:
        yield str(path)
    finally:
        timer.cancel()
        if thread.is_alive():  # nobody opened it: open the read end so the writer can finish
            with contextlib.suppress(OSError):
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                thread.join(5)
                os.close(fd)
        thread.join(5)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_a_fifo_run_written_once_does_not_hang(tmp_path: Path, mode: str) -> None:
    qrels = write(tmp_path / "pipe.qrels", PIPE_QRELS)
    with _fifo_with_writer(tmp_path / "f.run", PIPE_RUN.encode()) as path:
        assert stat.S_ISFIFO(os.stat(path).st_mode)
        code, out, err = run_cli("eval", qrels, path, "-m", "nDCG@10", "-f", "tsv", "-q", mode, seconds=60)
    assert (code, out) == (0, _expected_pipe_output()), err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["f.qrels", "f.qrels.gz", "f.parquet", "f.json"])
def test_a_fifo_qrels_written_once_is_read_once(tmp_path: Path, name: str) -> None:
    expected = {"q1": {"d1": 0, "d2": 1}}
    if name.endswith(".parquet"):
        buffer = io.BytesIO()
        pq.write_table(pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "relevance": [0, 1]}), buffer)
        data = buffer.getvalue()
    elif name.endswith(".json"):
        data = b'{"q1": {"d1": 0, "d2": 1}}'
    else:
        data = gzip.compress(QRELS) if name.endswith(".gz") else QRELS
    with _fifo_with_writer(tmp_path / name, data) as path, deadline(120):
        assert read_qrels(path).to_dict() == expected


# --------------------------------------------------------------------------- messages name the right flag

_WRONG_FLAG = re.compile(r"(?<![\w-])--format\b")


def test_python_messages_name_the_format_argument(tmp_path: Path) -> None:
    path = write(tmp_path / "run.xyz", RUN)
    with pytest.raises(FormatError, match=r"choose the format with format= \(one of: trec, ") as info:
        read_run(path)
    assert "--" not in str(info.value)


@pytest.mark.parametrize("command", ["eval", "compare", "explain"])
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_cli_messages_name_the_input_format_flag(tmp_path: Path, command: str, which: str) -> None:
    qrels = write(tmp_path / ("q.xyz" if which == "qrels" else "q.qrels"), QRELS)
    run = write(tmp_path / ("r.xyz" if which == "run" else "r.run"), RUN)
    extra = {"eval": ["-m", "AP"], "compare": ["-m", "AP"], "explain": ["--query", "q1", "-m", "AP"]}[command]
    runs = [run, run] if command == "compare" else [run]
    code, out, err = run_cli(command, qrels, *runs, *extra)
    assert_one_line_error(code, out, err, rf"choose the format with --{which}-format \(one of: trec, ")
    assert not _WRONG_FLAG.search(err), err


@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_cli_hints_name_the_input_format_flag(tmp_path: Path, mode: str) -> None:
    qrels = write(tmp_path / "q.qrels", QRELS)
    commas = write(tmp_path / "r.run", "q1,Q0,d1,1,2.0,t\n")
    code, out, err = run_cli("eval", qrels, commas, "-m", "AP", mode)
    assert_one_line_error(code, out, err, r"is this a CSV file\? \(use --run-format csv\b")
    jsonl = write(tmp_path / "q.json", '{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n{"query_id": "q1", "doc_id": "d2", "relevance": 0}\n')
    code, out, err = run_cli("eval", jsonl, write(tmp_path / "r2.run", RUN), "-m", "AP", mode)
    assert_one_line_error(code, out, err, r"use a \.jsonl name or --qrels-format jsonl\b")


def test_a_command_without_input_format_flags_names_none(tmp_path: Path) -> None:
    # rag's --format is its output format: the message must not send the user there
    code, out, err = run_cli("rag", write(tmp_path / "q.qrels", QRELS), write(tmp_path / "r.xyz", RUN))
    assert_one_line_error(code, out, err, r"r\.xyz: unknown file extension '\.xyz'")
    assert not _WRONG_FLAG.search(err) and "-format" not in err, err


# ------------------------------------------------------------------------ D13: messages are one line


@pytest.mark.parametrize(
    ("name", "data", "escaped"),
    [
        ("q.qrels", b"q1 0 d1 1\x1b[2J\n", r"'1\x1b[2J'"),
        ("q.qrels", "q1 0 d1 1\x9b31m\n".encode(), r"'1\x9b31m'"),
        ("q.json", b'{"q\\r1": {"d1": "x"}}', r"query 'q\r1'"),
        ("q.json", b'{"q\\u001b]0;x\\u0007": {"d1": "x"}}', r"query 'q\x1b]0;x\x07'"),
        ("q.tsv", b"query_id\tdoc_id\trel\x1bevance\nq1\td1\t1\n", r"rel\x1bevance"),
    ],
)
def test_input_echoed_in_a_message_is_escaped(tmp_path: Path, name: str, data: bytes, escaped: str) -> None:
    path = write(tmp_path / name, data)
    code, out, err = run_cli("eval", path, write(tmp_path / "r.run", RUN), "-m", "AP")
    assert_one_line_error(code, out, err, re.escape(escaped))
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", err), repr(err)


# ------------------------------------------------------------------------------- D16: the Python API

COLUMNS_QRELS = {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "relevance": [1, 0, 2]}
COLUMNS_RUN = {"query_id": ["q1", "q1", "q2"], "doc_id": ["d2", "d1", "d3"], "score": [2.0, 1.0, 0.5]}
NESTED_QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
NESTED_RUN = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 0.5}}


def test_evaluate_takes_the_documented_dict_of_columns() -> None:
    # q1: the relevant d1 at rank 2: AP = 1/2; q2: d3 at rank 1: AP = 1
    for qrels in (COLUMNS_QRELS, NESTED_QRELS):
        for run in (COLUMNS_RUN, NESTED_RUN):
            res = ranklens.evaluate(qrels, run, ["AP"])
            assert res.per_query("AP") == {"q1": 0.5, "q2": 1.0}
            assert ranklens.Evaluator(["AP"], qrels)(run).per_query("AP") == {"q1": 0.5, "q2": 1.0}


@pytest.mark.parametrize(
    ("qrels", "run", "pattern"),
    [
        ({"q1": {"d1": True}}, NESTED_RUN, r"query 'q1', document 'd1': expected an integer relevance label, got True"),
        (NESTED_QRELS, {"q1": {"d1": True}}, r"query 'q1', document 'd1': expected a number \(score\), got True"),
        (NESTED_QRELS, {"q1": {"d1": np.bool_(False)}}, r"expected a number \(score\), got False"),
        (NESTED_QRELS, {"q1": {"d1": 1 + 2j}}, r"expected a number \(score\), got \(1\+2j\)"),
        (NESTED_QRELS, {"q1": {"d1": np.complex128(1)}}, r"expected a number \(score\), got"),
        (NESTED_QRELS, {"q1": {"d1": datetime.datetime(2024, 1, 1)}}, r"expected a number \(score\), got a datetime \(2024-01-01"),
        (NESTED_QRELS, {"q1": {"d1": np.datetime64("2024-01-01")}}, r"expected a number \(score\), got"),
        (NESTED_QRELS, {"q1": {"d1": datetime.timedelta(1)}}, r"expected a number \(score\), got"),
        ({None: {"d1": 1}}, NESTED_RUN, r"expected a query id \(a string\), got None"),
        (NESTED_QRELS, {None: {"d1": 1.0}}, r"expected a query id \(a string\), got None"),
        (NESTED_QRELS, {True: {"d1": 1.0}}, r"expected a query id \(a string\), got True"),
        (NESTED_QRELS, {"q1": {None: 1.0}}, r"query 'q1': expected a document id \(a string\), got None"),
        (NESTED_QRELS, {"q1": {"": 1.0}}, r"query 'q1': expected a document id, got an empty string"),
        (NESTED_QRELS, {"q1": {"d1": 10**400}}, r"score is a 401-digit integer, too large for a float64"),
        ({"q1": {"d1": 2**40}}, NESTED_RUN, r"expected a relevance label in the 32-bit range \(±2147483647\), got 1099511627776"),
        ({"q1": {"d1": 1.5}}, NESTED_RUN, r"expected an integer relevance label, got 1.5"),
        ({**COLUMNS_QRELS, "relevance": [True, False, True]}, COLUMNS_RUN, r"<dict>:1: column 'relevance': expected an integer relevance label, got True"),
        (COLUMNS_QRELS, {**COLUMNS_RUN, "score": [datetime.datetime(2024, 1, 1)] * 3}, r"column 'score': expected a number \(score\), got a datetime"),
        (COLUMNS_QRELS, {**COLUMNS_RUN, "score": [1, 2, 10**400]}, r"score is a 401-digit integer, too large for a float64"),
        ({**COLUMNS_QRELS, "relevance": [1, 0, 2**63]}, COLUMNS_RUN, r"expected a relevance label in the 32-bit range"),
        (COLUMNS_QRELS, {**COLUMNS_RUN, "query_id": ["q1", None, "q2"]}, r"expected a query id in column 'query_id', got null"),
    ],
)
def test_evaluate_refuses_values_it_would_coerce(qrels: object, run: object, pattern: str) -> None:
    with pytest.raises(InputError, match=pattern):
        ranklens.evaluate(qrels, run, ["AP"])


def test_evaluate_refuses_coercions_from_pandas() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(COLUMNS_QRELS)
    with pytest.raises(InputError, match=r"expected numbers in column 'relevance', got bool"):
        ranklens.evaluate(frame.assign(relevance=[True, False, True]), COLUMNS_RUN, ["AP"])
    with pytest.raises(InputError, match=r"expected numbers in column 'score', got timestamp"):
        ranklens.evaluate(frame, pd.DataFrame(COLUMNS_RUN).assign(score=pd.to_datetime(["2024-01-01"] * 3)), ["AP"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ranklens.evaluate(frame, pd.DataFrame(COLUMNS_RUN), ["AP"]).per_query("AP") == {"q1": 0.5, "q2": 1.0}


# ------------------------------------------------------------------- the last-resort net in the CLI


@pytest.mark.parametrize(
    "error",
    [
        OSError(5, "Input/output error", "q.qrels"),
        EOFError("Compressed file ended before the end-of-stream marker was reached"),
        zlib.error("Error -3 while decompressing data: invalid distance too far back"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
        RecursionError("maximum recursion depth exceeded"),
        OverflowError("Python int too large to convert to C long"),
        csv.Error("new-line character seen in unquoted field"),
        MemoryError(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_an_unexpected_input_error_is_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setenv("RANKLENS_EXPRESS", "0")  # (the general path's readers; the express path's: tests/test_express.py)
    monkeypatch.setattr("ranklens.data.io.read_qrels", broken)
    code, out, err = run_cli("eval", write(tmp_path / "q.qrels", QRELS), write(tmp_path / "r.run", RUN), "-m", "AP")
    assert_one_line_error(code, out, err, r"^ranklens: error: ")
    assert "Traceback" not in err


def test_a_huge_json_integer_label_is_a_clean_error(tmp_path: Path) -> None:
    # found by the fuzz test: math.isnan() of a Python int beyond float range raises OverflowError
    path = write(tmp_path / "q.json", '{"q1": {"d1": 1' + "0" * 400 + "}}")
    with pytest.raises(FormatError, match=r"q\.json:1: .*32-bit range \(±2147483647\), got a 401-digit integer"):
        read_qrels(path)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_a_json_score_of_minus_zero_keeps_its_sign_on_every_path(tmp_path: Path, fmt: str) -> None:
    # Infinity sends JSON Lines to the line scan, where json reads -0 as the integer 0
    if fmt == "json":
        path = write(tmp_path / "r.json", '{"q1": {"a": -0, "b": Infinity, "c": -0.0}}')
    else:
        rows = [("a", "-0"), ("b", "Infinity"), ("c", "-0.0")]
        path = write(tmp_path / "r.jsonl", "".join(f'{{"query_id": "q1", "doc_id": "{d}", "score": {s}}}\n' for d, s in rows))
    scores = read_run(path).to_dict()["q1"]
    assert [math.copysign(1, scores[d]) for d in "ac"] == [-1, -1] and scores["b"] == math.inf
    assert read_qrels(write(tmp_path / f"q.{fmt}", '{"q1": {"a": -0}}' if fmt == "json" else '{"query_id": "q1", "doc_id": "a", "relevance": -0}\n')).to_dict() == {"q1": {"a": 0}}


def test_a_missing_argument_keeps_clicks_usage_text(tmp_path: Path) -> None:
    code, out, err = run_cli("eval", write(tmp_path / "q.qrels", QRELS))
    assert code == 2 and err.startswith("Usage: ") and "Missing argument 'RUNS...'" in err


# ----------------------------------------------------------- found by the fuzz test (test_fuzz_inputs.py)


@pytest.mark.parametrize("label", ["0x10", "1e3", "0X1"])
@pytest.mark.parametrize("sep", [",", "\t"])
def test_csv_and_tsv_labels_are_decimal_integers(tmp_path: Path, sep: str, label: str) -> None:
    # D7 for CSV/TSV: pyarrow's int64 conversion read 0x10 as 16 (DCG 16.63 instead of an error)
    name = "q.csv" if sep == "," else "q.tsv"
    path = write(tmp_path / name, f"query_id{sep}doc_id{sep}relevance\nq1{sep}d1{sep}1\nq1{sep}d2{sep}{label}\n")
    with pytest.raises(FormatError, match=rf"{re.escape(name)}:3: expected an integer relevance label .*'{label}'"):
        read_qrels(path)


@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
@pytest.mark.parametrize("body", [b"q1 0 d1 2\nq1 0 d2 0\n", b"q1  0 d1 2\nq1 0 d2 0\n"], ids=["fast path", "line scan"])
def test_every_leading_byte_order_mark_is_dropped_on_every_path(tmp_path: Path, body: bytes, mode: str) -> None:
    # pyarrow dropped a second BOM, the line scan kept it in the first query id ("\ufeffq1")
    qrels = write(tmp_path / "q.qrels", BOM * 2 + body)
    run = write(tmp_path / "r.run", BOM * 2 + b"q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\n")
    assert read_qrels(qrels).to_dict() == {"q1": {"d1": 2, "d2": 0}}
    code, out, err = run_cli("eval", qrels, run, "-m", "RR", "-f", "tsv", mode)  # d1 (the relevant one) at rank 2
    assert (code, out) == (0, "RR\tall\t0.5\n"), err


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"query_id": "q1", "doc_id": "d1", "relevance": 1}{\n"query_id": "q1", "doc_id": "d2", "relevance": 0}\n', 1),
        ('{"query_id": "q1", "doc_id": "d1", "relevance": 1} {"query_id": "q1", "doc_id": "d2", "relevance": 0}\n', 1),
        ('{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n{"query_id": "q1",\n "doc_id": "d2", "relevance": 0}\n', 2),
    ],
)
def test_a_jsonl_object_not_alone_on_its_line_is_an_error(tmp_path: Path, text: str, line: int) -> None:
    # pyarrow's reader accepted these (and counted rows that are not lines)
    with pytest.raises(FormatError, match=rf"q\.jsonl:{line}: expected a JSON object per line"):
        read_qrels(write(tmp_path / "q.jsonl", text))


def test_a_tab_ending_the_last_tsv_line_is_a_field_as_on_any_other_line(tmp_path: Path) -> None:
    """Found by the fuzz test: trailing whitespace was trimmed before counting, so a TSV whose last line
    ends in a tab had 3 fields there but 4 on any other line."""
    for text in ("query_id\tdoc_id\tscore\nq1\td2\t2.5\nq1\td5\t1.5\t", "query_id\tdoc_id\tscore\nq1\td5\t1.5\t\nq1\td2\t2.5\n"):
        path = tmp_path / "r.tsv"
        path.write_text(text)
        with pytest.raises(FormatError, match=r"r\.tsv:\d: expected 3 fields as in the header .* got 4"):
            read_run(str(path))
