"""Query → segment tables (category, intent, traffic slice …): one reader for every command.

``compare --segments``, ``gate --segments``, ``push --segments`` and ``eval --segments`` all read them with
:func:`read_segments`, which takes any of these forms:

* text lines ``query_id segment``, separated by a tab, a comma or spaces; the segment is the rest of the
  line (it may hold spaces); blank lines and ``#`` comments are skipped;
* CSV or TSV with a header naming the columns: a query column (``query_id``, ``qid``, ``query``, ``q_id``,
  ``topic``, ``topic_id``, ``query-id``, ``user_id``, ``userid``) and a segment column (``segment``,
  ``category``, ``group``), in any order and any case; other columns are ignored; a two-column header
  whose first column names the query takes the second column as the segment (``qid cat``). The first line is a header when it starts with a query
  column's name or names a segment column;
* JSON ``{"query_id": "segment", ...}`` (numbers become strings), recognised by the ``.json`` extension or
  by its first character whatever the file's extension (:data:`ranklens.data.formats.SEGMENT_FILES`);
* in Python: a ``{query_id: segment}`` mapping, a mapping of equal-length columns, a pandas or polars
  DataFrame, a pyarrow Table (named columns as above, or exactly two columns: query, segment) or a pandas
  Series indexed by query id. Missing values (``None``, NaN) mean "no segment".

A query listed twice with two different segments is an error. Every error names the file and the line
(:class:`~ranklens.errors.FormatError`); in-memory tables name the row.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ranklens.data.formats import SEGMENT_FILES
from ranklens.errors import FormatError, InputError

__all__ = ["SEGMENT_ALIASES", "SEGMENT_QUERY_ALIASES", "check_overlap", "read_segments", "show_ids"]

#: Accepted names (lower case) of the query column, preferred first.
SEGMENT_QUERY_ALIASES = ("query_id", "qid", "query", "q_id", "topic", "topic_id", "query-id", "user_id", "userid")
#: Accepted names (lower case) of the segment column, preferred first.
SEGMENT_ALIASES = ("segment", "category", "group")

_FRAME = "segments"  # the source named in errors about in-memory tables


def read_segments(source: str | os.PathLike[str] | Mapping[Any, Any] | Any) -> dict[str, str]:
    """The query → segment mapping of a file, a mapping or a frame (see the module docstring for the forms).

    Args:
        source: a path (text lines, CSV/TSV with a header, or JSON), a ``{query_id: segment}`` mapping, a
            mapping of columns, a pandas/polars DataFrame, a pyarrow Table or a pandas Series.

    Returns:
        ``{query_id: segment}``, both as strings, in the order of the source.

    Raises:
        FormatError: the file or table is malformed (names the file and line, or the row), lists a query in
            two segments, or holds no query → segment pair at all.
        InputError: ``source`` is of no accepted type, or a table names no query or segment column.

    >>> read_segments({"q1": "nav", "q2": "info", 3: 7})
    {'q1': 'nav', 'q2': 'info', '3': '7'}
    >>> read_segments({"qid": ["q1", "q2"], "category": ["books", None], "clicks": [10, 3]})
    {'q1': 'books'}
    """
    if isinstance(source, (str, os.PathLike)):
        return _from_file(Path(source))
    if isinstance(source, Mapping) and not any(_is_sequence(v) for v in source.values()):
        return _from_pairs(((k, v, i) for i, (k, v) in enumerate(source.items(), 1)), _FRAME)
    if type(source).__module__.split(".")[0] == "pandas" and type(source).__name__ == "Series":
        series: Any = source
        pairs = zip(series.index.tolist(), series.tolist())
        return _from_pairs(((k, v, i) for i, (k, v) in enumerate(pairs, 1)), _FRAME)
    columns = _columns(source)
    qcol, scol = _pick_columns(list(columns))
    rows = zip(columns[qcol], columns[scol])
    return _from_pairs(((q, s, i) for i, (q, s) in enumerate(rows, 1)), _FRAME)


def check_overlap(segment_of: Mapping[str, str], queries: Iterable[str], *, source: str = "segments") -> None:
    """Raise :class:`~ranklens.errors.InputError` when none of ``queries`` (the evaluated ones) has a segment:
    a segments file for other ids or another collection must not be silently ignored.

    >>> check_overlap({"q1": "a"}, ["q1", "q2"])
    >>> check_overlap({"Q1": "a"}, ["q1", "q2"], source="cats.tsv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: cats.tsv: no evaluated query has a segment: it labels 1 query (Q1); the ...
    """
    queries = list(queries)
    if any(q in segment_of for q in queries):
        return
    labelled = list(segment_of)
    raise InputError(
        f"{source}: no evaluated query has a segment: it labels {len(labelled)} quer"
        f"{'y' if len(labelled) == 1 else 'ies'} ({show_ids(labelled)}); the evaluated queries are {show_ids(queries)}"
    )


def show_ids(ids: list[str], limit: int = 5) -> str:
    """The first ``limit`` ids, comma-separated, ``…`` when there are more (``none`` when there are none)."""
    return ", ".join(ids[:limit]) + (", …" if len(ids) > limit else "") if ids else "none"


# ------------------------------------------------------------------------------------------------ files


def _from_file(path: Path) -> dict[str, str]:
    from ranklens.data.readers import check_text

    display = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FormatError(display, "no such file") from None
    except IsADirectoryError:
        raise FormatError(display, "is a directory; expected a file of query → segment pairs") from None
    text = check_text(data, display).decode("utf-8")
    if not text.strip():
        return _nonempty({}, display)
    fmt, _ = SEGMENT_FILES.detect(path, text=text)  # .json, else JSON by its first character, else text
    if fmt == "json":
        return _from_json(text, display)
    lines = [(n, raw.strip()) for n, raw in enumerate(text.splitlines(), 1)]
    content = [(n, line) for n, line in lines if line and not line.startswith("#")]
    if content and _is_header(content[0][1]):
        return _from_header_table(content, display)
    out: dict[str, str] = {}
    for lineno, line in content:
        parts = _split_pair(line)
        if parts is None:
            raise FormatError(display, f"expected 2 columns (query_id segment), got {line!r}", lineno)
        _add(out, parts[0], parts[1], display, lineno)
    return _nonempty(out, display)


def _split_pair(line: str) -> tuple[str, str] | None:
    """``query_id`` and the rest of the line, split at the first tab, else comma (CSV quoting), else space."""
    if "\t" in line:
        a, _, b = line.partition("\t")
    elif "," in line:
        row = next(csv.reader(io.StringIO(line)))
        a, b = row[0], ",".join(row[1:])
    else:
        fields = line.split(None, 1)
        a, b = fields[0], fields[1] if len(fields) > 1 else ""
    a, b = a.strip(), b.strip()
    return (a, b) if a and b else None


def _delimiter(line: str) -> str | None:
    return "\t" if "\t" in line else "," if "," in line else None


def _fields(line: str, delimiter: str | None, maxsplit: int = -1) -> list[str]:
    if delimiter == ",":
        return [f.strip() for f in next(csv.reader(io.StringIO(line)))]
    if delimiter is None:
        return line.split(None, maxsplit)
    return [f.strip() for f in line.split(delimiter)]


def _is_header(line: str) -> bool:
    """The first line is a header when it starts with a query column's name or names a segment column."""
    names = [f.lower() for f in _fields(line, _delimiter(line))]
    return bool(names) and (names[0] in SEGMENT_QUERY_ALIASES or any(n in SEGMENT_ALIASES for n in names))


def _from_header_table(content: list[tuple[int, str]], display: str) -> dict[str, str]:
    header_line, header_text = content[0]
    delimiter = _delimiter(header_text)
    header = _fields(header_text, delimiter)
    try:
        qcol, scol = _pick_columns(header)
    except InputError as e:
        raise FormatError(display, str(e).removeprefix(f"{_FRAME}: "), header_line) from None
    width = len(header)
    # with two space-separated columns the segment is the rest of the line, as in the headerless form
    maxsplit = 1 if delimiter is None and width == 2 else -1
    out: dict[str, str] = {}
    for lineno, line in content[1:]:
        row = _fields(line, delimiter, maxsplit)
        if len(row) != width:
            raise FormatError(display, f"expected {width} columns ({', '.join(header)}), got {len(row)}", lineno)
        qid, seg = row[header.index(qcol)].strip(), row[header.index(scol)].strip()
        if not qid:
            raise FormatError(display, "empty query id", lineno)
        if not seg:
            raise FormatError(display, f"empty segment for query {qid!r}", lineno)
        _add(out, qid, seg, display, lineno)
    return _nonempty(out, display)


def _from_json(text: str, display: str) -> dict[str, str]:
    try:
        doc = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as e:
        raise FormatError(display, f"not valid JSON: {e.msg} (column {e.colno})", e.lineno) from None
    if not isinstance(doc, _Pairs):
        kind = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(doc), "null")
        raise FormatError(display, f"expected a JSON object {{query_id: segment}}, got a {kind}", 1)
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for key, value in doc:
        seen[key] = seen.get(key, 0) + 1
        line = _json_key_line(text, key, seen[key])
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not str(value).strip():
            shown = dict(value) if isinstance(value, _Pairs) else value
            raise FormatError(
                display, f"segment of query {key!r}: expected a non-empty string or a number, got {shown!r}", line
            )
        _add(out, key, str(value).strip(), display, line)
    return _nonempty(out, display)


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its (key, value) pairs, so repeated keys are seen."""


def _json_key_line(text: str, key: str, occurrence: int) -> int | None:
    """The line of the ``occurrence``-th ``"key":`` in ``text`` (1-based), if it can be found."""
    for encoded in dict.fromkeys((json.dumps(key), json.dumps(key, ensure_ascii=False))):
        matches = list(re.finditer(re.escape(encoded) + r"\s*:", text))
        if len(matches) >= occurrence:
            return text.count("\n", 0, matches[occurrence - 1].start()) + 1
    return None


# ------------------------------------------------------------------------------------------ in memory


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or type(value).__name__ in ("ndarray", "Series", "Array", "ChunkedArray")


def _columns(obj: Any) -> dict[str, list[Any]]:
    """Columns of a pyarrow Table, a pandas or polars DataFrame, or a mapping of equal-length columns."""
    library = type(obj).__module__.split(".")[0]
    if library == "pyarrow" and hasattr(obj, "column_names"):
        return {str(n): obj.column(n).to_pylist() for n in obj.column_names}
    if library == "polars" and hasattr(obj, "to_arrow"):
        return _columns(obj.to_arrow())
    if library == "pandas" and hasattr(obj, "columns"):
        return {str(c): obj[c].tolist() for c in obj.columns}
    if isinstance(obj, Mapping):
        columns = {str(k): list(v) for k, v in obj.items()}
        if len({len(v) for v in columns.values()}) > 1:
            raise InputError(f"{_FRAME}: the columns have different lengths")
        return columns
    raise InputError(
        f"{_FRAME}: expected a file, a {{query_id: segment}} mapping or a DataFrame/Arrow table; "
        f"got {type(obj).__name__}"
    )


def _pick_columns(names: list[str]) -> tuple[str, str]:
    """The query and segment columns among ``names``: by name (case-insensitive), else the two columns."""
    lowered = [n.lower() for n in names]
    qcol = next((names[lowered.index(a)] for a in SEGMENT_QUERY_ALIASES if a in lowered), None)
    scol = next((names[lowered.index(a)] for a in SEGMENT_ALIASES if a in lowered), None)
    if qcol is not None and scol is None and len(names) == 2:
        scol = names[1 - names.index(qcol)]
    if qcol is None and scol is None and len(names) == 2:
        qcol, scol = names
    if qcol is None:
        raise InputError(
            f"{_FRAME}: expected a query column ({', '.join(SEGMENT_QUERY_ALIASES)}) and a segment column "
            f"({', '.join(SEGMENT_ALIASES)}), or exactly two columns; got {', '.join(names) or 'none'}"
        )
    if scol is None:
        raise InputError(
            f"{_FRAME}: expected a segment column ({', '.join(SEGMENT_ALIASES[:-1])} or {SEGMENT_ALIASES[-1]}) "
            f"next to {qcol!r}; got {', '.join(names)}"
        )
    return qcol, scol


def _from_pairs(rows: Any, display: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for qid, seg, row in rows:
        if _missing(qid) or _missing(seg):
            continue  # no segment for this query
        if isinstance(seg, (Mapping, list, tuple, set)) or not str(seg).strip():
            raise FormatError(
                display, f"segment of query {qid!r}: expected a non-empty string or a number, got {seg!r}", row
            )
        _add(out, str(qid), str(seg).strip(), display, row)
    return _nonempty(out, display)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


# ------------------------------------------------------------------------------------------------ shared


def _add(out: dict[str, str], qid: str, seg: str, display: str, line: int | None) -> None:
    if qid in out and out[qid] != seg:
        raise FormatError(display, f"query {qid!r} is in segment {out[qid]!r} and {seg!r}", line)
    out[qid] = seg


def _nonempty(out: dict[str, str], display: str) -> dict[str, str]:
    if not out:
        raise FormatError(display, "no query → segment pair found")
    return out
