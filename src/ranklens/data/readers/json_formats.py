"""JSON in pytrec_eval's dict form ``{qid: {docid: value}}`` and JSON Lines (one object per row): read and write.

JSON Lines rows look like ``{"query_id": "q1", "doc_id": "d1", "score": 2.5}`` (``relevance`` for qrels;
the same key aliases as CSV columns, other keys ignored). Ids may be JSON strings or integers; scores
must be JSON numbers, labels JSON integers (32-bit). JSON Lines is parsed by pyarrow when every row is
regular, else line by line (which is also how errors get their line number).

Refused with the place named, never turned into a traceback or a different reading: an empty id, an id
with a lone surrogate (``"\\ud800"``), a key given twice in an object, a JSON Lines object that is not
alone on its line, nesting deeper than Python's recursion limit, an integer score beyond float64.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from ranklens.data._arrow import from_numpy, read_lent
from ranklens.data.columns import RUN, ambiguous_keys  # noqa: F401 (RUN: the doctests use it)
from ranklens.data.qrels import Qrels
from ranklens.data.readers import (
    Columns,
    Kind,
    check_line_ends,
    check_text,
    first_empty_id,
    nonblank_line_numbers,
    resolve_columns,
    text_end,
    write_lines,
)
from ranklens.data.run import Run
from ranklens.errors import FormatError, Hint

__all__ = ["read_json", "read_jsonl", "write_json", "write_jsonl"]


# ------------------------------------------------------------------------------------------ JSON (dict)


class _Object(dict):  # type: ignore[type-arg]
    """A decoded JSON object that remembers the first key it saw twice (plain json keeps the last)."""

    duplicate: str | None = None


def _pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    for key, value in pairs:
        if key in obj and obj.duplicate is None:
            obj.duplicate = key
        obj[key] = value
    return obj


class _HugeInt(str):
    """A JSON integer literal with more digits than Python converts (4300): kept as its text."""

    @property
    def digits(self) -> int:
        return len(self.lstrip("-"))


class _MinusZero(int):
    """The JSON integer ``-0``: 0 as a label, -0.0 as a score (as pyarrow reads it, and as written)."""

    def __float__(self) -> float:
        return -0.0


def _json_int(literal: str) -> int | _HugeInt:
    if literal == "-0":
        return _MinusZero(0)
    return int(literal) if len(literal) <= 4000 else _HugeInt(literal)


class _TooDeep(Exception):
    """JSON nested deeper than Python's recursion limit lets :mod:`json` decode."""


_TOO_DEEP = "nested too deeply (more levels of arrays or objects than can be read)"


