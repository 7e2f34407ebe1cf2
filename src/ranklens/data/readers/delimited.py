"""CSV and TSV with a header of named columns: read and write.

The header names the columns; any order, extra columns ignored, names matched case-insensitively with
aliases (``query_id``/``qid``/``query``/``user_id``…, ``doc_id``/``docid``/``docno``/``item_id``…,
``score``/``sim``/``prediction``, ``relevance``/``rel``/``label``/``grade``/``rating``/``score``; see
:data:`ranklens.data.readers.QUERY_ALIASES`), or as ``columns=`` maps them. CSV fields may be quoted
(``"``); TSV fields are taken as they are. Blank lines are skipped; line numbers in messages count them.
Lines end with LF or CRLF: a carriage return alone is an error naming its line. Labels are decimal
integers in the 32-bit range (``0x10`` and ``1e3`` are errors, as in TREC files).

A TSV file whose first line is not a header but a TREC line (``sniff=True``: the format came from the
``.tsv`` extension and no ``columns=`` was given) is read by :mod:`.trec`, with a note: MS MARCO's
``qrels.dev.tsv`` (``qid 0 pid rel``) and runs (``qid pid rank``) have no header.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Mapping
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ranklens.data._arrow import read_lent
from ranklens.data.columns import QRELS  # noqa: F401 (the doctests use it)
from ranklens.data.qrels import Qrels
from ranklens.data.readers import (
    Columns,
    Kind,
    check_line_ends,
    check_text,
    first_empty_id,
    is_integer_token,
    is_number_token,
    nonblank_line_numbers,
    real_label_hint,
    resolve_columns,
    text_end,
    trec,
    write_lines,
)
from ranklens.data.run import Run
from ranklens.errors import FormatError, Hint

__all__ = ["NO_HEADER_QRELS_NOTE", "read_delimited", "write_delimited"]

NO_HEADER_QRELS_NOTE = "no header line: read as TREC qrels (qid iter docid rel), the layout of MS MARCO's qrels.*.tsv"


def read_delimited(
    data: bytes,
    source: str,
    kind: Kind,
    delimiter: str,
    *,
    mapping: Mapping[str, str] | None = None,
    sniff: bool = False,
) -> Columns:
    """Parse CSV (``delimiter=","``) or TSV (``"\\t"``) with a header line; ``mapping`` (from
    :func:`~ranklens.data.readers.column_roles`) names columns; ``sniff`` reads a headerless TSV of TREC
    lines as TREC.

    >>> c = read_delimited(b"qid,docno,rel\\nq1,d1,2\\n\\nq1,d2,0\\n", "qrels.csv", QRELS, ",")
    >>> c.query_id.to_pylist(), c.doc_id.to_pylist(), c.value.to_pylist(), c.line_numbers.tolist()
    (['q1', 'q1'], ['d1', 'd2'], [2, 0], [2, 4])
    """
    data = check_text(data, source)
    end = text_end(data)
    if end == 0:
        raise FormatError(source, "expected at least one line, got an empty file")
    # text_end strips trailing tabs too: a tab delimiter ending the last line is a field, as on any other line
    rest = data[end:].split(b"\n", 1)[0]
    if delimiter.encode() in rest:
        end += rest.rindex(delimiter.encode()) + 1
    check_line_ends(data, end, source)
    header_line, header_start = 1, 0
    while True:  # the header is the first non-blank line
        newline = data.find(b"\n", header_start, end)
        header_end = end if newline < 0 else newline
        if data[header_start:header_end].strip():
            break
        header_start, header_line = newline + 1, header_line + 1
    first = data[header_start:header_end]
    names = _split(first.decode("utf-8").rstrip("\r"), delimiter, source, header_line)
    if sniff and delimiter == "\t" and mapping is None and trec.looks_like(first) is not None:
        try:
            resolve_columns(names, kind, source, header_line)
        except FormatError:
            return _headerless(data, source, kind)
    positions = _resolve(names, kind, source, header_line, mapping, first)
    if header_end >= end:
        raise FormatError(source, "expected at least one row after the header, got none", header_line)
    body = memoryview(data)[header_end + 1 : end]
    table = _parse(body, names, positions, kind, delimiter)
    if table is None:
        return _scan(data, source, kind, delimiter, names, positions, header_line)
    lines = data.count(b"\n", header_end + 1, end) + 1
    if table.num_rows == lines:
        numbers = np.arange(header_line + 1, header_line + 1 + lines, dtype=np.int64)
    else:
        numbers = nonblank_line_numbers(body, first_line=header_line + 1)
    query, doc, value = table.column(0), table.column(1), table.column(2)
    if first_empty_id(query, doc) is not None:  # the scan names the line and the column
        return _scan(data, source, kind, delimiter, names, positions, header_line)
    return Columns(query, doc, value, numbers)


def _split(line: str, delimiter: str, source: str = "", lineno: int | None = None) -> list[str]:
    if delimiter == "\t":
        return line.split("\t")
    try:
        return next(csv.reader([line]), [])
    except csv.Error as e:  # (a field over the csv module's size limit)
        raise FormatError(source, f"cannot split the line into fields: {e}", lineno) from None


def _headerless(data: bytes, source: str, kind: Kind) -> Columns:
    """A TSV without a header, made of TREC lines: read as TREC, with one note saying so."""
    if kind.name == "qrels":
        labels = "float" if kind.real_values else "int"
        return dataclasses.replace(trec.read_qrels(data, source, labels=labels), notes=(NO_HEADER_QRELS_NOTE,))
    cols = trec.read_run(data, source, layout="auto")
    notes = tuple(f"no header line; {note}" for note in cols.notes) or (
        "no header line: read as a TREC run (qid Q0 docid rank score tag)",
    )
    return dataclasses.replace(cols, notes=notes)


def _resolve(
    names: list[str], kind: Kind, source: str, line: int, mapping: Mapping[str, str] | None, first: bytes
) -> tuple[int, int, int]:
    numeric = any(is_number_token(n.strip()) for n in names)
    try:
        return resolve_columns(names, kind, source, line, mapping=mapping, suggest_map=not numeric)
    except FormatError as e:
        if numeric and mapping is None:
            detail = (*e.parts, "; the first line must be a header naming the columns", *_looks_like(first, kind))
            raise FormatError(source, detail, line) from None
        raise


def _looks_like(first: bytes, kind: Kind) -> tuple[str, ...]:
    """A hint for a TSV/CSV forced to be one, whose first line is a TREC line of this kind (message parts)."""
    if trec.looks_like(first) != kind.name:
        return ()
    if kind.name == "qrels":
        return " (it looks like TREC qrels: use ", Hint("use", role="qrels", format="trec"), ")"
    layout = trec.run_layout_of(first)
    width = 0 if layout is None else len(layout.names)
    if width == 3:
        return " (it looks like an MS MARCO run: use ", Hint("use", role="run", format="msmarco"), ")"
    if width == 5:
        return (" (it looks like a TREC run without the tag: read it without forcing the format)",)
    return " (it looks like a TREC run: use ", Hint("use", role="run", format="trec"), ")"


def _parse(
    body: memoryview, names: list[str], positions: tuple[int, int, int], kind: Kind, delimiter: str
) -> pa.Table | None:
    columns = [f"f{i}" for i in range(len(names))]
    wanted = [columns[p] for p in positions]
    value_type = pa.float64() if kind.real_values else pa.string()  # labels: checked below, then cast
    table = read_lent(
        body,
        lambda source: pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(column_names=columns, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter,
                quote_char='"' if delimiter == "," else False,
                newlines_in_values=False,
                ignore_empty_lines=True,
            ),
            convert_options=pacsv.ConvertOptions(
                include_columns=wanted,
                column_types=dict(zip(wanted, (pa.string(), pa.string(), value_type))),
                null_values=[],
                true_values=[],
                false_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        ),
        (pa.ArrowException, ValueError),
    )
    if table is None:
        return None
    table = table.select(wanted)
    if kind.real_values:
        return table
    labels = table.column(2)  # decimal integers of at most 10 digits (not 0x10, 1e3, 2^63), else the scan says
    if len(labels) and not pc.all(pc.match_substring_regex(labels, r"^[+-]?[0-9]{1,10}$")).as_py():
        return None
    return table.set_column(2, table.field(2).name, pc.cast(pc.replace_substring_regex(labels, r"^\+", ""), pa.int64()))


def _scan(
    data: bytes,
    source: str,
    kind: Kind,
    delimiter: str,
    names: list[str],
    positions: tuple[int, int, int],
    header_line: int,
) -> Columns:
    """Line by line, to name the first bad line; its result is used if it finds nothing wrong."""
    q, d, v = positions
    queries: list[str] = []
    docs: list[str] = []
    values: list[str] = []
    lines: list[int] = []
    expected = delimiter.join(names)
    for lineno, raw in enumerate(io.BytesIO(data), 1):
        if lineno <= header_line or not raw.strip():
            continue
        fields = _split(raw.decode("utf-8").rstrip("\r\n"), delimiter, source, lineno)
        if len(fields) != len(names):
            raise FormatError(
                source, f"expected {len(names)} fields as in the header ({expected}), got {len(fields)}", lineno
            )
        for what, pos in (("query id", q), ("document id", d)):
            if fields[pos] == "":
                raise FormatError(source, f"expected a {what} in column {pos + 1} ({names[pos]}), got an empty value", lineno)
        value = fields[v].strip()
        if kind.real_values and not is_number_token(value):
            raise FormatError(source, f"expected a number in column {v + 1} ({names[v]}), got '{fields[v]}'", lineno)
        if not kind.real_values and not is_integer_token(value):
            raise FormatError(
                source,
                (f"expected an integer relevance label in column {v + 1} ({names[v]}), got '{fields[v]}'",
                 *real_label_hint(fields[v].strip())),
                lineno,
            )
        if not kind.real_values and (len(value.lstrip("+-").lstrip("0")) > 10 or not -(2**31) <= int(value) < 2**31):
            raise FormatError(
                source,
                f"expected a relevance label in the 32-bit range (±2147483647) in column {v + 1} ({names[v]}), "
                f"got '{fields[v]}'",
                lineno,
            )
        queries.append(fields[q])
        docs.append(fields[d])
        values.append(value)
        lines.append(lineno)
    if not lines:
        raise FormatError(source, "expected at least one row after the header, got none", header_line)
    parsed = np.array(values).astype(np.float64 if kind.real_values else np.int64)
    return Columns(pa.array(queries, pa.string()), pa.array(docs, pa.string()), parsed, np.array(lines, dtype=np.int64))


def write_delimited(container: Qrels | Run, out: BinaryIO, delimiter: str, source: str) -> None:
    """Write a header ``query_id,doc_id,score`` (``relevance`` for qrels) and one row per line, in row order.

    Floats are written in the shortest form that reads back to the same float64.
    """
    table = container.to_arrow()
    for name in ("query_id", "doc_id"):
        vocabulary = container.query_ids if name == "query_id" else container.doc_ids
        bad_chars = "[\t\n\r]" if delimiter == "\t" else "[\n\r]"
        if len(vocabulary) and pc.any(pc.match_substring_regex(vocabulary, bad_chars)).as_py():
            example = vocabulary.filter(pc.match_substring_regex(vocabulary, bad_chars))[0].as_py()
            kind = "tab or line break" if delimiter == "\t" else "line break"
            raise FormatError(source, f"cannot write id {example!r}: it contains a {kind}")
    if delimiter == ",":
        pacsv.write_csv(table, out)
        return
    out.write(("\t".join(table.column_names) + "\n").encode("utf-8"))
    step = 1 << 20
    for s in range(0, table.num_rows, step):
        part = table.slice(s, step)
        text = [c if pa.types.is_string(c.type) else pc.cast(c, pa.string()) for c in part.columns]
        lines = pc.binary_join_element_wise(text[0], text[1], pc.binary_join_element_wise(text[2], pa.scalar("\n"), ""), "\t")
        write_lines(lines, out)
