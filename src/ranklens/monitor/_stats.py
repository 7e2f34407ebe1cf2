"""The paired tests the monitor uses, from :mod:`ranklens.stats` (issue 4's ``compare`` tools).

A thin adapter: if ``ranklens.stats`` cannot be imported, Student's paired t-test from SciPy stands in, so
the monitor keeps working (the t-test gives the same p-value either way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Paired", "paired"]


@dataclass(frozen=True)
class Paired:
    """A paired comparison of ``a - b``: mean difference, its 95% interval and the test's p-value."""

    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    wins: int
    ties: int
    losses: int


def paired(a: np.ndarray, b: np.ndarray, test: str = "t", *, level: float = 0.95) -> Paired:
    """Compare per-query values ``a`` and ``b`` (aligned): mean of ``a - b``, t interval, ``test`` p-value.

    >>> r = paired(np.array([0.62, 0.41, 0.55, 0.70, 0.33]), np.array([0.58, 0.35, 0.56, 0.61, 0.30]))
    >>> r.n, round(r.mean_diff, 3), r.wins, r.losses
    (5, 0.042, 4, 1)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = a - b
    n = int(d.size)
    wins, ties, losses = int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
    mean = float(d.mean()) if n else math.nan
    try:
        from ranklens.stats import confidence_interval, paired_test
    except ImportError:  # pragma: no cover - ranklens.stats ships with ranklens
        p, low, high = _scipy_t(a, b, level)
        return Paired(n, mean, low, high, p, "t", wins, ties, losses)
    if n < 2:
        return Paired(n, mean, math.nan, math.nan, math.nan, test, wins, ties, losses)
    result = paired_test(a, b, test)
    ci = confidence_interval(a, b, "t", level=level)
    return Paired(n, mean, float(ci.low), float(ci.high), float(result.p_value), result.test, wins, ties, losses)


def _scipy_t(a: np.ndarray, b: np.ndarray, level: float) -> tuple[float, float, float]:  # pragma: no cover
    from scipy import stats

    d = a - b
    if d.size < 2 or np.all(d == d[0]):
        return (1.0 if d.size and d[0] == 0 else math.nan), float(d.mean()), float(d.mean())
    res = stats.ttest_rel(a, b)
    half = float(stats.t.ppf(0.5 + level / 2, d.size - 1)) * float(d.std(ddof=1)) / math.sqrt(d.size)
    return float(res.pvalue), float(d.mean()) - half, float(d.mean()) + half
