"""What a fusion method reads: the aligned, normalised runs of all queries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["Frame"]


@dataclass(frozen=True, eq=False)
class Frame:
    """What a method reads: normalised ``scores`` (candidates × runs, NaN where missing), ``bounds`` (each
    query's candidate rows) and, each computed on first use: ``ranks`` (by ``ranker``), ``candidates`` (per
    candidate: its query's number of candidates), ``retrieved`` (per candidate and run: how many documents the
    run retrieved for the query).

    >>> f = Frame(np.array([[0.5, np.nan], [0.2, 0.1]]), lambda s: np.array([[1.0, np.nan], [2.0, 1.0]]), np.array([0, 2]))
    >>> f.candidates.tolist(), f.retrieved.tolist(), f.by_rank(lambda r: 1.0 / r).tolist()
    ([2.0, 2.0], [[2.0, 1.0], [2.0, 1.0]], [1.0, 1.5])
    """

    scores: np.ndarray
    ranker: Callable[[np.ndarray], np.ndarray]
    bounds: np.ndarray
    #: one run's column of ``ranks`` (its index), so a method that reads each run's ranks once never holds them all
    column_ranker: Callable[[int], np.ndarray] | None = None
    #: combined many times (``optimise``'s trials): keep the whole ``ranks`` once computed instead
    reuse: bool = False

    @cached_property
    def ranks(self) -> np.ndarray:
        return self.ranker(self.scores)

    @cached_property
    def present(self) -> np.ndarray:
        return ~np.isnan(self.scores)

    def total(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Σ over the retrieving runs of the (weighted) scores, added one run after another as ranx adds them (so
        no ``filled`` matrix is built).

        >>> Frame(np.array([[0.5, np.nan], [0.25, 1.0]]), lambda s: s, np.array([0, 2])).total(np.array([2.0, 3.0])).tolist()
        [1.0, 3.5]
        """
        out = np.zeros(self.scores.shape[0])
        for i in range(self.scores.shape[1]):
            column = self.scores[:, i] if weights is None else weights[i] * self.scores[:, i]
            np.add(out, column, out=out, where=self.present[:, i])
        return out

    @property
    def count(self) -> np.ndarray:
        return self.present.sum(axis=1).astype(np.float64)

    @cached_property
    def candidates(self) -> np.ndarray:
        sizes = np.diff(self.bounds)
        return np.repeat(sizes, sizes).astype(np.float64)

    @cached_property
    def retrieved(self) -> np.ndarray:
        sizes = np.diff(self.bounds)
        out = np.zeros(self.scores.shape, order="F")
        for i in range(self.scores.shape[1] if sizes.size else 0):
            out[:, i] = np.repeat(np.add.reduceat(self.present[:, i], self.bounds[:-1]), sizes)
        return out

    def by_rank(self, value: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Σ over the retrieving runs of ``value(rank)`` (one run at a time: contiguous columns)."""
        out = np.zeros(self.scores.shape[0])
        with np.errstate(invalid="ignore"):  # (the ranks are NaN where a run lacks the candidate: not added)
            for i in range(self.scores.shape[1]):
                np.add(out, value(self.rank_column(i)), out=out, where=self.present[:, i])
        return out

    def rank_column(self, i: int) -> np.ndarray:
        """Run ``i``'s column of ``ranks`` (from the matrix if it was computed, else on its own)."""
        if "ranks" in self.__dict__ or self.column_ranker is None or self.reuse:
            return self.ranks[:, i]
        return self.column_ranker(i)
