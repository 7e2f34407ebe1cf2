"""What a trec_eval invocation prints, before it is printed: :class:`QueryValues` (one entry per evaluated
query for every printed column), whichever backend computed them (the reference kernels of :mod:`.compute`, or
the compiled pass for the measures it declares, :mod:`.runner`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: the compiled path prints without numpy)
    import numpy as np

__all__ = ["QueryValues", "floats"]



class QueryValues(NamedTuple):
    """The values of every printed column, one entry per evaluated query (``query_ids`` order).

    ``numbers`` maps a printed name to a float64 vector (the reference) or a list of floats (the compiled
    pass); ``texts`` maps a ``relstring`` column to its strings. ``placeholder`` marks the queries evaluated
    against the placeholder document (``-c``; empty when the compiled pass computed every column).
    """

    query_ids: list[str]
    numbers: Mapping[str, np.ndarray | Sequence[float]] = MappingProxyType({})
    texts: Mapping[str, list[str]] = MappingProxyType({})
    placeholder: np.ndarray | Sequence[bool] = ()
    logged: frozenset[str] = frozenset()
    """geometric-mean columns already holding ``log(max(v, 1e-5))`` (``-Z``; see :mod:`.zscores`)"""


def floats(column: np.ndarray | Sequence[float]) -> list[float]:
    """A printed column's values as a list of Python floats, whichever backend computed them.

    >>> floats([0.5, 1.0]), floats(())
    ([0.5, 1.0], [])
    """
    tolist = getattr(column, "tolist", None)
    return tolist() if tolist is not None else list(column)  # type: ignore[no-any-return]
