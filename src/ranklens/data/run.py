"""A retrieval run (ranked results per query) as a columnar container with interned ids."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data._arrow import from_numpy, to_numpy
from ranklens.data._hashing import HASH_DUPLICATES_FROM_ROWS, has_repeats, pair_keys, string_hash
from ranklens.data._intern import id_kind, intern_grouped, intern_sorted, to_string_array
from ranklens.data.nested import flatten, nest
from ranklens.errors import DuplicateError, FormatError

__all__ = ["Run"]


@dataclass(frozen=True, eq=False)
class Run:
    """Scored documents per query, in input order (the order matters only for ``ties=input``).

    Attributes:
        query_ids: vocabulary of query ids, sorted bytewise.
        query: int32 query code per row.
        docs: the document id of every row (an Arrow string array, as read).
        score: float64 score per row (higher is better).
        name: the run tag (TREC column 6) or a name given by the caller.
        source: where the run came from, for messages.

    Document ids are kept as read: a run has millions of distinct ones and the engine needs them only to
    join with the (much smaller) qrels and to break ties. :attr:`doc` and :attr:`doc_ids` intern them on
    first use, for writers and conversions.

    >>> r = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="bm25")
    >>> len(r), r.name, r.doc_ids.to_pylist()
    (2, 'bm25', ['d1', 'd2'])
    """

    query_ids: pa.Array
    query: np.ndarray
    docs: pa.Array
    score: np.ndarray
    name: str = "run"
    source: str = "<run>"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    notes: tuple[str, ...] = ()
    """what the reader accepted but changed or ignored (e.g. words after the TREC tag), for the results"""
    id_kind: str = "str"
    """``"int"`` when the query ids were given as integers (a frame's integer column, ``{1: {…}}``): they are
    matched as strings, and the results hand them back as integers"""

    def __len__(self) -> int:
        return int(self.query.shape[0])

    def __repr__(self) -> str:
        """Sizes and the first rows, not the arrays (a notebook prints this)."""
        head = ", ".join(
            f"{self.query_ids[int(q)].as_py()} {d} {s:g}"
            for q, d, s in zip(self.query[:3], self.docs[:3].to_pylist(), self.score[:3].tolist())
        )
        more = ", …" if len(self) > 3 else ""
        return (
            f"Run({self.name!r}, {self.num_queries:,} queries, {len(self):,} rows, source={self.source!r}; "
            f"{head}{more})"
        )

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def doc(self) -> np.ndarray:
        """int32 document code per row, into :attr:`doc_ids` (interned on first use)."""
        self._intern_docs()
        return self._cache["doc"]  # type: ignore[no-any-return]

    @property
    def doc_ids(self) -> pa.Array:
        """Vocabulary of document ids, sorted bytewise (interned on first use)."""
        self._intern_docs()
        return self._cache["doc_ids"]

    @property
    def doc_hash(self) -> np.ndarray:
        """uint64 hash of every row's document id (computed once)."""
        if "doc_hash" not in self._cache:
            self._cache["doc_hash"] = string_hash(self.docs)
        return self._cache["doc_hash"]  # type: ignore[no-any-return]

    def _intern_docs(self) -> None:
        if "doc" not in self._cache:
            self._cache["doc"], self._cache["doc_ids"] = intern_sorted(self.docs)

    @classmethod
    def from_arrays(
        cls,
        query_ids: object,
        doc_ids: object,
        scores: object,
        *,
        name: str = "run",
        source: str = "<run>",
        line_numbers: np.ndarray | None = None,
        doc_hash: np.ndarray | None = None,
    ) -> Run:
        """Build from three parallel columns. Rejects NaN scores and documents repeated within a query.

        ``doc_hash``: the id hash of every document id (``_hashing.string_hash``), when a reader computed it
        on the way (the compiled TREC tokenizer); otherwise it is computed on first use.
        """
        kind = id_kind(query_ids)
        qarr = to_string_array(query_ids)
        darr = to_string_array(doc_ids)
        sc = _float_scores(scores, source, line_numbers)
        if not (len(qarr) == len(darr) == len(sc)):
            raise FormatError(source, "query, document and score columns differ in length")
        if qarr.null_count or darr.null_count:
            nulls = to_numpy(qarr.is_null()) | to_numpy(darr.is_null())
            raise FormatError(source, "empty query or document id", _line(line_numbers, int(np.flatnonzero(nulls)[0])))
        qcodes, qvocab, bounds = intern_grouped(qarr)
        run = cls(qvocab, qcodes, darr, sc, name, source, id_kind=kind)
        if doc_hash is not None:
            if len(doc_hash) != len(darr):
                raise ValueError("doc_hash and the document ids differ in length")
            run._cache["doc_hash"] = doc_hash
        if len(darr) < HASH_DUPLICATES_FROM_ROWS:
            # small: exact, on unsorted dictionary codes (no string sort, no Polars)
            encoded = pc.dictionary_encode(darr)
            codes = to_numpy(encoded.indices).astype(np.int64)
            _check_duplicates(qcodes, codes, qarr, darr, source, line_numbers, len(encoded.dictionary))
        elif has_repeats(pair_keys(qcodes, run.doc_hash), bounds):
            # big: a hash says "maybe", then confirm (and locate) on the exact ids
            _check_duplicates(qcodes, run.doc, qarr, darr, source, line_numbers, len(run.doc_ids))
        return run

    @classmethod
    def from_dict(
        cls, data: Mapping[Any, Mapping[Any, float]], *, name: str = "run", source: str = "<dict>"
    ) -> Run:
        """Build from pytrec_eval's form ``{query_id: {doc_id: score}}``."""
        qs, ds, ss = flatten(data, source, "score")
        run = cls.from_arrays(qs, ds, ss, name=name, source=source)
        return run if id_kind(list(data)) == "str" else replace(run, id_kind="int")  # ({1: {…}}: integer ids)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return pytrec_eval's form ``{query_id: {doc_id: score}}``."""
        qv = self.query_ids.to_pylist()
        return nest((qv[q] for q in self.query.tolist()), self.docs.to_pylist(), self.score.tolist())

    def to_arrow(self) -> pa.Table:
        """Return a table with columns ``query_id, doc_id, score`` in input order."""
        return pa.table(
            {
                "query_id": self.query_ids.take(from_numpy(self.query)),
                "doc_id": self.docs,
                "score": pa.array(self.score),
            }
        )


def _line(line_numbers: np.ndarray | None, row: int) -> int:
    return int(line_numbers[row]) if line_numbers is not None else row + 1


def _float_scores(scores: object, source: str, line_numbers: np.ndarray | None) -> np.ndarray:
    if isinstance(scores, (pa.Array, pa.ChunkedArray)):
        scores = to_numpy(scores)
    arr = np.asarray(scores)
    if arr.dtype.kind not in "fiu":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            for i, v in enumerate(arr.tolist()):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise FormatError(source, f"score must be a number, got {v!r}", _line(line_numbers, i)) from None
            raise
    arr = arr.astype(np.float64, copy=False)
    bad = np.flatnonzero(np.isnan(arr))
    if bad.size:
        raise FormatError(
            source, f"score is NaN ({bad.size} row(s) in all); give every document a number",
            _line(line_numbers, int(bad[0])),
        )
    return arr


def _check_duplicates(
    qcodes: np.ndarray,
    dcodes: np.ndarray,
    qarr: pa.Array,
    darr: pa.Array,
    source: str,
    line_numbers: np.ndarray | None,
    ndocs: int,
) -> None:
    if qcodes.size < 2:
        return
    key = qcodes.astype(np.int64) * max(ndocs, 1) + dcodes
    order = np.argsort(key, kind="stable")
    sk = key[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1])
    if dup.size:
        first, second = int(order[dup[0]]), int(order[dup[0] + 1])
        msg = (
            f"document '{darr[second].as_py()}' appears twice for query '{qarr[second].as_py()}' "
            f"(first at line {_line(line_numbers, first)}); {dup.size} duplicate row(s) in all. "
            "A ranking lists each document once: remove the duplicates"
        )
        raise DuplicateError(source, msg, _line(line_numbers, second))
