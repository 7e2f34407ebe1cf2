"""Read and write qrels and runs: the public entry points, choosing a format and delegating to a reader.

Formats: ``trec``, ``msmarco`` (``msmarco-rank``, ``msmarco-score``), ``json``, ``jsonl``, ``csv``,
``tsv``, ``parquet``; chosen by ``format=`` or by the file extension (``.qrels``, ``.run``, ``.txt``,
``.trec`` → trec; ``.json``, ``.jsonl``, ``.csv``, ``.tsv``, ``.parquet``), each optionally followed by
``.gz``; the table and the rule are the registry's, :data:`ranklens.data.formats.RUN_FILES` (the same for
qrels). Gzip input is also recognised by its magic bytes whatever the name. In-memory objects
(pandas/polars DataFrames, Arrow tables, dicts, Qrels/Run) are accepted wherever a path is; a dict's
values are checked, so ``True``, ``1+2j``, a datetime or a ``None`` key is an error, not a number.

Every file is opened once and its gzip magic read from the same handle, so a pipe or a FIFO (``<(…)``,
``/dev/stdin``) is read whole; a device that yields binary data (``/dev/zero``) stops at its first block.

A format taken from the extension is sniffed where that is unambiguous (docs/inputs.md): a TREC-named
run of 5 columns (no tag) or 3 (MS MARCO ``qid docid rank|score``), a ``.tsv`` with no header whose first
line is a TREC line. What was assumed is one note in ``Qrels.notes``/``Run.notes``. A format given with
``format=`` is read as it is: ``trec`` is then exactly trec_eval's 6-column run. ``columns=`` names the
query, document and value columns of CSV, TSV, JSON Lines, Parquet and in-memory tables.
"""

from __future__ import annotations

import contextlib
import dataclasses
import decimal
import functools
import gzip
import io
import math
import numbers
import os
import secrets
import stat
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO, ParamSpec, TypeVar, Union, cast

import numpy as np

from ranklens.data.columns import rank_columns
from ranklens.data.formats import RUN_FILES
from ranklens.data.names import run_name_of
from ranklens.data.qrels import Qrels, check_label_kind
from ranklens.data.readers import (
    QRELS,
    RUN,
    ColumnMap,
    Columns,
    Kind,
    check_text,
    column_roles,
    no_rows,
    qrels_kind,
    resolve_columns,
    to_qrels,
    to_run,
    trec,
)
from ranklens.data.run import Run
from ranklens.errors import FormatError


def _reader(name: str) -> Any:
    """A reader module of ``data/readers``, imported when a file of its format is first read or written
    (pyarrow.csv and pyarrow.parquet cost tens of milliseconds a command that reads TREC text never needs)."""
    import importlib

    return importlib.import_module(f"ranklens.data.readers.{name}")

__all__ = [
    "FORMATS", "format_of", "read_qrels", "read_run", "read_text_bytes", "run_columns_of", "write_qrels", "write_run",
]

#: Path-like sources; anything else is treated as an in-memory object.
PathLike = Union[str, "os.PathLike[str]"]

#: The format names of qrels and run files (:data:`ranklens.data.formats.RUN_FILES`; the same for qrels).
FORMATS = RUN_FILES.formats
_TREC_LIKE = ("trec", "msmarco", "msmarco-rank", "msmarco-score")
_NAMED_COLUMNS = ("jsonl", "csv", "tsv", "parquet")  # formats whose columns columns= can name
#: ``{extension: format}`` of qrels and run files (the registry's table, :mod:`ranklens.data.formats`).
_EXTENSIONS = RUN_FILES.extensions
_GZIP_MAGIC = b"\x1f\x8b"


P = ParamSpec("P")
T = TypeVar("T")


