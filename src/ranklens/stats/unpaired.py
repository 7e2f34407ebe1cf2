"""Two independent samples (users split between two arms): Welch's t-test and interval, the Mann–Whitney U
test, the unpaired bootstrap, and the relative lift by the delta method."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError
from ranklens.stats._common import (
    Seed,
    check_level,
    check_samples,
    rng,
    rows_per_batch,
    scipy_special,
    scipy_stats,
)
from ranklens.stats.types import Interval, TestResult

__all__ = [
    "EXACT_U_MAX",
    "bootstrap_unpaired",
    "mann_whitney_test",
    "relative_lift",
    "samples_of",
    "welch_interval",
    "welch_moments",
    "welch_test",
]


#: The exact Mann–Whitney p-value is counted up to this many (n_a × n_b) values of U; beyond it (a group of at
#: most 8 against tens of thousands) the normal approximation is used, where scipy would still count exactly.
EXACT_U_MAX = 200_000


def samples_of(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as finite float64 vectors of at least two values each (their lengths may differ)."""
    x = np.asarray(a, dtype=np.float64).reshape(-1)
    y = np.asarray(b, dtype=np.float64).reshape(-1)
    for name, v in (("first", x), ("second", y)):
        if v.size < 2:
            raise InputError(f"an unpaired test needs at least 2 values per group; the {name} group has {v.size}")
        if not np.isfinite(v).all():
            raise InputError(f"the {name} group holds NaN or infinite values")
    return x, y


