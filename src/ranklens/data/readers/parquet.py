"""Parquet files: read and write.

Columns are found by name with the same aliases as CSV (``query_id``/``qid``…, ``doc_id``/``docno``…,
``score``/``sim``, ``relevance``/``rel``/``label``/``grade``); only those three are read. Ids may be
any type (they are compared as strings). In messages the "line" of a row is its 1-based row number.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ranklens.data.parquet_batches import DEFAULT_BATCH_ROWS, parquet_batches
from ranklens.data.parquet_batches import first_line as _first_line
from ranklens.data.parquet_batches import needed_columns as _needed
from ranklens.data.parquet_batches import not_parquet as _not_parquet
from ranklens.data.qrels import Qrels
from ranklens.data.readers import Columns, Kind, table_columns
from ranklens.data.run import Run
from ranklens.errors import FormatError

__all__ = ["DEFAULT_BATCH_ROWS", "iter_parquet_blocks", "read_parquet", "read_parquet_dataset", "write_parquet"]


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
            table = handle.read(columns=_needed(handle, kind, display, mapping), use_threads=True)
    except FormatError:
        raise
    except (pa.ArrowException, OSError, ValueError) as e:
        raise _not_parquet(display, e) from None
    if table.num_rows == 0:
        raise FormatError(display, "expected at least one row, got none")
    return table_columns(table, kind, display, mapping)


def read_parquet_dataset(path: str, kind: Kind, *, mapping: Mapping[str, str] | None = None) -> Columns:
    """Read the query, document and value columns of a Parquet dataset: a directory of parts (hive
    partitions ``key=value/`` give columns too) or a glob, its files listed by
    :func:`ranklens.data.datasets.dataset_files`; messages name ``path``, the "line" of a row its 1-based row
    number in the dataset (parts in sorted order).

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> from ranklens.data.readers import RUN
    >>> root = tempfile.mkdtemp()
    >>> for day, q in ((1, "q1"), (2, "q2")):
    ...     os.makedirs(f"{root}/day={day}")
    ...     pq.write_table(pa.table({"qid": [q], "docno": ["d1"], "score": [1.0]}), f"{root}/day={day}/part.parquet")
    >>> read_parquet_dataset(root, RUN).query_id.to_pylist()
    ['q1', 'q2']
    """
    import pyarrow.dataset as ds

    from ranklens.data.columns import resolve_columns
    from ranklens.data.datasets import dataset_files, hive_root

    files = dataset_files(path)
    try:
        dataset = ds.dataset(files, format="parquet", partitioning="hive", partition_base_dir=hive_root(path))
        names = dataset.schema.names
        q, d, v = resolve_columns(names, kind, path, mapping=mapping)
        needed = [names[q], names[d], names[v]]
        for name in needed:
            if names.count(name) > 1:
                raise FormatError(path, f"column '{name}' appears {names.count(name)} times; give each column its own name")
        table = dataset.to_table(columns=needed)
    except FormatError:
        raise
    except (pa.ArrowException, OSError, ValueError) as e:
        raise _not_parquet(path, e) from None
    if table.num_rows == 0:
        raise FormatError(path, "expected at least one row, got none")
    return table_columns(table, kind, path, mapping)


def iter_parquet_blocks(
    path: str, kind: Kind, *, mapping: Mapping[str, str] | None = None, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[tuple[Columns, np.ndarray, int]]:
    """Yield ``(columns, row_numbers, bytes_read)`` for consecutive batches of the Parquet file at ``path``
    (a regular, uncompressed file), read with ``ParquetFile.iter_batches``: only the three columns
    :func:`read_parquet` reads, found and checked as it finds and checks them, so a batch holds what the
    whole read holds for its rows. Row numbers (the "line" of messages) are 1-based rows of the whole file;
    ids come as Arrow strings and values as float64 (a bad value is an error naming its row), so batches
    concatenate. ``bytes_read`` is the file size times the share of rows read (for a progress display).

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> from ranklens.data.readers import RUN
    >>> path = os.path.join(tempfile.mkdtemp(), "run.parquet")
    >>> pq.write_table(pa.table({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "sim": [2.0, 1.0, 1.0]}), path)
    >>> [(c.query_id.to_pylist(), rows.tolist()) for c, rows, _ in iter_parquet_blocks(path, RUN, batch_rows=2)]
    [(['q1', 'q1'], [1, 2]), (['q2'], [3])]
    """
    from ranklens.data._intern import to_string_array
    from ranklens.data.run import _float_scores

    size = os.path.getsize(path)
    first = 1
    for batch, total in parquet_batches(path, kind, mapping=mapping, batch_rows=batch_rows):
        n = batch.num_rows
        rows = np.arange(first, first + n, dtype=np.int64)
        try:
            cols = table_columns(pa.Table.from_batches([batch]), kind, path, mapping)
            query, doc = to_string_array(cols.query_id), to_string_array(cols.doc_id)
        except FormatError as e:
            raise FormatError(path, e.parts, None if e.line is None else e.line + first - 1) from None
        except (pa.ArrowException, OverflowError) as e:
            raise FormatError(path, f"cannot build {kind.name}: {_first_line(e)}") from None  # (as the whole read)
        value = _float_scores(cols.value, path, rows)  # (the whole read's conversion and messages)
        first += n
        yield Columns(query, doc, value, rows), rows, size if total <= 0 else size * (first - 1) // total
    if first == 1:
        raise FormatError(path, "expected at least one row, got none")


def write_parquet(container: Qrels | Run, out: BinaryIO) -> None:
    """Write ``query_id, doc_id, score`` (or ``relevance``) columns, in row order."""
    pq.write_table(container.to_arrow(), out)