def _role(role: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Mark the :class:`FormatError` of a reader with the role of its input (``exc.input_role``, "qrels" or
    "run"), so the CLI can name the matching flag (``--qrels-format``/``--run-format``)."""

    def decorate(function: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return function(*args, **kwargs)
            except FormatError as e:
                mark_role(e, role)
                raise

        return wrapper

    return decorate


def mark_role(error: FormatError, role: str) -> FormatError:
    """Set ``error.input_role`` (unless already set) and return the error."""
    if getattr(error, "input_role", None) is None:
        setattr(error, "input_role", role)  # noqa: B010 (FormatError declares no such attribute)
    return error


@_role("qrels")
def read_qrels(
    source: PathLike | object, *, format: str | None = None, columns: ColumnMap | None = None, labels: str = "int"
) -> Qrels:
    """Read relevance judgements from a file or an in-memory object.

    Args:
        source: a path (TREC ``qid iter docid rel``, JSON, JSONL, CSV, TSV, Parquet, optionally
            gzipped), or a Qrels, dict, pandas/polars DataFrame or Arrow table.
        format: one of :data:`FORMATS` (``msmarco`` qrels are TREC qrels); by default taken from the
            file extension, and a ``.tsv`` without a header made of TREC lines is read as TREC.
        columns: ``{column name: role}`` for files and tables with named columns, roles ``query_id``,
            ``doc_id`` and ``relevance`` (or ``query``, ``doc``, ``label``); unmapped roles are found by
            their aliases (``user_id``, ``item_id``, ``rating`` …).
        labels: ``"int"`` (default: integer grades, as trec_eval) or ``"float"``: real-valued labels
            (watch completion ``0.93``, dwell fraction, CTR) read as float64; what each measure does with
            them is in docs/labels.md (binary measures then need an explicit threshold ``rel``).

    Raises:
        FormatError: the file is missing, of unknown format, or malformed (the message names the line).

    >>> read_qrels({"q1": {"d1": 2, "d2": 0}}).to_dict()
    {'q1': {'d1': 2, 'd2': 0}}
    >>> read_qrels({"member": ["m1"], "sku": ["s1"], "stars": [4]},
    ...            columns={"member": "query_id", "sku": "doc_id", "stars": "relevance"}).to_dict()
    {'m1': {'s1': 4}}
    >>> read_qrels({"q1": {"d1": 0.93, "d2": 0}}, labels="float").to_dict()
    {'q1': {'d1': 0.93, 'd2': 0.0}}
    """
    kind = qrels_kind(check_label_kind(labels))
    if not isinstance(source, (str, os.PathLike)):
        source = _reader("frames").records_as_columns(source)  # (ir_measures' Qrel tuples: columns)
        _refuse_coercions(source, kind, columns)
        return _reader("frames").qrels_from_object(source, columns, labels=labels)
    mapping = column_roles(columns, QRELS, _display(source))
    if _dataset(source, format):
        return to_qrels(_reader("parquet").read_parquet_dataset(_display(source), kind, mapping=mapping), _display(source), labels)
    display, fmt, data = _load(source, format)
    parsed = _parse(data, fmt, display, kind, forced=format is not None, mapping=mapping)
    del data  # the parsed columns own their bytes: free the file's before building (issue 12: peak memory)
    return to_qrels(parsed, display, labels)


@_role("run")
def read_run(
    source: PathLike | object, *, format: str | None = None, name: str | None = None, columns: ColumnMap | None = None
) -> Run:
    """Read a run from a file or an in-memory object.

    Args:
        source: a path (TREC ``qid Q0 docid rank score tag``, JSON, JSONL, CSV, TSV, Parquet,
            optionally gzipped), or a Run, dict, pandas/polars DataFrame or Arrow table.
        format: one of :data:`FORMATS`; by default taken from the file extension, and then a TREC
            run of 5 columns (no tag) or 3 (MS MARCO ``qid docid rank`` or ``qid docid score``) is
            recognised by its first line, as is a ``.tsv`` without a header (the note in
            ``Run.notes`` says what was assumed). ``trec`` reads trec_eval's 6 columns only;
            ``msmarco`` 3 columns, ``msmarco-rank``/``msmarco-score`` forcing the third one's meaning.
        name: the run's name; by default the TREC tag (shared by all rows, else the first row's),
            else the file name without extensions (``bm25.run.gz`` → ``bm25``), else ``"run"``.
        columns: ``{column name: role}`` for files and tables with named columns, roles ``query_id``,
            ``doc_id`` and ``score`` (or ``query``, ``doc``); unmapped roles are found by their
            aliases (``user_id``, ``item_id``, ``prediction`` …). ``rank`` maps a column of positions
            (1 = first, ascending: the score is −rank); a column named like a position (``rank``,
            ``position``, ``pos``) mapped to ``score`` is refused, ``score_desc`` says it is a score.

    Raises:
        FormatError: the file is missing, of unknown format, or malformed (the message names the line).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = path.write_text("q1 Q0 d2 1 1.5 bm25\\nq1 Q0 d1 2 1.5 bm25\\n")
    >>> run = read_run(path)
    >>> run.name, run.to_dict()
    ('bm25', {'q1': {'d2': 1.5, 'd1': 1.5}})
    """
    where = _display(source) if isinstance(source, (str, os.PathLike)) else _reader("frames").source_name(source)
    columns, by_rank = rank_columns(columns, where)
    run = _read_run(source, format, name, columns)
    return dataclasses.replace(run, score=-run.score) if by_rank else run  # (positions: 1 first, so score −rank)


def _read_run(source: PathLike | object, format: str | None, name: str | None, columns: ColumnMap | None) -> Run:
    if not isinstance(source, (str, os.PathLike)):
        source = _reader("frames").records_as_columns(source)  # (ir_measures' ScoredDoc tuples: columns)
        _refuse_coercions(source, RUN, columns)
        return _reader("frames").run_from_object(source, name=name, columns=columns)
    mapping = column_roles(columns, RUN, _display(source))
    if _dataset(source, format):
        display = _display(source)
        parsed = _reader("parquet").read_parquet_dataset(display, RUN, mapping=mapping)
        from ranklens.data.datasets import dataset_name

        return to_run(parsed, display, name or dataset_name(display))
    display, fmt, data = _load(source, format, map_text=mapping is None)
    parsed = None
    if fmt in _TREC_LIKE and not isinstance(data, bytes):  # a regular uncompressed file, left open by _load:
        handle = cast(BinaryIO, data)  # tokenized from a memory map without holding its text (issue 12), or read
        try:
            layout = fmt if fmt != "trec" else "trec" if format is not None else "auto"
            parsed = trec.read_run_mapped(handle, display, layout=layout)
            data = b"" if parsed is not None else _read_rest(handle, b"", display, text=True)
        finally:
            handle.close()
    if parsed is None:
        parsed = _parse(data, fmt, display, RUN, forced=format is not None, mapping=mapping)
    # the parsed columns own their bytes: free the file's (395 MB for the 10M-line M run) before the run is
    # built, which would otherwise hold both at its peak (issue 12)
    del data
    return to_run(parsed, display, name or parsed.tag or run_name_of(display))


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
        "msmarco": lambda out: trec.write_qrels(qrels, out, display, "\t"),
        "json": lambda out: _reader("json_formats").write_json(qrels, out),
        "jsonl": lambda out: _reader("json_formats").write_jsonl(qrels, out),
        "csv": lambda out: _reader("delimited").write_delimited(qrels, out, ",", display),
        "tsv": lambda out: _reader("delimited").write_delimited(qrels, out, "\t", display),
        "parquet": lambda out: _reader("parquet").write_parquet(qrels, out),
    }
    if fmt not in writers:
        raise FormatError(display, f"{fmt} is a run format; write MS MARCO qrels with format msmarco")
    _write(display, compressed, writers[fmt])


def write_run(run: Run, path: PathLike, *, format: str | None = None, tag: str | None = None) -> None:
    """Write a run; the format comes from ``format=`` or the extension (``.gz`` compresses).

    TREC lines are ``qid Q0 docid rank score tag`` with ranks 1, 2, … in trec_eval's order (score
    descending, ties by document id descending) and ``tag`` defaulting to ``run.name``. Scores are
    written in the shortest form that reads back to the same float64, so reading gives the same run.
    ``msmarco`` (or ``msmarco-rank``) writes ``qid<TAB>docid<TAB>rank`` in the same order,
    ``msmarco-score`` ``qid<TAB>docid<TAB>score``.

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
        "msmarco": lambda out: trec.write_msmarco_run(run, out, display),
        "msmarco-rank": lambda out: trec.write_msmarco_run(run, out, display),
        "msmarco-score": lambda out: trec.write_msmarco_run(run, out, display, "score"),
        "json": lambda out: _reader("json_formats").write_json(run, out),
        "jsonl": lambda out: _reader("json_formats").write_jsonl(run, out),
        "csv": lambda out: _reader("delimited").write_delimited(run, out, ",", display),
        "tsv": lambda out: _reader("delimited").write_delimited(run, out, "\t", display),
        "parquet": lambda out: _reader("parquet").write_parquet(run, out),
    }
    _write(display, compressed, writers[fmt])


