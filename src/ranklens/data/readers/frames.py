"""In-memory inputs: pandas and polars DataFrames, Arrow tables, plain dicts, and Qrels/Run themselves.

pandas and polars are never imported here: an object is recognised by the module its type comes
from, and converted with its own methods. Columns are found by name with the same aliases as files
(``query_id``/``qid``…, ``doc_id``/``docno``…, ``score``/``sim``, ``relevance``/``rel``/``label``/``grade``).
Dicts are either pytrec_eval's ``{query_id: {doc_id: value}}`` or columns ``{"query_id": [...], ...}``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from ranklens.data.qrels import Qrels
from ranklens.data.readers import (
    QRELS,
    RUN,
    ColumnMap,
    Kind,
    column_roles,
    resolve_columns,
    table_columns,
    to_qrels,
    to_run,
)
from ranklens.data.run import Run
from ranklens.errors import FormatError

__all__ = ["no_names", "qrels_from_object", "records_as_columns", "run_from_object", "source_name"]

_SWAP = "did you swap QRELS and RUN?"


def qrels_from_object(obj: object, columns: ColumnMap | None = None, *, labels: str = "int") -> Qrels:
    """Qrels from an in-memory object; ``columns`` (``{column name: role}``) names a table's columns;
    ``labels`` is ``"int"`` or ``"float"`` (real-valued labels).

    >>> qrels_from_object({"q1": {"d1": 1}}).to_dict()
    {'q1': {'d1': 1}}
    >>> qrels_from_object({"qid": ["q1", "q1"], "docno": ["d1", "d2"], "rel": [2, 0]}).to_dict()
    {'q1': {'d1': 2, 'd2': 0}}
    >>> columns = {"u": "query_id", "i": "doc_id", "stars": "label"}
    >>> qrels_from_object({"u": ["1"], "i": ["31"], "stars": [4]}, columns).to_dict()
    {'1': {'31': 4}}
    """
    source = source_name(obj)
    mapping = column_roles(columns, QRELS, source)
    if isinstance(obj, Qrels):
        if mapping is not None:
            raise no_names(source, "a Qrels")
        return obj.as_label_kind(labels)
    if isinstance(obj, Run):
        raise FormatError(source, f"expected qrels, got a Run; {_SWAP}")
    if isinstance(obj, Mapping) and _is_nested(obj):
        if mapping is not None:
            raise no_names(source, "a {qid: {docid: value}} dict")
        return Qrels.from_dict(obj, source=source, labels=labels)
    return to_qrels(table_columns(_to_table(obj, QRELS, source, mapping), QRELS, source, mapping), source, labels)


def run_from_object(obj: object, name: str | None = None, columns: ColumnMap | None = None) -> Run:
    """A Run from an in-memory object; ``name`` (default ``"run"``) names it, ``columns`` (``{column
    name: role}``) names a table's columns.

    >>> r = run_from_object({"q1": {"d1": 2.0, "d2": 1.0}}, name="bm25")
    >>> r.name, r.to_dict()
    ('bm25', {'q1': {'d1': 2.0, 'd2': 1.0}})
    """
    source = source_name(obj)
    mapping = column_roles(columns, RUN, source)
    if isinstance(obj, Run):
        if mapping is not None:
            raise no_names(source, "a Run")
        return obj if name is None else dataclasses.replace(obj, name=name)
    if isinstance(obj, Qrels):
        raise FormatError(source, f"expected a run, got a Qrels; {_SWAP}")
    if isinstance(obj, Mapping) and _is_nested(obj):
        if mapping is not None:
            raise no_names(source, "a {qid: {docid: value}} dict")
        return Run.from_dict(obj, name=name or "run", source=source)
    return to_run(table_columns(_to_table(obj, RUN, source, mapping), RUN, source, mapping), source, name or "run")


def records_as_columns(obj: object) -> object:
    """A list, tuple or iterator of named tuples (ir_measures' ``Qrel(query_id, doc_id, relevance,
    iteration)`` and ``ScoredDoc(query_id, doc_id, score)``, or any with such fields) as a mapping of columns
    named by the fields; anything else as is.

    >>> from collections import namedtuple
    >>> ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])
    >>> records_as_columns(iter([ScoredDoc("q1", "d1", 2.0), ScoredDoc("q1", "d2", 1.0)]))
    {'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd2'], 'score': [2.0, 1.0]}
    """
    if not isinstance(obj, (list, tuple, Iterator)):
        return obj
    rows = list(obj)
    fields = getattr(rows[0], "_fields", None) if rows else None
    if not fields or not all(isinstance(r, tuple) and getattr(r, "_fields", None) == fields for r in rows):
        return rows if isinstance(obj, Iterator) else obj
    return {str(f): [r[i] for r in rows] for i, f in enumerate(fields)}


def no_names(source: str, what: str) -> FormatError:
    """The error for ``columns=`` given with an input whose columns have no names."""
    return FormatError(
        source,
        f"columns= applies to CSV, TSV, JSON Lines, Parquet and tables, whose columns have names; {what} has none",
    )


def source_name(obj: object) -> str:
    """How an in-memory object is named in messages, e.g. ``<pandas.DataFrame>``."""
    if isinstance(obj, (Qrels, Run)):
        return obj.source
    if isinstance(obj, Mapping):
        return "<dict>"
    return f"<{type(obj).__module__.split('.')[0]}.{type(obj).__name__}>"


def _is_nested(obj: Mapping[Any, Any]) -> bool:
    return not obj or all(isinstance(v, Mapping) for v in obj.values())


def _to_table(obj: object, kind: Kind, source: str, mapping: Mapping[str, str] | None = None) -> pa.Table:
    """Convert to an Arrow table holding (at least) the three needed columns."""
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    if isinstance(obj, pa.Table):
        return obj
    library = type(obj).__module__.split(".")[0]
    if library == "polars":
        if type(obj).__name__ == "LazyFrame":
            obj = obj.collect()  # type: ignore[attr-defined]
        if type(obj).__name__ == "DataFrame":
            return _select(obj.to_arrow(), kind, source, mapping)  # type: ignore[attr-defined]
    if library == "pandas" and type(obj).__name__ == "DataFrame":
        names = [str(c) for c in obj.columns]  # type: ignore[attr-defined]
        q, d, v = resolve_columns(names, kind, source, mapping=mapping)
        arrays = [_pandas_column(obj.iloc[:, i]) for i in (q, d, v)]  # type: ignore[attr-defined]
        return pa.table(dict(zip((names[q], names[d], names[v]), arrays)))
    if isinstance(obj, Mapping):
        names = [str(k) for k in obj]
        q, d, v = resolve_columns(names, kind, source, mapping=mapping)
        keys = list(obj)
        try:
            arrays = [_column(obj[keys[i]]) for i in (q, d, v)]
            return pa.table(dict(zip((names[q], names[d], names[v]), arrays)))
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise FormatError(source, f"expected equal-length columns of ids and numbers: {e}") from None
    raise FormatError(
        source,
        f"expected a path, a Qrels/Run, a dict, a pandas or polars DataFrame or an Arrow table, "
        f"got {type(obj).__name__}",
    )


def _select(table: pa.Table, kind: Kind, source: str, mapping: Mapping[str, str] | None) -> pa.Table:
    q, d, v = resolve_columns(table.column_names, kind, source, mapping=mapping)
    return table.select([q, d, v])


def _column(values: object) -> pa.Array:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    if type(values).__module__.split(".")[0] == "pandas":
        return _pandas_column(values)
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # mixed types: ids become strings; values become strings too, and Qrels/Run then name the bad row
        return pa.array([None if x is None else str(x) for x in values], pa.string())  # type: ignore[attr-defined]


def _pandas_column(series: Any) -> pa.Array:
    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # mixed types: ids become strings; values become strings too, and Qrels/Run then name the bad row
        return pa.array([None if x is None else str(x) for x in series], pa.string())