def welch_moments(
    mean_a: ArrayLike, var_a: ArrayLike, n_a: ArrayLike, mean_b: ArrayLike, var_b: ArrayLike, n_b: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Welch's statistic from group moments, vectorised: ``(t, df, se, p)`` of ``mean_a − mean_b``.

    .. math:: se^2 = \frac{s_a^2}{n_a} + \frac{s_b^2}{n_b},\quad t = \frac{\bar a - \bar b}{se},\quad
       \nu = \frac{se^4}{\frac{(s_a^2/n_a)^2}{n_a - 1} + \frac{(s_b^2/n_b)^2}{n_b - 1}}

    (Welch 1947, Biometrika 34:28–35; the Welch–Satterthwaite degrees of freedom); ``p = 2 F_ν(−|t|)``.
    The variances are the unbiased ones (``ddof=1``).

    >>> t, df, se, p = welch_moments(1.0, 1.0, 10, 0.0, 1.0, 10)
    >>> round(float(t), 4), round(float(df), 1), round(float(p), 4)
    (2.2361, 18.0, 0.0382)
    """
    ma, va, na = (np.asarray(v, dtype=np.float64) for v in (mean_a, var_a, n_a))
    mb, vb, nb = (np.asarray(v, dtype=np.float64) for v in (mean_b, var_b, n_b))
    qa, qb = va / na, vb / nb
    se2 = qa + qb
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(se2)
        diff = ma - mb
        t = np.where(se2 > 0, diff / se, np.where(diff == 0, 0.0, np.copysign(np.inf, diff)))
        df = se2**2 / (qa**2 / (na - 1) + qb**2 / (nb - 1))
        p = np.where(np.isinf(t), 0.0, 2.0 * scipy_special().stdtr(np.where(np.isfinite(df), df, 1.0), -np.abs(t)))
        p = np.where(se2 > 0, p, np.where(diff == 0, 1.0, 0.0))
    return t, df, se, np.minimum(1.0, p)


def welch_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Welch's unequal-variance t-test of ``mean(a) − mean(b)`` (two-sided), as
    ``scipy.stats.ttest_ind(a, b, equal_var=False)``. ``n`` is the total number of values.

    >>> r = welch_test([0.9, 0.7, 0.8, 0.6], [0.5, 0.4, 0.6, 0.3, 0.5])
    >>> round(r.statistic, 4), round(r.p_value, 5)
    (3.5254, 0.01202)
    """
    x, y = samples_of(a, b)
    t, _, _, p = welch_moments(x.mean(), x.var(ddof=1), x.size, y.mean(), y.var(ddof=1), y.size)
    return TestResult("welch", float(t), float(p), int(x.size + y.size))


def welch_interval(a: ArrayLike, b: ArrayLike, *, level: float = 0.95) -> Interval:
    r"""Welch's confidence interval of ``mean(a) − mean(b)``: :math:`\bar a - \bar b \pm t_{(1+level)/2,\nu}\,se`.

    >>> ci = welch_interval([0.9, 0.7, 0.8, 0.6], [0.5, 0.4, 0.6, 0.3, 0.5])
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0897, 0.4903)
    """
    level = check_level(level)
    x, y = samples_of(a, b)
    _, df, se, _ = welch_moments(x.mean(), x.var(ddof=1), x.size, y.mean(), y.var(ddof=1), y.size)
    diff = float(x.mean() - y.mean())
    if float(se) == 0.0:
        return Interval(diff, diff, level, "welch")
    half = float(scipy_special().stdtrit(float(df), 0.5 + level / 2.0)) * float(se)
    return Interval(diff - half, diff + half, level, "welch")


def mann_whitney_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    r"""Two-sided Mann–Whitney U test (Wilcoxon rank-sum) of ``a`` against ``b``.

    :math:`U_a = R_a - n_a(n_a+1)/2` with :math:`R_a` the sum of the mid-ranks of ``a`` in the pooled sample.
    When either group is smaller than 9, no value is tied and :math:`n_a n_b \le` :data:`EXACT_U_MAX`, the
    p-value is exact (the null distribution of
    U counted by recursion, Mann & Whitney 1947); otherwise it is the normal approximation with the tie
    correction of the variance and a continuity correction of ½:

    .. math:: z = \frac{|U_a - n_a n_b/2| - 1/2}{\sqrt{\frac{n_a n_b}{12}\bigl(n + 1 - \frac{\sum_k (t_k^3 - t_k)}{n(n-1)}\bigr)}}

    — ``scipy.stats.mannwhitneyu``'s defaults (``method="auto"``, ``use_continuity=True``). The statistic is
    :math:`U_a`.

    >>> r = mann_whitney_test([0.9, 0.7, 0.8, 0.6], [0.5, 0.4, 0.6, 0.3, 0.5])
    >>> r.statistic, round(r.p_value, 5)
    (19.5, 0.02621)
    """
    x, y = samples_of(a, b)
    na, nb = x.size, y.size
    ranks = scipy_stats().rankdata(np.concatenate([x, y]))
    u = float(ranks[:na].sum() - na * (na + 1) / 2.0)
    _, counts = np.unique(np.concatenate([x, y]), return_counts=True)
    ties = bool(np.any(counts > 1))
    if min(na, nb) <= 8 and not ties and na * nb <= EXACT_U_MAX:
        return TestResult("mannwhitney", u, _exact_u_p(u, na, nb), na + nb)
    n = na + nb
    mu = na * nb / 2.0
    tie_term = float((counts.astype(np.float64) ** 3 - counts).sum()) / (n * (n - 1))
    sigma = math.sqrt(na * nb / 12.0 * ((n + 1) - tie_term))
    if sigma == 0.0:
        return TestResult("mannwhitney", u, 1.0, n)
    z = (abs(u - mu) - 0.5) / sigma
    p = float(2.0 * scipy_special().ndtr(-z))
    return TestResult("mannwhitney", u, min(1.0, max(p, 0.0)), n)


def _exact_u_p(u: float, na: int, nb: int) -> float:
    r"""Two-sided exact p-value of U without ties: ``2 min(P(U ≤ u), P(U ≥ u))`` capped at 1. The counts of
    arrangements with each U are the coefficients of the Gaussian binomial
    :math:`\binom{n_a+n_b}{m}_q = \prod_{i=1}^{m} \frac{1 - q^{M+i}}{1 - q^{i}}` (m, M the smaller and
    larger group size), computed exactly in integers."""
    m, big = min(na, nb), max(na, nb)
    poly = np.zeros(m * big + 1, dtype=object)
    poly[0] = 1
    for i in range(1, m + 1):
        shifted = np.zeros_like(poly)
        shifted[big + i :] = poly[: poly.size - big - i]
        poly = poly - shifted  # × (1 − q^(M+i))
        for r in range(i):  # ÷ (1 − q^i): a running sum with stride i
            poly[r::i] = np.cumsum(poly[r::i])
    total = math.comb(na + nb, m)
    k = round(u)
    low, high = int(poly[: k + 1].sum()), int(poly[k:].sum())
    return min(1.0, 2.0 * min(low, high) / total)


def bootstrap_unpaired(
    a: ArrayLike, b: ArrayLike, *, level: float = 0.95, samples: int = 10_000, seed: Seed = 0
) -> tuple[Interval, TestResult]:
    r"""The unpaired bootstrap of ``mean(a) − mean(b)``: each group resampled with replacement on its own.

    The interval is the percentile interval of the resampled differences; the test is the bootstrap of
    Welch's statistic under the null (each group shifted to the pooled mean, Efron & Tibshirani 1993 §16.2,
    Algorithm 16.2), ``p = (#{|t*| ≥ |t|} + 1)/(B + 1)``.

    >>> ci, r = bootstrap_unpaired([0.9, 0.7, 0.8, 0.6, 0.75], [0.5, 0.4, 0.6, 0.3, 0.5], seed=3)
    >>> ci.low > 0, r.p_value < 0.05, r.samples
    (True, True, 10000)
    """
    level = check_level(level)
    samples = check_samples(samples)
    x, y = samples_of(a, b)
    gen = rng(seed)
    diff = float(x.mean() - y.mean())
    t_obs = abs(float(welch_moments(x.mean(), x.var(ddof=1), x.size, y.mean(), y.var(ddof=1), y.size)[0]))
    pooled = float(np.concatenate([x, y]).mean())
    xs, ys = x - x.mean() + pooled, y - y.mean() + pooled
    diffs: list[np.ndarray] = []
    count = 0
    step = rows_per_batch(x.size + y.size)
    for start in range(0, samples, step):
        k = min(step, samples - start)
        ix = gen.integers(0, x.size, size=(k, x.size))
        iy = gen.integers(0, y.size, size=(k, y.size))
        diffs.append(x[ix].mean(axis=1) - y[iy].mean(axis=1))
        sx, sy = xs[ix], ys[iy]
        t_star = welch_moments(sx.mean(1), sx.var(1, ddof=1), x.size, sy.mean(1), sy.var(1, ddof=1), y.size)[0]
        count += int(np.count_nonzero(np.abs(t_star) >= t_obs * (1.0 - 1e-12)))
    low, high = np.quantile(np.concatenate(diffs), [0.5 - level / 2.0, 0.5 + level / 2.0])
    p = 1.0 if t_obs == 0.0 else (count + 1) / (samples + 1)
    return Interval(float(low), float(high), level, "bootstrap"), TestResult("bootstrap", diff, p, x.size + y.size, samples)


def relative_lift(treatment: ArrayLike, control: ArrayLike, *, level: float = 0.95) -> tuple[float, float, float]:
    r"""The relative lift ``mean(treatment)/mean(control) − 1`` and its interval by the delta method.

    For independent groups, :math:`\operatorname{Var}(\bar t/\bar c) \approx
    \frac{1}{\bar c^2}\frac{s_t^2}{n_t} + \frac{\bar t^2}{\bar c^4}\frac{s_c^2}{n_c}` (the first-order Taylor
    expansion of the ratio; Deng, Knoblich & Lu, KDD 2018, "Applying the delta method in metric analytics",
    §3); the interval is the lift ± :math:`z_{(1+level)/2}` standard errors. NaN when the control mean is 0.

    >>> lift, low, high = relative_lift([0.9, 0.7, 0.8, 0.6], [0.5, 0.4, 0.6, 0.3, 0.5])
    >>> round(lift, 4), round(low, 3), round(high, 3)
    (0.6304, 0.182, 1.079)
    """
    level = check_level(level)
    t, c = samples_of(treatment, control)
    mt, mc = float(t.mean()), float(c.mean())
    if mc == 0.0:
        return math.nan, math.nan, math.nan
    var = t.var(ddof=1) / t.size / mc**2 + mt**2 * c.var(ddof=1) / c.size / mc**4
    z = float(scipy_special().ndtri(0.5 + level / 2.0))
    lift = mt / mc - 1.0
    half = z * math.sqrt(float(var))
    return lift, lift - half, lift + half
