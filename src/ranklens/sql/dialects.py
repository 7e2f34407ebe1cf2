"""The formulation in each SQL dialect: written once in DuckDB's, transpiled by sqlglot.

>>> DIALECTS
('duckdb', 'spark', 'databricks', 'bigquery', 'snowflake', 'postgres', 'trino')
"""

from __future__ import annotations

from ranklens.errors import InputError, MissingDependencyError

__all__ = ["DIALECTS", "check_dialect", "to_dialect"]

#: the dialects ``ranklens sql`` writes (sqlglot's names)
DIALECTS = ("duckdb", "spark", "databricks", "bigquery", "snowflake", "postgres", "trino")


def check_dialect(dialect: str) -> str:
    """``dialect`` when it is one of :data:`DIALECTS`, else an :class:`InputError` naming them.

    >>> check_dialect("mysql")
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: unknown SQL dialect 'mysql'; choose one of duckdb, spark, databricks, bigquery, snowflake, postgres, trino
    """
    if dialect not in DIALECTS:
        raise InputError(f"unknown SQL dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
    return dialect


def to_dialect(text: str, dialect: str, *, pretty: bool = True) -> str:
    """``text`` (DuckDB's dialect) written in ``dialect`` by sqlglot (``pip install 'ranklens[duckdb]'``)."""
    check_dialect(dialect)
    try:
        import sqlglot
    except ImportError:
        raise MissingDependencyError("sqlglot", "duckdb", "writing SQL for a dialect") from None
    import logging

    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.ERROR)  # (its warning that a window's NULLS LAST is not written: ranks are never NULL)
    try:
        out: str = sqlglot.transpile(text, read="duckdb", write=dialect, pretty=pretty)[0]
    finally:
        log.setLevel(level)
    return out
