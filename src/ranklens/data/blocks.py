"""The blocks a run file is read in, for the streaming evaluation (:mod:`ranklens.engine.stream`): whole lines
of a TREC run (plain or gzip-compressed, a pipe read once) or the row batches of a Parquet run, each block's
columns with the file's own line numbers. The file I/O is here, in the data layer; the engine only evaluates
what it is given."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from typing import BinaryIO

import numpy as np

from ranklens.data.io import mark_role, open_input
from ranklens.data.readers import RUN, Columns, check_line_ends, no_rows, trec
from ranklens.errors import FormatError, InputError

__all__ = ["DEFAULT_BLOCK_BYTES", "MAX_LINE_BYTES", "block_source", "iter_trec_blocks"]

DEFAULT_BLOCK_BYTES = 16 << 20  # measured on 10M lines: 16 MiB beat 64 MiB on time and halved peak memory
MAX_LINE_BYTES = 8 << 20  # a TREC run line is some tens of bytes; anything near this is not a run


def iter_trec_blocks(
    path: str, *, block_bytes: int = DEFAULT_BLOCK_BYTES, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[Columns, np.ndarray, int]]:
    """Yield ``(columns, line_numbers, bytes_read)`` for consecutive blocks of whole lines of a TREC run.

    Line numbers are those of the whole file, so every error names the right line. The file is opened
    once (a pipe or FIFO can be read only once); a NUL byte stops the reading at its block (binary data,
    such as ``/dev/zero``), and so does a line longer than ``max_line_bytes`` (it is no TREC line, and
    it would otherwise be carried from block to block without end).
    """
    try:
        yield from _blocks(path, block_bytes, max_line_bytes)
    except FormatError as e:
        mark_role(e, "run")  # the CLI names --run-format in its hints
        raise


def _blocks(path: str, block_bytes: int, max_line_bytes: int) -> Iterator[tuple[Columns, np.ndarray, int]]:
    carry = b""
    first_line = 1
    done = 0
    rows = 0
    at_file_start = True  # (whether the next block's text begins the file)
    with open_input(path) as (f, compressed):
        while True:
            chunk = _read_block(f, block_bytes, path, compressed)
            at_end = not chunk
            nul = chunk.find(b"\x00")
            if nul >= 0:  # carry holds no newline: the line is first_line plus the newlines before the NUL
                raise FormatError(
                    path, "expected UTF-8 text, found a NUL byte (is this a binary or compressed file?)",
                    first_line + chunk.count(b"\n", 0, nul),
                )
            data = carry + chunk
            done += len(chunk)
            if not at_end:
                cut = data.rfind(b"\n")
                if cut < 0:
                    try:  # (CR-only line ends: no line feed to cut at; said before the block grows on)
                        check_line_ends(data, len(data) - data.endswith(b"\r"), path)
                    except FormatError as e:
                        raise FormatError(path, e.parts, None if e.line is None else e.line + first_line - 1) from None
                    if len(data) > max_line_bytes:
                        raise FormatError(
                            path,
                            f"expected a line of at most {max_line_bytes} bytes, found one longer "
                            "without a line break (is this a TREC run?)",
                            first_line,
                        )
                    carry = data
                    continue
                data, carry = data[: cut + 1], data[cut + 1 :]
            else:
                carry = b""
            lines_in_block = 0
            marks = 0
            while at_file_start and data.startswith(b"\xef\xbb\xbf", marks):
                marks += 3  # (the marks that begin the file are dropped: a block of them and blank lines is blank)
            if len(data) > marks and not data[marks:].isspace():
                try:  # (byte-order marks dropped at the start of the file only; a later one is an error)
                    if not at_end:  # (the reader checks up to its text's trailing whitespace: not the file's)
                        check_line_ends(data, len(data), path)
                    cols = trec.read_run(data, path, file_start=at_file_start)
                except FormatError as e:
                    line = None if e.line is None else e.line + first_line - 1
                    raise FormatError(path, e.parts, line) from None
                local = cols.line_numbers
                n = len(cols.query_id)  # type: ignore[arg-type]
                lines = (np.arange(n, dtype=np.int64) + first_line) if local is None else local + (first_line - 1)
                # rows are lines unless the reader reported line numbers (blank or comment lines)
                lines_in_block = n if local is None and data.endswith(b"\n") else data.count(b"\n")
                rows += n
                if n:
                    yield cols, lines, done
            else:
                lines_in_block = data.count(b"\n")
            at_file_start = at_file_start and not data
            first_line += lines_in_block
            if at_end:
                if not rows:
                    raise no_rows(RUN, path)
                return


def _read_block(f: BinaryIO, size: int, path: str, compressed: bool) -> bytes:
    """The next ``size`` bytes; a read error or a corrupt gzip stream is a :class:`FormatError`."""
    try:
        return f.read(size)
    except (OSError, EOFError, zlib.error) as e:
        if compressed:
            raise FormatError(path, f"expected gzip-compressed data, but it is corrupt or truncated ({e})") from None
        raise FormatError(path, f"cannot read the file: {getattr(e, 'strerror', None) or e}") from None


def block_source(
    path: str, format: str, columns: Mapping[str, str] | None, block_bytes: int, batch_rows: int | None
) -> Iterator[tuple[Columns, np.ndarray, int]]:
    """Where the blocks come from: the lines of a TREC run, or the row batches of a Parquet run."""
    if format == "trec":
        if columns is not None:
            raise InputError(f"{path}: columns= names the columns of CSV, TSV, JSON Lines and Parquet files, not TREC runs")
        return iter_trec_blocks(path, block_bytes=block_bytes)
    if format != "parquet":
        raise InputError(f"{path}: streaming reads TREC run files and Parquet files; this one is {format} (use --no-stream)")
    from ranklens.data.readers import column_roles
    from ranklens.data.readers.parquet import DEFAULT_BATCH_ROWS, iter_parquet_blocks

    try:
        mapping = column_roles(columns, RUN, path)
    except FormatError as e:
        raise mark_role(e, "run") from None
    return _as_run_input(iter_parquet_blocks(path, RUN, mapping=mapping, batch_rows=batch_rows or DEFAULT_BATCH_ROWS))


def _as_run_input(blocks: Iterator[tuple[Columns, np.ndarray, int]]) -> Iterator[tuple[Columns, np.ndarray, int]]:
    try:
        yield from blocks
    except FormatError as e:
        mark_role(e, "run")  # the CLI names --run-format in its hints, as for TREC blocks
        raise
