"""A project's stored logs read from a SQLite file as Arrow columns, by a child process.

Python's ``sqlite3`` cursor builds one object per value: at 10M impressions reading the rows back cost as much
as computing the series. The ADBC SQLite driver (``adbc-driver-sqlite``, Apache Arrow; in the ``monitor`` extra)
reads straight into Arrow columns and runs several id ranges at once, but it carries its own copy of SQLite, and
two copies of SQLite in one process must not open the same database file: POSIX locks belong to the process, so
closing the file in one copy drops the locks the other holds (sqlite.org/howtocorrupt.html, "multiple copies of
SQLite linked into the same application"). The driver therefore runs in a child process that only reads (the file
opened read-only) and streams the table back as Arrow IPC on its standard output; the service's own connections
never share a process with it.

:func:`read_table` answers None whenever this way is not available or did not work (the driver not installed, an
in-memory database, a child that failed, timed out or returned other types than asked); the caller then reads
through its cursor. The rows read are those of the caller's snapshot: ids in ``(low, high]`` of the project, where
``high`` is the largest id the caller's transaction sees (a row committed later has a larger id).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
from typing import Any
from urllib.parse import quote

__all__ = ["MIN_ROWS", "available", "read_table"]

log = logging.getLogger("ranklens.monitor")

#: below this many rows the cursor is about as fast as starting a child process
MIN_ROWS = 200_000
_PART_ROWS = 500_000


def available() -> bool:
    """Whether the ADBC SQLite driver is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("adbc_driver_sqlite") is not None


def read_table(path: str, sql: str, project_id: int, low: int, high: int, rows: int, schema: Any, *,
               threads: int | None = None, timeout: float | None = None) -> Any:
    """The rows of ``sql`` as a ``pyarrow.Table`` with ``schema``'s names and types, or None (read them through the cursor).

    ``sql`` selects the columns of one table and ends with ``WHERE +project_id = ? AND id > ? AND id <= ? ORDER
    BY id`` (the ``+`` keeps SQLite on the rowid order instead of an index and a sort); the ids from ``low`` to
    ``high`` are cut into ranges read at the same time on ``threads`` connections.

    >>> read_table(":memory:", "SELECT 1", 1, 0, 0, 0, None) is None
    True
    """
    if not path or path == ":memory:" or not available() or not os.path.isfile(path):
        return None
    threads = max(1, min(threads or (os.cpu_count() or 1), 8))
    parts = max(1, min(threads, -(-rows // _PART_ROWS)))
    bounds = [low + (high - low) * i // parts for i in range(parts + 1)]
    request = {"uri": "file:" + quote(os.path.abspath(path)) + "?mode=ro", "sql": sql, "project_id": project_id,
               "ranges": list(zip(bounds[:-1], bounds[1:]))}
    timeout = timeout if timeout is not None else 120.0 + rows / 20_000
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen([sys.executable, "-m", "ranklens.monitor.sqlite_columns"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=err)
        except OSError as exc:
            log.warning("columnar read of %s not started (%s); reading through the cursor", path, exc)
            return None
        watchdog = threading.Timer(timeout, proc.kill)
        watchdog.start()
        try:
            return _receive(proc, request, schema)
        except Exception as exc:  # any failure of the child: the caller reads through its cursor
            proc.kill()
            err.seek(0)
            detail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:] or [str(exc)]
            log.warning("columnar read of %s failed (%s); reading through the cursor", path, detail[0])
            return None
        finally:
            watchdog.cancel()
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()


def _receive(proc: subprocess.Popen[bytes], request: dict[str, Any], schema: Any) -> Any:
    import pyarrow as pa

    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(request).encode())
    proc.stdin.close()
    table = pa.ipc.open_stream(proc.stdout).read_all()
    if proc.wait() != 0:
        raise RuntimeError(f"the reader exited with {proc.returncode}")
    if table.num_rows == 0:
        return schema.empty_table()
    if table.num_columns != len(schema.names):
        raise RuntimeError(f"columns {table.schema.names}, expected {schema.names}")
    return table.rename_columns(schema.names).cast(schema)  # in the order selected; a safe cast: other types raise


def _child() -> None:  # pragma: no cover - runs in the child process (tested through read_table)
    from concurrent.futures import ThreadPoolExecutor

    import adbc_driver_sqlite.dbapi as adbc
    import pyarrow as pa

    request = json.loads(sys.stdin.buffer.read())

    def part(bounds: list[int]) -> Any:
        with adbc.connect(request["uri"]) as con, con.cursor() as cur:
            cur.execute(request["sql"], (request["project_id"], bounds[0], bounds[1]))
            return cur.fetch_arrow_table()

    with ThreadPoolExecutor(len(request["ranges"])) as pool:
        tables = [t for t in pool.map(part, request["ranges"]) if t.num_rows]
    table = pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})
    with pa.ipc.new_stream(sys.stdout.buffer, table.schema) as out:
        out.write_table(table)


if __name__ == "__main__":  # pragma: no cover
    _child()
