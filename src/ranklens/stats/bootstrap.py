"""The paired bootstrap: percentile interval of the mean difference and Sakai's studentised shifted test."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from ranklens.stats._common import Seed, check_level, check_samples, diffs, is_tie, rng, rows_per_batch
from ranklens.stats.types import Interval, TestResult

__all__ = ["bootstrap_interval", "bootstrap_means", "bootstrap_test"]


def resample_indices(n: int, samples: int, seed: Seed) -> Iterator[np.ndarray]:
    """Batches of bootstrap resamples: rows of ``n`` query indices drawn with replacement from
    ``numpy.random.default_rng(seed)``. The same seed gives the same resamples to the interval and the test."""
    generator = rng(seed)
    step = rows_per_batch(n)
    for start in range(0, samples, step):
        yield generator.integers(0, n, size=(min(step, samples - start), n))


def bootstrap_means(a: ArrayLike, b: ArrayLike, *, samples: int = 10_000, seed: Seed = 0) -> np.ndarray:
    """The ``samples`` bootstrap replicates of the mean paired difference ``a - b``."""
    samples = check_samples(samples)
    d, _ = diffs(a, b)
    return np.concatenate([d[idx].mean(axis=1) for idx in resample_indices(d.size, samples, seed)])


def bootstrap_interval(
    a: ArrayLike, b: ArrayLike, *, level: float = 0.95, samples: int = 10_000, seed: Seed = 0
) -> Interval:
    r"""Percentile bootstrap confidence interval of the mean paired difference ``a - b``.

    Resample the n queries with replacement B = ``samples`` times, take the mean difference
    :math:`\bar d^*_b` of each resample, and report its :math:`(1-\text{level})/2` and
    :math:`(1+\text{level})/2` quantiles (Efron & Tibshirani 1993, ch. 13; METRICS.md §8.2).
    Reproducible for a given ``seed``.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> ci = bootstrap_interval(a, b, seed=7)
    >>> ci.low < 0.041 < ci.high, ci == bootstrap_interval(a, b, seed=7)
    (True, True)
    """
    level = check_level(level)
    means = bootstrap_means(a, b, samples=samples, seed=seed)
    low, high = np.quantile(means, [0.5 - level / 2.0, 0.5 + level / 2.0])
    return Interval(float(low), float(high), level, "bootstrap")


def bootstrap_test(a: ArrayLike, b: ArrayLike, *, samples: int = 10_000, seed: Seed = 0) -> TestResult:
    r"""Sakai's paired bootstrap test (studentised, null-shifted) of the mean difference ``a - b``.

    Shift the differences to the null, :math:`z_q = d_q - \bar d`; for each of B resamples
    :math:`z^*` compute :math:`t^* = \bar z^*/(s_{z^*}/\sqrt n)`; then
    :math:`\hat p = (\#\{|t^*| \ge |t_{obs}|\} + 1)/(B + 1)` with :math:`t_{obs} = \bar d/(s_d/\sqrt n)`.
    (Sakai, SIGIR 2006 "Evaluating evaluation metrics based on the bootstrap"; Efron & Tibshirani 1993
    §16.4; METRICS.md §8.2. The +1 keeps the Monte Carlo p-value valid, as for the randomisation test.)
    A resample with zero spread has :math:`|t^*| = \infty` unless its mean is 0.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> r = bootstrap_test(a, b, seed=7)
    >>> r.p_value < 0.02, r.p_value == bootstrap_test(b, a, seed=7).p_value
    (True, True)
    """
    samples = check_samples(samples)
    d, tol = diffs(a, b)
    n = d.size
    if is_tie(d):
        return TestResult("bootstrap", 0.0, 1.0, n, samples)
    if n < 2:
        return TestResult("bootstrap", math.nan, math.nan, n, samples)
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if sd == 0.0:
        return TestResult("bootstrap", math.copysign(math.inf, mean), 1.0 / (samples + 1), n, samples)
    t_obs = abs(mean / (sd / math.sqrt(n)))
    z = d - mean
    count = 0
    for idx in resample_indices(n, samples, seed):
        t_star = _studentised(z[idx], tol)
        count += int(np.count_nonzero(t_star >= t_obs * (1.0 - 1e-12)))
    return TestResult("bootstrap", mean / (sd / math.sqrt(n)), (count + 1) / (samples + 1), n, samples)


def _studentised(rows: np.ndarray, tol: float) -> np.ndarray:
    """``|mean / (sd / sqrt n)|`` of each row; ``inf`` for a constant non-zero row, 0 for a zero row."""
    n = rows.shape[1]
    means = rows.mean(axis=1)
    sds = rows.std(axis=1, ddof=1)
    out = np.where(np.abs(means) > tol, np.inf, 0.0)
    spread = sds > tol
    out[spread] = np.abs(means[spread]) / (sds[spread] / math.sqrt(n))
    return out
