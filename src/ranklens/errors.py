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

The CLI turns every :class:`RanklensError` into a one-line message and exit status 2.
"""

from __future__ import annotations

import difflib
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
    "did_you_mean",
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


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest candidate, or ``""``.

    >>> did_you_mean("ndgc@10", ["nDCG@10", "P@10"])
    "; did you mean 'nDCG@10'?"
    """
    pool = list(candidates)
    lowered = {c.lower(): c for c in pool}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean '{lowered[match[0]]}'?" if match else ""
