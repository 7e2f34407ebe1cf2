"""Intent-level relevance judgements (``qid intent docid rel``, the TREC diversity qrels format)."""

from __future__ import annotations

import gzip
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ranklens.data._intern import intern_sorted, to_string_array
from ranklens.data.qrels import Qrels
from ranklens.errors import DuplicateError, FormatError

__all__ = ["IntentQrels", "read_intent_qrels"]


@dataclass(frozen=True, eq=False)
class IntentQrels:
    """Judgements of documents per (query, intent), columnar.

    Attributes:
        query: the query id of every row (Arrow strings).
        intent: the intent (subtopic) id of every row.
        doc: the document id of every row.
        label: int32 judgement (an intent counts for a document when label ≥ the measure's ``rel``).
        source: where they came from, for messages.

    >>> q = IntentQrels.from_dict({"q1": {"i1": {"d1": 1, "d2": 0}, "i2": {"d1": 1}}})
    >>> len(q), q.to_qrels().to_dict()
    (3, {'q1': {'d1': 2, 'd2': 0}})
    """

    query: pa.Array
    intent: pa.Array
    doc: pa.Array
    label: np.ndarray
    source: str = "<intent qrels>"

    def __len__(self) -> int:
        return int(self.label.shape[0])

    @classmethod
    def from_arrays(
        cls,
        query: Any,
        intent: Any,
        doc: Any,
        label: Any,
        *,
        source: str = "<intent qrels>",
        line_numbers: np.ndarray | None = None,
    ) -> IntentQrels:
        """Build from four parallel columns; a (query, intent, document) judged twice is an error."""
        q, i, d = to_string_array(query), to_string_array(intent), to_string_array(doc)
        try:
            lab = np.asarray(label, dtype=np.float64)
        except (TypeError, ValueError):
            raise FormatError(source, "the relevance column must hold integers") from None
        if not (len(q) == len(i) == len(d) == lab.shape[0]):
            raise FormatError(source, "query, intent, document and label columns differ in length")
        bad = np.flatnonzero(~np.isfinite(lab) | (lab != np.round(lab)))
        if bad.size:
            raise FormatError(source, f"relevance must be an integer, got {label[int(bad[0])]!r}", _line(line_numbers, int(bad[0])))
        for name, arr in (("query", q), ("intent", i), ("document", d)):
            if arr.null_count:
                row = int(np.flatnonzero(np.asarray(arr.is_null().to_numpy(zero_copy_only=False)))[0])
                raise FormatError(source, f"empty {name} id", _line(line_numbers, row))
        qc, _ = intern_sorted(q)
        ic, _ = intern_sorted(i)
        dc, _ = intern_sorted(d)
        order = np.lexsort((dc, ic, qc))
        same = (qc[order][1:] == qc[order][:-1]) & (ic[order][1:] == ic[order][:-1]) & (dc[order][1:] == dc[order][:-1])
        if same.any():
            first, second = sorted((int(order[np.flatnonzero(same)[0]]), int(order[np.flatnonzero(same)[0] + 1])))
            raise DuplicateError(
                source,
                f"document '{d[second].as_py()}' is judged twice for query '{q[second].as_py()}', intent "
                f"'{i[second].as_py()}' (first at line {_line(line_numbers, first)})",
                _line(line_numbers, second),
            )
        return cls(q, i, d, lab.astype(np.int32), source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Mapping[str, int]]], *, source: str = "<dict>") -> IntentQrels:
        """Build from ``{query: {intent: {doc: rel}}}``."""
        qs: list[str] = []
        its: list[str] = []
        ds: list[str] = []
        ls: list[int] = []
        for qid, intents in data.items():
            for intent, docs in intents.items():
                for doc, rel in docs.items():
                    qs.append(str(qid))
                    its.append(str(intent))
                    ds.append(str(doc))
                    ls.append(rel)
        return cls.from_arrays(qs, its, ds, ls, source=source)

    def to_arrow(self) -> pa.Table:
        """Columns ``query_id, intent, doc_id, relevance``."""
        return pa.table({"query_id": self.query, "intent": self.intent, "doc_id": self.doc, "relevance": pa.array(self.label)})

    def to_qrels(self, rel: int = 1) -> Qrels:
        """Document-level qrels: label = the number of intents the document covers (label ≥ ``rel``).

        Documents judged only below ``rel`` get 0 (judged, covering nothing); ranking and query-set rules
        then follow the standard engine.
        """
        import polars as pl

        frame = pl.from_arrow(self.to_arrow())
        assert isinstance(frame, pl.DataFrame)
        doc_level = frame.group_by(["query_id", "doc_id"], maintain_order=True).agg(
            (pl.col("relevance") >= rel).sum().alias("label")
        )
        return Qrels.from_arrays(
            doc_level["query_id"].to_arrow(), doc_level["doc_id"].to_arrow(), doc_level["label"].to_numpy(), source=self.source
        )


