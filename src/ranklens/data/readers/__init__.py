"""Readers and writers, one module per format; :mod:`ranklens.data.io` picks one (by the rule and the table of
:mod:`ranklens.data.formats`, the format registry) and builds Qrels/Run.

============================  ==================================================================
module                        job
============================  ==================================================================
:mod:`.trec`                  TREC qrels (``qid iter docid rel``) and runs (``qid Q0 docid rank score tag``)
:mod:`.json_formats`          JSON ``{qid: {docid: value}}`` and JSON Lines (one object per row)
:mod:`.delimited`             CSV / TSV with a header of named columns
:mod:`.parquet`               Parquet files
:mod:`.frames`                in-memory objects: pandas, polars, Arrow, dicts, Qrels/Run
============================  ==================================================================

Every reader returns :class:`Columns`, three parallel columns plus the line (1-based) each row came
from, so errors raised later (NaN scores, duplicates) name the right line. This module holds what the
readers share: that record, the text checks, column-name aliases and line bookkeeping.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data.columns import (  # noqa: F401 (re-exported: where the readers have always offered them)
    DOC_ALIASES,
    FLOAT_QRELS,
    LABEL_ALIASES,
    QRELS,
    QUERY_ALIASES,
    RUN,
    SCORE_ALIASES,
    ColumnMap,
    Kind,
    column_roles,
    qrels_kind,
    resolve_columns,
)
from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.errors import FormatError, Hint

if TYPE_CHECKING:
    import mmap

__all__ = [
    "FLOAT_QRELS",
    "QRELS",
    "RUN",
    "ColumnMap",
    "Columns",
    "Kind",
    "check_line_ends",
    "check_text",
    "column_roles",
    "extra_fields_note",
    "first_empty_id",
    "is_integer_token",
    "is_number_token",
    "line_of_offset",
    "misplaced_mark",
    "no_rows",
    "nonblank_line_numbers",
    "qrels_kind",
    "resolve_columns",
    "table_columns",
    "text_end",
    "to_qrels",
    "to_run",
    "write_lines",
]

@dataclass(frozen=True)
class Columns:
    """Parsed rows before they become a Qrels or Run.

    ``line_numbers[i]`` is the 1-based line (or row) of row ``i``; ``None`` means row ``i`` is line ``i+1``.
    ``tag`` is the run tag found in the input (TREC column 6), if any; ``extra_fields`` the number of
    lines with words after it (ignored, as trec_eval ignores them); ``notes`` what the reader assumed
    (a sniffed layout), passed on to ``Qrels.notes`` / ``Run.notes``. ``doc_hash`` is the id hash
    (``ranklens.data._hashing.string_hash``) of every ``doc_id`` when the reader computed it on the way (the
    compiled TREC tokenizer), else ``None``; whoever changes ``doc_id`` must drop it.
    """

    query_id: object
    doc_id: object
    value: object
    line_numbers: np.ndarray | None = None
    tag: str | None = None
    extra_fields: int = 0
    notes: tuple[str, ...] = ()
    doc_hash: np.ndarray | None = None


_UTF8_BOM = b"\xef\xbb\xbf"


def check_text(data: bytes, source: str, *, marks: bool = True) -> bytes:
    """Reject binary input (NUL bytes, invalid UTF-8) and return ``data`` without the UTF-8 byte-order
    marks it starts with (all of them: pyarrow's parser would drop a second one, the line scan would not;
    ``marks=False``: ``data`` does not begin a file, so it has none to drop). A mark anywhere else (a file
    joined to another with ``cat``) is an error naming its line: it would become part of an id.

    >>> check_text(b"\\xef\\xbb\\xbf\\xef\\xbb\\xbfq1 0 d1 1\\n", "qrels.txt")
    b'q1 0 d1 1\\n'
    >>> check_text(b"q1 0 d1 1\\nq\\x00", "qrels.txt")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: qrels.txt:2: expected UTF-8 text, found a NUL byte (is this a binary or compressed file?)
    """
    while marks and data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    nul = data.find(b"\x00")
    if nul >= 0:
        raise FormatError(
            source, "expected UTF-8 text, found a NUL byte (is this a binary or compressed file?)",
            line_of_offset(data, nul),
        )
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(
                source,
                f"expected UTF-8 text, found byte 0x{data[e.start]:02x} "
                "(is this a binary file, or text in another encoding?)",
                line_of_offset(data, e.start),
            ) from None
        mark = data.find(_UTF8_BOM)
        if mark >= 0:
            raise misplaced_mark(source, line_of_offset(data, mark))
    return data


def misplaced_mark(source: str, line: int | None) -> FormatError:
    """The error for a UTF-8 byte-order mark after the start of a file."""
    return FormatError(
        source,
        "found a byte-order mark (U+FEFF) after the start of the file, where it would become part of an id "
        "(files joined with cat?); only a mark that starts the file is dropped: remove this one",
        line,
    )


_LONE_CR = re.compile(rb"\r(?!\n)")


def check_line_ends(data: bytes, end: int, source: str) -> None:
    """Lines end with LF or CRLF: a carriage return followed by anything but a line feed, before ``end`` (the
    text without its trailing whitespace), is an error naming its line. A CR alone would end a line for some
    readers and separate columns for others; CR-only line ends (old Mac files) would read as one long line.

    >>> check_line_ends(b"q1 0 d1 1\\r\\nq1 0 d2 0\\r\\n", 20, "q.qrels")
    >>> check_line_ends(b"q1 0 d1 1\\rq1 0 d2 0\\r", 19, "q.qrels")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: q.qrels:1: found a carriage return (\\r) that is not followed by a line feed: lines must end with LF or CRLF (for CR-only line ends, as old Mac files have: tr '\\r' '\\n')
    """
    if data.find(b"\r", 0, end) < 0:
        return  # (memchr: the usual case)
    lone = _LONE_CR.search(data, 0, end)  # (a third of the time of counting CRs and CRLFs: 54 ms on 42 MB of CRLF)
    if lone is None:
        return
    at = lone.start()
    raise FormatError(
        source,
        "found a carriage return (\\r) that is not followed by a line feed: lines must end with LF or CRLF "
        "(for CR-only line ends, as old Mac files have: tr '\\r' '\\n')",
        line_of_offset(data, at),
    )


def line_of_offset(data: bytes, offset: int) -> int:
    """Return the 1-based line holding byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


