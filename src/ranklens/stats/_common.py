"""Shared plumbing of the paired tests: input checks, the float tolerance, scipy import, seeded generators."""

from __future__ import annotations

from types import ModuleType

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError, MissingDependencyError
from ranklens.stats.lists import TIE_RTOL, check_level, check_samples, not_one_dimensional

__all__ = [
    "TIE_RTOL",
    "Seed",
    "check_level",
    "check_samples",
    "diffs",
    "is_tie",
    "paired",
    "rng",
    "rows_per_batch",
    "scipy_stats",
    "tolerance",
]

#: A seed for :func:`numpy.random.default_rng`: an int, a Generator, or ``None`` for fresh OS entropy.
Seed = int | np.random.Generator | None

def paired(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as float64 vectors of the same length, one value per query, all finite."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1:
        raise not_one_dimensional(x.shape, y.shape)
    if x.shape != y.shape:
        raise InputError(f"paired scores must cover the same queries; got {x.size} and {y.size} values")
    if x.size == 0:
        raise InputError("paired test on no query: the two systems have no query in common")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("paired scores must be finite numbers (found NaN or infinity)")
    return x, y


def tolerance(a: np.ndarray, b: np.ndarray) -> float:
    """The absolute tolerance on a per-query difference or a mean difference: ``1e-12 × max(1, max|score|)``."""
    scale = max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    return TIE_RTOL * scale


def diffs(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, float]:
    """The per-query differences ``a - b`` with differences within :func:`tolerance` set to exactly 0, and
    the tolerance."""
    x, y = paired(a, b)
    tol = tolerance(x, y)
    d = x - y
    d[np.abs(d) <= tol] = 0.0
    return d, tol


def is_tie(d: np.ndarray) -> bool:
    """True when every difference is zero (after :func:`diffs`): no evidence either way, p = 1."""
    return not bool(np.any(d))


def rng(seed: Seed) -> np.random.Generator:
    """``numpy.random.default_rng(seed)``; a Generator is used as is."""
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def scipy_stats() -> ModuleType:
    """``scipy.stats``, imported lazily; says how to install it when absent."""
    try:
        import scipy.stats
    except ImportError:
        raise MissingDependencyError("scipy", "stats", "significance testing") from None
    return scipy.stats


def scipy_special() -> ModuleType:
    """``scipy.special``, imported lazily (a fraction of ``scipy.stats``' import time: the t-test needs only
    its ``stdtr``/``stdtrit``, which ``scipy.stats.t`` calls); says how to install it when absent."""
    try:
        import scipy.special
    except ImportError:
        raise MissingDependencyError("scipy", "stats", "significance testing") from None
    return scipy.special


def rows_per_batch(width: int, budget: int = 1 << 20) -> int:
    """How many rows of ``width`` float64 values fit a ~8 MB working batch."""
    return max(1, budget // max(1, width))
