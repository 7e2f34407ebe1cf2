"""The ranklens exception tree.

::

    RanklensError                      every error ranklens raises on purpose
    ├── InputError(ValueError)         the user's data or arguments are wrong
    │   ├── FormatError                a file or frame does not match its format (names file and line)
    │   ├── DuplicateError             a document appears twice for one query
    │   ├── NotGroupedError            streaming met a query again after other queries
    │   ├── MeasureError               an unknown or malformed measure name (suggests the nearest)
    │   └── QuerySetError              the query-set policy ``error`` found a mismatch
    └── MissingDependencyError(ImportError)   an optional extra is not installed (says how to get it)

    RanklensWarning(UserWarning)       something was left out or changed (skipped queries, ignored rows …)

The CLI turns every :class:`RanklensError` into a one-line message and exit status 2. The Python entry
points (``evaluate``, ``Evaluator``, ``compare``) issue every note of their result (``Results.notes``,
``Comparison.notes``) as a :class:`RanklensWarning` as well; the CLI prints the notes instead.
"""

from __future__ import annotations

import sys
import warnings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = [
    "DuplicateError",
    "FormatError",
    "Hint",
    "InputError",
    "MeasureError",
    "NOTE_KINDS",
    "MissingDependencyError",
    "COUNTED_KINDS",
    "Note",
    "NotGroupedError",
    "QuerySetError",
    "RanklensError",
    "RanklensWarning",
    "alignment_note_data",
    "alignment_notes",
    "cli_wording",
    "did_you_mean",
    "python_wording",
    "warn_notes",
]


class RanklensError(Exception):
    """Base class of every error ranklens raises on purpose."""


class InputError(RanklensError, ValueError):
    """The data or the arguments given are wrong."""


class Hint(str):
    """A suggestion inside an error, as data: which input format to choose (``kind="choose"``, field
    ``choices``) or to use (``kind="use"``, fields ``role``, ``"qrels"`` or ``"run"``, and ``format``), or that
    a label the reader refused is a real number (``kind="labels"``: no words in Python, where ``labels=`` is
    the Evaluator's; the command line names ``--labels float``). It is a ``str``, the Python API's words; each
    face words it from its fields (:meth:`cli_words`: the command's own flags), so no face rewrites or parses
    the text of a message.

    >>> h = Hint("use", role="run", format="csv")
    >>> str(h), h.cli_words({"run_format"}, None), h.cli_words(set(), None)
    ('--run-format csv, format= in Python', '--run-format csv, format= in Python', "format='csv' in Python")
    >>> c = Hint("choose", choices=("trec", "csv"))
    >>> str(c), c.cli_words({"qrels_format", "run_format"}, "qrels"), c.cli_words({"qrels_format", "run_format"}, None)
    ('format= (one of: trec, csv)', '--qrels-format (one of: trec, csv)', '--qrels-format or --run-format (one of: trec, csv)')
    """

    kind: str
    fields: dict[str, object]

    def __new__(cls, kind: str, **fields: object) -> Hint:
        if kind not in ("choose", "use", "labels"):
            raise ValueError(f"a hint kind is choose, use or labels; got {kind!r}")
        if kind == "labels":
            words = ""
        elif kind == "use":
            words = f"--{fields['role']}-format {fields['format']}, format= in Python"
        else:
            words = f"format= (one of: {', '.join(fields['choices'])})"  # type: ignore[arg-type]
        self = super().__new__(cls, words)
        self.kind, self.fields = kind, fields
        return self

    def cli_words(self, flags: set[str], role: str | None) -> str:
        """The command line's words: ``flags`` are the command's parameter names (``run_format``, …) and
        ``role`` the input the error is about (None: not known). A command without the flag keeps the
        Python words (its ``--format`` is an output format)."""
        if self.kind == "labels":
            return "; for real-valued labels add --labels float" if "label_kind" in flags else ""
        if self.kind == "use":
            if f"{self.fields['role']}_format" in flags:
                return str.__str__(self)
            return f"format='{self.fields['format']}' in Python"
        named = [f"--{r}-format" for r in ("qrels", "run") if f"{r}_format" in flags and role in (None, r)]
        if not named:
            return str.__str__(self)
        return f"{' or '.join(named)} (one of: {', '.join(self.fields['choices'])})"  # type: ignore[arg-type]


