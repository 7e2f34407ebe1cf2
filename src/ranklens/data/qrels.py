"""Relevance judgements as a columnar container with interned ids."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ranklens.data._arrow import from_numpy, to_numpy
from ranklens.data._intern import intern_distinct, intern_grouped, to_string_array
from ranklens.data.nested import flatten, nest
from ranklens.errors import DuplicateError, FormatError, InputError

__all__ = ["LABEL_KINDS", "Qrels", "check_label_kind"]

#: how relevance labels are read: ``int`` (trec_eval's integer grades, the default) or ``float`` (real
#: values such as a watch-completion fraction; see docs/labels.md for what each measure does with them)
LABEL_KINDS = ("int", "float")


def check_label_kind(labels: str) -> str:
    """``labels`` if it is one of :data:`LABEL_KINDS`, else an :class:`InputError`."""
    if labels not in LABEL_KINDS:
        raise InputError(f"labels must be 'int' or 'float'; got {labels!r}")
    return labels


def _label_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded relevance judgements, one row per (query, document), sorted by query then document code.

    Attributes:
        query_ids: vocabulary of query ids, sorted bytewise; ``query_ids[q]`` is the id of code ``q``.
        doc_ids: vocabulary of document ids, sorted bytewise.
        query: int32 query code per row.
        doc: int32 document code per row.
        label: int32 relevance label per row (negative = "pooled but unjudged" in trec_eval semantics),
            or float64 for real-valued labels (``labels="float"``; finite numbers).
        source: where the judgements came from, for messages.

    >>> q = Qrels.from_dict({"q1": {"d1": 3, "d2": 0}})
    >>> len(q), q.query_ids.to_pylist()
    (2, ['q1'])
    >>> Qrels.from_dict({"q1": {"d1": 0.93}}, labels="float").label.tolist()
    [0.93]
    """

    query_ids: pa.Array
    doc_ids: pa.Array
    query: np.ndarray
    doc: np.ndarray
    label: np.ndarray
    source: str = "<qrels>"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    notes: tuple[str, ...] = ()
    """what the reader assumed (e.g. a headerless .tsv read as TREC qrels), for the user"""

    def __len__(self) -> int:
        return int(self.query.shape[0])

    def __repr__(self) -> str:
        """Sizes and the first judgements, not the arrays (a notebook prints this)."""
        head = ", ".join(
            f"{self.query_ids[int(q)].as_py()} {self.doc_ids[int(d)].as_py()} {_label_text(v)}"
            for q, d, v in zip(self.query[:3], self.doc[:3], self.label[:3].tolist())
        )
        more = ", …" if len(self) > 3 else ""
        return (
            f"Qrels({self.num_queries:,} queries, {len(self):,} judgements, source={self.source!r}; "
            f"{head}{more})"
        )

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def label_kind(self) -> str:
        """``"float"`` for real-valued labels, ``"int"`` for integer ones."""
        return "float" if self.label.dtype.kind == "f" else "int"

    def as_label_kind(self, labels: str) -> Qrels:
        """These judgements with ``labels`` ``"int"`` or ``"float"``: integer labels become floats exactly;
        real-valued labels are never rounded to integers (an :class:`InputError`)."""
        if check_label_kind(labels) == self.label_kind:
            return self
        if labels == "int":
            raise InputError(
                f"{self.source}: these qrels have real-valued labels; evaluate them with labels='float' "
                "(CLI --labels float)"
            )
        return dataclasses.replace(self, label=self.label.astype(np.float64), _cache={})

    @property
    def doc_strings(self) -> pa.Array:
        """The document id of every row (computed once)."""
        if "doc_strings" not in self._cache:
            self._cache["doc_strings"] = self.doc_ids.take(from_numpy(self.doc))
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
        label_kind: str = "int",
    ) -> Qrels:
        """Build from three parallel columns (any array-like of ids; integer labels, or real-valued ones
        with ``label_kind="float"``, the ``labels=`` option of :func:`ranklens.read_qrels`).

        Duplicated (query, document) pairs are an error naming both lines, as in trec_eval.
        """
        qarr = to_string_array(query_ids)
        darr = to_string_array(doc_ids)
        if check_label_kind(label_kind) == "float":
            lab = _float_labels(labels, source, line_numbers)
        else:
            lab = _integer_labels(labels, source, line_numbers)
        if not (len(qarr) == len(darr) == len(lab)):
            raise FormatError(source, "query, document and label columns differ in length")
        if qarr.null_count or darr.null_count:
            bad = int(np.flatnonzero(_nulls(qarr) | _nulls(darr))[0])
            raise FormatError(source, "empty query or document id", _line(line_numbers, bad))
        qcodes, qvocab, _ = intern_grouped(qarr)  # qrels are written query by query: intern the runs
        dcodes, dvocab = intern_distinct(darr)  # judged documents are mostly distinct: one sort
        order = np.argsort(qcodes.astype(np.int64) * max(len(dvocab), 1) + dcodes, kind="stable")
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
    def from_dict(
        cls, data: Mapping[str, Mapping[str, float]], *, source: str = "<dict>", labels: str = "int"
    ) -> Qrels:
        """Build from pytrec_eval's form ``{query_id: {doc_id: label}}`` (``labels="float"``: real values)."""
        qs, ds, ls = flatten(data, source, "label")
        return cls.from_arrays(qs, ds, ls, source=source, label_kind=labels)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Return pytrec_eval's form ``{query_id: {doc_id: label}}`` (int labels, or floats)."""
        qv, dv = self.query_ids.to_pylist(), self.doc_ids.to_pylist()
        return nest((qv[q] for q in self.query.tolist()), (dv[d] for d in self.doc.tolist()), self.label.tolist())

    def to_arrow(self) -> pa.Table:
        """Return a table with columns ``query_id, doc_id, relevance``."""
        return pa.table(
            {
                "query_id": self.query_ids.take(from_numpy(self.query)),
                "doc_id": self.doc_ids.take(from_numpy(self.doc)),
                "relevance": pa.array(self.label),
            }
        )


