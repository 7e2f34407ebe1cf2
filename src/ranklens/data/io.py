"""Read and write qrels and runs: the public entry points, choosing a format and delegating to a reader.

Formats: ``trec``, ``json``, ``jsonl``, ``csv``, ``tsv``, ``parquet``; chosen by ``format=`` or by the
file extension (``.qrels``, ``.run``, ``.txt``, ``.trec`` → trec; ``.json``, ``.jsonl``, ``.csv``,
``.tsv``, ``.parquet``), each optionally followed by ``.gz``. Gzip input is also recognised by its
magic bytes whatever the name. In-memory objects (pandas/polars DataFrames, Arrow tables, dicts,
Qrels/Run) are accepted wherever a path is.
"""

from __future__ import annotations

import gzip
import os
import secrets
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, Union, cast

from ranklens.data.qrels import Qrels
from ranklens.data.readers import (
    QRELS,
    RUN,
    Columns,
    Kind,
    delimited,
    frames,
    json_formats,
    no_rows,
    parquet,
    to_qrels,
    to_run,
    trec,
)
from ranklens.data.run import Run
from ranklens.errors import FormatError, did_you_mean

__all__ = ["FORMATS", "format_of", "read_qrels", "read_run", "write_qrels", "write_run"]

#: Path-like sources; anything else is treated as an in-memory object.
PathLike = Union[str, "os.PathLike[str]"]

FORMATS = ("trec", "json", "jsonl", "csv", "tsv", "parquet")
_EXTENSIONS = {
    ".qrels": "trec",
    ".run": "trec",
    ".txt": "trec",
    ".trec": "trec",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
}
_GZIP_MAGIC = b"\x1f\x8b"


def read_qrels(source: PathLike | object, *, format: str | None = None) -> Qrels:
    """Read relevance judgements from a file or an in-memory object.

    Args:
        source: a path (TREC ``qid iter docid rel``, JSON, JSONL, CSV, TSV, Parquet, optionally
            gzipped), or a Qrels, dict, pandas/polars DataFrame or Arrow table.
        format: one of :data:`FORMATS`; by default taken from the file extension.

    Raises:
        FormatError: the file is missing, of unknown format, or malformed (the message names the line).

    >>> read_qrels({"q1": {"d1": 2, "d2": 0}}).to_dict()
    {'q1': {'d1': 2, 'd2': 0}}
    """
    if not isinstance(source, (str, os.PathLike)):
        return frames.qrels_from_object(source)
    display, fmt, data = _load(source, format)
    return to_qrels(_parse(data, fmt, display, QRELS), display)


def read_run(source: PathLike | object, *, format: str | None = None, name: str | None = None) -> Run:
    """Read a run from a file or an in-memory object.

    Args:
        source: a path (TREC ``qid Q0 docid rank score tag``, JSON, JSONL, CSV, TSV, Parquet,
            optionally gzipped), or a Run, dict, pandas/polars DataFrame or Arrow table.
        format: one of :data:`FORMATS`; by default taken from the file extension.
        name: the run's name; by default the TREC tag (shared by all rows, else the first row's),
            else the file name without extensions (``bm25.run.gz`` → ``bm25``), else ``"run"``.

    Raises:
        FormatError: the file is missing, of unknown format, or malformed (the message names the line).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = path.write_text("q1 Q0 d2 1 1.5 bm25\\nq1 Q0 d1 2 1.5 bm25\\n")
    >>> run = read_run(path)
    >>> run.name, run.to_dict()
    ('bm25', {'q1': {'d2': 1.5, 'd1': 1.5}})
    """
    if not isinstance(source, (str, os.PathLike)):
        return frames.run_from_object(source, name=name)
    display, fmt, data = _load(source, format)
    columns = _parse(data, fmt, display, RUN)
    return to_run(columns, display, name or columns.tag or run_name_of(display))


