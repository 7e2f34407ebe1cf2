"""JSON in pytrec_eval's dict form ``{qid: {docid: value}}`` and JSON Lines (one object per row): read and write.

JSON Lines rows look like ``{"query_id": "q1", "doc_id": "d1", "score": 2.5}`` (``relevance`` for qrels;
the same key aliases as CSV columns, other keys ignored). Ids may be JSON strings or integers; scores
must be JSON numbers, labels JSON integers. JSON Lines is parsed by pyarrow when every row is regular,
else line by line (which is also how errors get their line number).
"""

from __future__ import annotations

import io
import json
import math
import re
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from ranklens.data.qrels import Qrels
from ranklens.data.readers import (
    RUN,
    Columns,
    Kind,
    check_text,
    nonblank_line_numbers,
    resolve_columns,
    text_end,
    write_lines,
)
from ranklens.data.run import Run
from ranklens.errors import FormatError

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
        top = json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        hint = ""
        if e.msg == "Extra data" and _first_line_is_object(text):
            hint = "; this looks like JSON Lines (one object per line): use a .jsonl name or --format jsonl"
        raise FormatError(source, f"expected JSON {shape}: {e.msg} (column {e.colno}){hint}", e.lineno) from None
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
            problem = _value_problem(value, kind)
            if problem:
                raise FormatError(source, f"query '{qid}', document '{did}': {problem}", _locate(text, qid, did))
            queries.append(qid)
            docs.append(did)
            values.append(value)
    if not queries:
        raise FormatError(source, "expected at least one (query, document) pair, got none")
    dtype = np.float64 if kind is RUN else np.int64
    return Columns(queries, docs, np.array(values, dtype=dtype))


def _first_line_is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text.split("\n", 1)[0]), dict)
    except json.JSONDecodeError:
        return False


def _locate(text: str, qid: str, did: str | None, occurrence: int = 1) -> int | None:
    """Best-effort line of a query key (and a document key after it), for messages."""
    key = re.escape(json.dumps(qid, ensure_ascii=False)) + r"\s*:"
    starts = [m.start() for m in re.finditer(key, text)]
    if did is None:
        pos = starts[occurrence - 1] if len(starts) >= occurrence else None
    else:
        pos = None
        if starts:
            doc_key = re.compile(re.escape(json.dumps(did, ensure_ascii=False)) + r"\s*:")
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


def _value_problem(value: object, kind: Kind) -> str | None:
    """What is wrong with a JSON value for this kind (None if fine)."""
    if kind is RUN:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected a number ({kind.value}), got {json.dumps(value)}"
        if math.isnan(value):
            return "score is NaN; give every document a number"
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return f"expected an integer relevance label, got {json.dumps(value)}"
    if isinstance(value, float) and not value.is_integer():
        return f"expected an integer relevance label, got {json.dumps(value)}"
    return None


# ------------------------------------------------------------------------------------------ JSON Lines


def read_jsonl(data: bytes, source: str, kind: Kind) -> Columns:
    """Parse one JSON object per line.

    >>> c = read_jsonl(b'{"qid": "q1", "docno": "d1", "score": 2}\\n', "run.jsonl", RUN)
    >>> c.query_id.to_pylist(), c.doc_id.to_pylist(), c.value.to_pylist()
    (['q1'], ['d1'], [2.0])
    """
    data = check_text(data, source)
    end = text_end(data)
    if end == 0:
        raise FormatError(source, "expected at least one line, got an empty file")
    table = _parse_jsonl(data, end, kind)
    if table is None:
        return _scan_jsonl(data, source, kind)
    lines = data.count(b"\n", 0, end) + 1
    numbers = None if table.num_rows == lines else nonblank_line_numbers(memoryview(data)[:end])
    return Columns(table.column(0), table.column(1), table.column(2), numbers)


def _parse_jsonl(data: bytes, end: int, kind: Kind) -> pa.Table | None:
    """pyarrow's reader with the first row's key names; None whenever anything is irregular."""
    first_end = data.find(b"\n", 0, end)
    try:
        first = json.loads(data[: first_end if first_end >= 0 else end])
        names = list(first)
        q, d, v = resolve_columns(names, kind, "", noun="key")
    except (ValueError, TypeError):
        return None
    value_type = pa.float64() if kind is RUN else pa.int64()
    schema = pa.schema([(names[q], pa.string()), (names[d], pa.string()), (names[v], value_type)])
    try:
        table = pajson.read_json(
            pa.BufferReader(pa.py_buffer(memoryview(data)[:end])),
            parse_options=pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
        )
    except (pa.ArrowException, ValueError):
        return None
    table = table.select([names[q], names[d], names[v]])
    if any(column.null_count for column in table.columns):
        return None
    if kind is RUN and pc.any(pc.is_nan(table.column(2))).as_py():
        return None  # NaN is rejected with its line by the scan
    return table


def _scan_jsonl(data: bytes, source: str, kind: Kind) -> Columns:
    queries: list[str] = []
    docs: list[str] = []
    values: list[float | int] = []
    lines: list[int] = []
    for lineno, raw in enumerate(io.BytesIO(data), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.rstrip())
        except json.JSONDecodeError as e:
            raise FormatError(source, f"expected a JSON object per line: {e.msg} (column {e.colno})", lineno) from None
        if not isinstance(row, dict):
            raise FormatError(source, f"expected a JSON object per line, got {_type_name(row)}", lineno)
        names = list(row)
        q, d, v = resolve_columns(names, kind, source, lineno, noun="key")
        ids = []
        for role, key in (("query id", names[q]), ("document id", names[d])):
            value = row[key]
            if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
                raise FormatError(source, f"expected a {role} ({key}) string, got {json.dumps(value)}", lineno)
            ids.append(str(value))
        problem = _value_problem(row[names[v]], kind)
        if problem:
            raise FormatError(source, problem, lineno)
        queries.append(ids[0])
        docs.append(ids[1])
        values.append(row[names[v]])
        lines.append(lineno)
    dtype = np.float64 if kind is RUN else np.int64
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
            qjson.take(pa.array(container.query[s : s + step])),
            pa.scalar(', "doc_id": '),
            djson.take(pa.array(container.doc[s : s + step])),
            pa.scalar(f', "{name}": '),
            text[s : s + step],
            pa.scalar("}\n"),
            "",
        )
        write_lines(lines, out)