class FormatError(InputError):
    """A file or frame does not match its format.

    The message names the source, the line (1-based) when known, what was expected and what was found. It
    may be given as parts, text and :class:`Hint` objects (``parts``), which a face words with
    :meth:`worded`; ``str()`` and ``detail`` are the Python API's words.

    >>> e = FormatError("r.txt", ("is this a CSV file? (use ", Hint("use", role="run", format="csv"), ")"), 1)
    >>> str(e), e.worded(lambda h: h.cli_words(set(), None))
    ('r.txt:1: is this a CSV file? (use --run-format csv, format= in Python)', "r.txt:1: is this a CSV file? (use format='csv' in Python)")
    """

    def __init__(self, source: str, message: str | tuple[str, ...], line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.parts: tuple[str, ...] = (message,) if isinstance(message, str) else tuple(message)
        self.detail = "".join(self.parts)
        super().__init__(self._where() + self.detail)

    def _where(self) -> str:
        return f"{self.source}:{self.line}: " if self.line is not None else f"{self.source}: "

    def worded(self, word: Callable[[Hint], str]) -> str:
        """The message with each :class:`Hint` in the words ``word`` gives it (a face's)."""
        return self._where() + "".join(word(p) if isinstance(p, Hint) else p for p in self.parts)


class DuplicateError(FormatError):
    """The same document is listed twice for one query."""


class NotGroupedError(FormatError):
    """Streaming needs each query's rows together; a query came back after other queries."""


class MeasureError(InputError):
    """An unknown or malformed measure name."""


class QuerySetError(InputError):
    """The query sets of qrels and run differ and the policy says that is an error."""


class MissingDependencyError(RanklensError, ImportError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the '{package}' package: pip install 'ranklens[{extra}]'"
        )


class RanklensWarning(UserWarning):
    """Something was left out of or changed in a result: queries skipped or scored 0, rows ignored or cut.

    Each note of a :class:`~ranklens.Results` or :class:`~ranklens.Comparison` is also issued as one of
    these, so a notebook shows it. Silence them with ``warnings.simplefilter("ignore", RanklensWarning)``,
    or turn them into errors with ``"error"``.
    """


def warn_notes(notes: Iterable[str], prefix: str = "") -> None:
    """Issue each note as a :class:`RanklensWarning`, attributed to the first caller outside ranklens.

    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_notes(["1 qrels query with no retrieved document: skipped"], "bm25: ")
    >>> [str(w.message) for w in caught]
    ['bm25: 1 qrels query with no retrieved document: skipped']
    """
    notes = list(notes)
    if not notes:
        return
    level, frame = 1, sys._getframe(0)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").split(".")[0] == "ranklens":
        frame, level = frame.f_back, level + 1
    for note in notes:  # (a Note in the Python API's words: missing='zero', not --missing zero)
        warnings.warn(f"{prefix}{python_wording(note)}", RanklensWarning, stacklevel=level)


class Note(str):
    """One note as data: what joining a run to the qrels left out or changed, counted. ``kind`` names it
    (one of :data:`NOTE_KINDS`), ``count`` counts it and ``fields`` hold the rest. It is a ``str`` — the command
    line's words (:func:`cli_wording`), so everything that prints, saves or compares notes as text keeps
    working — and each face words it from the data: the Python API's warnings say ``missing='zero'``
    (:func:`python_wording`), the monitor gives the data itself; no face parses a note's text back into counts.
    ``prefix`` (say ``"bm25: "``) names what the note is about, in every wording.

    >>> note = Note("run_only_queries", 2, rows=7)
    >>> note.kind, note.count, note.fields, note
    ('run_only_queries', 2, {'rows': 7}, Note('run_only_queries', 2, rows=7))
    >>> str(note), python_wording(Note("qrels_only_queries", 1, scored_zero=False).with_prefix("bm25: "))
    ('2 run queries (7 rows) not in the qrels: ignored', "bm25: 1 qrels query with no retrieved document: skipped; pass missing='zero' (trec_eval -c) to count them as 0")
    """

    kind: str
    count: int  # type: ignore[assignment]  # (the data's name, as the issue spells it: it shadows str.count)
    fields: dict[str, object]
    prefix: str

    def __new__(cls, kind: str, count: int, *, prefix: str = "", **fields: object) -> Note:
        if kind not in NOTE_KINDS:
            raise ValueError(f"a note kind is one of {', '.join(NOTE_KINDS)}; got {kind!r}")
        self = super().__new__(cls, prefix + _words(kind, count, fields, "cli"))
        self.kind, self.count, self.fields, self.prefix = kind, count, fields, prefix
        return self

    def with_prefix(self, prefix: str) -> Note:
        """The same note about ``prefix`` (put before the words it has)."""
        return Note(self.kind, self.count, prefix=prefix + self.prefix, **self.fields)

    def data(self) -> dict[str, object]:
        """The note as JSON-ready data (what the monitor stores and shows).

        >>> Note("truncated_rows", 3).data()
        {'kind': 'truncated_rows', 'count': 3}
        """
        return {"kind": self.kind, "count": self.count, **self.fields}

    def counted(self) -> tuple[str, int, int] | None:
        """``(key, count, total)`` of a note counting "X of Y" (:data:`COUNTED_KINDS`), else None: the key (the
        kind and the fields but the total, as JSON) identifies the note whose counts buckets or blocks add, and
        :meth:`from_counted` makes it again — no face parses the words.

        >>> n = Note("absent_items", 3, total=40, head="Novelty@10", tail="top-10 recommendations are …")
        >>> key, count, total = n.counted()
        >>> Note.from_counted(key, count + 1, total + 10)
        Note('absent_items', 4, total=50, head='Novelty@10', tail='top-10 recommendations are …')
        """
        if self.kind not in COUNTED_KINDS:
            return None
        import json

        rest = {k: v for k, v in self.fields.items() if k != "total"}
        return json.dumps({"kind": self.kind, "prefix": self.prefix, **rest}, sort_keys=True), self.count, int(self.fields["total"])  # type: ignore[call-overload]

    @staticmethod
    def from_counted(key: str, count: int, total: int) -> Note:
        """The note of :meth:`counted`'s ``key`` with these counts."""
        import json

        fields = json.loads(key)
        kind, prefix = fields.pop("kind"), fields.pop("prefix")
        return Note(kind, count, prefix=prefix, total=total, **fields)

    @staticmethod
    def from_data(data: dict[str, object]) -> Note:
        """The note of :meth:`data` (what the eval JSON's ``note_data`` and the monitor carry); a ValueError
        when it is not one.

        >>> Note.from_data({"kind": "run_only_queries", "count": 2, "rows": 7})
        Note('run_only_queries', 2, rows=7)
        """
        fields = dict(data)
        kind, count, prefix = fields.pop("kind", None), fields.pop("count", None), fields.pop("prefix", "")
        if not isinstance(kind, str) or type(count) is not int or count < 0 or not isinstance(prefix, str):
            raise ValueError(f"a note is a kind and a count of at least 0; got {data!r}")
        try:
            return Note(kind, count, prefix=prefix, **fields)
        except KeyError as e:
            raise ValueError(f"a {kind} note needs the field {e.args[0]!r}") from None

    def __reduce__(self) -> tuple[object, ...]:  # (pickled to Spark's workers and back as data)
        return (_note, (self.kind, self.count, self.prefix, self.fields))

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.fields.items())
        return f"Note({self.kind!r}, {self.count}{extra})"