def write_qrels(qrels: Qrels, path: PathLike, *, format: str | None = None) -> None:
    """Write qrels; the format comes from ``format=`` or the extension (``.gz`` compresses).

    TREC lines are ``qid 0 docid rel``. Reading the file back gives the same judgements.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> write_qrels(read_qrels({"q1": {"d1": 2, "d2": 0}}), path)
    >>> path.read_text()
    'q1 0 d1 2\\nq1 0 d2 0\\n'
    """
    display = os.fspath(path)
    fmt, compressed = format_of(display, format)
    writers: dict[str, Callable[[BinaryIO], None]] = {
        "trec": lambda out: trec.write_qrels(qrels, out, display),
        "json": lambda out: json_formats.write_json(qrels, out),
        "jsonl": lambda out: json_formats.write_jsonl(qrels, out),
        "csv": lambda out: delimited.write_delimited(qrels, out, ",", display),
        "tsv": lambda out: delimited.write_delimited(qrels, out, "\t", display),
        "parquet": lambda out: parquet.write_parquet(qrels, out),
    }
    _write(display, compressed, writers[fmt])


def write_run(run: Run, path: PathLike, *, format: str | None = None, tag: str | None = None) -> None:
    """Write a run; the format comes from ``format=`` or the extension (``.gz`` compresses).

    TREC lines are ``qid Q0 docid rank score tag`` with ranks 1, 2, … in trec_eval's order (score
    descending, ties by document id descending) and ``tag`` defaulting to ``run.name``. Scores are
    written in the shortest form that reads back to the same float64, so reading gives the same run.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> write_run(read_run({"q1": {"d1": 1.0, "d2": 1.0, "d3": 2.5}}), path, tag="bm25")
    >>> print(path.read_text(), end="")
    q1 Q0 d3 1 2.5 bm25
    q1 Q0 d2 2 1 bm25
    q1 Q0 d1 3 1 bm25
    """
    display = os.fspath(path)
    fmt, compressed = format_of(display, format)
    writers: dict[str, Callable[[BinaryIO], None]] = {
        "trec": lambda out: trec.write_run(run, out, tag or run.name, display),
        "json": lambda out: json_formats.write_json(run, out),
        "jsonl": lambda out: json_formats.write_jsonl(run, out),
        "csv": lambda out: delimited.write_delimited(run, out, ",", display),
        "tsv": lambda out: delimited.write_delimited(run, out, "\t", display),
        "parquet": lambda out: parquet.write_parquet(run, out),
    }
    _write(display, compressed, writers[fmt])


def format_of(path: PathLike, format: str | None = None) -> tuple[str, bool]:
    """Return ``(format, gzipped)`` for a path, from ``format=`` if given, else from the extension.

    >>> format_of("runs/bm25.trec.gz")
    ('trec', True)
    >>> format_of("qrels.xlsx")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: qrels.xlsx: unknown file extension '.xlsx'; expected one of .qrels, .run, .txt, .trec, .json, .jsonl, .ndjson, .csv, .tsv, .parquet (optionally .gz), or choose the format with --format (format= in Python): trec, json, jsonl, csv, tsv, parquet
    """
    display = os.fspath(path)
    suffixes = [s.lower() for s in Path(display).suffixes]
    compressed = bool(suffixes) and suffixes[-1] == ".gz"
    if format is not None:
        chosen = format.strip().lower()
        if chosen not in FORMATS:
            raise FormatError(
                display, f"unknown format {format!r}; expected one of {', '.join(FORMATS)}{did_you_mean(chosen, FORMATS)}"
            )
        return chosen, compressed
    core = suffixes[:-1] if compressed else suffixes
    extension = core[-1] if core else ""
    if extension in _EXTENSIONS:
        return _EXTENSIONS[extension], compressed
    found = f"unknown file extension '{extension}'" if extension else "no file extension"
    raise FormatError(
        display,
        f"{found}; expected one of {', '.join(_EXTENSIONS)} (optionally .gz), or choose the format "
        f"with --format (format= in Python): {', '.join(FORMATS)}{did_you_mean(extension, _EXTENSIONS)}",
    )


