"""Tests on signs and ranks of paired differences: Wilcoxon signed-rank and the sign test; win/tie/loss."""

from __future__ import annotations

from ranklens.stats.lists import win_tie_loss
from ranklens.stats.types import TestResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["sign_test", "wilcoxon_test", "win_tie_loss"]


def sign_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    r"""Two-sided sign test: the number of wins of ``a`` among the non-tied queries is Binomial(k, ½)
    under H0.

    .. math:: p = \min\bigl(1, \sum_{j:\,P(j) \le P(w)} \binom{k}{j} 2^{-k}\bigr)

    with w wins among k = wins + losses (Conover, *Practical Nonparametric Statistics*, §3.4;
    ``scipy.stats.binomtest``). Ties are dropped; all ties give p = 1. The statistic is w.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> r = sign_test(a, b)
    >>> r.statistic, r.p_value
    (8.0, 0.109375)
    """
    wins, ties, losses = win_tie_loss(a, b)
    n = wins + ties + losses
    if wins + losses == 0:
        return TestResult("sign", 0.0, 1.0, n)
    from ranklens.stats._common import scipy_stats

    p = float(scipy_stats().binomtest(wins, wins + losses, 0.5).pvalue)
    return TestResult("sign", float(wins), min(1.0, p), n)


def wilcoxon_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    r"""Two-sided Wilcoxon signed-rank test of the paired differences ``a - b``.

    Drop zero differences, rank :math:`|d_q|` (average ranks for ties) and take
    :math:`W = \min(W^+, W^-)`, the smaller sum of ranks of one sign; the p-value comes from the exact
    null distribution for small n without zeros and from the normal approximation otherwise — exactly as
    ``scipy.stats.wilcoxon`` with its defaults (Wilcoxon 1945; METRICS.md §8.2). Differences within the
    float tolerance count as zero; all-zero differences give W = 0 and p = 1.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> r = wilcoxon_test(a, b)
    >>> r.statistic, r.p_value * 1024
    (3.0, 10.0)
    """
    from ranklens.stats._common import diffs, is_tie, scipy_stats

    d, _ = diffs(a, b)
    n = d.size
    if is_tie(d):
        return TestResult("wilcoxon", 0.0, 1.0, n)
    res = scipy_stats().wilcoxon(d)  # zero_method='wilcox' drops the zeros; their presence picks the method
    return TestResult("wilcoxon", float(res.statistic), min(1.0, float(res.pvalue)), n)
