"""TREC qrels (``qid iter docid rel``) and runs (``qid Q0 docid rank score tag``): read and write.

Reading follows trec_eval (``get_trec_results.c``, ``get_qrels.c``): columns are separated by any run
of whitespace (space, tab, VT, FF), lines end in LF or CRLF (a CR followed by anything else is an error
naming its line, as a UTF-8 byte-order mark after the start of the file is: issue 22 item 3), lines whose
first non-blank character is ``#`` are comments,
the ``iter``/``Q0`` and ``rank`` columns are ignored, labels are integers and scores are float64.
Blank and whitespace-only lines are skipped in both files (trec_eval skips them in runs but calls
them malformed in qrels; their meaning is unambiguous, so we accept them). Line numbers in messages
count every physical line. Words after the tag of a run line are ignored, as trec_eval ignores them
(``Columns.extra_fields`` counts those lines, so callers can say so); a qrels line must have exactly 4
columns (trec_eval calls more "malformed" too). An empty field (a doubled delimiter) never shifts the
columns: ``q1  Q0 d2 2.0 t`` has 5 columns, not a document ``Q0``. Stricter than trec_eval: a label
that is not a decimal integer is an error (trec_eval's ``atol`` would read ``2.5`` as 2 and ``0x10`` as
0), so is a score that is not a number (``atof`` would read ``high`` as 0). A UTF-8 byte-order mark at
the start of the file is dropped (trec_eval would make it part of the first query id).

Other run layouts (:func:`read_run` ``layout=``; docs/inputs.md): ``"auto"`` sniffs the first content line
(:func:`run_layout_of`) and reads 6 columns as above, 5 (``qid Q0 docid rank score``: the second column
``Q0`` or ``0``, a whole rank, a number, nothing after) as a run without the tag, and 3 (``qid docid x``, the
third a number) as an MS MARCO run, where ``x`` is a rank when it counts up from 0 or 1 within every query
(:func:`counts_up`; score = -rank) and a score otherwise. ``"msmarco"`` is the 3-column layout with that
rule; ``"msmarco-rank"`` and ``"msmarco-score"`` force the third column's meaning. What was sniffed is
said in ``Columns.notes``.

Four paths, fastest first, each falling back to the next:

0. a 6-column run, when the compiled tokenizer ``ranklens.data._ctrec`` is built (``pip install`` with a C
   compiler) and ``RANKLENS_PURE`` is not set: one pass in C over the bytes. It accepts only lines it reads
   exactly as the line scan (3.) does and hands anything else (malformed lines included) to the paths
   below, so values and errors are theirs (``tests/data/test_compiled_parity.py``);
1. the file uses one delimiter consistently (single spaces, or single tabs): pyarrow's multi-threaded
   CSV parser reads it as is;
2. irregular whitespace: numpy collapses every run of whitespace to one space and trims line edges
   (vectorised, chunk by chunk), then pyarrow parses the result;
3. pyarrow rejected the input: a line-by-line scan finds the first bad line and says what is wrong.
   It is also the reference semantics, so if it finds nothing wrong its result is used.
"""

from __future__ import annotations

import dataclasses
import io
import mmap
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ranklens.data._arrow import from_numpy, read_lent, string_array
from ranklens.data._intern import intern_sorted, to_string_array
from ranklens.data.qrels import Qrels
from ranklens.data.readers import (
    Columns,
    check_line_ends,
    check_text,
    is_integer_token,
    is_number_token,
    nonblank_line_numbers,
    real_label_hint,
    text_end,
    write_lines,
)
from ranklens.data.run import Run
from ranklens.errors import FormatError, Hint

try:  # the compiled tokenizer of 6-column runs (src/ranklens/data/_ctrec.c); optional, the pure path is the reference
    from ranklens.data import _ctrec
except ImportError:  # pragma: no cover - a build without a C compiler
    _ctrec = None  # type: ignore[assignment]

__all__ = [
    "RUN_LAYOUTS",
    "counts_up",
    "first_content_line",
    "looks_like",
    "read_qrels",
    "read_run",
    "run_layout_of",
    "write_msmarco_run",
    "write_qrels",
    "write_run",
]


@dataclass(frozen=True)
class _Layout:
    kind: str
    names: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    query: int
    doc: int
    value: int
    tag: int | None
    value_is_int: bool
    extra_ok: bool = False  # words after the last column are ignored (runs, like trec_eval)

    @property
    def header(self) -> str:
        return " ".join(self.names)