# --------------------------------------------------------------------------------------------- helpers


def _load(source: PathLike, format: str | None) -> tuple[str, str, bytes | str]:
    """Check the path, pick the format, read the bytes (gunzipped). Parquet files are left to pyarrow."""
    display = os.fspath(source)
    if display == "-":  # standard input, read once (a pipe cannot be opened twice)
        return _load_stdin(format)
    if not os.path.exists(display):
        raise FormatError(display, "no such file")
    if os.path.isdir(display):
        raise FormatError(display, "expected a file, got a directory")
    fmt, compressed = format_of(display, format)
    try:
        if fmt == "parquet" and not compressed and not _starts_with(display, _GZIP_MAGIC):
            return display, fmt, display
        with open(display, "rb") as handle:
            data = handle.read()
    except OSError as e:
        raise FormatError(display, f"cannot read the file: {e.strerror or e}") from None
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise FormatError(display, f"expected gzip-compressed data, but it is corrupt or truncated ({e})") from None
    elif compressed and data:
        raise FormatError(display, "expected gzip-compressed data (the name ends in .gz), got uncompressed bytes")
    return display, fmt, data


STDIN = "<stdin>"


def _load_stdin(format: str | None) -> tuple[str, str, bytes | str]:
    """``-``: the bytes of standard input (gunzipped when they start with gzip's magic); TREC unless
    ``format`` says otherwise (a pipe has no extension)."""
    import sys

    fmt, _ = format_of(STDIN, format) if format else ("trec", False)
    data = sys.stdin.buffer.read()
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise FormatError(STDIN, f"expected gzip-compressed data, but it is corrupt or truncated ({e})") from None
    return STDIN, fmt, data


def _starts_with(path: str, magic: bytes) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(magic)) == magic


def _parse(data: bytes | str, fmt: str, display: str, kind: Kind) -> Columns:
    columns = _parse_format(data, fmt, display, kind)
    if len(columns.query_id) == 0:  # type: ignore[arg-type]
        raise no_rows(kind, display)
    return columns


def _parse_format(data: bytes | str, fmt: str, display: str, kind: Kind) -> Columns:
    if fmt == "parquet":
        return parquet.read_parquet(data, display, kind)
    data = cast(bytes, data)  # only Parquet is ever left as a path
    if fmt == "trec":
        return trec.read_qrels(data, display) if kind is QRELS else trec.read_run(data, display)
    if fmt == "json":
        return json_formats.read_json(data, display, kind)
    if fmt == "jsonl":
        return json_formats.read_jsonl(data, display, kind)
    return delimited.read_delimited(data, display, kind, "," if fmt == "csv" else "\t")


def run_name_of(display: str) -> str:
    """``runs/bm25.trec.gz`` → ``bm25``: the file name without its compression and format extensions."""
    name = Path(display).name
    for _ in range(2):
        stem, dot, extension = name.rpartition(".")
        if dot and stem and ("." + extension.lower() in _EXTENSIONS or extension.lower() == "gz"):
            name = stem
    return name or "run"


def _write(display: str, compressed: bool, write: Callable[[BinaryIO], None]) -> None:
    """Write to a temporary file next to ``display`` and move it into place, so a failed write
    leaves no partial file behind."""
    directory = os.path.dirname(os.path.abspath(display))
    if not os.path.isdir(directory):
        raise FormatError(display, f"cannot write: no such directory {directory!r}")
    temporary = os.path.join(directory, f".{os.path.basename(display)}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "xb") as raw:
            if compressed:
                with gzip.GzipFile(display, mode="wb", compresslevel=6, fileobj=raw, mtime=0) as out:
                    write(cast(BinaryIO, out))
            else:
                write(raw)
        os.replace(temporary, display)
    except OSError as e:
        raise FormatError(display, f"cannot write the file: {e.strerror or e}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
