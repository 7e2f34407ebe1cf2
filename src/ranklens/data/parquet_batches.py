"""Parquet files read by record batches: the query, document and value columns, found by their names
(:func:`ranklens.data.columns.resolve_columns`), as stored.

The general path (:func:`ranklens.data.readers.parquet.iter_parquet_blocks`) checks and converts each
batch; the express path (:mod:`ranklens.express`) hands the batches' buffers to its compiled pass. This
module imports pyarrow's Parquet reader and nothing of ranklens that needs numpy or pyarrow.compute.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from ranklens.data.columns import Kind, resolve_columns
from ranklens.errors import FormatError

__all__ = [
    "DEFAULT_BATCH_ROWS", "READ_BUFFER", "SMALL_DICTIONARY", "needed_columns", "not_parquet", "parquet_batches", "small_dictionaries",
]

#: rows per batch when a Parquet run is streamed (measured on the 10M-row M run: 0.29–0.31 GB peak and the
#: time of 1 << 19 rows, which peaked at 0.34 GB, 1 << 20 at 0.47 GB)
DEFAULT_BATCH_ROWS = 1 << 18

#: bytes of a column chunk read at a time
READ_BUFFER = 8 << 20


def parquet_batches(
    path: str, kind: Kind, *, mapping: Mapping[str, str] | None = None, batch_rows: int = DEFAULT_BATCH_ROWS,
    query_dictionary: bool = False,
) -> Iterator[tuple[pa.RecordBatch, int]]:
    """Yield ``(batch, total rows of the file)`` for the non-empty record batches of the Parquet file at
    ``path``: its query, document and value columns (found as :func:`ranklens.data.readers.parquet.read_parquet` finds
    them), in that order, as stored (nothing checked or converted: the general path and the express path
    check what they read). A file that is not Parquet is a FormatError naming it. ``query_dictionary``:
    the query ids come as a dictionary array where the file stores them so throughout
    (:func:`small_dictionaries`), which saves decoding each row's id (a quarter of the decoding of M's
    10M-row run: 0.69–0.81 s of CPU against 0.95–1.47 s).

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> from ranklens.data.columns import RUN
    >>> path = os.path.join(tempfile.mkdtemp(), "run.parquet")
    >>> pq.write_table(pa.table({"sim": [2.0, 1.0, 1.0], "qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"]}), path)
    >>> [(b.column_names, total) for b, total in parquet_batches(path, RUN, batch_rows=2)]
    [(['qid', 'docno', 'sim'], 3), (['qid', 'docno', 'sim'], 3)]
    """
    handle = _open(path)
    try:
        total = handle.metadata.num_rows
        columns = needed_columns(handle, kind, path, mapping)
        if query_dictionary and small_dictionaries(handle.metadata, columns[0]):
            handle.close()
            handle = _open(path, read_dictionary=columns[:1])
        batches = handle.iter_batches(batch_size=max(1, batch_rows), columns=columns, use_threads=True)
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError, ValueError) as e:
                raise not_parquet(path, e) from None
            if batch is None:
                return
            if batch.num_rows:
                yield batch.select(columns) if batch.column_names != columns else batch, total
    finally:
        handle.close()


def _open(path: str, read_dictionary: list[str] | None = None) -> pq.ParquetFile:
    try:
        # column chunks read through a buffer, not pre-buffered whole: measured on the 10M-row M run, 1.4 s
        # and 0.20 GB peak for all its batches against 2.9 s and 0.31 GB with pyarrow's pre-buffering; an
        # 8 MiB buffer rather than 1 MiB: 0.76–0.92 s against 0.83–1.04 s for `ranklens eval` on it (express
        # path; 1.46 s against 1.61–1.81 s by the general path), 0.27 GB against 0.25 GB peak
        return pq.ParquetFile(path, pre_buffer=False, buffer_size=READ_BUFFER, read_dictionary=read_dictionary)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise not_parquet(path, e) from None


#: the largest dictionary page (compressed bytes) read as a dictionary: writers fall back from dictionary to
#: plain pages when a column's dictionary reaches about 1 MiB, and pyarrow then rebuilds a dictionary by
#: hashing every plain value (2.6 s for M's 10M document ids), so only far smaller dictionaries qualify
SMALL_DICTIONARY = 64 << 10


def small_dictionaries(metadata: pq.FileMetaData, column: str) -> bool:
    """Whether the column named ``column`` is dictionary-encoded in every row group with a dictionary page of
    at most :data:`SMALL_DICTIONARY` bytes (so none of its pages can have fallen back to plain values)."""
    if metadata.num_row_groups == 0:
        return False
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        chunks = [group.column(i) for i in range(group.num_columns) if group.column(i).path_in_schema == column]
        if len(chunks) != 1:
            return False
        chunk = chunks[0]
        start = chunk.dictionary_page_offset
        if not chunk.has_dictionary_page or start is None or not 0 < chunk.data_page_offset - start <= SMALL_DICTIONARY:
            return False
    return True


def needed_columns(handle: pq.ParquetFile, kind: Kind, display: str, mapping: Mapping[str, str] | None) -> list[str]:
    """The names of the query, document and value columns, found as the readers find them. A name that
    two columns share is an error naming it (which of them holds the values is not said anywhere, and
    pyarrow reads columns by name)."""
    names = handle.schema_arrow.names
    q, d, v = resolve_columns(names, kind, display, mapping=mapping)
    needed = [names[q], names[d], names[v]]
    for name in needed:
        if names.count(name) > 1:
            raise FormatError(
                display, f"column '{name}' appears {names.count(name)} times; give each column its own name"
            )
    return needed


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none)."""
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def not_parquet(display: str, e: BaseException) -> FormatError:
    """The error for a file pyarrow cannot read as Parquet."""
    return FormatError(display, f"expected a Parquet file: {first_line(e)}")
