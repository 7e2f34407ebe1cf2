"""What a trec_eval invocation prints, before it is printed: :class:`QueryValues` (one entry per evaluated
query for every printed column), whichever backend computed them (the reference kernels of :mod:`.compute`, or
the compiled pass for the measures it declares, :mod:`.runner`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["QueryValues"]


@dataclass(frozen=True)
class QueryValues:
    """The values of every printed column, one entry per evaluated query (``query_ids`` order).

    ``numbers`` maps a printed name to a float64 vector; ``texts`` maps a ``relstring`` column to its
    strings. ``placeholder`` marks the queries evaluated against the placeholder document (``-c``).
    """

    query_ids: list[str]
    numbers: dict[str, np.ndarray] = field(default_factory=dict)
    texts: dict[str, list[str]] = field(default_factory=dict)
    placeholder: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    logged: frozenset[str] = frozenset()
    """geometric-mean columns already holding ``log(max(v, 1e-5))`` (``-Z``; see :mod:`.zscores`)"""
