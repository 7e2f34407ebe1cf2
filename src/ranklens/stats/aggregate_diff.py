r"""Paired inference on the difference of a median (or another percentile, the minimum, the maximum) of two
systems' per-query scores: :math:`\theta = Q(a) - Q(b)`, the statistic ``compare`` shows for a measure
aggregated by ``agg=median`` (``--aggregate median``).

Why these two procedures (docs/compare.md, "Medians and percentiles"): the t-test, Sakai's bootstrap test and
the t interval are statements about the mean; the sign test is about the median of the per-query
*differences* and Wilcoxon's about their pseudo-median (Hodges–Lehmann), neither of which is the change of
the median shown. Fisher's randomisation test takes any statistic: under H0 the two systems' scores are
exchangeable within each query, so swapping them query by query gives the null distribution of
:math:`Q(a) - Q(b)` itself (Fisher 1935; Smucker, Allan & Carterette, CIKM 2007). The interval is the
percentile bootstrap of the same statistic, resampling queries with their pair (Efron & Tibshirani 1993,
ch. 13).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError
from ranklens.stats._common import Seed, check_level, check_samples, paired, rng, rows_per_batch, tolerance
from ranklens.stats.bootstrap import resample_indices
from ranklens.stats.randomisation import EXACT_MAX_N
from ranklens.stats.types import Interval, TestResult

__all__ = ["aggregate_bootstrap_interval", "aggregate_of", "aggregate_randomisation_test"]


def aggregate_of(values: np.ndarray, agg: str) -> np.ndarray:
    """``agg`` (``median``, ``pNN``, ``min``, ``max``; numpy's linear percentile) of ``values`` along the last
    axis: the aggregate :func:`ranklens.evaluate` reports for ``agg=``.

    >>> float(aggregate_of(np.array([0.1, 0.9, 0.4]), "median")), float(aggregate_of(np.array([1.0, 3.0]), "p25"))
    (0.4, 1.5)
    """
    if agg == "min":
        return np.min(values, axis=-1)
    if agg == "max":
        return np.max(values, axis=-1)
    if agg == "median":
        return np.percentile(values, 50.0, axis=-1)
    if agg.startswith("p") and agg[1:].isdigit() and 0 <= int(agg[1:]) <= 100:
        return np.percentile(values, float(agg[1:]), axis=-1)
    raise InputError(f"unknown aggregate {agg!r}; expected median, pNN (0–100), min or max")


def aggregate_randomisation_test(
    a: ArrayLike,
    b: ArrayLike,
    agg: str = "median",
    *,
    samples: int = 10_000,
    exact_max_n: int = EXACT_MAX_N,
    seed: Seed = 0,
) -> TestResult:
    r"""Two-sided paired randomisation test of :math:`T = Q(a) - Q(b)`, ``Q`` the ``agg`` of the scores.

    Each query's two scores are swapped with probability ½; :math:`p = P(|T^*| \ge |T|)`, exact over all
    :math:`2^n` swaps up to ``exact_max_n`` queries (swapping every query negates :math:`T`, so half of them
    are enumerated), else :math:`(\#\{\ge\} + 1)/(B + 1)` over ``samples`` random swaps. Equal statistics
    within :math:`10^{-12}\max(1, \max|score|)` count as equal. ``statistic`` is :math:`T`.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> r = aggregate_randomisation_test(a, b, "median")
    >>> round(r.statistic, 3), round(r.p_value, 4), r.samples is None
    (0.02, 0.75, True)
    """
    samples = check_samples(samples)
    if exact_max_n < 0 or exact_max_n > 30:
        raise InputError(f"exact_max_n must be between 0 and 30 (2^n swaps); got {exact_max_n}")
    x, y = paired(a, b)
    tol = tolerance(x, y)
    n = x.size
    observed = float(aggregate_of(x, agg) - aggregate_of(y, agg))
    if abs(observed) <= tol:
        return TestResult("randomisation", observed, 1.0, n, None if n <= exact_max_n else samples)
    threshold = abs(observed) - tol
    if n <= exact_max_n:
        count = sum(int(np.count_nonzero(np.abs(t) >= threshold)) for t in _exact(x, y, agg))
        return TestResult("randomisation", observed, count / (1 << (n - 1)), n)
    generator = rng(seed)
    count = sum(int(np.count_nonzero(np.abs(t) >= threshold)) for t in _random(x, y, agg, samples, generator))
    return TestResult("randomisation", observed, (count + 1) / (samples + 1), n, samples)


def aggregate_bootstrap_interval(
    a: ArrayLike, b: ArrayLike, agg: str = "median", *, level: float = 0.95, samples: int = 10_000, seed: Seed = 0
) -> Interval:
    r"""Percentile bootstrap interval of :math:`Q(a) - Q(b)`: resample the queries (each with both its scores)
    ``samples`` times and take the :math:`(1 \mp \text{level})/2` quantiles of the replicates.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> ci = aggregate_bootstrap_interval(a, b, "median", seed=7)
    >>> ci.low < 0.02 < ci.high, ci.method
    (True, 'bootstrap')
    """
    level = check_level(level)
    samples = check_samples(samples)
    x, y = paired(a, b)
    reps = np.concatenate(
        [aggregate_of(x[idx], agg) - aggregate_of(y[idx], agg) for idx in resample_indices(x.size, samples, seed)]
    )
    low, high = np.quantile(reps, [0.5 - level / 2.0, 0.5 + level / 2.0])
    return Interval(float(low), float(high), level, "bootstrap")


def _exact(x: np.ndarray, y: np.ndarray, agg: str) -> Iterator[np.ndarray]:
    """``T`` for every swap vector that leaves query 0 unswapped, in batches."""
    n = x.size
    total = 1 << (n - 1)
    shifts = np.arange(n - 1, dtype=np.int64)
    step = rows_per_batch(2 * n)
    for start in range(0, total, step):
        codes = np.arange(start, min(total, start + step), dtype=np.int64)
        swap = np.zeros((codes.size, n), dtype=bool)
        swap[:, 1:] = ((codes[:, None] >> shifts) & 1).astype(bool)
        yield _statistic(x, y, swap, agg)


def _random(x: np.ndarray, y: np.ndarray, agg: str, samples: int, generator: np.random.Generator) -> Iterator[np.ndarray]:
    """``T`` for ``samples`` uniformly random swap vectors, in batches."""
    n = x.size
    step = rows_per_batch(2 * n)
    for start in range(0, samples, step):
        swap = generator.integers(0, 2, size=(min(step, samples - start), n), dtype=np.int8).astype(bool)
        yield _statistic(x, y, swap, agg)


def _statistic(x: np.ndarray, y: np.ndarray, swap: np.ndarray, agg: str) -> np.ndarray:
    return aggregate_of(np.where(swap, y, x), agg) - aggregate_of(np.where(swap, x, y), agg)