_DICT = pa.dictionary(pa.int32(), pa.string())
_QRELS = _Layout(
    "qrels", ("qid", "iter", "docid", "rel"), (pa.string(), _DICT, pa.string(), pa.string()), 0, 2, 3, None, True
)
#: qrels with real-valued labels (``labels="float"``): the label column is read as a float64 number
_QRELS_FLOAT = _Layout(
    "qrels", ("qid", "iter", "docid", "rel"), (pa.string(), _DICT, pa.string(), pa.float64()), 0, 2, 3, None, False
)
_RUN = _Layout(
    "run",
    ("qid", "Q0", "docid", "rank", "score", "tag"),
    (pa.string(), _DICT, pa.string(), _DICT, pa.float64(), _DICT),
    0, 2, 4, 5, False, True,
)
_RUN5 = _Layout(
    "run",
    ("qid", "Q0", "docid", "rank", "score"),
    (pa.string(), _DICT, pa.string(), _DICT, pa.float64()),
    0, 2, 4, None, False,
)
_MSMARCO = _Layout(
    "run", ("qid", "docid", "rank/score"), (pa.string(), pa.string(), pa.float64()), 0, 1, 2, None, False
)

#: ``layout=`` of :func:`read_run`
RUN_LAYOUTS = ("trec", "auto", "msmarco", "msmarco-rank", "msmarco-score")

NO_TAG_NOTE = "5 columns: read as a TREC run without the tag (qid Q0 docid rank score)"
RANK_NOTE = (
    "3 columns: read as an MS MARCO run (qid docid rank), since the third column counts up from 0 or 1 "
    "within every query; score = -rank (if it is a score, use --run-format msmarco-score, format= in Python)"
)
SCORE_NOTE = (
    "3 columns: read as qid docid score, higher first, since the third column does not count up from 0 or 1 "
    "within every query (if it is a rank, use --run-format msmarco-rank, format= in Python)"
)

_SWAP_HINT = {
    ("run", 4): "; this looks like a qrels file (qid iter docid rel); did you swap QRELS and RUN?",
    ("qrels", 6): "; this looks like a run file (qid Q0 docid rank score tag); did you swap QRELS and RUN?",
}
_WS_BYTES = (32, 9, 13, 11, 12)  # space, tab, CR, VT, FF: what bytes.split() and trec_eval's isspace() split on
_CHUNK = 1 << 20  # bytes per normalising step: small enough to stay in cache


def read_qrels(data: bytes, source: str, *, labels: str = "int") -> Columns:
    """Parse TREC qrels text; ``labels="float"`` reads real-valued labels (``0.93``), else integers.

    >>> c = read_qrels(b"q1 0 d1 2\\n\\nq1\\t0\\td2   0\\n", "qrels.txt")
    >>> list(c.query_id.to_pylist()), list(c.doc_id.to_pylist()), c.value.to_pylist(), c.line_numbers.tolist()
    (['q1', 'q1'], ['d1', 'd2'], [2, 0], [1, 3])
    >>> read_qrels(b"q1 0 d1 0.93\\n", "qrels.txt", labels="float").value.to_pylist()
    [0.93]
    """
    return _read(data, source, _QRELS_FLOAT if labels == "float" else _QRELS)


def read_run(data: bytes, source: str, *, layout: str = "trec", file_start: bool = True) -> Columns:
    """Parse a TREC run; ``Columns.tag`` is the tag shared by all rows, else the first row's tag.

    ``layout`` is one of :data:`RUN_LAYOUTS`: ``"trec"`` is trec_eval's 6 columns; the others are
    described in the module docstring. ``file_start``: ``data`` begins the file, so byte-order marks
    there are dropped (False for a later block of a streamed file: a mark there is part of a query id,
    as it is when the file is read whole).

    >>> c = read_run(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 -inf bm25\\n", "run.trec")
    >>> c.doc_id.to_pylist(), c.value.to_pylist(), c.tag
    (['d1', 'd2'], [2.5, -inf], 'bm25')
    >>> c = read_run(b"q1 d7 1\\nq1 d3 2\\n", "run.tsv", layout="auto")  # MS MARCO: ranks become -rank
    >>> c.doc_id.to_pylist(), c.value.tolist(), c.notes[0][:40]
    (['d7', 'd3'], [-1.0, -2.0], '3 columns: read as an MS MARCO run (qid ')
    """
    if layout == "trec":
        return _read(data, source, _RUN, file_start=file_start)
    if layout == "auto":
        chosen = run_layout_of(first_content_line(data)) or _RUN
        if chosen is _RUN:
            return _read(data, source, _RUN)
        if chosen is _RUN5:
            return dataclasses.replace(_read(data, source, _RUN5), notes=(NO_TAG_NOTE,))
        layout = "msmarco"
    if layout not in ("msmarco", "msmarco-rank", "msmarco-score"):
        raise ValueError(f"unknown run layout {layout!r}; expected one of {', '.join(RUN_LAYOUTS)}")
    return _msmarco(_read(data, source, _MSMARCO), source, layout.removeprefix("msmarco").lstrip("-") or None)