_WHITESPACE = b" \t\r\n\x0b\x0c"


def text_end(data: bytes | mmap.mmap) -> int:
    """Return the length of ``data`` (bytes, or a memory map of a file) without trailing whitespace (no copy
    of the buffer)."""
    end = len(data)
    while end and data[end - 1] in _WHITESPACE:
        end -= 1
    return end


def nonblank_line_numbers(data: bytes | memoryview | np.ndarray, first_line: int = 1) -> np.ndarray:
    """Return the 1-based numbers of the non-empty lines of ``data`` (vectorised, no loop per line).

    ``first_line`` is the number of the first line of ``data`` in the whole file.

    >>> nonblank_line_numbers(b"a\\n\\nb\\n\\n").tolist()
    [1, 3]
    """
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) else data
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [arr.size]))
    length = ends - starts
    # a line made only of "\r" (CRLF file) is blank too
    cr_only = length == 1
    if cr_only.any():
        idx = np.flatnonzero(cr_only)
        cr_only[idx] = arr[starts[idx]] == 13
    return (np.flatnonzero((length > 0) & ~cr_only) + first_line).astype(np.int64)


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def is_integer_token(token: str) -> bool:
    """True for a decimal integer such as ``2``, ``-1`` or ``+3`` (not ``2.5``, not ``1e2``)."""
    return _INTEGER.match(token) is not None


def real_label_hint(token: str) -> tuple[Hint, ...]:
    """The hint an integer-label error carries when the refused label is a real number written with a point or
    an exponent (``0.5``, ``1e-3``; not ``inf``, ``nan`` or ``abc``): the command line then names ``--labels
    float`` (:class:`~ranklens.errors.Hint`, ``kind="labels"``).

    >>> [h.kind for h in real_label_hint("0.5")], real_label_hint("abc"), real_label_hint("inf")
    (['labels'], (), ())
    """
    return (Hint("labels"),) if is_number_token(token) and any(c in token for c in ".eE") and "n" not in token.lower() else ()