@_role("run")
def stat_run(path: str, format: str | None = None) -> tuple[str, int]:
    """The format of the run file at ``path`` (as :func:`format_of`) and its size in bytes (0 for a pipe);
    a path that cannot be read (missing, a symlink loop) is a :class:`FormatError` naming it."""
    fmt, _ = format_of(path, format)
    try:
        return fmt, os.path.getsize(path)
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except OSError as e:
        raise FormatError(path, f"cannot read the file: {e.strerror or e}") from None


def format_of(path: PathLike, format: str | None = None) -> tuple[str, bool]:
    """Return ``(format, gzipped)`` for a path, from ``format=`` if given, else from the extension.

    >>> format_of("runs/bm25.trec.gz")
    ('trec', True)
    >>> format_of("qrels.xlsx")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: qrels.xlsx: unknown file extension '.xlsx'; expected one of .qrels, .run, .txt, .trec, .json, .jsonl, .ndjson, .csv, .tsv, .parquet (optionally .gz), or choose the format with format= (one of: trec, msmarco, msmarco-rank, msmarco-score, json, jsonl, csv, tsv, parquet)
    """
    return RUN_FILES.detect(path, format)


# --------------------------------------------------------------------------------------------- helpers


def _refuse_coercions(obj: object, kind: Kind, columns: ColumnMap | None) -> None:
    """Refuse, in a dict of Python values, what would otherwise become a number or an id without a word:
    ``True`` as 1, ``1+2j`` as 1, a datetime as nanoseconds, ``None`` as the query ``"None"``, and an
    integer too big for the label's 32 bits or the score's float64 (an ``OverflowError`` deeper down).
    Tables (frames, Arrow) are checked by their column types in :func:`~ranklens.data.readers.table_columns`."""
    if not isinstance(obj, Mapping) or not obj:
        return
    source = _reader("frames").source_name(obj)
    if all(isinstance(docs, Mapping) for docs in obj.values()):  # {query_id: {doc_id: value}}
        for qid, docs in obj.items():
            problem = _python_id_problem(qid, "query id")
            if problem:
                raise FormatError(source, problem)
            plain = float if kind.real_values else int  # (the common case, checked in one pass)
            if all(type(d) is str and d.isascii() and d for d in docs) and all(
                type(v) is plain and (plain is float or -(2**31) <= v < 2**31) for v in docs.values()
            ):
                continue
            for did, value in docs.items():
                problem = _python_id_problem(did, "document id")
                if problem:
                    raise FormatError(source, f"query '{qid}': {problem}")
                problem = _python_value_problem(value, kind)
                if problem:
                    raise FormatError(source, f"query '{qid}', document '{did}': {problem}")
        return
    try:  # columns {"query_id": [...], "doc_id": [...], "relevance": [...]}: the value column's Python values
        names = [str(k) for k in obj]
        v = resolve_columns(names, kind, source, mapping=column_roles(columns, kind, source))[2]
    except FormatError:
        return  # the reader says what is missing
    values = list(obj.values())[v]
    if isinstance(values, (list, tuple)):
        for row, value in enumerate(values, 1):
            problem = _python_value_problem(value, kind) if value is not None else None
            if problem:
                raise FormatError(source, f"column '{names[v]}': {problem}", row)


