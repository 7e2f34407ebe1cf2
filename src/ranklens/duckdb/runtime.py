"""The DuckDB connection of the engine: progress bar off (DuckDB draws it on standard output), an optional
memory limit, spill files under the system's temporary directory; DuckDB's failures as one line."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from typing import Any

from ranklens.errors import InputError, MissingDependencyError

__all__ = ["HINT", "arrow_table", "connect", "duckdb_errors", "require_duckdb", "run"]

#: the one line said when the extra is not installed
HINT = "--engine duckdb needs duckdb and sqlglot: pip install 'ranklens[duckdb]'"

_SIZE = re.compile(r"^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.IGNORECASE)


def require_duckdb() -> Any:
    """The ``duckdb`` module, or a :class:`MissingDependencyError` with the install hint."""
    try:
        import duckdb
    except ImportError:
        raise MissingDependencyError("duckdb", "duckdb", "the DuckDB engine") from None
    return duckdb


def connect(memory_limit: str | None = None, threads: int | None = None) -> Any:
    """An in-memory DuckDB connection for one evaluation. ``memory_limit``: DuckDB's own limit on its buffers
    (``4GB``, ``512MB``; it bounds what DuckDB holds, not the whole process), spilling beyond it to a
    temporary directory.

    >>> con = connect("256MB")  # doctest: +SKIP
    >>> con.execute("SELECT current_setting('memory_limit')").fetchone()[0]  # doctest: +SKIP
    '244.1 MiB'
    """
    duckdb = require_duckdb()
    if memory_limit is not None and not _SIZE.match(memory_limit):
        raise InputError(f"--memory-limit must be a size such as 512MB or 4GB; got {memory_limit!r}")
    con = duckdb.connect(":memory:")
    run(con, "SET enable_progress_bar = false")  # (DuckDB writes its progress bar to standard output)
    run(con, "SET temp_directory = ?", [os.path.join(tempfile.gettempdir(), f"ranklens-duckdb-{os.getpid()}")])
    if memory_limit is not None:
        with duckdb_errors("--memory-limit"):
            run(con, f"SET memory_limit = '{memory_limit.strip()}'")
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InputError(f"threads must be a positive whole number; got {threads!r}")
        run(con, f"SET threads = {threads}")
    return con


def run(con: Any, text: str, params: list[Any] | None = None) -> list[Any]:
    """The rows of one statement, every one fetched (DuckDB 2 refuses the next statement on a connection
    whose last result was not read to its end)."""
    rows: list[Any] = con.execute(text, params).fetchall() if params is not None else con.execute(text).fetchall()
    return rows


@contextlib.contextmanager
def duckdb_errors(where: str) -> Iterator[None]:
    """DuckDB's exceptions as one :class:`InputError` line naming ``where``."""
    duckdb = require_duckdb()
    try:
        yield
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{where}: DuckDB: {first}") from None


def arrow_table(result: Any) -> Any:
    """The Arrow table of a DuckDB result or relation (``to_arrow_table`` in DuckDB 2, ``fetch_arrow_table``
    before)."""
    fetch = getattr(result, "to_arrow_table", None) or result.fetch_arrow_table
    return fetch()
