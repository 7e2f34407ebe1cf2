"""Read RAG retrieval samples: one query, the contexts retrieved for it (in rank order) and the reference contexts.

Three layouts, recognised by their keys (or named with ``layout=``):

* ``ranklens``: ``{"query", "retrieved": [...], "reference": [...]}``, optional ``query_id``; an entry is a
  string or an object ``{"id": …, "text": …}`` (a reference object may add an integer ``grade``);
* ``ragas``: RAGAS samples ``{"user_input", "retrieved_contexts", "reference_contexts"}`` with optional
  ``retrieved_context_ids`` / ``reference_context_ids`` (parallel to the contexts, or alone);
* ``llamaindex``: LlamaIndex retrieval-evaluation rows ``{"query", "expected_ids", "retrieved_ids"}``.

A file is JSONL (one sample per line) or JSON (a list of samples, or ``{"samples": [...]}`` as a RAGAS
dataset is saved). Every malformed sample is a :class:`~ranklens.errors.FormatError` naming the file, the
line (JSONL) or sample number (JSON), what was expected and what was found.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ranklens.errors import FormatError

__all__ = ["LAYOUTS", "Context", "RagSample", "detect_layout", "parse_samples", "read_samples", "sniff_layout"]

LAYOUTS = ("ranklens", "ragas", "llamaindex")

#: keys that say which layout a sample is in (any one of them is enough)
_MARKERS = {
    "ragas": ("user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids"),
    "llamaindex": ("expected_ids", "retrieved_ids"),
    "ranklens": ("retrieved", "reference"),
}
_EXPECTED = (
    "query/retrieved/reference (ranklens), user_input/retrieved_contexts/reference_contexts (RAGAS) or "
    "query/expected_ids/retrieved_ids (LlamaIndex)"
)


@dataclass(frozen=True)
class Context:
    """One retrieved or reference context: an id, a text, or both; a reference may carry a grade.

    >>> Context(id="d1", text="Paris is the capital of France.")
    Context(id='d1', text='Paris is the capital of France.', grade=None)
    """

    id: str | None = None
    text: str | None = None
    grade: int | None = None


@dataclass(frozen=True)
class RagSample:
    """One query's retrieved contexts (rank order) and reference contexts; ``where`` locates it in its file.

    >>> s = RagSample("q1", "capital of France?", (Context(text="Paris"),), (Context(text="Paris"),), "s.jsonl:1")
    >>> s.query_id, len(s.retrieved)
    ('q1', 1)
    """

    query_id: str
    query: str | None
    retrieved: tuple[Context, ...]
    reference: tuple[Context, ...]
    where: str


def _type_name(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def detect_layout(sample: Mapping[str, Any]) -> str | None:
    """The layout whose keys ``sample`` has, or None.

    >>> detect_layout({"user_input": "q", "retrieved_contexts": [], "reference_contexts": []})
    'ragas'
    >>> detect_layout({"query": "q", "expected_ids": ["a"], "retrieved_ids": ["a"]})
    'llamaindex'
    >>> detect_layout({"query_id": "q", "doc_id": "d", "relevance": 1}) is None
    True
    """
    for layout, keys in _MARKERS.items():
        if any(k in sample for k in keys):
            return layout
    return None


def _load_records(display: str, text: str) -> list[tuple[str, Any]]:
    """``[(where, record)]``: a JSON list / ``{"samples": [...]}`` / single object, else JSONL lines."""
    stripped = text.lstrip()
    if not stripped:
        raise FormatError(display, "expected RAG samples (JSONL, one object per line); found an empty file")
    if stripped[0] == "[" or display.lower().endswith((".json", ".json.gz")):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            if stripped[0] == "[" or "\n" not in stripped.rstrip():
                raise FormatError(display, f"expected JSON; found invalid JSON ({exc.msg})", exc.lineno) from None
        else:
            if isinstance(doc, Mapping) and isinstance(doc.get("samples"), list):
                doc = doc["samples"]
            if isinstance(doc, list):
                return [(f"{display}: sample {i}", rec) for i, rec in enumerate(doc, 1)]
            return [(f"{display}:1", doc)]
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append((f"{display}:{n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise FormatError(display, f"expected a JSON object; found invalid JSON ({exc.msg})", n) from None
    return records


def _fail(where: str, message: str) -> FormatError:
    source, _, line = where.rpartition(":")
    if line.isdigit():
        return FormatError(source, message, int(line))
    return FormatError(where, message)


def _string(rec: Mapping[str, Any], key: str, where: str, *, required: bool) -> str | None:
    value = rec.get(key)
    if value is None:
        if required:
            raise _fail(where, f"expected the key '{key}'; found keys {', '.join(sorted(rec)) or 'none'}")
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key.endswith("id"):
        return str(value)
    if not isinstance(value, str):
        raise _fail(where, f"'{key}': expected a string; found {_type_name(value)}")
    return value


def _list(rec: Mapping[str, Any], key: str, where: str, *, required: bool) -> list[Any] | None:
    value = rec.get(key)
    if value is None:
        if required:
            raise _fail(where, f"expected the key '{key}'; found keys {', '.join(sorted(rec)) or 'none'}")
        return None
    if not isinstance(value, list):
        raise _fail(where, f"'{key}': expected a list; found {_type_name(value)}")
    return value


def _entry(value: Any, key: str, i: int, where: str, *, as_id: bool, graded: bool) -> Context:
    """A bare string (an id when ``as_id``, else a text) or an object ``{"id", "text"[, "grade"]}``."""
    at = f"'{key}'[{i}]"
    if isinstance(value, str):
        if not value.strip():
            raise _fail(where, f"{at}: expected a non-empty string; found an empty one")
        return Context(id=value) if as_id else Context(text=value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and as_id:
        return Context(id=str(value))
    if not isinstance(value, Mapping):
        raise _fail(where, f"{at}: expected a string or an object {{\"id\", \"text\"}}; found {_type_name(value)}")
    ident, text, grade = value.get("id"), value.get("text"), value.get("grade")
    if isinstance(ident, (int, float)) and not isinstance(ident, bool):
        ident = str(ident)
    if ident is not None and (not isinstance(ident, str) or not ident):
        raise _fail(where, f"{at}.id: expected a non-empty string; found {_type_name(ident)}")
    if text is not None and not isinstance(text, str):
        raise _fail(where, f"{at}.text: expected a string; found {_type_name(text)}")
    if ident is None and not text:
        raise _fail(where, f"{at}: expected an 'id' or a non-empty 'text'; found keys {', '.join(sorted(value)) or 'none'}")
    if grade is not None:
        if not graded:
            raise _fail(where, f"{at}.grade: only reference contexts carry a grade")
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise _fail(where, f"{at}.grade: expected an integer; found {_type_name(grade)}")
    return Context(id=ident, text=text or None, grade=grade)


def _zip(texts: list[Any] | None, ids: list[Any] | None, keys: tuple[str, str], where: str, graded: bool) -> tuple[Context, ...]:
    """RAGAS contexts and their optional parallel ids."""
    text_key, id_key = keys
    if texts is not None and ids is not None and len(texts) != len(ids):
        raise _fail(where, f"'{id_key}': expected {len(texts)} ids (one per '{text_key}' entry); found {len(ids)}")
    out = []
    n = len(texts if texts is not None else ids or [])
    for i in range(n):
        text = _entry(texts[i], text_key, i, where, as_id=False, graded=graded) if texts is not None else None
        ident = _entry(ids[i], id_key, i, where, as_id=True, graded=False) if ids is not None else None
        out.append(Context(id=ident.id if ident else text.id if text else None, text=text.text if text else None))
    return tuple(out)


def _sample(rec: Any, where: str, layout: str, ordinal: int, bare_ids: bool) -> RagSample:
    if not isinstance(rec, Mapping):
        raise _fail(where, f"expected a JSON object (a RAG sample); found {_type_name(rec)}")
    qid = _string(rec, "query_id", where, required=False)
    if layout == "ragas":
        query = _string(rec, "user_input", where, required=qid is None)
        r_texts = _list(rec, "retrieved_contexts", where, required="retrieved_context_ids" not in rec)
        r_ids = _list(rec, "retrieved_context_ids", where, required=False)
        f_texts = _list(rec, "reference_contexts", where, required="reference_context_ids" not in rec)
        f_ids = _list(rec, "reference_context_ids", where, required=False)
        retrieved = _zip(r_texts, r_ids, ("retrieved_contexts", "retrieved_context_ids"), where, False)
        reference = _zip(f_texts, f_ids, ("reference_contexts", "reference_context_ids"), where, False)
    elif layout == "llamaindex":
        query = _string(rec, "query", where, required=qid is None)
        r_list = _list(rec, "retrieved_ids", where, required=True) or []
        f_list = _list(rec, "expected_ids", where, required=True) or []
        retrieved = tuple(_entry(v, "retrieved_ids", i, where, as_id=True, graded=False) for i, v in enumerate(r_list))
        reference = tuple(_entry(v, "expected_ids", i, where, as_id=True, graded=False) for i, v in enumerate(f_list))
    else:
        query = _string(rec, "query", where, required=qid is None)
        r_list = _list(rec, "retrieved", where, required=True) or []
        f_list = _list(rec, "reference", where, required=True) or []
        retrieved = tuple(_entry(v, "retrieved", i, where, as_id=bare_ids, graded=False) for i, v in enumerate(r_list))
        reference = tuple(_entry(v, "reference", i, where, as_id=bare_ids, graded=True) for i, v in enumerate(f_list))
    return RagSample(qid if qid is not None else f"q{ordinal}", query, retrieved, reference, where)


def parse_samples(display: str, text: str, *, layout: str | None = None, bare_ids: bool = False) -> list[RagSample]:
    """The samples in ``text`` (the contents of the file ``display``), in file order.

    ``layout`` None: from the keys of the first sample; every sample must then have that layout's keys.
    ``bare_ids``: bare strings in the ``ranklens`` layout are ids (else texts). A sample without
    ``query_id`` is named ``q1``, ``q2`` … by its position; a query id given twice is an error.

    >>> [s.query_id for s in parse_samples("s.jsonl", '{"query": "a", "retrieved": ["x"], "reference": ["x"]}')]
    ['q1']
    >>> parse_samples("s.jsonl", '{"query": "a", "retrieved": "x", "reference": []}')
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: s.jsonl:1: 'retrieved': expected a list; found a string
    """
    if layout is not None and layout not in LAYOUTS:
        raise FormatError(display, f"unknown RAG layout '{layout}'; expected one of {', '.join(LAYOUTS)}")
    records = _load_records(display, text)
    if not records:
        raise FormatError(display, "expected RAG samples (JSONL, one object per line); found no sample")
    samples: list[RagSample] = []
    seen: dict[str, str] = {}
    for ordinal, (where, rec) in enumerate(records, 1):
        if not isinstance(rec, Mapping):
            raise _fail(where, f"expected a JSON object (a RAG sample); found {_type_name(rec)}")
        if layout is None:
            layout = detect_layout(rec)
            if layout is None:
                raise _fail(where, f"expected the keys of a RAG sample, {_EXPECTED}; found keys {', '.join(sorted(rec)) or 'none'}")
        sample = _sample(rec, where, layout, ordinal, bare_ids)
        if sample.query_id in seen:
            raise _fail(where, f"query id '{sample.query_id}' appears twice (first at {seen[sample.query_id]})")
        seen[sample.query_id] = where
        samples.append(sample)
    return samples


def read_samples(path: str | os.PathLike[str], *, layout: str | None = None, bare_ids: bool = False) -> list[RagSample]:
    """The samples of the file at ``path`` (``.gz`` is gunzipped; ``-`` is standard input); see
    :func:`parse_samples`.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = p.write_text('{"query": "a", "expected_ids": ["d1"], "retrieved_ids": ["d2", "d1"]}\\n')
    >>> [c.id for c in read_samples(p)[0].retrieved]
    ['d2', 'd1']
    """
    from ranklens.data.io import read_text_bytes

    display, data = read_text_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError(display, "expected UTF-8 text; found an invalid byte", line) from None
    return parse_samples(display, text, layout=layout, bare_ids=bare_ids)


def sniff_layout(path: str) -> str | None:
    """The RAG layout of the JSON/JSONL file at ``path`` judged from its first sample, or None when it is
    not a RAG sample file (e.g. JSONL qrels) or cannot be read. Reads at most the first megabyte.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = p.write_text('{"user_input": "a", "retrieved_contexts": ["x"], "reference_contexts": ["x"]}\\n')
    >>> sniff_layout(str(p))
    'ragas'
    """
    low = path.lower()
    if not low.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson")):
        return None
    import zlib

    from ranklens.data.io import open_input

    try:  # (gunzipped by gzip's magic whatever the name, as every input; a .gz name on plain bytes is an error)
        with open_input(path) as (fh, _):
            head = fh.read(1 << 20).decode("utf-8-sig", errors="replace")
    except (OSError, EOFError, zlib.error):
        return None
    body = head.lstrip()
    if body.startswith("{") and '"samples"' in body[:200]:
        return "ragas" if any(k in body for k in _MARKERS["ragas"]) else detect_layout({k: 1 for k in _keys_in(body)})
    if body.startswith("["):
        body = body[1:].lstrip()
    first = body.split("\n", 1)[0]
    try:
        rec = json.loads(first)
    except json.JSONDecodeError:
        return detect_layout({k: 1 for k in _keys_in(body[:4096])})
    return detect_layout(rec) if isinstance(rec, Mapping) else None


def _keys_in(text: str) -> Sequence[str]:
    """The marker keys quoted in ``text`` (a cheap look at a pretty-printed JSON head)."""
    return [k for keys in _MARKERS.values() for k in keys if f'"{k}"' in text]
