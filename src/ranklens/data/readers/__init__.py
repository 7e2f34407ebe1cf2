"""Readers and writers, one module per format; :mod:`ranklens.data.io` picks one (by the rule and the table of
:mod:`ranklens.data.formats`, the format registry) and builds Qrels/Run.

============================  ==================================================================
module                        job
============================  ==================================================================
:mod:`.trec`                  TREC qrels (``qid iter docid rel``) and runs (``qid Q0 docid rank score tag``)
:mod:`.json_formats`          JSON ``{qid: {docid: value}}`` and JSON Lines (one object per row)
:mod:`.delimited`             CSV / TSV with a header of named columns
:mod:`.parquet`               Parquet files
:mod:`.frames`                in-memory objects: pandas, polars, Arrow, dicts, Qrels/Run
============================  ==================================================================

Every reader returns :class:`Columns`, three parallel columns plus the line (1-based) each row came
from, so errors raised later (NaN scores, duplicates) name the right line. This module holds what the
readers share: that record, the text checks, column-name aliases and line bookkeeping.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.errors import FormatError, did_you_mean

if TYPE_CHECKING:
    import mmap

__all__ = [
    "FLOAT_QRELS",
    "QRELS",
    "RUN",
    "ColumnMap",
    "Columns",
    "Kind",
    "check_text",
    "column_roles",
    "extra_fields_note",
    "first_empty_id",
    "is_integer_token",
    "is_number_token",
    "line_of_offset",
    "no_rows",
    "nonblank_line_numbers",
    "qrels_kind",
    "resolve_columns",
    "table_columns",
    "text_end",
    "to_qrels",
    "to_run",
    "write_lines",
]

#: Accepted column names (lower case), preferred first. Used by CSV/TSV, JSON Lines, Parquet and frames.
#: ``query-id``/``corpus-id``/``score`` are BEIR's qrels; ``user``/``item``/``rating``/``prediction`` (and
#: MovieLens' ``userId``/``movieId``) are recommender logs. ``score`` is resolved by kind: in qrels it is the
#: label (BEIR), and only when no other label column is present; in a run it is the score.
QUERY_ALIASES = ("query_id", "qid", "query", "q_id", "topic", "query-id", "user_id", "userid", "user")
DOC_ALIASES = ("doc_id", "docid", "docno", "doc", "corpus-id", "item_id", "itemid", "movieid", "item")
SCORE_ALIASES = ("score", "sim", "prediction")
LABEL_ALIASES = ("relevance", "rel", "label", "grade", "rating", "score")


@dataclass(frozen=True)
class Kind:
    """What is being read: the value column's role and its accepted names."""

    name: str  # "qrels" or "run"
    value: str  # canonical value column name: "relevance" or "score"
    value_aliases: tuple[str, ...]
    value_roles: tuple[str, ...]  # what columns= may call the value column
    value_option: str  # its key in --qrels-columns / --run-columns
    real_values: bool = False  # values are any finite number (scores; labels="float"), else integers


QRELS = Kind("qrels", "relevance", LABEL_ALIASES, ("relevance", "label", "rel", "grade"), "label")
RUN = Kind("run", "score", SCORE_ALIASES, ("score",), "score", real_values=True)
#: qrels with real-valued labels (``read_qrels(..., labels="float")``): read as QRELS, values as numbers
FLOAT_QRELS = dataclasses.replace(QRELS, real_values=True)


def qrels_kind(labels: str) -> Kind:
    """The :class:`Kind` reading qrels with ``labels="int"`` (:data:`QRELS`) or ``"float"`` (:data:`FLOAT_QRELS`)."""
    return FLOAT_QRELS if labels == "float" else QRELS


@dataclass(frozen=True)
class Columns:
    """Parsed rows before they become a Qrels or Run.

    ``line_numbers[i]`` is the 1-based line (or row) of row ``i``; ``None`` means row ``i`` is line ``i+1``.
    ``tag`` is the run tag found in the input (TREC column 6), if any; ``extra_fields`` the number of
    lines with words after it (ignored, as trec_eval ignores them); ``notes`` what the reader assumed
    (a sniffed layout), passed on to ``Qrels.notes`` / ``Run.notes``. ``doc_hash`` is the id hash
    (``ranklens.data._hashing.string_hash``) of every ``doc_id`` when the reader computed it on the way (the
    compiled TREC tokenizer), else ``None``; whoever changes ``doc_id`` must drop it.
    """

    query_id: object
    doc_id: object
    value: object
    line_numbers: np.ndarray | None = None
    tag: str | None = None
    extra_fields: int = 0
    notes: tuple[str, ...] = ()
    doc_hash: np.ndarray | None = None