# --------------------------------------------------------------------------------------------- sniffing


def first_content_line(data: bytes) -> bytes:
    """The first line that is neither blank nor a ``#`` comment (without a UTF-8 byte-order mark), or ``b""``.

    >>> first_content_line(b"\\n# comment\\n  q1 0 d1 1\\n")
    b'  q1 0 d1 1'
    """
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    while start < len(data):
        newline = data.find(b"\n", start)
        line = data[start : len(data) if newline < 0 else newline]
        stripped = line.strip()
        if stripped and not stripped.startswith(b"#"):
            return line
        if newline < 0:
            break
        start = newline + 1
    return b""


def _number(token: bytes) -> bool:
    return is_number_token(token.decode("utf-8", "replace"))


def run_layout_of(line: bytes) -> _Layout | None:
    """The run layout a first content line shows, or None: 6 or more columns with a number in column 5
    (TREC); exactly 5 with ``Q0`` or ``0`` in column 2, a whole rank and a number, and no delimiter after
    the last (TREC without the tag; ``q1 Q0 d1 1 2.5 `` has an empty tag); 3 with a number last (MS MARCO).

    >>> [run_layout_of(line).names[-1] for line in (b"q1 Q0 d1 1 2.5 bm25", b"q1 Q0 d1 1 2.5", b"q1 d1 1")]
    ['tag', 'score', 'rank/score']
    >>> run_layout_of(b"q1 d1 1 2.5 bm25") is None  # (no Q0: a 6-column line missing its rank or Q0)
    True
    """
    fields = line.split()
    if len(fields) >= 6 and _number(fields[4]):
        return _RUN
    if (
        len(fields) == 5
        and fields[1].lower() in (b"q0", b"0")
        and is_integer_token(fields[3].decode("utf-8", "replace"))
        and _number(fields[4])
        and not line.rstrip(b"\r").endswith((b" ", b"\t"))
    ):
        return _RUN5
    if len(fields) == 3 and _number(fields[2]):
        return _MSMARCO
    return None


def looks_like(line: bytes) -> str | None:
    """What a line that is not a header looks like: ``"qrels"`` (4 columns, a number last), ``"run"``
    (a layout of :func:`run_layout_of`), else None."""
    fields = line.split()
    if len(fields) == 4 and _number(fields[3]):
        return "qrels"
    return "run" if run_layout_of(line) is not None else None


def counts_up(query: object, values: np.ndarray) -> bool:
    """True when, within every query, the values taken down the file are whole numbers that start at 0 or
    1 and strictly increase (gaps allowed): the rule that tells an MS MARCO rank from a score.

    >>> counts_up(["q1", "q2", "q1"], np.array([1.0, 0.0, 3.0])), counts_up(["q1", "q1"], np.array([2.0, 1.0]))
    (True, False)
    """
    if values.size == 0 or not np.all(np.isfinite(values) & (values == np.floor(values))):
        return False
    codes, _ = intern_sorted(to_string_array(query))
    order = np.argsort(codes, kind="stable")
    c, v = codes[order], values[order]
    same = c[1:] == c[:-1]  # row i+1 continues the query of row i
    starts = np.concatenate(([True], ~same))
    return bool(np.all((v[starts] == 0) | (v[starts] == 1)) and np.all(v[1:][same] > v[:-1][same]))


def _msmarco(cols: Columns, source: str, third: str | None) -> Columns:
    """The third column of a 3-column run as a rank (score = -rank) or a score; ``third`` None: by
    :func:`counts_up`, said in a note."""
    value = cols.value.combine_chunks() if isinstance(cols.value, pa.ChunkedArray) else cols.value
    if isinstance(value, pa.Array):
        value = value.to_numpy(zero_copy_only=False)
    values = np.asarray(value, dtype=np.float64)
    notes: tuple[str, ...] = ()
    if third is None:
        third = "rank" if counts_up(cols.query_id, values) else "score"
        notes = (RANK_NOTE if third == "rank" else SCORE_NOTE,)
    elif third == "rank":
        _check_ranks(cols, values, source)
    if third == "rank":
        values = -values
    return dataclasses.replace(cols, value=values, notes=notes)