_LABEL_RANGE = "expected a relevance label in the 32-bit range (±2147483647)"


def _python_id_problem(value: object, what: str) -> str | None:
    if value is None or isinstance(value, (bool, np.bool_, bytes)):
        return f"expected a {what} (a string), got {value!r}"
    if isinstance(value, str):
        if value == "":
            return f"expected a {what}, got an empty string"
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return f"expected a {what} of valid Unicode, got {value!r} (a lone surrogate)"
    return None


def _python_value_problem(value: object, kind: Kind) -> str | None:
    """What is wrong with a Python label or score (None if fine; numeric strings are left to the reader)."""
    expected = f"expected a number ({kind.value})" if kind.real_values else "expected an integer relevance label"
    if isinstance(value, str):
        return None
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (complex, np.complexfloating)):
        return f"{expected}, got {value}"
    if not isinstance(value, (numbers.Real, decimal.Decimal)):
        return f"{expected}, got {'None' if value is None else f'a {type(value).__name__} ({value})'}"
    if isinstance(value, (int, np.integer)):
        big = int(value)
        if kind.real_values:
            try:
                float(big)
            except OverflowError:
                return f"{kind.value} is a {len(str(abs(big)))}-digit integer, too large for a float64"
        elif not -(2**31) <= big < 2**31:
            return f"{_LABEL_RANGE}, got {big if abs(big) < 10**40 else f'a {len(str(abs(big)))}-digit integer'}"
        return None
    number = float(value)
    if kind.real_values:
        return f"{kind.value} is NaN; give every document a number" if math.isnan(number) else None
    if not number.is_integer():
        return f"{expected}, got {value}"
    return None if -(2**31) <= number < 2**31 else f"{_LABEL_RANGE}, got {value}"


