"""The inputs of the DuckDB engine, each a view ``query_id, doc_id, score|relevance`` of the connection.

* A Parquet file, a directory of Parquet parts (hive partitions included) or a glob: DuckDB reads it
  (``read_parquet``); its columns are found by the data layer's rules (names, aliases, ``--run-columns``) and
  its rows checked by the same rules in one aggregate (ids, NaN scores — tested as "not finite and not ±inf":
  DuckDB prunes ``isnan()`` with Parquet min/max statistics, which leave NaN out —, integer labels in 32 bits,
  duplicates). What it refuses is re-read by the data layer, whose message (file, line, expected, found) is
  the one said: the same refusal as the in-memory engine's.
* Anything else — TREC, CSV, TSV, JSON(L), gzipped files, Arrow tables, pandas and Polars frames, dicts,
  :class:`~ranklens.data.run.Run` and :class:`~ranklens.data.qrels.Qrels`, DuckDB relations (fetched as
  Arrow) — is read by the data layer (its checks, its notes) and handed to DuckDB through Arrow.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ranklens.data.columns import QRELS, RUN, column_roles, qrels_kind, rank_columns, resolve_columns
from ranklens.data.datasets import dataset_files, dataset_name, is_dataset
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import FormatError, InputError

__all__ = ["Input", "read_input"]

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
            "UHUGEINT", "FLOAT", "DOUBLE", "REAL")


class Input:
    """One input registered as the view ``view``: ``source`` names it in messages, ``checked`` when the
    data layer read it, ``name`` the run's name (its tag or file stem), ``notes`` the reader's,
    ``reread`` reads it again with the data layer (to raise its exact message)."""

    def __init__(
        self, view: str, source: str, checked: bool, name: str | None = None, notes: tuple[str, ...] = (),
        reread: Callable[[], Any] | None = None,
    ) -> None:
        self.view, self.source, self.checked, self.name, self.notes, self.reread = view, source, checked, name, notes, reread


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def read_input(con: Any, source: Any, what: str, policy: EvalPolicy, view: str) -> Input:
    """``source`` (the run when ``what == "run"``, else the qrels) as the view ``view`` of ``con``."""
    fmt = policy.run_format if what == "run" else policy.qrels_format
    columns = policy.run_columns if what == "run" else policy.qrels_columns
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, str) and source != "-" and fmt in (None, "parquet") and _duckdb_reads(source, fmt):
        return _parquet_input(con, source, what, policy, view, columns)
    return _data_layer_input(con, source, what, policy, view, fmt, columns)


def _duckdb_reads(path: str, fmt: str | None) -> bool:
    if is_dataset(path):
        return True
    if not os.path.isfile(path):
        return False
    from ranklens.data.io import format_of

    try:
        found, compressed = format_of(path, fmt)
    except FormatError:
        return False
    return found == "parquet" and not compressed


def _data_layer(source: Any, what: str, policy: EvalPolicy, fmt: str | None, columns: Any) -> Any:
    from ranklens.data.io import read_qrels, read_run

    if what == "run":
        return read_run(source, format=fmt, columns=columns)
    return read_qrels(source, format=fmt, columns=columns, labels=policy.labels or "int")


def _data_layer_input(con: Any, source: Any, what: str, policy: EvalPolicy, view: str, fmt: str | None, columns: Any) -> Input:
    if type(source).__module__.startswith("duckdb"):  # a relation: fetched as Arrow, then checked as any table
        from ranklens.duckdb.runtime import arrow_table

        source = arrow_table(source)
    read = _data_layer(source, what, policy, fmt, columns)
    con.register(view, read.to_arrow())
    display = source if isinstance(source, str) else read.source
    return Input(view, display, True, getattr(read, "name", None) if what == "run" else None, tuple(read.notes))


def _parquet_input(con: Any, path: str, what: str, policy: EvalPolicy, view: str, columns: Any) -> Input:
    from ranklens.duckdb.runtime import duckdb_errors, run

    kind = RUN if what == "run" else qrels_kind(policy.labels or "int")
    columns, by_rank = rank_columns(columns, path) if what == "run" else (columns, False)
    mapping = column_roles(columns, RUN if what == "run" else QRELS, path)
    files = dataset_files(path) if is_dataset(path) else [path]

    def reread() -> Any:
        return _data_layer(path, what, policy, "parquet", policy.run_columns if what == "run" else policy.qrels_columns)

    if not is_dataset(path):  # (the data layer's own reading of the file's schema: its columns, its messages)
        import pyarrow as pa
        import pyarrow.parquet as pq

        from ranklens.data.parquet_batches import needed_columns, not_parquet

        try:
            with pq.ParquetFile(path) as handle:
                needed_columns(handle, kind, path, mapping)
        except (pa.ArrowException, OSError, ValueError) as e:
            if isinstance(e, FormatError):
                raise
            raise not_parquet(path, e) from None
    listing = "[" + ", ".join(_literal(f) for f in files) + "]"
    hive = ", hive_partitioning = true, union_by_name = true" if len(files) > 1 or is_dataset(path) else ""
    scan = f"read_parquet({listing}{hive})"
    try:
        with duckdb_errors(path):
            described = run(con, f"DESCRIBE SELECT * FROM {scan}")
    except InputError:
        reread()  # (the data layer's message for a file that is not Parquet)
        raise
    names = [str(r[0]) for r in described]
    types = {str(r[0]): str(r[1]).upper() for r in described}
    q, d, v = resolve_columns(names, kind, path, mapping=mapping)
    for i in (q, d, v):
        if names.count(names[i]) > 1:
            raise FormatError(path, f"column '{names[i]}' appears {names.count(names[i])} times; give each column its own name")
    value_type = types[names[v]]
    if not value_type.startswith(_NUMERIC) and not value_type.startswith("DECIMAL"):  # (text the data layer may read
        # as numbers, or refuse with its message: either way, its reading)
        return _data_layer_input(con, path, what, policy, view, "parquet", policy.run_columns if what == "run" else policy.qrels_columns)
    value = f"CAST({_quote(names[v])} AS DOUBLE)"
    if by_rank:
        value = f"-{value}"
    role = "score" if what == "run" else "relevance"
    with duckdb_errors(path):
        run(
            con, f"CREATE VIEW {view} AS SELECT CAST({_quote(names[q])} AS VARCHAR) AS query_id, "
            f"CAST({_quote(names[d])} AS VARCHAR) AS doc_id, {value} AS {role} FROM {scan}"
        )
    name = None
    if what == "run":
        from ranklens.data.names import run_name_of

        name = dataset_name(path) if is_dataset(path) else run_name_of(path)
    return Input(view, path, False, name, (), reread)