def _check_ranks(cols: Columns, values: np.ndarray, source: str) -> None:
    """Forced ranks: whole numbers ≥ 0, each used once per query (so -rank has no ties)."""

    def line(row: int) -> int:
        return int(cols.line_numbers[row]) if cols.line_numbers is not None else row + 1

    bad = np.flatnonzero(~(np.isfinite(values) & (values == np.floor(values)) & (values >= 0)))
    if bad.size:
        row = int(bad[0])
        raise FormatError(
            source, f"expected a whole-number rank (0, 1, 2, …) in column 3, got '{values[row]:g}'", line(row)
        )
    codes, _ = intern_sorted(to_string_array(cols.query_id))
    order = np.lexsort((np.arange(values.size), values, codes))
    twice = np.flatnonzero((codes[order][1:] == codes[order][:-1]) & (values[order][1:] == values[order][:-1]))
    if twice.size:
        pairs = [(int(order[i]), int(order[i + 1])) for i in twice]
        first, second = min(pairs, key=lambda pair: pair[1])
        query = to_string_array(cols.query_id)[second].as_py()
        raise FormatError(
            source,
            f"rank {values[second]:g} appears twice for query '{query}' (first at line {line(first)}); "
            "a rank orders the documents: give each its own",
            line(second),
        )


# --------------------------------------------------------------------------------------------- reading


def _read(data: bytes, source: str, layout: _Layout, *, file_start: bool = True) -> Columns:
    data = check_text(data, source, marks=file_start)
    end = text_end(data)
    if end == 0:
        raise FormatError(source, f"expected at least one line ({layout.header}), got an empty file")
    check_line_ends(data, end, source)
    if layout is _RUN and _ctrec is not None and not pure_only():
        cols = _compiled_run(data, end)
        if cols is not None:
            return cols
    delimiter = _single_delimiter(data, end)
    if delimiter is not None:
        # only the three needed columns are converted; pyarrow still checks every line's column count.
        # An empty field (doubled delimiter) in an ignored column can only keep the count right by
        # standing in for a missing field, which leaves the needed values where they belong.
        table = _integer_labels(
            _parse(memoryview(data)[:end], delimiter, layout, skip_blank=False, needed_only=True), layout, 2
        )
        if table is not None:
            nl = data.find(b"\n", 0, end)
            return _columns(table, layout, None, first_line=data[: nl if nl >= 0 else end])
    normalised = _normalise_whitespace(data, end)
    table = _integer_labels(_parse(normalised, b" ", layout, skip_blank=True), layout, layout.value)
    extra = 0
    if table is None and layout.extra_ok:
        normalised, extra = _cut_extra_fields(normalised, len(layout.names))
        table = _parse(normalised, b" ", layout, skip_blank=True) if extra else None
    if table is None:
        return _scan(data, source, layout)
    lines = data.count(b"\n", 0, end) + 1
    cols = _columns(table, layout, None if table.num_rows == lines else nonblank_line_numbers(normalised))
    return dataclasses.replace(cols, extra_fields=extra) if extra else cols


_STR_ONLY_WS = re.compile(rb"[\x1c-\x1f]")  # whitespace to str.split(), not to bytes.split()


def pure_only() -> bool:
    """``RANKLENS_PURE=1`` in the environment: never use the compiled tokenizer (tests, debugging)."""
    return os.environ.get("RANKLENS_PURE", "") not in ("", "0")


def _compiled_run(data: bytes, end: int) -> Columns | None:
    """A 6-column run read by the compiled tokenizer, or None when it leaves the text to the pure path.

    The tokenizer accepts only lines it reads exactly as :func:`_scan` does; at the first line it does
    not accept (a malformed line, a ``nan`` score, an unusual number) it stops, and the pure path reads the
    block again, so every value and every error message is the pure path's own.
    """
    nl = data.find(b"\n", 0, end)
    if not _tokenizer_reads(data[: nl if nl >= 0 else end]):
        return None
    out = _ctrec.tokenize_run(data, end)
    if isinstance(out, int):
        return None
    return _tokenized_columns(out)


def _tokenizer_reads(first: bytes) -> bool:
    """Whether the compiled tokenizer may read a text whose first line is ``first``: the single-delimiter
    path takes the tag from ``str.split()`` of that line, so a non-ASCII line or one with whitespace only
    ``str.split()`` knows is left to that reading."""
    return first.isascii() and _STR_ONLY_WS.search(first) is None