def _load(source: PathLike, format: str | None, *, map_text: bool = False) -> tuple[str, str, bytes | BinaryIO]:
    """Open the file once (a pipe or FIFO cannot be opened twice), pick the format, read the bytes
    (gunzipped). An uncompressed Parquet file in a seekable file is handed to pyarrow open, so it reads
    only the columns it needs (:func:`_parse` closes it). ``map_text``: an uncompressed regular file of a
    TREC-like format is left open too, unread, for :func:`read_run` to map (the caller closes it)."""
    display = os.fspath(source)
    if display == "-":  # standard input, read once (a pipe cannot be opened twice)
        return _load_stdin(format)
    handle = _open(display)
    try:
        fmt, compressed = format_of(display, format)
        head = _read(handle, 2, display)
        if fmt == "parquet" and not compressed and head != _GZIP_MAGIC:
            if _is_regular(handle):
                handle.seek(0)
                return display, fmt, handle
            if head != b"PA"[: len(head)]:  # not "PAR1": say so before reading an endless stream
                raise FormatError(display, "expected a Parquet file: it does not start with PAR1")
        if map_text and fmt in _TREC_LIKE and not compressed and head != _GZIP_MAGIC and _is_regular(handle):
            return display, fmt, handle
        data = _read_rest(handle, head, display, text=fmt != "parquet" and head != _GZIP_MAGIC)
    except BaseException:
        handle.close()
        raise
    handle.close()
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise FormatError(display, f"expected gzip-compressed data, but it is corrupt or truncated ({e})") from None
    elif compressed and data:
        raise not_gzip(display)
    return display, fmt, data


def not_gzip(display: str) -> FormatError:
    """The error for a file whose name ends in ``.gz`` and whose bytes are not gzip."""
    return FormatError(display, "expected gzip-compressed data (the name ends in .gz), got uncompressed bytes")


STDIN = "<stdin>"


