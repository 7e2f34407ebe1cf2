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
    from collections.abc import Iterable

__all__ = [
    "DuplicateError",
    "FormatError",
    "InputError",
    "MeasureError",
    "MissingDependencyError",
    "NotGroupedError",
    "QuerySetError",
    "RanklensError",
    "RanklensWarning",
    "alignment_notes",
    "did_you_mean",
    "warn_notes",
]


class RanklensError(Exception):
    """Base class of every error ranklens raises on purpose."""


class InputError(RanklensError, ValueError):
    """The data or the arguments given are wrong."""


class FormatError(InputError):
    """A file or frame does not match its format.

    The message names the source, the line (1-based) when known, what was expected and what was found.
    """

    def __init__(self, source: str, message: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.detail = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


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
    for note in notes:
        warnings.warn(f"{prefix}{note}", RanklensWarning, stacklevel=level)


def alignment_notes(
    run_only_queries: int,
    run_only_rows: int,
    qrels_only_queries: int,
    qrels_only_scored_zero: bool = False,
    truncated_rows: int = 0,
    removed_unjudged_rows: int = 0,
) -> list[str]:
    """The notes of what joining a run to the qrels left out (the engine's alignment and the express path
    say them in these words).

    >>> alignment_notes(2, 7, 1)
    ['2 run queries (7 rows) not in the qrels: ignored', '1 qrels query with no retrieved document: skipped; use --missing zero (trec_eval -c) to count them as 0']
    """
    out = []
    if run_only_queries:
        out.append(
            f"{run_only_queries} run quer{'y' if run_only_queries == 1 else 'ies'} "
            f"({run_only_rows} rows) not in the qrels: ignored"
        )
    if qrels_only_queries:
        what = "scored 0 (query set 'qrels')" if qrels_only_scored_zero else (
            "skipped; use --missing zero (trec_eval -c) to count them as 0"
        )
        out.append(
            f"{qrels_only_queries} qrels quer{'y' if qrels_only_queries == 1 else 'ies'} "
            f"with no retrieved document: {what}"
        )
    if truncated_rows:
        out.append(f"{truncated_rows} rows beyond the per-query depth limit: not evaluated")
    if removed_unjudged_rows:
        out.append(f"{removed_unjudged_rows} unjudged rows removed (judged-only)")
    return out


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