def _tokenized_columns(out: tuple) -> Columns:  # type: ignore[type-arg]
    """The Columns of the compiled tokenizer's output (its buffers wrapped, not copied)."""
    q_offsets, q_data, d_offsets, d_data, scores, lines, rows, extra, tag, hashes = out
    query = pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(q_offsets), pa.py_buffer(q_data)])
    doc = pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(d_offsets), pa.py_buffer(d_data)])
    value = from_numpy(np.frombuffer(scores, dtype=np.float64))
    line_numbers = None if lines is None else np.frombuffer(lines, dtype=np.int64)
    doc_hash = np.frombuffer(hashes, dtype=np.uint64)  # the id hash of _hashing.string_hash, on the way
    return Columns(query, doc, value, line_numbers, tag.decode(), extra, doc_hash=doc_hash)


#: A regular run file of at least this many bytes is tokenized from a read-only memory map whose pages the
#: tokenizer gives back behind its scan (:func:`read_run_mapped`); a smaller one is read into memory.
MAPPED_MIN_BYTES = 1 << 20
_HEAD_BYTES = 1 << 16  # the start of a mapped file read to sniff the layout and check the first line
_CHECK_BYTES = 1 << 24  # bytes per step of the UTF-8 check of a mapped file (a multiple of the page size)


def read_run_mapped(handle: BinaryIO, source: str, *, layout: str = "trec") -> Columns | None:
    """A 6-column TREC run read from an open regular file by the compiled tokenizer, straight from a
    read-only memory map whose pages it gives back behind its scan (``madvise(MADV_DONTNEED)``: a file's
    pages fault in again, unchanged, if read again), so the text is never held whole next to the columns
    it becomes (issue 12: peak memory).

    ``None`` whenever :func:`read_run` of the file's bytes must read it instead, which then gives every
    value and every error message: no compiled tokenizer (or ``RANKLENS_PURE``), no ``madvise`` here, a
    file smaller than :data:`MAPPED_MIN_BYTES`, a byte-order mark, another layout (``layout`` is
    :func:`read_run`'s; ``"auto"`` sniffs the first content line), a line the tokenizer does not accept, a
    NUL byte or invalid UTF-8. Otherwise the result is :func:`read_run`'s of the file's bytes, value for value.
    """
    if _ctrec is None or pure_only() or layout not in ("trec", "auto") or not hasattr(_ctrec, "tokenize_mapped"):
        return None
    if not hasattr(mmap, "MADV_DONTNEED"):
        return None
    try:
        size = os.fstat(handle.fileno()).st_size
        if size < max(MAPPED_MIN_BYTES, 1):
            return None
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        return _mapped_run(mapped, layout)
    finally:
        mapped.close()


def _mapped_run(mapped: mmap.mmap, layout: str) -> Columns | None:
    size = len(mapped)
    head = mapped[:_HEAD_BYTES]
    if head.startswith(b"\xef\xbb\xbf"):
        return None  # check_text drops byte-order marks (a copy of the text): the in-memory path's case
    if size > len(head):  # only whole lines of the head: a line cut by it says nothing
        cut = head.rfind(b"\n")
        if cut < 0:
            return None
        head = head[: cut + 1]
    if layout == "auto":
        line = first_content_line(head)
        if not line and size > len(head):
            return None  # the first content line is beyond the head: let read_run find it
        if (run_layout_of(line) or _RUN) is not _RUN:
            return None
    end = text_end(mapped)
    if end == 0:
        return None
    nl = head.find(b"\n", 0, min(end, len(head)))
    if nl < 0 and end > len(head):
        return None
    if not _tokenizer_reads(head[: nl if nl >= 0 else end]):
        return None
    view = np.frombuffer(mapped, dtype=np.uint8)
    try:
        out = _ctrec.tokenize_mapped(int(view.__array_interface__["data"][0]), size, end)
    finally:
        del view  # (the map cannot close while exported)
    if isinstance(out, int):
        return None
    tokens, nonascii = out
    if nonascii:  # the tokenizer saw no NUL byte; check_text also wants valid UTF-8 and no byte-order mark
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")()
        for start in range(0, size, _CHECK_BYTES):
            chunk = mapped[max(0, start - 2) : start + _CHECK_BYTES]  # (2 bytes back: a mark across the cut)
            try:
                decoder.decode(memoryview(chunk)[2 if start else 0 :], final=start + _CHECK_BYTES >= size)
            except UnicodeDecodeError:
                return None
            if chunk.find(b"\xef\xbb\xbf") >= 0:
                return None  # (a mark after the start: check_text names its line)
            del chunk
            mapped.madvise(mmap.MADV_DONTNEED, start, min(_CHECK_BYTES, size - start))
    return _tokenized_columns(tokens)


_DECIMAL = r"^[+-]?[0-9]{1,10}$"