def is_number_token(token: str) -> bool:
    """True for what a float column accepts: ``1``, ``-2.5``, ``1e-3``, ``inf``, ``nan`` (not ``1_0``)."""
    if "_" in token or not token.isascii():
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def first_empty_id(query_id: pa.Array | pa.ChunkedArray, doc_id: pa.Array | pa.ChunkedArray) -> tuple[int, int] | None:
    """Return ``(column, row)`` of the first empty-string id (column 0: query, 1: document), else None.

    Nulls are not looked at (Qrels and Run reject them)."""
    for which, col in enumerate((query_id, doc_id)):
        if pa.types.is_string_view(col.type):
            col = col.cast(pa.large_string())
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) or len(col) == 0:
            continue
        lengths = pc.binary_length(col)
        if pc.min(lengths).as_py() == 0:
            return which, int(np.flatnonzero(np.asarray(lengths.to_numpy(zero_copy_only=False)) == 0)[0])
    return None


def write_lines(lines: pa.Array | pa.ChunkedArray, out: BinaryIO) -> None:
    """Write the characters of a string array back to back (each element already ends with a newline)."""
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    if len(lines) == 0:
        return
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=lines.offset * 4)
    out.write(memoryview(lines.buffers()[2])[int(offsets[0]) : int(offsets[-1])])


def to_qrels(columns: Columns, source: str, labels: str = "int") -> Qrels:
    """Build Qrels from parsed columns (``labels``: ``"int"`` or ``"float"``); errors name the line each
    row came from."""
    try:
        qrels = Qrels.from_arrays(
            columns.query_id, columns.doc_id, columns.value, source=source, line_numbers=columns.line_numbers,
            label_kind=labels,
        )
    except (pa.ArrowException, OverflowError) as e:
        raise FormatError(source, f"cannot build qrels: {_first_line(e)}") from None
    return dataclasses.replace(qrels, notes=columns.notes) if columns.notes else qrels


def to_run(columns: Columns, source: str, name: str) -> Run:
    """Build a Run from parsed columns; errors name the line each row came from."""
    try:
        run = Run.from_arrays(
            columns.query_id, columns.doc_id, columns.value, name=name, source=source,
            line_numbers=columns.line_numbers, doc_hash=columns.doc_hash,  # (the tokenizer's: not hashed twice)
        )
    except (pa.ArrowException, OverflowError) as e:
        raise FormatError(source, f"cannot build run: {_first_line(e)}") from None
    notes = (*columns.notes, *((extra_fields_note(columns.extra_fields),) if columns.extra_fields else ()))
    return dataclasses.replace(run, notes=notes) if notes else run


def extra_fields_note(lines: int) -> str:
    """The note for TREC run lines with words after the tag (ignored, as trec_eval ignores them)."""
    return f"{lines} line{'' if lines == 1 else 's'} had words after the tag (column 6): ignored, as trec_eval does"


def no_rows(kind: Kind, source: str) -> FormatError:
    """The error for an input with nothing to evaluate (only comments, blank lines, a bare header, ``{}``)."""
    what = "judgement" if kind.name == "qrels" else "ranked document"
    return FormatError(source, f"expected at least one {what} ({kind.name} line or row), found none")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _is_numeric_type(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t))


def _is_text_type(t: pa.DataType) -> bool:  # numbers as text: read as numbers, or rejected naming the row
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def table_columns(table: pa.Table, kind: Kind, source: str, mapping: Mapping[str, str] | None = None) -> Columns:
    """Pick the query, document and value columns of an Arrow table (Parquet, frames) by name, or as
    ``mapping`` (from :func:`column_roles`) says.

    "Line" in messages is the 1-based row number.
    """
    q, d, v = resolve_columns(table.column_names, kind, source, mapping=mapping)
    names = table.column_names
    value_type = table.schema.field(v).type
    if pa.types.is_dictionary(value_type):
        value_type = value_type.value_type
    if not (_is_numeric_type(value_type) or _is_text_type(value_type) or pa.types.is_null(value_type)):
        # bool, timestamps, dates, durations …: numpy would turn them into numbers that mean nothing here
        raise FormatError(source, f"expected numbers in column '{names[v]}', got {value_type}")
    value_what = "score" if kind is RUN else "relevance label"
    for what, pos in (("query id", q), ("document id", d), (value_what, v)):
        column = table.column(pos)
        if column.null_count:
            row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
            raise FormatError(source, f"expected a {what} in column '{names[pos]}', got null", row + 1)
    query, doc = table.column(q), table.column(d)
    empty = first_empty_id(query, doc)
    if empty is not None:
        which, row = empty
        what = ("query id", "document id")[which]
        raise FormatError(source, f"expected a {what} in column '{names[(q, d)[which]]}', got an empty value", row + 1)
    return Columns(query, doc, table.column(v))
