"""What a trec_eval invocation prints, before it is printed: :class:`QueryValues` (one entry per evaluated
query for every printed column), whichever backend computed them (the reference kernels of :mod:`.compute`, or
the compiled pass for the measures it declares, :mod:`.runner`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["QueryValues", "floats"]


@dataclass(frozen=True)
class QueryValues:
    """The values of every printed column, one entry per evaluated query (``query_ids`` order).

    ``numbers`` maps a printed name to its values: a float64 vector of the reference kernels, or a list of
    floats of the compiled pass (no numpy: ``trec-eval`` on its measures imports none; :func:`floats` reads
    either); ``texts`` maps a ``relstring`` column to its strings. ``placeholder`` marks the queries
    evaluated against the placeholder document (``-c``), a boolean vector or list.
    """

    query_ids: list[str]
    numbers: dict[str, Any] = field(default_factory=dict)  # (a numpy vector or a list of floats)
    texts: dict[str, list[str]] = field(default_factory=dict)
    placeholder: Any = ()  # (a numpy boolean vector or a list of booleans)
    logged: frozenset[str] = frozenset()
    """geometric-mean columns already holding ``log(max(v, 1e-5))`` (``-Z``; see :mod:`.zscores`)"""


def floats(column: Sequence[float]) -> list[float]:
    """A column of :attr:`QueryValues.numbers` as a list of floats (a numpy vector's ``tolist()``)."""
    tolist = getattr(column, "tolist", None)
    return tolist() if tolist is not None else list(column)  # type: ignore[no-any-return]