def _note(kind: str, count: int, prefix: str, fields: dict[str, object]) -> Note:
    return Note(kind, count, prefix=prefix, **fields)


def _words(kind: str, count: int, fields: dict[str, object], face: str) -> str:
    n = count
    if kind == "run_only_queries":
        return f"{n} run quer{'y' if n == 1 else 'ies'} ({fields['rows']} rows) not in the qrels: ignored"
    if kind == "qrels_only_queries":
        flag = "missing='zero'" if face == "python" else "--missing zero"
        if fields.get("scored_zero"):
            what = "scored 0 (missing='zero')" if face == "python" else "scored 0 (query set 'qrels')"
        else:
            what = f"skipped; {'pass' if face == 'python' else 'use'} {flag} (trec_eval -c) to count them as 0"
        return f"{n} qrels quer{'y' if n == 1 else 'ies'} with no retrieved document: {what}"
    if kind == "truncated_rows":
        return f"{n} rows beyond the per-query depth limit: not evaluated"
    if kind == "unjudged_rows_removed":
        return f"{n} unjudged rows removed (judged-only)"
    total = fields["total"]
    if kind == "seen_rows_dropped":
        return f"exclude-seen: dropped {n:,} of {total:,} recommended rows whose item the user has in the training data"
    if kind == "absent_items":
        return f"{fields['head']}: {n:,} of {total:,} {fields['tail']}"
    empty = fields["empty"]
    if empty == "skip":
        return (
            f"empty=skip: {n:,} of {total:,} users with no relevant test item left out of the per-user "
            "measures (system-level measures count every user's list)"
        )
    return f"empty={empty}: {n:,} of {total:,} users with no relevant test item score {fields['fill']:g} on the relevance measures"