def _integer_labels(table: pa.Table | None, layout: _Layout, column: int) -> pa.Table | None:
    """Labels read as text, checked to be decimal integers of at most 10 digits and cast to int64;
    ``None`` (the line scan names the bad line) for anything else, ``0x10`` and ``1e3`` included."""
    if table is None or not layout.value_is_int:
        return table
    labels = table.column(column)
    if len(labels) and not pc.all(pc.match_substring_regex(labels, _DECIMAL)).as_py():
        return None
    if pc.any(pc.starts_with(labels, "+")).as_py():  # pyarrow's cast refuses a leading '+'
        labels = pc.replace_substring_regex(labels, r"^\+", "")
    return table.set_column(column, table.field(column).name, pc.cast(labels, pa.int64()))


def _cut_extra_fields(arr: np.ndarray, width: int) -> tuple[np.ndarray, int]:
    """Drop everything from the ``width``-th space of each normalised line on; count the lines cut.

    >>> out, n = _cut_extra_fields(np.frombuffer(b"a b c x y\\nd e f", dtype=np.uint8), 3)
    >>> bytes(out), n
    (b'a b c\\nd e f', 1)
    """
    space = arr == 32
    newline = arr == 10
    seen = np.cumsum(space)  # spaces up to and including each byte
    line_start = np.concatenate(([0], np.flatnonzero(newline) + 1))
    base = np.concatenate(([0], seen[line_start[1:] - 1]))  # spaces before each line
    line = np.cumsum(newline) - newline
    in_line = seen - base[line]
    cut = (in_line >= width) & ~newline
    if not cut.any():
        return arr, 0
    lines_cut = int(np.unique(line[cut]).size)
    return arr[~cut], lines_cut


def _single_delimiter(data: bytes, end: int) -> bytes | None:
    """Return the delimiter if every line is fields separated by exactly one space, or one tab (``data`` has
    passed :func:`~ranklens.data.readers.check_line_ends`: a CR only ends a line).

    Only cheap one-byte scans here (a ``#`` anywhere sends the file to the normalising path, which
    drops comment lines); doubled, leading and trailing delimiters show up as empty fields
    or a wrong column count in the parse and send the file down the normalising path.
    """
    if data[0] in _WS_BYTES or data[0] == 10:
        return None
    nl = data.find(b"\n", 0, end)
    first = data[: nl if nl >= 0 else end]
    has_tab, has_space = b"\t" in first, b" " in first
    if has_tab == has_space:
        return None
    delimiter, other = (b"\t", b" ") if has_tab else (b" ", b"\t")
    for byte in (other, b"\x0b", b"\x0c", b"#", delimiter * 2, b"\n" + delimiter, delimiter + b"\n", delimiter + b"\r"):
        if data.find(byte, 0, end) >= 0:  # (doubled, leading or trailing delimiters: empty fields)
            return None
    return delimiter  # (every CR ends its line: check_line_ends has refused any other)


def _parse(
    buffer: object, delimiter: bytes, layout: _Layout, *, skip_blank: bool, needed_only: bool = False
) -> pa.Table | None:
    """Parse with pyarrow; ``None`` if pyarrow rejects the input (the caller falls back)."""
    names = [f"f{i}" for i in range(len(layout.names))]
    include = [names[layout.query], names[layout.doc], names[layout.value]] if needed_only else []
    return read_lent(
        buffer,
        lambda source: pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter.decode(),
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=skip_blank,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict(zip(names, layout.types)),
                null_values=[],
                true_values=[],
                false_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                include_columns=include,
            ),
        ),
        (pa.ArrowException, ValueError),
    )


def _columns(
    table: pa.Table, layout: _Layout, line_numbers: np.ndarray | None, *, first_line: bytes | None = None
) -> Columns:
    tag = None
    if first_line is not None:
        if layout.tag is not None:
            fields = first_line.decode("utf-8", "replace").split()
            tag = fields[layout.tag] if len(fields) > layout.tag else None
        return Columns(table.column(0), table.column(1), table.column(2), line_numbers, tag)
    if layout.tag is not None:
        column = table.column(layout.tag)
        seen: set[str] = set()
        for chunk in column.chunks:
            seen.update(chunk.dictionary.to_pylist())
            if len(seen) > 1:
                break
        tag = seen.pop() if len(seen) == 1 else column[0].as_py() if len(column) else None  # (comments only)
    return Columns(
        table.column(layout.query), table.column(layout.doc), table.column(layout.value), line_numbers, tag
    )


