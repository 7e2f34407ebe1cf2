"""Cost–quality trade-off: which systems are Pareto-dominated."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError

__all__ = ["dominators", "front"]


def dominators(quality: ArrayLike, costs: ArrayLike) -> list[list[int]]:
    r"""For each system, the systems that dominate it (higher quality is better, lower cost is better).

    System j dominates i when :math:`Q_j \ge Q_i` and :math:`c_{jk} \le c_{ik}` for every cost k, with
    at least one strict inequality (Pareto 1906; e.g. Deb, *Multi-Objective Optimization*, 2001, §2.4).
    A system nobody dominates is on the Pareto front.

    Args:
        quality: one value per system.
        costs: a systems × costs matrix (or one value per system for a single cost).

    >>> dominators([0.50, 0.60, 0.55], [[10.0], [20.0], [30.0]])
    [[], [], [1]]
    """
    q = np.asarray(quality, dtype=np.float64).reshape(-1)
    c = np.asarray(costs, dtype=np.float64)
    if c.ndim == 1:
        c = c[:, None]
    if c.ndim != 2 or c.shape[0] != q.size:
        raise InputError(f"expected one row of costs per system ({q.size}); got shape {c.shape}")
    if not (np.isfinite(q).all() and np.isfinite(c).all()):
        raise InputError("quality and costs must be finite numbers")
    better_or_equal = (q[:, None] >= q[None, :]) & (c[:, None, :] <= c[None, :, :]).all(axis=2)  # [j, i]
    strictly = (q[:, None] > q[None, :]) | (c[:, None, :] < c[None, :, :]).any(axis=2)
    dom = better_or_equal & strictly
    return [np.flatnonzero(dom[:, i]).tolist() for i in range(q.size)]


def front(quality: Sequence[float], costs: ArrayLike) -> list[int]:
    """Indices of the non-dominated systems.

    >>> front([0.50, 0.60, 0.55], [10.0, 20.0, 30.0])
    [0, 1]
    """
    return [i for i, by in enumerate(dominators(quality, costs)) if not by]