def read_text_bytes(source: PathLike) -> tuple[str, bytes]:
    """``(name to show, bytes)`` of a text input read once, gunzipped: ``-`` is standard input; a pipe
    or FIFO is read whole from one open. For callers that need the raw text (``trec-eval`` takes the run
    id from the last line).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.run"
    >>> _ = p.write_text("q1 Q0 d1 1 1.0 t\\n")
    >>> read_text_bytes(p)[1]
    b'q1 Q0 d1 1 1.0 t\\n'
    """
    display, _, data = _load(source, "trec")
    assert isinstance(data, bytes)  # only Parquet is left as a handle
    return display, data


def _load_stdin(format: str | None) -> tuple[str, str, bytes]:
    """``-``: the bytes of standard input (gunzipped when they start with gzip's magic); TREC unless
    ``format`` says otherwise (a pipe has no extension)."""
    import sys

    fmt = RUN_FILES.check(format, STDIN) if format else cast(str, RUN_FILES.unnamed)
    data = sys.stdin.buffer.read()
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise FormatError(STDIN, f"expected gzip-compressed data, but it is corrupt or truncated ({e})") from None
    return STDIN, fmt, data


_READ_BYTES = 16 << 20


def _open(display: str) -> BinaryIO:
    """Open for reading; every failure (missing, a directory, a symlink loop, no permission) is a
    :class:`FormatError` naming the file."""
    try:
        return open(display, "rb")
    except FileNotFoundError:
        raise FormatError(display, "no such file") from None
    except IsADirectoryError:
        raise FormatError(display, "expected a file, got a directory") from None
    except OSError as e:
        raise FormatError(display, f"cannot read the file: {e.strerror or e}") from None


def _read(handle: BinaryIO, size: int, display: str) -> bytes:
    """Up to ``size`` bytes (fewer only at the end: a buffered read waits for a slow pipe)."""
    try:
        return handle.read(size)
    except OSError as e:
        raise FormatError(display, f"cannot read the file: {e.strerror or e}") from None