def _normalise_whitespace(data: bytes, end: int) -> np.ndarray:
    """Collapse whitespace runs to one space and drop it at line edges; newlines (so line numbers) are kept.

    >>> raw = b"  a \\t b\\r\\n\\t\\nc  d  \\n"
    >>> bytes(_normalise_whitespace(raw, text_end(raw)))
    b'a b\\n\\nc d'
    """
    arr = np.frombuffer(data, dtype=np.uint8, count=end)
    bounds = []
    start = 0
    while start < end:
        stop = min(start + _CHUNK, end)
        if stop < end:  # cut after a newline so no whitespace run or line spans two chunks
            cut = data.rfind(b"\n", start, stop)
            if cut < 0:
                cut = data.find(b"\n", stop, end)
            stop = end if cut < 0 else cut + 1
        bounds.append((start, stop))
        start = stop
    workers = min(pa.cpu_count(), len(bounds))
    if workers > 1:  # numpy releases the GIL in these loops, so threads share the work
        with ThreadPoolExecutor(workers) as pool:
            pieces = list(pool.map(lambda b: _normalise_chunk(arr[b[0] : b[1]]), bounds))
    else:
        pieces = [_normalise_chunk(arr[a:b]) for a, b in bounds]
    return np.concatenate(pieces) if len(pieces) != 1 else pieces[0]


def _normalise_chunk(arr: np.ndarray) -> np.ndarray:
    ws = (arr == 32) | (arr == 9) | ((arr >= 11) & (arr <= 13))
    keep = np.ones(arr.size, dtype=bool)
    np.logical_not(ws[1:] & ws[:-1], out=keep[1:])  # keep the first byte of each whitespace run
    collapsed = np.where(ws, np.uint8(32), arr)[keep]
    space = collapsed == 32
    newline = collapsed == 10
    edge = np.empty(collapsed.size, dtype=bool)  # next to a line break or a chunk edge (chunks end lines)
    edge[0] = edge[-1] = True
    np.logical_or(newline[:-2], newline[2:], out=edge[1:-1])
    out = collapsed[~(space & edge)]
    return _drop_comments(out) if (out == 35).any() else out


def _drop_comments(arr: np.ndarray) -> np.ndarray:
    """Empty the lines that start with ``#`` (keeping their newline, so line numbers stay right)."""
    newline = arr == 10
    line_start = np.empty(arr.size, dtype=bool)
    line_start[0] = True
    line_start[1:] = newline[:-1]
    comment_start = line_start & (arr == 35)
    if not comment_start.any():
        return arr
    line = np.cumsum(newline) - newline  # index of the line each byte belongs to
    is_comment = np.zeros(int(line[-1]) + 1, dtype=bool)
    is_comment[line[comment_start]] = True
    return arr[~(is_comment[line] & ~newline)]


