"""What a fusion method reads: the aligned, normalised runs of all queries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["Frame"]


@dataclass(frozen=True, eq=False)
class Frame:
    """What a method reads: normalised ``scores`` and ``ranks`` (candidates × runs, NaN where missing; the
    ranks computed on first use, by ``ranker``), ``candidates`` (per candidate: its query's number of
    candidates), ``retrieved`` (per candidate and run: how many documents the run retrieved for the query),
    ``bounds`` (each query's candidate rows)."""

    scores: np.ndarray
    ranker: Callable[[np.ndarray], np.ndarray]
    candidates: np.ndarray
    retrieved: np.ndarray
    bounds: np.ndarray

    @cached_property
    def ranks(self) -> np.ndarray:
        return self.ranker(self.scores)

    @property
    def present(self) -> np.ndarray:
        return ~np.isnan(self.scores)

    @property
    def filled(self) -> np.ndarray:
        return np.where(self.present, self.scores, 0.0)

    @property
    def count(self) -> np.ndarray:
        return self.present.sum(axis=1).astype(np.float64)

    def by_rank(self, value: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Σ over the retrieving runs of ``value(rank)``."""
        ranks = np.where(self.present, self.ranks, 1.0)
        return np.where(self.present, value(ranks), 0.0).sum(axis=1)  # type: ignore[no-any-return]
