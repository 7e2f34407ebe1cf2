"""Issue 12: a run file read from a memory map (``trec.read_run_mapped``, the pages released behind the
compiled tokenizer) gives what reading its bytes gives, value for value and error for error; and the
tokenizer's line numbers, now kept only from the first skipped line on, are the pure reader's."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens.data.readers import trec

pytestmark = pytest.mark.skipif(
    trec._ctrec is None or not hasattr(mmap, "MADV_DONTNEED"),
    reason="the compiled tokenizer is not built, or this platform has no madvise: no mapped path",
)

BODY = b"".join(b"q%d Q0 d%d %d %d.5 tag\n" % (i // 7, i, i % 7 + 1, 100 - i % 7) for i in range(200))
HALF = BODY.index(b"\n", 500) + 1  # a line boundary

CASES = {
    "plain": BODY,
    "no final newline": BODY.rstrip(b"\n"),
    "trailing whitespace": BODY + b"  \n\t\n\r\n",
    "comments and blank lines": b"# c\n\n" + BODY[:HALF] + b"\n# x\n" + BODY[HALF:] + b"\n\n",
    "comment after the rows": BODY + b"# end\n",
    "crlf and tabs": BODY.replace(b" ", b"\t").replace(b"\n", b"\r\n"),
    "extra words": BODY.replace(b"tag\n", b"tag more words\n"),
    "non-ascii ids": BODY.replace(b"d1", "dé".encode()),
    "invalid utf-8": BODY[:HALF] + b"q1 Q0 d\xff 1 2 tag\n" + BODY[HALF:],
    "truncated utf-8 at the end": BODY + b"q1 Q0 d\xc3",
    "nul byte": BODY[:HALF] + b"q1 Q0 d\x00 1 2 tag\n" + BODY[HALF:],
    "nul byte in a comment": BODY + b"# \x00\n",
    "byte-order mark": b"\xef\xbb\xbf" + BODY,
    "malformed line": BODY[:HALF] + b"q1 Q0 d 1\n" + BODY[HALF:],
    "nan score": BODY + b"q1 Q0 dz 1 nan tag\n",
    "five columns": BODY.replace(b" tag\n", b"\n"),
    "three columns": b"".join(b"q%d\td%d\t%d\n" % (i // 7, i, i % 7 + 1) for i in range(200)),
    "only comments": b"# a\n# b\n",
    "whitespace only": b" \n\t\n",
    "empty": b"",
    "repeated document": BODY + b"q0 Q0 d0 9 1 tag\n",
    "tag with a str-only separator": b"q1 Q0 d1 1 2 t\x1ca\n" + BODY,
    "long comment block": b"#" * 300 + b"\n" + BODY,
}


def _outcome(path: Path, mapped: bool, monkeypatch: pytest.MonkeyPatch, format: str | None) -> tuple:  # type: ignore[type-arg]
    monkeypatch.setattr(trec, "MAPPED_MIN_BYTES", 0 if mapped else 1 << 62)
    try:
        run = ranklens.read_run(path, format=format)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return ("error", type(e), str(e), getattr(e, "line", None))
    return (
        "ok", run.query_ids.to_pylist(), run.query.tolist(), run.docs.to_pylist(),
        run.score.view(np.int64).tolist(), run.name, run.notes, run.doc_hash.tolist(),
    )


@pytest.mark.parametrize("head", [1 << 16, 64, 16])
@pytest.mark.parametrize("format", [None, "trec"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_mapped_read_is_the_in_memory_read(
    case: str, format: str | None, head: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.run"
    path.write_bytes(CASES[case])
    monkeypatch.setattr(trec, "_HEAD_BYTES", head)
    monkeypatch.setattr(trec, "_CHECK_BYTES", mmap.PAGESIZE)  # the UTF-8 check in several steps
    assert _outcome(path, True, monkeypatch, format) == _outcome(path, False, monkeypatch, format)


def test_mapped_path_is_taken_and_declines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.run"
    monkeypatch.delenv("RANKLENS_PURE", raising=False)
    monkeypatch.setattr(trec, "MAPPED_MIN_BYTES", 0)
    for case, taken in (("plain", True), ("non-ascii ids", True), ("comments and blank lines", True),
                        ("invalid utf-8", False), ("nul byte", False), ("byte-order mark", False),
                        ("malformed line", False), ("five columns", False), ("empty", False)):
        path.write_bytes(CASES[case])
        with path.open("rb") as handle:
            cols = trec.read_run_mapped(handle, str(path), layout="auto")
        assert (cols is not None) == taken, case
        if cols is not None:
            ref = trec.read_run(CASES[case], str(path), layout="auto")
            assert cols.query_id.to_pylist() == ref.query_id.to_pylist()
            assert cols.doc_id.to_pylist() == ref.doc_id.to_pylist()
            assert np.asarray(cols.value).tolist() == np.asarray(ref.value).tolist()
            assert (cols.line_numbers is None) == (ref.line_numbers is None)
            if cols.line_numbers is not None:
                assert cols.line_numbers.tolist() == np.asarray(ref.line_numbers).tolist()
    path.write_bytes(CASES["plain"])
    with path.open("rb") as handle:  # small files, other layouts and the pure path are read, not mapped
        assert trec.read_run_mapped(handle, str(path), layout="msmarco") is None
        monkeypatch.setattr(trec, "MAPPED_MIN_BYTES", 1 << 30)
        assert trec.read_run_mapped(handle, str(path)) is None
        monkeypatch.setattr(trec, "MAPPED_MIN_BYTES", 0)
        monkeypatch.setenv("RANKLENS_PURE", "1")
        assert trec.read_run_mapped(handle, str(path)) is None


@pytest.mark.parametrize(
    "text, lines",
    [
        (b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t", None),  # every line a row
        (b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n\n\n", None),  # (blank lines past the end are not lines)
        (b"\nq1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t", [2, 3]),  # the first line skipped
        (b"q1 Q0 d1 1 2 t\n# c\nq1 Q0 d2 2 1 t", [1, 3]),  # rows before the first skip are filled in
        (b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq1 Q0 d3 3 0 t\n \nq1 Q0 d4 4 0 t", [1, 2, 3, 5]),
        (b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n#", [1, 2]),  # a skipped last line
    ],
)
def test_tokenizer_line_numbers(text: bytes, lines: list[int] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANKLENS_PURE", raising=False)
    out = trec._ctrec.tokenize_run(text, len(text.rstrip()))
    assert not isinstance(out, int)
    got = None if out[5] is None else np.frombuffer(out[5], dtype=np.int64).tolist()
    assert got == lines
    monkeypatch.setenv("RANKLENS_PURE", "1")
    pure = trec.read_run(text, "r.run")
    assert (None if pure.line_numbers is None else np.asarray(pure.line_numbers).tolist()) == lines


def test_tokenizer_line_numbers_many_rows_before_a_skip() -> None:
    rows = 5000  # more rows than the first guess of a short text holds: the filled-in numbers grow with it
    text = b"".join(b"q1 Q0 d%d 1 2 t\n" % i for i in range(rows)) + b"#\nq1 Q0 e 1 2 t"
    out = trec._ctrec.tokenize_run(text, len(text))
    assert np.frombuffer(out[5], dtype=np.int64).tolist() == [*range(1, rows + 1), rows + 2]


def test_tokenize_mapped_checks_its_arguments() -> None:
    with pytest.raises(ValueError):
        trec._ctrec.tokenize_mapped(0, 10, 5)
    buf = np.frombuffer(b"q1 Q0 d1 1 2 t\n" + b"\0" * 64, dtype=np.uint8)
    with pytest.raises(ValueError):
        trec._ctrec.tokenize_mapped(int(buf.__array_interface__["data"][0]), 15, 16)
