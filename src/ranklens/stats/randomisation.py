"""Fisher's randomisation (permutation) test of a paired difference: exact or Monte Carlo, vectorised."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError
from ranklens.stats._common import Seed, check_samples, diffs, is_tie, rng, rows_per_batch
from ranklens.stats.types import TestResult

__all__ = ["EXACT_MAX_N", "randomisation_test"]

#: Up to this many queries the test enumerates all 2^n sign vectors (2^19 distinct |sums| at n = 20).
EXACT_MAX_N = 20


def randomisation_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    samples: int = 10_000,
    exact_max_n: int = EXACT_MAX_N,
    seed: Seed = 0,
) -> TestResult:
    r"""Two-sided Fisher randomisation test of the mean paired difference ``a - b``.

    Under H0 the labels A and B are exchangeable within each query, so each :math:`d_q` flips its sign
    with probability ½. The statistic is :math:`T = |\bar d|`.

    * exact (``n <= exact_max_n``): :math:`p = \#\{s \in \{\pm1\}^n : |\overline{s \circ d}| \ge |\bar d| - \epsilon\}/2^n`;
    * Monte Carlo otherwise, with ``samples`` = B random sign vectors drawn from
      ``numpy.random.default_rng(seed)``: :math:`\hat p = (\#\{\ge\} + 1)/(B + 1)` (never 0; Phipson &
      Smyth 2010).

    The tolerance :math:`\epsilon = 10^{-12}\max(1, \max|score|)` counts sign vectors whose mean equals the
    observed one mathematically but differs in the last ulp (METRICS.md §8.2: 10/1024, not 8/1024, on the
    §8.3 data). Fisher 1935; Smucker, Allan & Carterette, CIKM 2007.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> r = randomisation_test(a, b)
    >>> r.p_value * 1024, r.samples is None
    (10.0, True)
    """
    samples = check_samples(samples)
    if exact_max_n < 0 or exact_max_n > 30:
        raise InputError(f"exact_max_n must be between 0 and 30 (2^n sign vectors); got {exact_max_n}")
    d, tol = diffs(a, b)
    n = d.size
    mean = float(d.mean())
    if is_tie(d):
        return TestResult("randomisation", 0.0, 1.0, n, None if n <= exact_max_n else samples)
    threshold = abs(float(d.sum())) - tol * n
    if n <= exact_max_n:
        # s and -s give the same |sum|: fix the first sign and enumerate the other 2^(n-1).
        total = 1 << (n - 1)
        count = sum(int(np.count_nonzero(np.abs(s) >= threshold)) for s in _exact_sums(d))
        return TestResult("randomisation", mean, count / total, n)
    generator = rng(seed)
    count = sum(int(np.count_nonzero(np.abs(s) >= threshold)) for s in _random_sums(d, samples, generator))
    return TestResult("randomisation", mean, (count + 1) / (samples + 1), n, samples)


def _exact_sums(d: np.ndarray) -> Iterator[np.ndarray]:
    """``s · d`` for every sign vector with ``s[0] = +1``, in batches."""
    n = d.size
    total = 1 << (n - 1)
    shifts = np.arange(n - 1, dtype=np.int64)
    step = rows_per_batch(n)
    for start in range(0, total, step):
        codes = np.arange(start, min(total, start + step), dtype=np.int64)
        bits = ((codes[:, None] >> shifts) & 1).astype(np.float64)  # 1 = flipped
        yield d[0] + d[1:].sum() - 2.0 * (bits @ d[1:])


def _random_sums(d: np.ndarray, samples: int, generator: np.random.Generator) -> Iterator[np.ndarray]:
    """``s · d`` for ``samples`` uniformly random sign vectors, in batches (a B × n sign-flip matrix each)."""
    n = d.size
    total = float(d.sum())
    step = rows_per_batch(n)
    for start in range(0, samples, step):
        rows = min(step, samples - start)
        bits = generator.integers(0, 2, size=(rows, n), dtype=np.int8).astype(np.float64)
        yield total - 2.0 * (bits @ d)
