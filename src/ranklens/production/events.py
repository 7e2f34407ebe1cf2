"""Production events one at a time: validation of impressions and engagement events as a service sends them
(the monitor's ingest route and ``ranklens ingest`` share it), content-derived ids, and reading a log file a
chunk at a time.

An impression is ``{"id", "request", "query", "item", "position", "score", "timestamp", "segment"?,
"system"?}``; an engagement event ``{"id", "request", "item", "event", "timestamp", "value"?}``. Timestamps
are ISO 8601 (UTC unless zoned) or epoch seconds. A bad event is a :class:`Rejection` naming its kind, its
index in the batch, its id, the field and the reason; the others go on.

>>> imp, bad = validate_impression({"id": "i1", "request": "r1", "query": "q", "item": "a", "position": 1,
...                                 "score": 2.5, "timestamp": "2026-01-05T10:00:00Z"}, 0)
>>> imp[:7], bad
(('i1', 'r1', 'q', 'a', 1, 2.5, 1767607200.0), None)
>>> validate_event({"id": "e1", "request": "r1", "item": "a", "event": "click", "timestamp": "yesterday"}, 3)[1].to_dict()
{'kind': 'event', 'index': 3, 'id': 'e1', 'field': 'timestamp', 'reason': "expected an ISO 8601 time or epoch seconds; got 'yesterday'"}
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import hashlib
import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ranklens.errors import FormatError

__all__ = [
    "EVENT_FIELDS",
    "IMPRESSION_FIELDS",
    "MAX_TEXT",
    "MAX_TIME",
    "Rejection",
    "content_id",
    "iso_time",
    "parse_time",
    "read_chunks",
    "validate_event",
    "validate_impression",
]

#: the fields of an impression and of an engagement event, in their stored order (``id`` first)
IMPRESSION_FIELDS = ("id", "request", "query", "item", "position", "score", "timestamp", "segment", "system")
EVENT_FIELDS = ("id", "request", "item", "event", "timestamp", "value")
#: the longest id, request, query, item, segment or system name stored (the columns' width)
MAX_TEXT = {"id": 128, "event": 100}
_TEXT_DEFAULT = 200
#: the latest time accepted, 9999-12-31T23:59:59Z in epoch seconds (the earliest is the epoch itself)
MAX_TIME = 253402300799


@dataclass(frozen=True)
class Rejection:
    """Why one event of a batch was not stored."""

    kind: str
    index: int
    id: str | None
    field: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "id": self.id, "field": self.field, "reason": self.reason}


def parse_time(value: Any) -> float:
    """ISO 8601 (``Z`` or an offset; none means UTC) or epoch seconds → float epoch seconds.

    >>> parse_time("2026-01-05T10:00:00Z"), parse_time("2026-01-05T11:00:00+01:00"), parse_time(1767607200)
    (1767607200.0, 1767607200.0, 1767607200.0)
    """
    if isinstance(value, bool):
        raise ValueError(f"expected an ISO 8601 time or epoch seconds; got {value!r}")
    if isinstance(value, (int, float)):
        t = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            t = float(text)
        except ValueError:
            try:
                parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
            except ValueError:
                raise ValueError(f"expected an ISO 8601 time or epoch seconds; got {value!r}") from None
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=dt.timezone.utc)
            t = parsed.timestamp()
    else:
        raise ValueError(f"expected an ISO 8601 time or epoch seconds; got {value!r}")
    if not math.isfinite(t) or not 0 <= t <= MAX_TIME:
        raise ValueError(f"expected a time between 1970-01-01 and 9999-12-31; got {value!r}")
    return t


def iso_time(t: float) -> str:
    """Epoch seconds → ``YYYY-MM-DDTHH:MM:SSZ``.

    >>> iso_time(1767607200)
    '2026-01-05T10:00:00Z'
    """
    return dt.datetime.fromtimestamp(t, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _text(event: Mapping[str, Any], name: str, default: str | None = None) -> str:
    value = event.get(name, default)
    if value is None:
        raise ValueError("missing")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"expected a string; got {type(value).__name__}")
    text = str(value)
    limit = MAX_TEXT.get(name, _TEXT_DEFAULT)
    if not text or len(text) > limit or "\x00" in text:
        raise ValueError(f"expected 1 to {limit} characters without NUL; got {len(text)}")
    return text


def _number(event: Mapping[str, Any], name: str, default: float | None = None) -> float:
    value = event.get(name, default)
    if value is None:
        raise ValueError("missing")
    if isinstance(value, bool):
        raise ValueError(f"expected a number; got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number; got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"expected a finite number; got {value!r}")
    return x


def _position(event: Mapping[str, Any]) -> int:
    x = _number(event, "position")
    if x != int(x) or x < 1 or x > 1_000_000:
        raise ValueError(f"expected an integer ≥ 1 (1 = top); got {event.get('position')!r}")
    return int(x)


def _check(kind: str, event: Any, index: int, fields: tuple[tuple[str, Any], ...]) -> tuple[tuple[Any, ...] | None, Rejection | None]:
    if not isinstance(event, Mapping):
        return None, Rejection(kind, index, None, "", f"expected an object; got {type(event).__name__}")
    raw_id = event.get("id")
    shown_id = str(raw_id)[:128] if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
    out = []
    for name, parse in fields:
        try:
            out.append(parse(event, name))
        except ValueError as exc:
            return None, Rejection(kind, index, shown_id, name, str(exc))
    return tuple(out), None


_IMP = (
    ("id", _text), ("request", _text), ("query", _text), ("item", _text), ("position", lambda e, n: _position(e)),
    ("score", _number), ("timestamp", lambda e, n: parse_time(_required(e, n))),
    ("segment", lambda e, n: _text(e, n, "all")), ("system", lambda e, n: _text(e, n, "all")),
)
_EV = (
    ("id", _text), ("request", _text), ("item", _text), ("event", _text),
    ("timestamp", lambda e, n: parse_time(_required(e, n))), ("value", lambda e, n: _number(e, n, 1.0)),
)


def _required(event: Mapping[str, Any], name: str) -> Any:
    if event.get(name) is None:
        raise ValueError("missing")
    return event[name]


def _ok_number(x: Any) -> bool:
    return (type(x) is float or type(x) is int) and math.isfinite(x)


def _fast_time(x: Any) -> float | None:
    if (type(x) is float or type(x) is int) and 0 <= x <= MAX_TIME:
        return float(x)
    return None


def validate_impression(event: Any, index: int) -> tuple[tuple[Any, ...] | None, Rejection | None]:
    """``(id, request, query, item, position, score, ts, segment, system)`` or the reason it is refused."""
    # the fast path: a well-formed event as a service sends it (strings, numbers, epoch seconds); anything
    # else goes through the field-by-field checks, which also say why
    if type(event) is dict:
        g = event.get
        i, r, q, it, pos, sc, seg, sy = g("id"), g("request"), g("query"), g("item"), g("position"), g("score"), g("segment", "all"), g("system", "all")
        ts = _fast_time(g("timestamp"))
        if (ts is not None and type(i) is str and type(r) is str and type(q) is str and type(it) is str
                and type(seg) is str and type(sy) is str and 0 < len(i) <= 128 and 0 < len(r) <= 200 and 0 < len(q) <= 200
                and 0 < len(it) <= 200 and 0 < len(seg) <= 200 and 0 < len(sy) <= 200 and "\x00" not in i + r + q + it + seg + sy
                and type(pos) is int and 1 <= pos <= 1_000_000 and _ok_number(sc)):
            return (i, r, q, it, pos, float(sc), ts, seg, sy), None  # type: ignore[arg-type]
    return _check("impression", event, index, _IMP)


def validate_event(event: Any, index: int) -> tuple[tuple[Any, ...] | None, Rejection | None]:
    """``(id, request, item, event, ts, value)`` or the reason it is refused."""
    if type(event) is dict:
        g = event.get
        i, r, it, ev, v = g("id"), g("request"), g("item"), g("event"), g("value", 1.0)
        ts = _fast_time(g("timestamp"))
        if (ts is not None and type(i) is str and type(r) is str and type(it) is str and type(ev) is str
                and 0 < len(i) <= 128 and 0 < len(r) <= 200 and 0 < len(it) <= 200 and 0 < len(ev) <= 100
                and "\x00" not in i + r + it + ev and _ok_number(v)):
            return (i, r, it, ev, ts, float(v)), None
    return _check("event", event, index, _EV)


def content_id(kind: str, event: Mapping[str, Any]) -> str:
    """An id derived from an event's content, for logs without one: the same row always gets the same id,
    so loading a file twice stores nothing twice.

    >>> a = content_id("impression", {"request": "r1", "item": "a", "position": 1, "timestamp": "2026-01-05"})
    >>> a == content_id("impression", {"timestamp": "2026-01-05", "position": 1, "item": "a", "request": "r1"}), a[:2]
    (True, 'c-')
    """
    fields = IMPRESSION_FIELDS if kind == "impression" else EVENT_FIELDS
    canonical = json.dumps([kind] + [str(event.get(f, "")) for f in fields[1:]], ensure_ascii=False)
    return "c-" + hashlib.sha256(canonical.encode()).hexdigest()[:40]


_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


def read_chunks(path: str, *, rows: int = 10_000, rename: Mapping[str, str] | None = None) -> Iterator[list[dict[str, Any]]]:
    """The rows of a CSV, TSV, JSONL or Parquet log (``.gz`` for the text formats) as dicts, ``rows`` at a
    time, so a day of logs never sits in memory at once. ``rename`` maps a file column to a field name.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "e.csv"
    >>> _ = p.write_text("req,item,event,timestamp\\nr1,a,click,1767607200\\nr1,b,click,1767607300\\n")
    >>> chunks = list(read_chunks(str(p), rows=1, rename={"req": "request"}))
    >>> [len(c) for c in chunks], chunks[0][0]["request"]
    ([1, 1], 'r1')
    """
    if not os.path.exists(path):
        raise FormatError(path, "no such file")
    plain = path[:-3] if path.endswith(".gz") else path
    fmt = _FORMATS.get(os.path.splitext(plain)[1].lower())
    if fmt is None:
        raise FormatError(path, f"unknown log format; expected one of {', '.join(sorted(_FORMATS))} (optionally .gz)")
    names = dict(rename or {})

    def renamed(row: Mapping[str, Any]) -> dict[str, Any]:
        return {names.get(k, k): v for k, v in row.items()}

    if fmt == "parquet":
        if path.endswith(".gz"):
            raise FormatError(path, "a Parquet file is compressed inside; do not gzip it")
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=rows):
            yield [renamed(r) for r in batch.to_pylist()]
        return
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        chunk: list[dict[str, Any]] = []
        if fmt == "jsonl":
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise FormatError(path, f"line {lineno}: not JSON ({exc.msg})") from None
                if not isinstance(obj, dict):
                    raise FormatError(path, f"line {lineno}: expected a JSON object per line; got {type(obj).__name__}")
                chunk.append(renamed(obj))
                if len(chunk) >= rows:
                    yield chunk
                    chunk = []
        else:
            reader = csv.DictReader(fh, delimiter="," if fmt == "csv" else "\t")
            for row in reader:
                chunk.append(renamed({k: v for k, v in row.items() if k is not None and v not in ("", None)}))
                if len(chunk) >= rows:
                    yield chunk
                    chunk = []
        if chunk:
            yield chunk