def python_wording(note: str) -> str:
    """The Python API's words for ``note`` (a :class:`Note`; any other text as it is): its parameters, not
    the command line's flags.

    >>> python_wording(Note("qrels_only_queries", 2, scored_zero=True)), python_wording("as it is")
    ("2 qrels queries with no retrieved document: scored 0 (missing='zero')", 'as it is')
    """
    if isinstance(note, Note):
        return note.prefix + _words(note.kind, note.count, note.fields, "python")
    return note


#: the kinds of :class:`Note`: run queries not in the qrels (field ``rows``), qrels queries without a retrieved
#: document (field ``scored_zero``), rows beyond the per-query depth limit, unjudged rows removed (judged-only);
#: and the counts "X of ``total``" of the recommender side tables: recommended rows dropped by exclude-seen,
#: recommended items absent from a side table (fields ``head``, ``tail``: the measure and what is absent) and
#: users with no relevant test item (fields ``empty``, ``fill``): :meth:`Note.counted` says which
NOTE_KINDS = (
    "run_only_queries", "qrels_only_queries", "truncated_rows", "unjudged_rows_removed", "seen_rows_dropped",
    "absent_items", "empty_users",
)

#: the kinds whose count is "X of ``total``" (blocks and Spark's buckets add both)
COUNTED_KINDS = ("seen_rows_dropped", "absent_items", "empty_users")


def alignment_note_data(
    run_only_queries: int,
    run_only_rows: int,
    qrels_only_queries: int,
    qrels_only_scored_zero: bool = False,
    truncated_rows: int = 0,
    removed_unjudged_rows: int = 0,
) -> list[Note]:
    """The notes of what joining a run to the qrels left out, as data (nothing is said of a count of 0).

    >>> alignment_note_data(2, 7, 1)
    [Note('run_only_queries', 2, rows=7), Note('qrels_only_queries', 1, scored_zero=False)]
    """
    out = []
    if run_only_queries:
        out.append(Note("run_only_queries", run_only_queries, rows=run_only_rows))
    if qrels_only_queries:
        out.append(Note("qrels_only_queries", qrels_only_queries, scored_zero=qrels_only_scored_zero))
    if truncated_rows:
        out.append(Note("truncated_rows", truncated_rows))
    if removed_unjudged_rows:
        out.append(Note("unjudged_rows_removed", removed_unjudged_rows))
    return out


def cli_wording(note: Note) -> str:
    """The command line's words for ``note`` (they name its flags): its text.

    >>> cli_wording(Note("qrels_only_queries", 3, scored_zero=True))
    "3 qrels queries with no retrieved document: scored 0 (query set 'qrels')"
    """
    return str.__str__(note)


def alignment_notes(*counts: int | bool) -> list[Note]:
    """The notes of what joining a run to the qrels left out (the engine's alignment and the compiled pass say
    them so): :func:`alignment_note_data` of the same arguments, each a ``str`` in the command line's words.

    >>> [str(n) for n in alignment_notes(2, 7, 1)]
    ['2 run queries (7 rows) not in the qrels: ignored', '1 qrels query with no retrieved document: skipped; use --missing zero (trec_eval -c) to count them as 0']
    """
    return alignment_note_data(*counts)  # type: ignore[arg-type]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest candidate, or ``""``.

    >>> did_you_mean("ndgc@10", ["nDCG@10", "P@10"])
    "; did you mean 'nDCG@10'?"
    """
    pool = list(candidates)
    lowered = {c.lower(): c for c in pool}
    import difflib  # (only when a name is wrong: importing it costs more than most evaluations)

    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean '{lowered[match[0]]}'?" if match else ""