def _nulls(arr: pa.Array) -> np.ndarray:
    return to_numpy(arr.is_null())


def _line(line_numbers: np.ndarray | None, row: int) -> int:
    return int(line_numbers[row]) if line_numbers is not None else row + 1


def _float_labels(labels: object, source: str, line_numbers: np.ndarray | None) -> np.ndarray:
    """Real-valued labels as float64; every one a finite number (NaN and ±inf name their line)."""
    if isinstance(labels, (pa.Array, pa.ChunkedArray)):
        labels = to_numpy(labels)
    arr = np.asarray(labels)
    if arr.dtype == object or arr.dtype.kind in "USb":
        for i, v in enumerate(arr.tolist()):
            if isinstance(v, bool) or not _is_number(v):
                raise FormatError(source, f"relevance label must be a number, got {v!r}", _line(line_numbers, i))
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise FormatError(source, "relevance labels must be numbers") from None
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        raise FormatError(
            source, f"relevance label must be a finite number, got {arr[i].item()!r}", _line(line_numbers, i)
        )
    return arr


def _is_number(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def _integer_labels(labels: object, source: str, line_numbers: np.ndarray | None) -> np.ndarray:
    if isinstance(labels, (pa.Array, pa.ChunkedArray)):
        labels = to_numpy(labels)
    arr = np.asarray(labels)
    if arr.dtype.kind in "mMc":  # datetimes, durations, complex numbers: no label, whatever numpy casts them to
        raise FormatError(source, f"relevance labels must be integers, got {arr.dtype}")
    if arr.dtype == object or arr.dtype.kind in "USb":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            for i, v in enumerate(arr.tolist()):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise FormatError(
                        source, f"relevance label must be an integer, got {v!r}", _line(line_numbers, i)
                    ) from None
                except OverflowError:
                    raise FormatError(
                        source, f"{_LABEL_RANGE}, got a {len(str(abs(int(v))))}-digit integer", _line(line_numbers, i)
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
        as_float = arr.astype(np.float64)
        i = int(np.flatnonzero((as_float < -(2**31)) | (as_float >= 2**31))[0])
        raise FormatError(source, f"{_LABEL_RANGE}, got {_label_text(arr[i].item())}", _line(line_numbers, i))
    return arr.astype(np.int32)


_LABEL_RANGE = "expected a relevance label in the 32-bit range (±2147483647)"
LABEL_RANGE = _LABEL_RANGE  # (public: the Spark SQL path's check of a DataFrame's labels says the same)