def _is_regular(handle: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (OSError, ValueError):
        return False


def _read_rest(handle: BinaryIO, head: bytes, display: str, *, text: bool) -> bytes:
    """The whole content, ``head`` (already read) first. A regular file is read again from its start
    in one piece; anything else (a pipe, a FIFO, a device) in blocks, and text that shows a NUL byte
    stops at that block (``/dev/zero`` is binary data, not an endless line)."""
    if _is_regular(handle):
        try:
            handle.seek(0)
        except OSError:
            pass
        else:
            raw = getattr(handle, "raw", None)
            if raw is not None:  # one allocation of the file's size: a buffered read(-1) after a seek within
                try:  # its buffer joins the buffered bytes and the rest, a second copy of the file (issue 12)
                    raw.seek(0)
                    return _read(raw, -1, display)
                except OSError:
                    handle.seek(0)
            return _read(handle, -1, display)
    blocks = [head]
    if text and b"\x00" in head:
        check_text(head, display)
    while True:
        block = _read(handle, _READ_BYTES, display)
        if not block:
            return b"".join(blocks)
        blocks.append(block)
        if text and b"\x00" in block:
            check_text(b"".join(blocks), display)  # raises, naming the line


class _Prefixed(io.RawIOBase):
    """The bytes ``head`` (already read from ``rest``) followed by the rest of ``rest``."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._rest.readinto(buffer)  # type: ignore[attr-defined,no-any-return]


@contextlib.contextmanager
def open_input(path: str) -> Iterator[tuple[BinaryIO, bool]]:
    """Open ``path`` once and yield ``(stream, gzipped)``: its bytes, gunzipped on the fly when they start
    with gzip's magic. The magic is read from the same handle, so a pipe or a FIFO (which cannot be
    opened twice, nor re-read) loses nothing. Opening fails with a :class:`FormatError` naming the
    file, and so does a name ending in ``.gz`` on bytes that are not gzip (the rule of :func:`read_run`);
    reading a corrupt gzip stream raises ``OSError``/``EOFError``/``zlib.error`` (the caller knows where
    it was)."""
    with _open(path) as handle:
        head = _read(handle, 2, path)
        if head and head != _GZIP_MAGIC and RUN_FILES.extension_of(path)[1]:
            raise not_gzip(path)
        stream: BinaryIO
        if _is_regular(handle):
            handle.seek(0)
            stream = handle
        else:
            stream = cast(BinaryIO, io.BufferedReader(_Prefixed(head, handle), buffer_size=1 << 16))
        if head == _GZIP_MAGIC:
            with gzip.GzipFile(fileobj=stream, mode="rb") as unzipped:
                yield cast(BinaryIO, unzipped), True
        else:
            yield stream, False


def _parse(
    data: bytes | str | BinaryIO,
    fmt: str,
    display: str,
    kind: Kind,
    *,
    forced: bool = False,
    mapping: ColumnMap | None = None,
) -> Columns:
    try:
        columns = _parse_format(data, fmt, display, kind, forced, mapping)
    finally:
        if not isinstance(data, (bytes, str)):
            data.close()  # a Parquet file opened by _load
    if len(columns.query_id) == 0:  # type: ignore[arg-type]
        raise no_rows(kind, display)
    return columns


def _parse_format(
    data: bytes | str | BinaryIO, fmt: str, display: str, kind: Kind, forced: bool, mapping: ColumnMap | None
) -> Columns:
    """``forced``: the format was given (no sniffing); ``mapping``: from :func:`column_roles`."""
    if mapping is not None and fmt not in _NAMED_COLUMNS:
        raise _reader("frames").no_names(display, f"a {fmt} file")
    if fmt == "parquet":
        return _reader("parquet").read_parquet(data, display, kind, mapping=mapping)
    data = cast(bytes, data)  # only Parquet is ever left as an open file
    if fmt in _TREC_LIKE:
        if kind.name == "qrels":
            if fmt.startswith("msmarco-"):
                raise FormatError(
                    display, f"{fmt} is a run format; MS MARCO qrels are TREC qrels: use format trec or msmarco"
                )
            return trec.read_qrels(data, display, labels="float" if kind.real_values else "int")
        return trec.read_run(data, display, layout=fmt if fmt != "trec" else "trec" if forced else "auto")
    if fmt == "json":
        return _reader("json_formats").read_json(data, display, kind)
    if fmt == "jsonl":
        return _reader("json_formats").read_jsonl(data, display, kind, mapping=mapping)
    delimiter = "," if fmt == "csv" else "\t"
    return _reader("delimited").read_delimited(data, display, kind, delimiter, mapping=mapping, sniff=not forced)


def _dataset(source: PathLike, format: str | None) -> bool:
    """Whether ``source`` names a Parquet dataset (a directory or a glob: :mod:`ranklens.data.datasets`); one
    given another format is a :class:`FormatError`."""
    from ranklens.data.datasets import is_dataset

    display = _display(source)
    if display == "-" or not is_dataset(display):
        return False
    if format not in (None, "parquet"):
        raise FormatError(display, f"a directory or a glob is read as a Parquet dataset, not as {format}")
    return True


def _display(source: PathLike) -> str:
    display = os.fspath(source)
    return STDIN if display == "-" else display


def run_columns_of(path: str, format: str | None = None) -> int:
    """How many columns the reader takes the TREC run at ``path`` to have: 6 (trec_eval's), 5 (no tag)
    or 3 (MS MARCO), from its first content line; 6 when ``format="trec"`` forces it. For callers that
    need trec_eval's layout, such as streaming."""
    if format is not None and format.strip().lower() == "trec":
        return 6
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return 6  # a pipe or FIFO can be read only once: by the reader (as trec_eval's 6 columns)
        with open_input(path) as (handle, _):
            head = handle.read(1 << 16)
    except (OSError, EOFError, zlib.error, FormatError):
        return 6  # the reader names the problem
    cut = head.rfind(b"\n")
    layout = trec.run_layout_of(trec.first_content_line(head[: cut if cut >= 0 else len(head)]))
    return 6 if layout is None else len(layout.names)


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
