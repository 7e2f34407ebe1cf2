"""Parquet files: read and write.

Columns are found by name with the same aliases as CSV (``query_id``/``qid``…, ``doc_id``/``docno``…,
``score``/``sim``, ``relevance``/``rel``/``label``/``grade``); only those three are read. Ids may be
any type (they are compared as strings). In messages the "line" of a row is its 1-based row number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from ranklens.data.qrels import Qrels
from ranklens.data.readers import Columns, Kind, resolve_columns, table_columns
from ranklens.data.run import Run
from ranklens.errors import FormatError

__all__ = ["read_parquet", "write_parquet"]


def read_parquet(
    source: str | bytes | BinaryIO, display: str, kind: Kind, *, mapping: Mapping[str, str] | None = None
) -> Columns:
    """Read the query, document and value columns of a Parquet file (a path, an open seekable file, or the
    file's bytes), found by their names or as ``mapping`` (from :func:`~ranklens.data.readers.column_roles`) says.

    >>> import io, pyarrow as pa, pyarrow.parquet as pq
    >>> from ranklens.data.readers import QRELS
    >>> buf = io.BytesIO(); pq.write_table(pa.table({"qid": ["q1"], "docno": ["d1"], "rel": [2]}), buf)
    >>> c = read_parquet(buf.getvalue(), "qrels.parquet", QRELS)
    >>> c.query_id.to_pylist(), c.doc_id.to_pylist(), c.value.to_pylist()
    (['q1'], ['d1'], [2])
    """
    if isinstance(source, bytes) and not source:
        raise FormatError(display, "expected a Parquet file, got an empty file")
    try:
        with pq.ParquetFile(pa.BufferReader(source) if isinstance(source, bytes) else source) as handle:
            names = handle.schema_arrow.names
            q, d, v = resolve_columns(names, kind, display, mapping=mapping)
            table = handle.read(columns=[names[q], names[d], names[v]], use_threads=True)
    except FormatError:
        raise
    except (pa.ArrowException, OSError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise FormatError(display, f"expected a Parquet file: {first}") from None
    if table.num_rows == 0:
        raise FormatError(display, "expected at least one row, got none")
    return table_columns(table, kind, display, mapping)


def write_parquet(container: Qrels | Run, out: BinaryIO) -> None:
    """Write ``query_id, doc_id, score`` (or ``relevance``) columns, in row order."""
    pq.write_table(container.to_arrow(), out)