_UTF8_BOM = b"\xef\xbb\xbf"


def check_text(data: bytes, source: str) -> bytes:
    """Reject binary input (NUL bytes, invalid UTF-8) and return ``data`` without the UTF-8 byte-order
    marks it starts with (all of them: pyarrow's parser would drop a second one, the line scan would not).

    >>> check_text(b"\\xef\\xbb\\xbf\\xef\\xbb\\xbfq1 0 d1 1\\n", "qrels.txt")
    b'q1 0 d1 1\\n'
    >>> check_text(b"q1 0 d1 1\\nq\\x00", "qrels.txt")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: qrels.txt:2: expected UTF-8 text, found a NUL byte (is this a binary or compressed file?)
    """
    while data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    nul = data.find(b"\x00")
    if nul >= 0:
        raise FormatError(
            source, "expected UTF-8 text, found a NUL byte (is this a binary or compressed file?)",
            line_of_offset(data, nul),
        )
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(
                source,
                f"expected UTF-8 text, found byte 0x{data[e.start]:02x} "
                "(is this a binary file, or text in another encoding?)",
                line_of_offset(data, e.start),
            ) from None
    return data


def line_of_offset(data: bytes, offset: int) -> int:
    """Return the 1-based line holding byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


_WHITESPACE = b" \t\r\n\x0b\x0c"


def text_end(data: bytes | mmap.mmap) -> int:
    """Return the length of ``data`` (bytes, or a memory map of a file) without trailing whitespace (no copy
    of the buffer)."""
    end = len(data)
    while end and data[end - 1] in _WHITESPACE:
        end -= 1
    return end


def nonblank_line_numbers(data: bytes | memoryview | np.ndarray, first_line: int = 1) -> np.ndarray:
    """Return the 1-based numbers of the non-empty lines of ``data`` (vectorised, no loop per line).

    ``first_line`` is the number of the first line of ``data`` in the whole file.

    >>> nonblank_line_numbers(b"a\\n\\nb\\n\\n").tolist()
    [1, 3]
    """
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) else data
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [arr.size]))
    length = ends - starts
    # a line made only of "\r" (CRLF file) is blank too
    cr_only = length == 1
    if cr_only.any():
        idx = np.flatnonzero(cr_only)
        cr_only[idx] = arr[starts[idx]] == 13
    return (np.flatnonzero((length > 0) & ~cr_only) + first_line).astype(np.int64)


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def is_integer_token(token: str) -> bool:
    """True for a decimal integer such as ``2``, ``-1`` or ``+3`` (not ``2.5``, not ``1e2``)."""
    return _INTEGER.match(token) is not None


def is_number_token(token: str) -> bool:
    """True for what a float column accepts: ``1``, ``-2.5``, ``1e-3``, ``inf``, ``nan`` (not ``1_0``)."""
    if "_" in token or not token.isascii():
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def _describe(aliases: Sequence[str]) -> str:
    return f"{aliases[0]} (or {', '.join(aliases[1:])})"


#: What ``columns=`` may call the query and document columns (the value's names are in :class:`Kind`).
_QUERY_ROLES = ("query_id", "query", "qid")
_DOC_ROLES = ("doc_id", "doc", "docid", "docno")

ColumnMap = Mapping[str, str]
"""``columns=``: ``{column name: role}``, e.g. ``{"user": "query_id", "item": "doc_id", "rating": "relevance"}``."""


def column_roles(columns: ColumnMap | None, kind: Kind, source: str) -> dict[str, str] | None:
    """Check ``columns=`` (``{column name: role}``) and return it as ``{role: column name}``, with the roles
    ``"query"``, ``"doc"`` and ``"value"``. Roles: ``query_id``/``query``/``qid``, ``doc_id``/``doc``/
    ``docid``/``docno``, and for the value ``relevance``/``label``/``rel``/``grade`` (qrels) or ``score`` (runs).

    >>> column_roles({"user": "query_id", "item": "doc", "rating": "label"}, QRELS, "ratings.csv")
    {'query': 'user', 'doc': 'item', 'value': 'rating'}
    >>> column_roles({"user": "qid", "rating": "relevance"}, RUN, "predictions.csv")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: predictions.csv: columns=: 'relevance' is a role of qrels; a run's value is its score: {'rating': 'score'}
    """
    if columns is None:
        return None
    if not isinstance(columns, Mapping):
        raise FormatError(source, f"columns=: expected a dict {{column name: role}}, got {type(columns).__name__}")
    other = QRELS if kind is RUN else RUN
    roles: dict[str, str] = {}
    for column, role in columns.items():
        key = str(role).strip().lower()
        if key in _QUERY_ROLES:
            which = "query"
        elif key in _DOC_ROLES:
            which = "doc"
        elif key in kind.value_roles:
            which = "value"
        elif key in other.value_roles:
            owner = "a run's value is its score" if kind is RUN else "the qrels' value is the relevance"
            raise FormatError(
                source, f"columns=: {role!r} is a role of {other.name}; {owner}: {{{column!r}: {kind.value!r}}}"
            )
        else:
            hint = ""
            if str(column).strip().lower() in (*_QUERY_ROLES, *_DOC_ROLES, *kind.value_roles):
                hint = f" (columns= maps a column name to its role: did you mean {{{role!r}: {column!r}}}?)"
            raise FormatError(
                source,
                f"columns=: unknown role {role!r} for column {column!r}; expected one of query_id, doc_id, "
                f"{kind.value}{hint}",
            )
        if which in roles:
            raise FormatError(
                source, f"columns=: {roles[which]!r} and {column!r} are both mapped to {_role_name(which, kind)}"
            )
        roles[which] = str(column)
    return roles


def _role_name(role: str, kind: Kind) -> str:
    return {"query": "query_id", "doc": "doc_id"}.get(role, kind.value)


def resolve_columns(
    names: Sequence[str],
    kind: Kind,
    source: str,
    line: int | None = None,
    *,
    noun: str = "column",
    mapping: Mapping[str, str] | None = None,
    suggest_map: bool = True,
) -> tuple[int, int, int]:
    """Return the positions of the query, document and value columns among ``names``.

    ``mapping`` (from :func:`column_roles`) names some of them explicitly; the others are found by their
    aliases. Matching ignores case and surrounding spaces; the first alias present wins.

    >>> resolve_columns(["QID", "docno", "rank", "sim"], RUN, "run.csv")
    (0, 1, 3)
    >>> resolve_columns(["sku", "member", "rating"], QRELS, "q.csv", mapping={"query": "member", "doc": "sku"})
    (1, 0, 2)
    >>> resolve_columns(["qid", "docno", "rank"], RUN, "run.csv", 1)
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: run.csv:1: missing column score (or sim, prediction); expected columns query_id, doc_id, score; found: qid, docno, rank; map it with --run-columns score=COLUMN (columns= in Python)
    """
    stripped = [str(n).strip() for n in names]
    lowered = [n.lower() for n in stripped]
    shown = ", ".join(str(n) for n in names) if names else "(none)"
    positions: dict[str, int] = {}
    for role, column in (mapping or {}).items():
        want = column.strip()
        pos = next((i for i, n in enumerate(stripped) if n == want), None)  # exact first, then ignoring case
        if pos is None:
            pos = next((i for i, n in enumerate(lowered) if n == want.lower()), None)
        if pos is None:
            raise FormatError(
                source,
                f"{noun} {column!r} (mapped to {_role_name(role, kind)}) not found; found: {shown}"
                f"{did_you_mean(column, stripped)}",
                line,
            )
        positions[role] = pos
    taken = set(positions.values())
    missing: list[str] = []
    for role, aliases in (("query", QUERY_ALIASES), ("doc", DOC_ALIASES), ("value", kind.value_aliases)):
        if role in positions:
            continue
        pos = next((i for a in aliases for i, n in enumerate(lowered) if n == a and i not in taken), None)
        if pos is None:
            missing.append(role)
        else:
            positions[role] = pos
            taken.add(pos)
    if missing:
        aliases_of = {"query": QUERY_ALIASES, "doc": DOC_ALIASES, "value": kind.value_aliases}
        plural = "s" if len(missing) > 1 else ""
        message = (
            f"missing {noun}{plural} {' and '.join(_describe(aliases_of[r]) for r in missing)}; expected {noun}s "
            f"query_id, doc_id, {kind.value}; found: {shown}"
        )
        other = QRELS if kind is RUN else RUN
        if len(missing) == 1 and any(a in lowered for a in other.value_aliases if a not in kind.value_aliases):
            message += f"; this looks like {other.name} data: did you swap QRELS and RUN?"
        elif suggest_map:
            pairs = ",".join(f"{r if r != 'value' else kind.value_option}=COLUMN" for r in missing)
            message += f"; map {'them' if plural else 'it'} with --{kind.name}-columns {pairs} (columns= in Python)"
        raise FormatError(source, message, line)
    return positions["query"], positions["doc"], positions["value"]


def first_empty_id(query_id: pa.Array | pa.ChunkedArray, doc_id: pa.Array | pa.ChunkedArray) -> tuple[int, int] | None:
    """Return ``(column, row)`` of the first empty-string id (column 0: query, 1: document), else None.

    Nulls are not looked at (Qrels and Run reject them)."""
    for which, col in enumerate((query_id, doc_id)):
        if pa.types.is_string_view(col.type):
            col = col.cast(pa.large_string())
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) or len(col) == 0:
            continue
        lengths = pc.binary_length(col)
        if pc.min(lengths).as_py() == 0:
            return which, int(np.flatnonzero(np.asarray(lengths.to_numpy(zero_copy_only=False)) == 0)[0])
    return None


def write_lines(lines: pa.Array | pa.ChunkedArray, out: BinaryIO) -> None:
    """Write the characters of a string array back to back (each element already ends with a newline)."""
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    if len(lines) == 0:
        return
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=lines.offset * 4)
    out.write(memoryview(lines.buffers()[2])[int(offsets[0]) : int(offsets[-1])])


def to_qrels(columns: Columns, source: str, labels: str = "int") -> Qrels:
    """Build Qrels from parsed columns (``labels``: ``"int"`` or ``"float"``); errors name the line each
    row came from."""
    try:
        qrels = Qrels.from_arrays(
            columns.query_id, columns.doc_id, columns.value, source=source, line_numbers=columns.line_numbers,
            label_kind=labels,
        )
    except (pa.ArrowException, OverflowError) as e:
        raise FormatError(source, f"cannot build qrels: {_first_line(e)}") from None
    return dataclasses.replace(qrels, notes=columns.notes) if columns.notes else qrels


def to_run(columns: Columns, source: str, name: str) -> Run:
    """Build a Run from parsed columns; errors name the line each row came from."""
    try:
        run = Run.from_arrays(
            columns.query_id, columns.doc_id, columns.value, name=name, source=source,
            line_numbers=columns.line_numbers, doc_hash=columns.doc_hash,  # (the tokenizer's: not hashed twice)
        )
    except (pa.ArrowException, OverflowError) as e:
        raise FormatError(source, f"cannot build run: {_first_line(e)}") from None
    notes = (*columns.notes, *((extra_fields_note(columns.extra_fields),) if columns.extra_fields else ()))
    return dataclasses.replace(run, notes=notes) if notes else run


def extra_fields_note(lines: int) -> str:
    """The note for TREC run lines with words after the tag (ignored, as trec_eval ignores them)."""
    return f"{lines} line{'' if lines == 1 else 's'} had words after the tag (column 6): ignored, as trec_eval does"


def no_rows(kind: Kind, source: str) -> FormatError:
    """The error for an input with nothing to evaluate (only comments, blank lines, a bare header, ``{}``)."""
    what = "judgement" if kind.name == "qrels" else "ranked document"
    return FormatError(source, f"expected at least one {what} ({kind.name} line or row), found none")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _is_numeric_type(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t))


def _is_text_type(t: pa.DataType) -> bool:  # numbers as text: read as numbers, or rejected naming the row
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def table_columns(table: pa.Table, kind: Kind, source: str, mapping: Mapping[str, str] | None = None) -> Columns:
    """Pick the query, document and value columns of an Arrow table (Parquet, frames) by name, or as
    ``mapping`` (from :func:`column_roles`) says.

    "Line" in messages is the 1-based row number.
    """
    q, d, v = resolve_columns(table.column_names, kind, source, mapping=mapping)
    names = table.column_names
    value_type = table.schema.field(v).type
    if pa.types.is_dictionary(value_type):
        value_type = value_type.value_type
    if not (_is_numeric_type(value_type) or _is_text_type(value_type) or pa.types.is_null(value_type)):
        # bool, timestamps, dates, durations …: numpy would turn them into numbers that mean nothing here
        raise FormatError(source, f"expected numbers in column '{names[v]}', got {value_type}")
    value_what = "score" if kind is RUN else "relevance label"
    for what, pos in (("query id", q), ("document id", d), (value_what, v)):
        column = table.column(pos)
        if column.null_count:
            row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
            raise FormatError(source, f"expected a {what} in column '{names[pos]}', got null", row + 1)
    query, doc = table.column(q), table.column(d)
    empty = first_empty_id(query, doc)
    if empty is not None:
        which, row = empty
        what = ("query id", "document id")[which]
        raise FormatError(source, f"expected a {what} in column '{names[(q, d)[which]]}', got an empty value", row + 1)
    return Columns(query, doc, table.column(v))
