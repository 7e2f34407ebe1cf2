"""Student's paired t-test and the t confidence interval of the mean difference."""

from __future__ import annotations

import math

from ranklens.stats.lists import check_level, diff_list
from ranklens.stats.student_t import t_isf, t_sf
from ranklens.stats.sums import np_mean, np_std
from ranklens.stats.types import Interval, TestResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["paired_t_test", "t_interval"]


def paired_t_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    r"""Two-sided paired t-test of the mean per-query difference ``a - b``.

    .. math:: d_q = a_q - b_q,\quad t = \frac{\bar d}{s_d/\sqrt n},\quad p = 2\,(1 - F_{t,n-1}(|t|))

    (Student 1908; METRICS.md §8.2.) Identical systems give t = 0 and p = 1; a constant non-zero
    difference gives t = ±inf and p = 0; fewer than two queries give NaN.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> r = paired_t_test(a, b)
    >>> round(r.statistic, 6), round(r.p_value, 6)
    (3.797671, 0.004232)
    """
    d, _ = diff_list(a, b)  # (pure Python, numpy's floats: stats.sums)
    n = len(d)
    if not any(d):
        return TestResult("t", 0.0, 1.0, n)
    if n < 2:
        return TestResult("t", math.nan, math.nan, n)
    mean = np_mean(d)
    sd = np_std(d, ddof=1)
    if sd == 0.0:
        return TestResult("t", math.copysign(math.inf, mean), 0.0, n)
    t = mean / (sd / math.sqrt(n))
    tail = t_sf(abs(t), n - 1)  # (pure Python; scipy beyond its domain)
    if tail is None:
        from ranklens.stats._common import scipy_special

        tail = float(scipy_special().stdtr(n - 1, -abs(t)))
    p = 2.0 * tail  # = scipy.stats.t.sf(|t|, n - 1)
    return TestResult("t", t, min(1.0, p), n)


def t_interval(a: ArrayLike, b: ArrayLike, *, level: float = 0.95) -> Interval:
    r"""Student-t confidence interval of the mean paired difference ``a - b``.

    .. math:: \bar d \pm t_{(1+\text{level})/2,\,n-1}\; s_d/\sqrt n

    (METRICS.md §8.2.) The interval excludes 0 exactly when :func:`paired_t_test` gives
    ``p < 1 - level``. With one query the interval is unbounded (NaN).

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> ci = t_interval(a, b)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0166, 0.0654)
    """
    level = check_level(level)
    d, _ = diff_list(a, b)
    n = len(d)
    mean = np_mean(d)
    if not any(d):
        return Interval(0.0, 0.0, level, "t")
    if n < 2:
        return Interval(math.nan, math.nan, level, "t")
    quantile = t_isf(0.5 - level / 2.0, n - 1)  # = scipy.stats.t.isf(…, n - 1) (pure Python; scipy beyond)
    if quantile is None:
        from ranklens.stats._common import scipy_special

        quantile = float(scipy_special().stdtrit(n - 1, 0.5 + level / 2.0))
    half = quantile * np_std(d, ddof=1) / math.sqrt(n)
    return Interval(mean - half, mean + half, level, "t")