def _scan(data: bytes, source: str, layout: _Layout) -> Columns:
    """The reference semantics, one line at a time: used to name the first bad line precisely."""
    width = len(layout.names)
    queries: list[str] = []
    docs: list[str] = []
    values: list[str] = []
    lines: list[int] = []
    tags: set[bytes] = set()
    first_tag = b""
    extra = 0
    for lineno, raw in enumerate(io.BytesIO(data), 1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if layout.extra_ok and len(fields) > width:
            fields = fields[:width]
            extra += 1
        if len(fields) != width:
            raise FormatError(source, _count_message(layout, len(fields), raw, first=not lines), lineno)
        value = fields[layout.value].decode()
        if layout.value_is_int and not is_integer_token(value):
            raise FormatError(
                source,
                (f"expected an integer relevance label in column {layout.value + 1} "
                 f"({layout.names[layout.value]}), got '{value}'", *real_label_hint(value)),
                lineno,
            )
        if layout.value_is_int and not -(2**31) <= int(value) < 2**31:
            raise FormatError(
                source,
                f"expected a relevance label in the 32-bit range (±2147483647) in column {layout.value + 1}, "
                f"got '{value}'",
                lineno,
            )
        if not layout.value_is_int and not is_number_token(value):
            raise FormatError(
                source,
                f"expected a number in column {layout.value + 1} ({layout.names[layout.value]}), got '{value}'",
                lineno,
            )
        queries.append(fields[layout.query].decode())
        docs.append(fields[layout.doc].decode())
        values.append(value)
        lines.append(lineno)
        if layout.tag is not None:
            if not tags:
                first_tag = fields[layout.tag]
            tags.add(fields[layout.tag])
    if not lines:
        return Columns(string_array([]), string_array([]), from_numpy(np.zeros(0, dtype=np.int64)))
    parsed = np.array(values).astype(np.int64 if layout.value_is_int else np.float64)
    tag = (tags.pop() if len(tags) == 1 else first_tag).decode() if layout.tag is not None else None
    return Columns(
        pa.array(queries, pa.string()), pa.array(docs, pa.string()), pa.array(parsed),
        np.array(lines, dtype=np.int64), tag, extra,
    )


def _count_message(layout: _Layout, got: int, raw: bytes, *, first: bool) -> tuple[str, ...]:
    message = f"expected {len(layout.names)} columns ({layout.header}), got {got}"
    if first and (layout.kind, got) in _SWAP_HINT:
        return (message + _SWAP_HINT[(layout.kind, got)],)
    if got == 1 and b"," in raw:
        return message + "; the line has commas: is this a CSV file? (use ", Hint("use", role=layout.kind, format="csv"), ")"
    return (message,)


# --------------------------------------------------------------------------------------------- writing

_WS_PATTERN = "[ \t\n\r\v\f]"


def write_qrels(qrels: Qrels, out: BinaryIO, source: str, delimiter: str = " ") -> None:
    """Write ``qid 0 docid rel`` lines, sorted by query then document id (``delimiter="\\t"``: MS MARCO's)."""
    _check_ids(qrels.query_ids, "query id", source)
    _check_ids(qrels.doc_ids, "document id", source)
    n = len(qrels)
    for s in range(0, n, 1 << 20):
        e = min(n, s + (1 << 20))
        lines = pc.binary_join_element_wise(
            qrels.query_ids.take(from_numpy(qrels.query[s:e])),
            pa.scalar("0"),
            qrels.doc_ids.take(from_numpy(qrels.doc[s:e])),
            pc.binary_join_element_wise(pc.cast(pa.array(qrels.label[s:e]), pa.string()), pa.scalar("\n"), ""),
            delimiter,
        )
        write_lines(lines, out)


def write_run(run: Run, out: BinaryIO, tag: str, source: str) -> None:
    """Write ``qid Q0 docid rank score tag`` lines; ranks follow trec_eval's order within each query:
    score descending, ties by document id descending. Scores are written in the shortest form that
    reads back to the same float64."""
    _check_ids(run.query_ids, "query id", source)
    _check_ids(run.doc_ids, "document id", source)
    if not tag or any(ch in tag for ch in " \t\n\r\v\f"):
        raise FormatError(source, f"cannot write run tag {tag!r}: a TREC tag must be non-empty, without whitespace")
    order = np.lexsort((-run.doc.astype(np.int64), -run.score, run.query))
    query = run.query[order]
    counts = np.bincount(query, minlength=run.num_queries)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(1, len(order) + 1, dtype=np.int64) - starts[query]
    n = len(order)
    tail = pa.scalar(tag + "\n")
    for s in range(0, n, 1 << 20):
        e = min(n, s + (1 << 20))
        rows = order[s:e]
        lines = pc.binary_join_element_wise(
            run.query_ids.take(from_numpy(query[s:e])),
            pa.scalar("Q0"),
            run.doc_ids.take(from_numpy(run.doc[rows])),
            pc.cast(pa.array(rank[s:e]), pa.string()),
            pc.cast(pa.array(run.score[rows]), pa.string()),
            tail,
            " ",
        )
        write_lines(lines, out)


def write_msmarco_run(run: Run, out: BinaryIO, source: str, value: str = "rank") -> None:
    """Write MS MARCO's ``qid<TAB>docid<TAB>rank`` lines (``value="score"``: the score in place of the
    rank), ranked as :func:`write_run` ranks, so reading the file back gives the same ranking."""
    _check_ids(run.query_ids, "query id", source)
    _check_ids(run.doc_ids, "document id", source)
    order = np.lexsort((-run.doc.astype(np.int64), -run.score, run.query))
    query = run.query[order]
    counts = np.bincount(query, minlength=run.num_queries)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(1, len(order) + 1, dtype=np.int64) - starts[query]
    for s in range(0, len(order), 1 << 20):
        rows = order[s : s + (1 << 20)]
        third = pa.array(rank[s : s + (1 << 20)]) if value == "rank" else pa.array(run.score[rows])
        lines = pc.binary_join_element_wise(
            run.query_ids.take(from_numpy(query[s : s + (1 << 20)])),
            run.doc_ids.take(from_numpy(run.doc[rows])),
            pc.binary_join_element_wise(pc.cast(third, pa.string()), pa.scalar("\n"), ""),
            "\t",
        )
        write_lines(lines, out)


def _check_ids(vocabulary: pa.Array, what: str, source: str) -> None:
    if len(vocabulary) == 0:
        return
    bad = pc.match_substring_regex(vocabulary, _WS_PATTERN)
    if pc.any(bad).as_py():
        example = vocabulary.filter(bad)[0].as_py()
        raise FormatError(
            source, f"cannot write {what} {example!r} to a TREC file: TREC columns are separated by whitespace"
        )