def _loads(text: str | bytes) -> Any:
    """:func:`json.loads` that remembers duplicate keys, keeps huge integers as text and turns the
    recursion limit into :class:`_TooDeep`."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_int=_json_int)
    except RecursionError:
        raise _TooDeep from None


def _id_problem(value: str, what: str) -> str | None:
    """What is wrong with a JSON string used as an id (None if fine): empty, or not valid Unicode."""
    if value == "":
        return f"expected a {what}, got an empty key"
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return (
                f"{what} {json.dumps(value)} has a lone surrogate (an unpaired \\ud800-\\udfff escape), "
                "which is not valid Unicode"
            )
    return None


def read_json(data: bytes, source: str, kind: Kind) -> Columns:
    """Parse ``{query_id: {doc_id: value}}``.

    >>> c = read_json(b'{"q1": {"d1": 2.5, "d2": 1}}', "run.json", RUN)
    >>> c.query_id, c.doc_id, c.value.tolist()
    (['q1', 'q1'], ['d1', 'd2'], [2.5, 1.0])
    """
    data = check_text(data, source)
    if text_end(data) == 0:
        raise FormatError(source, "expected at least one line, got an empty file")
    text = data.decode("utf-8")
    shape = f"{{query_id: {{doc_id: {kind.value}}}}}"
    try:
        top = _loads(text)
    except _TooDeep:
        raise FormatError(source, f"expected JSON {shape}: {_TOO_DEEP}") from None
    except json.JSONDecodeError as e:
        hint: tuple[str, ...] = ()
        if e.msg == "Extra data" and _first_line_is_object(text):
            hint = ("; this looks like JSON Lines (one object per line): use a .jsonl name or ",
                    Hint("use", role=kind.name, format="jsonl"))
        raise FormatError(source, (f"expected JSON {shape}: {e.msg} (column {e.colno})", *hint), e.lineno) from None
    if not isinstance(top, dict):
        raise FormatError(source, f"expected a JSON object {shape}, got {_type_name(top)}", 1)
    if isinstance(top, _Object) and top.duplicate is not None:
        raise FormatError(
            source, f"query '{top.duplicate}' appears twice; list each query once",
            _locate(text, top.duplicate, None, occurrence=2),
        )
    queries: list[str] = []
    docs: list[str] = []
    values: list[float | int] = []
    for qid, inner in top.items():
        problem = _id_problem(qid, "query id")
        if problem:
            raise FormatError(source, problem, _locate(text, qid, None))
        if not isinstance(inner, dict):
            raise FormatError(
                source, f"query '{qid}': expected an object {{doc_id: {kind.value}}}, got {_type_name(inner)}",
                _locate(text, qid, None),
            )
        if isinstance(inner, _Object) and inner.duplicate is not None:
            raise FormatError(
                source,
                f"document '{inner.duplicate}' appears twice for query '{qid}'; list each document once",
                _locate(text, qid, inner.duplicate, occurrence=2),
            )
        for did, value in inner.items():
            problem = _id_problem(did, "document id")
            if problem:
                raise FormatError(source, f"query '{qid}': {problem}", _locate(text, qid, did))
            problem = _value_problem(value, kind)
            if problem:
                raise FormatError(source, (f"query '{qid}', document '{did}': {problem}", *_real_label(value, kind)),
                                  _locate(text, qid, did))
            queries.append(qid)
            docs.append(did)
            values.append(float(value) if kind.real_values else value)
    if not queries:
        raise FormatError(source, "expected at least one (query, document) pair, got none")
    dtype = np.float64 if kind.real_values else np.int64
    return Columns(queries, docs, np.array(values, dtype=dtype))


def _first_line_is_object(text: str) -> bool:
    try:
        return isinstance(_loads(text.split("\n", 1)[0]), dict)
    except (ValueError, _TooDeep):
        return False


def _key_pattern(key: str) -> str:
    """A regex for ``key`` as a JSON object key, written with or without ``\\u`` escapes."""
    forms = {json.dumps(key, ensure_ascii=False), json.dumps(key)}
    return "(?:" + "|".join(re.escape(f) for f in sorted(forms)) + r")\s*:"


def _locate(text: str, qid: str, did: str | None, occurrence: int = 1) -> int | None:
    """Best-effort line of a query key (and a document key after it), for messages."""
    key = _key_pattern(qid)
    starts = [m.start() for m in re.finditer(key, text)]
    if did is None:
        pos = starts[occurrence - 1] if len(starts) >= occurrence else None
    else:
        pos = None
        if starts:
            doc_key = re.compile(_key_pattern(did))
            found = list(doc_key.finditer(text, starts[0]))
            pos = found[occurrence - 1].start() if len(found) >= occurrence else None
    return None if pos is None else text.count("\n", 0, pos) + 1


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


_LABEL_RANGE = "expected a relevance label in the 32-bit range (±2147483647)"


def _real_label(value: object, kind: Kind) -> tuple[Hint, ...]:
    """The hint of a refused integer label that is a real JSON number (``0.5``): ``--labels float``."""
    real = isinstance(value, float) and math.isfinite(value) and not value.is_integer()
    return (Hint("labels"),) if real and not kind.real_values else ()


def _value_problem(value: object, kind: Kind) -> str | None:
    """What is wrong with a JSON value for this kind (None if fine)."""
    if isinstance(value, _HugeInt):
        if kind.real_values:
            return f"{kind.value} is a {value.digits}-digit integer, too large for a float64"
        return f"{_LABEL_RANGE}, got a {value.digits}-digit integer"
    if kind.real_values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected a number ({kind.value}), got {json.dumps(value)}"
        if isinstance(value, int):
            try:
                float(value)
            except OverflowError:
                return f"{kind.value} is a {len(str(abs(value)))}-digit integer, too large for a float64"
        elif math.isnan(value):
            return f"{kind.value} is NaN; give every document a number"
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, float) and math.isnan(value):
        return f"expected an integer relevance label, got {json.dumps(value)}"
    if isinstance(value, float) and not value.is_integer():
        return f"expected an integer relevance label, got {json.dumps(value)}"
    if not -(2**31) <= value < 2**31:
        big = isinstance(value, int) and abs(value) >= 10**40
        return f"{_LABEL_RANGE}, got {f'a {len(str(abs(value)))}-digit integer' if big else json.dumps(value)}"
    return None


# ------------------------------------------------------------------------------------------ JSON Lines


def read_jsonl(data: bytes, source: str, kind: Kind, *, mapping: Mapping[str, str] | None = None) -> Columns:
    """Parse one JSON object per line; ``mapping`` (from :func:`~ranklens.data.readers.column_roles`) names keys.

    >>> c = read_jsonl(b'{"qid": "q1", "docno": "d1", "score": 2}\\n', "run.jsonl", RUN)
    >>> c.query_id.to_pylist(), c.doc_id.to_pylist(), c.value.to_pylist()
    (['q1'], ['d1'], [2.0])
    """
    data = check_text(data, source)
    end = text_end(data)
    if end == 0:
        raise FormatError(source, "expected at least one line, got an empty file")
    check_line_ends(data, end, source)
    table = _parse_jsonl(data, end, kind, mapping) if _one_object_per_line(data, end) else None
    if table is None:
        return _scan_jsonl(data, source, kind, mapping)
    lines = data.count(b"\n", 0, end) + 1
    numbers = None if table.num_rows == lines else nonblank_line_numbers(memoryview(data)[:end])
    if numbers is not None and len(numbers) != table.num_rows:
        return _scan_jsonl(data, source, kind, mapping)  # (pyarrow read two objects on a line, or skipped one)
    return Columns(table.column(0), table.column(1), table.column(2), numbers)


# a non-blank line that does not start with "{", or does not end with "}" (JSON whitespace around)
_NOT_AN_OBJECT_LINE = re.compile(rb"(?:^|\n)[ \t\r]*[^ \t\r\n{]|[^ \t\r\n}][ \t\r]*(?:\n|$)")


def _one_object_per_line(data: bytes, end: int) -> bool:
    """pyarrow reads ``{..}{..}`` on one line and an object spread over lines: JSON Lines is neither, so
    such files go to the line scan, which names the line."""
    return _NOT_AN_OBJECT_LINE.search(data, 0, end) is None


def _parse_jsonl(data: bytes, end: int, kind: Kind, mapping: Mapping[str, str] | None) -> pa.Table | None:
    """pyarrow's reader with the first row's key names; None whenever anything is irregular."""
    first_end = data.find(b"\n", 0, end)
    try:
        first = _loads(data[: first_end if first_end >= 0 else end])
        names = list(first)
        q, d, v = resolve_columns(names, kind, "", noun="key", mapping=mapping)
    except (ValueError, TypeError, _TooDeep):
        return None
    value_type = pa.float64() if kind.real_values else pa.int64()
    schema = pa.schema([(names[q], pa.string()), (names[d], pa.string()), (names[v], value_type)])
    table = read_lent(  # (other keys are read too: every key of every line is seen, so one rule holds for all)
        memoryview(data)[:end],
        lambda source: pajson.read_json(
            source, parse_options=pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
        ),
        (pa.ArrowException, ValueError),
    )
    if table is None or ambiguous_keys(table.column_names, kind, "", mapping=mapping) is not None:
        return None  # (some line may name a role twice: the scan resolves every line and names the one that does)
    table = table.select([names[q], names[d], names[v]])
    if any(column.null_count for column in table.columns):
        return None
    if kind.real_values and not pc.all(pc.is_finite(table.column(2))).as_py():
        return None  # NaN is rejected with its line by the scan; inf may be an integer too big for a float
    if first_empty_id(table.column(0), table.column(1)) is not None:
        return None  # the scan names the line
    return table


def _scan_jsonl(data: bytes, source: str, kind: Kind, mapping: Mapping[str, str] | None) -> Columns:
    queries: list[str] = []
    docs: list[str] = []
    values: list[float | int] = []
    lines: list[int] = []
    nan: tuple[int, str] | None = None  # the first NaN value: said once every line has been read
    for lineno, raw in enumerate(io.BytesIO(data), 1):
        if not raw.strip():
            continue
        try:
            row = _loads(raw.rstrip())
        except _TooDeep:
            raise FormatError(source, f"expected a JSON object per line: {_TOO_DEEP}", lineno) from None
        except json.JSONDecodeError as e:
            raise FormatError(source, f"expected a JSON object per line: {e.msg} (column {e.colno})", lineno) from None
        if not isinstance(row, dict):
            raise FormatError(source, f"expected a JSON object per line, got {_type_name(row)}", lineno)
        if isinstance(row, _Object) and row.duplicate is not None:
            raise FormatError(source, f"key '{row.duplicate}' appears twice in the object; give each key once", lineno)
        names = list(row)
        ambiguous = ambiguous_keys(names, kind, source, lineno, mapping=mapping)
        if ambiguous is not None:
            raise ambiguous
        q, d, v = resolve_columns(names, kind, source, lineno, noun="key", mapping=mapping)
        ids = []
        for role, key in (("query id", names[q]), ("document id", names[d])):
            value = row[key]
            if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
                raise FormatError(source, f"expected a {role} ({key}) string, got {json.dumps(value)}", lineno)
            problem = _id_problem(str(value), role)
            if problem:
                raise FormatError(source, problem, lineno)
            ids.append(str(value))
        value = row[names[v]]
        problem = _value_problem(value, kind)
        if problem and kind.real_values and isinstance(value, float) and math.isnan(value):
            nan = nan or (lineno, problem)  # (as every reader: the syntax of every line first, NaN after)
        elif problem:
            raise FormatError(source, (problem, *_real_label(value, kind)), lineno)
        queries.append(ids[0])
        docs.append(ids[1])
        values.append(float(value) if kind.real_values else value)
        lines.append(lineno)
    if nan is not None:
        raise FormatError(source, nan[1], nan[0])
    dtype = np.float64 if kind.real_values else np.int64
    return Columns(queries, docs, np.array(values, dtype=dtype), np.array(lines, dtype=np.int64))


# ------------------------------------------------------------------------------------------ writing


def write_json(container: Qrels | Run, out: BinaryIO) -> None:
    """Write ``{query_id: {doc_id: value}}``, one query per line."""
    data = container.to_dict()
    body = ",\n".join(f"{json.dumps(q)}: {json.dumps(docs)}" for q, docs in data.items())
    out.write(("{\n" + body + "\n}\n" if body else "{}\n").encode("utf-8"))


def write_jsonl(container: Qrels | Run, out: BinaryIO) -> None:
    """Write one ``{"query_id", "doc_id", "score"|"relevance"}`` object per line, in row order."""
    if isinstance(container, Run):
        name, values = "score", container.score
        text = pc.cast(pa.array(values), pa.string())
        # JSON has no inf; write what Python's json module reads back (NaN cannot occur in a Run)
        text = pc.replace_substring_regex(text, "^(-?)inf$", r"\1Infinity")
    else:
        name, text = "relevance", pc.cast(pa.array(container.label), pa.string())
    qjson = pa.array([json.dumps(x) for x in container.query_ids.to_pylist()], pa.string())
    djson = pa.array([json.dumps(x) for x in container.doc_ids.to_pylist()], pa.string())
    step = 1 << 20
    for s in range(0, len(container), step):
        lines = pc.binary_join_element_wise(
            pa.scalar('{"query_id": '),
            qjson.take(from_numpy(container.query[s : s + step])),
            pa.scalar(', "doc_id": '),
            djson.take(from_numpy(container.doc[s : s + step])),
            pa.scalar(f', "{name}": '),
            text[s : s + step],
            pa.scalar("}\n"),
            "",
        )
        write_lines(lines, out)
