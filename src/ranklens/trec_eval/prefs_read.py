"""Reading preference judgments the way trec_eval 10.0 does (``-R prefs`` and ``-R qrels_prefs``).

A prefs file has five whitespace-separated columns ``qid jg jsg docno rel_level``: within one judgment
sub-group (``jsg``) of a judgment group (``jg``), every document is preferred to every document with a
lower ``rel_level``; a ``rel_level`` of 0 means "not relevant". ``-R qrels_prefs`` reads an ordinary
qrels file (``qid iter docno rel``) as preferences: the ``iter`` column is the judgment group and every
line is in sub-group ``"0"``; the label is read as a number (``2.5`` is 2.5, as trec_eval's ``atof``).

Line syntax follows ranklens's TREC readers (:mod:`ranklens.data.readers.trec`): columns are split on
runs of space, tab, CR, VT and FF; a line whose first non-blank character is ``#`` is a comment; blank
lines are skipped; a leading UTF-8 byte-order mark is dropped; line numbers count physical lines.
Where trec_eval 10.0 (``get_prefs.c``, ``get_qrels_prefs.c``) differs, it is on input it handles badly:

* it skips only a ``#`` in column 0, and only one comment line at a time (the second of two
  consecutive comment lines is read as data), and it crashes on a comment as the last line;
* it calls a blank line "malformed";
* its ``atof`` reads ``abc`` as 0 and ``2x`` as 2; here the level must be a decimal number.

The queries are returned in ``strcmp`` order of their ids, the order trec_eval evaluates them in.
Consistency checks that trec_eval makes while evaluating a query (one document with two levels in one
sub-group, contradictory preferences in one group) are made by
:func:`ranklens.trec_eval.prefs_measures.prefs_query_values`, when the query is evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ranklens.errors import FormatError

__all__ = ["PrefLine", "QueryPrefs", "read_prefs", "read_qrels_prefs"]

_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BOM = b"\xef\xbb\xbf"


class PrefLine(NamedTuple):
    """One judgment: ``docno`` has ``rel_level`` in sub-group ``jsg`` of group ``jg`` (from ``line``)."""

    jg: str
    jsg: str
    docno: str
    rel_level: float
    line: int = 0


@dataclass(frozen=True)
class QueryPrefs:
    """The preference judgments of one query, in file order.

    ``source`` names the file in error messages (with :attr:`PrefLine.line`).

    >>> q = QueryPrefs("q1", (PrefLine("u1", "s1", "d1", 2.0), PrefLine("u1", "s1", "d2", 0.0)))
    >>> q.docnos
    ('d1', 'd2')
    """

    qid: str
    judgments: tuple[PrefLine, ...]
    source: str = "<prefs>"

    @property
    def docnos(self) -> tuple[str, ...]:
        """The distinct judged documents, in ``strcmp`` order."""
        return tuple(sorted({j.docno for j in self.judgments}))


def read_prefs(path: str) -> dict[str, QueryPrefs]:
    """Read a trec_eval prefs file (``qid jg jsg docno rel_level``), keyed by query id.

    Raises:
        FormatError: a line without exactly 5 columns, a level that is not a number, invalid UTF-8, or
            no judgment at all (the message names the file and line).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.prefs"
    >>> _ = p.write_text("# user 1\\nq1 u1 s1 d1 2\\nq1 u1 s1 d2 0\\n")
    >>> [(j.docno, j.rel_level, j.line) for j in read_prefs(str(p))["q1"].judgments]
    [('d1', 2.0, 2), ('d2', 0.0, 3)]
    """
    return _read(path, 5, "qid, judgment group, sub-group, docno, relevance level")


def read_qrels_prefs(path: str) -> dict[str, QueryPrefs]:
    """Read a qrels file (``qid iter docno rel``) as preferences: group = ``iter``, sub-group ``"0"``.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.qrels"
    >>> _ = p.write_text("q1 0 d1 1\\nq1 0 d2 0\\n")
    >>> read_qrels_prefs(str(p))["q1"].judgments[0]
    PrefLine(jg='0', jsg='0', docno='d1', rel_level=1.0, line=1)
    """
    return _read(path, 4, "qid, iter (judgment group), docno, relevance level")


def _read(path: str, width: int, columns: str) -> dict[str, QueryPrefs]:
    data = Path(path).read_bytes()
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    by_query: dict[str, list[PrefLine]] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != width:
            raise FormatError(path, f"expected {width} columns ({columns}), got {len(fields)}", line=number)
        if b"\x00" in raw:
            raise FormatError(path, "expected text, got a NUL byte", line=number)
        level = fields[-1]
        if _NUMBER.fullmatch(level) is None:
            shown = level.decode("utf-8", "replace")
            raise FormatError(path, f"expected a number as the relevance level, got '{shown}'", line=number)
        try:
            text = [f.decode("utf-8") for f in fields[:-1]]
        except UnicodeDecodeError as exc:
            raise FormatError(path, f"expected UTF-8 text, got byte 0x{exc.object[exc.start]:02x}", line=number) from None
        if width == 5:
            qid, jg, jsg, docno = text
        else:
            qid, jg, docno = text
            jsg = "0"
        by_query.setdefault(qid, []).append(PrefLine(jg, jsg, docno, float(level), number))
    if not by_query:
        raise FormatError(path, f"expected at least one judgment line ({columns}), found none")
    return {qid: QueryPrefs(qid, tuple(by_query[qid]), path) for qid in sorted(by_query)}