def read_intent_qrels(source: Any) -> IntentQrels:
    """Read intent-level qrels: a path to ``qid intent docid rel`` lines (whitespace-separated, ``#``
    comments, optionally gzipped), an :class:`IntentQrels`, a dict ``{qid: {intent: {doc: rel}}}`` or a
    table/DataFrame with columns ``query_id, intent, doc_id, relevance``.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "div.qrels"
    >>> _ = path.write_text("q1 1 d1 1\\nq1 2 d1 1\\nq1 2 d5 1\\n")
    >>> len(read_intent_qrels(path))
    3
    >>> _ = path.write_text("q1 1 d1 1\\nq1 2 d1\\n")
    >>> read_intent_qrels(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: ...div.qrels:2: expected 4 columns (qid intent docid rel), got 3
    """
    if isinstance(source, IntentQrels):
        return source
    if isinstance(source, Mapping):
        return IntentQrels.from_dict(source)
    if isinstance(source, (str, os.PathLike)):
        return _read_text(os.fspath(source))
    return _from_table(source)


def _read_text(path: str) -> IntentQrels:
    if not os.path.exists(path):
        raise FormatError(path, "no such file")
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(b"\x1f\x8b"):
        data = gzip.decompress(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(path, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    rows: list[list[str]] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            hint = "; this looks like a run file" if len(fields) == 6 else ""
            raise FormatError(path, f"expected 4 columns (qid intent docid rel), got {len(fields)}{hint}", number)
        try:
            int(fields[3])
        except ValueError:
            raise FormatError(path, f"relevance must be an integer, got {fields[3]!r}", number) from None
        rows.append(fields)
        lines.append(number)
    cols = list(zip(*rows)) if rows else [(), (), (), ()]
    return IntentQrels.from_arrays(
        list(cols[0]), list(cols[1]), list(cols[2]), [int(x) for x in cols[3]], source=path, line_numbers=np.asarray(lines)
    )


_ALIASES = {
    "query_id": ("query_id", "qid", "query", "topic"),
    "intent": ("intent", "subtopic", "nugget", "aspect"),
    "doc_id": ("doc_id", "docid", "docno", "doc"),
    "relevance": ("relevance", "rel", "label", "judgment", "judgement"),
}


def _from_table(obj: Any) -> IntentQrels:
    import polars as pl

    try:
        frame = obj if isinstance(obj, pl.DataFrame) else pl.from_arrow(obj) if isinstance(obj, pa.Table) else pl.from_pandas(obj)
    except Exception:
        raise FormatError(type(obj).__name__, "expected a path, a dict or a table of intent qrels") from None
    assert isinstance(frame, pl.DataFrame)
    lower = {c.lower(): c for c in frame.columns}
    picked: dict[str, str] = {}
    for want, names in _ALIASES.items():
        found = next((lower[n] for n in names if n in lower), None)
        if found is None:
            raise FormatError("<table>", f"missing column '{want}' (or one of {', '.join(names[1:])}); columns are {frame.columns}")
        picked[want] = found
    return IntentQrels.from_arrays(
        frame[picked["query_id"]].cast(pl.Utf8).to_arrow(),
        frame[picked["intent"]].cast(pl.Utf8).to_arrow(),
        frame[picked["doc_id"]].cast(pl.Utf8).to_arrow(),
        frame[picked["relevance"]].to_numpy(),
        source="<table>",
    )


def _line(line_numbers: np.ndarray | None, row: int) -> int:
    return int(line_numbers[row]) if line_numbers is not None else row + 1
