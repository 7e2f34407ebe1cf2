"""Relevance judgements as a columnar container with interned ids."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ranklens.data._intern import intern_sorted, to_string_array
from ranklens.errors import DuplicateError, FormatError

__all__ = ["Qrels"]


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded relevance judgements, one row per (query, document), sorted by query then document code.

    Attributes:
        query_ids: vocabulary of query ids, sorted bytewise; ``query_ids[q]`` is the id of code ``q``.
        doc_ids: vocabulary of document ids, sorted bytewise.
        query: int32 query code per row.
        doc: int32 document code per row.
        label: int32 relevance label per row (negative = "pooled but unjudged" in trec_eval semantics).
        source: where the judgements came from, for messages.

    >>> q = Qrels.from_dict({"q1": {"d1": 3, "d2": 0}})
    >>> len(q), q.query_ids.to_pylist()
    (2, ['q1'])
    """

    query_ids: pa.Array
    doc_ids: pa.Array
    query: np.ndarray
    doc: np.ndarray
    label: np.ndarray
    source: str = "<qrels>"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.query.shape[0])

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def doc_strings(self) -> pa.Array:
        """The document id of every row (computed once)."""
        if "doc_strings" not in self._cache:
            self._cache["doc_strings"] = self.doc_ids.take(pa.array(self.doc))
        return self._cache["doc_strings"]

    @property
    def offsets(self) -> np.ndarray:
        """Row offsets per query code: rows of query ``q`` are ``offsets[q]:offsets[q+1]``."""
        return np.concatenate(
            ([0], np.cumsum(np.bincount(self.query, minlength=self.num_queries)))
        ).astype(np.int64)

    @classmethod
    def from_arrays(
        cls,
        query_ids: object,
        doc_ids: object,
        labels: object,
        *,
        source: str = "<qrels>",
        line_numbers: np.ndarray | None = None,
    ) -> Qrels:
        """Build from three parallel columns (any array-like of ids; integer labels).

        Duplicated (query, document) pairs are an error naming both lines, as in trec_eval.
        """
        qarr = to_string_array(query_ids)
        darr = to_string_array(doc_ids)
        lab = _integer_labels(labels, source, line_numbers)
        if not (len(qarr) == len(darr) == len(lab)):
            raise FormatError(source, "query, document and label columns differ in length")
        if qarr.null_count or darr.null_count:
            bad = int(np.flatnonzero(_nulls(qarr) | _nulls(darr))[0])
            raise FormatError(source, "empty query or document id", _line(line_numbers, bad))
        qcodes, qvocab = intern_sorted(qarr)
        dcodes, dvocab = intern_sorted(darr)
        order = np.lexsort((dcodes, qcodes))
        qs, ds = qcodes[order], dcodes[order]
        dup = np.flatnonzero((qs[1:] == qs[:-1]) & (ds[1:] == ds[:-1]))
        if dup.size:
            first, second = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
            msg = (
                f"document '{darr[second].as_py()}' is judged twice for query "
                f"'{qarr[second].as_py()}' (first at line {_line(line_numbers, first)}); "
                f"{dup.size} duplicate pair(s) in all. Remove the duplicates"
            )
            raise DuplicateError(source, msg, _line(line_numbers, second))
        return cls(qvocab, dvocab, qs, ds, lab[order], source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, int]], *, source: str = "<dict>") -> Qrels:
        """Build from pytrec_eval's form ``{query_id: {doc_id: label}}``."""
        qs: list[str] = []
        ds: list[str] = []
        ls: list[object] = []
        for qid, docs in data.items():
            if not isinstance(docs, Mapping):
                raise FormatError(
                    source, f"query '{qid}': expected a mapping of doc id to label, got {type(docs).__name__}"
                )
            for did, lab in docs.items():
                qs.append(str(qid))
                ds.append(str(did))
                ls.append(lab)
        return cls.from_arrays(qs, ds, ls, source=source)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """Return pytrec_eval's form ``{query_id: {doc_id: label}}``."""
        qv = self.query_ids.to_pylist()
        dv = self.doc_ids.to_pylist()
        out: dict[str, dict[str, int]] = {}
        for q, d, lab in zip(self.query.tolist(), self.doc.tolist(), self.label.tolist()):
            out.setdefault(qv[q], {})[dv[d]] = lab
        return out

    def to_arrow(self) -> pa.Table:
        """Return a table with columns ``query_id, doc_id, relevance``."""
        return pa.table(
            {
                "query_id": self.query_ids.take(pa.array(self.query)),
                "doc_id": self.doc_ids.take(pa.array(self.doc)),
                "relevance": pa.array(self.label),
            }
        )


def _nulls(arr: pa.Array) -> np.ndarray:
    return np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _line(line_numbers: np.ndarray | None, row: int) -> int:
    return int(line_numbers[row]) if line_numbers is not None else row + 1


def _integer_labels(labels: object, source: str, line_numbers: np.ndarray | None) -> np.ndarray:
    if isinstance(labels, (pa.Array, pa.ChunkedArray)):
        labels = labels.to_numpy(zero_copy_only=False)
    arr = np.asarray(labels)
    if arr.dtype == object or arr.dtype.kind in "USb":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            for i, v in enumerate(arr.tolist()):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise FormatError(
                        source, f"relevance label must be an integer, got {v!r}", _line(line_numbers, i)
                    ) from None
            raise
    if arr.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
        if bad.size:
            i = int(bad[0])
            raise FormatError(
                source, f"relevance label must be an integer, got {arr[i]!r}", _line(line_numbers, i)
            )
    if arr.size and (arr.min() < -(2**31) or arr.max() >= 2**31):
        raise FormatError(source, "relevance label out of the 32-bit integer range")
    return arr.astype(np.int32)
