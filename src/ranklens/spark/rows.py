"""The rows a bucket of the Arrow path (or a task of its scan plan) sends back to the driver: their columns and
types, built from tuples, collected as Arrow. Imported by :mod:`ranklens.spark.core` and :mod:`ranklens.spark.scan`
(it imports neither)."""

from __future__ import annotations

from typing import Any

__all__ = ["ROW_COLUMNS", "ROW_TYPES", "STATS", "collect_arrow", "rows_out"]

#: the counts every path reports per evaluation (the AlignReport's, plus the query counts of both inputs)
STATS = (
    "run_only_queries", "run_only_rows", "qrels_only_queries", "truncated_rows", "removed_unjudged_rows",
    "qrels_queries", "run_queries",
)

#: the columns of the rows a bucket sends back
ROW_COLUMNS = ["kind", "query_id", "measure", "value", "doc_id", "label"]

#: the Arrow types of :data:`ROW_COLUMNS`
ROW_TYPES = ("int32", "string", "int32", "float64", "string", "float64")


def rows_out(rows: list[tuple]) -> Any:
    """A bucket's rows as an Arrow table of the result schema."""
    import pyarrow as pa

    cols = list(zip(*rows)) if rows else [()] * 6
    return pa.table([pa.array(list(c), t) for c, t in zip(cols, ROW_TYPES)], names=ROW_COLUMNS)


def collect_arrow(df: Any) -> Any:
    """The rows of the buckets' result DataFrame as one Arrow table: no Row object per row (``toArrow`` on
    pyspark 4, classic and Connect; Spark's Arrow collection on 3.5)."""
    import pyarrow as pa

    if hasattr(df, "toArrow"):
        return df.toArrow()
    schema = pa.schema([(name, pa.type_for_alias(t)) for name, t in zip(ROW_COLUMNS, ROW_TYPES)])
    if hasattr(df, "_collect_as_arrow"):  # (pyspark 3.5, classic)
        return pa.Table.from_batches(df._collect_as_arrow(), schema=schema)
    return pa.Table.from_pylist([row.asDict() for row in df.collect()], schema=schema)
