"""Effect size of a paired difference."""

from __future__ import annotations

import math

from ranklens.stats.lists import diff_list
from ranklens.stats.sums import np_mean, np_std

TYPE_CHECKING = False
if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["cohens_d_paired"]


def cohens_d_paired(a: ArrayLike, b: ArrayLike) -> float:
    r"""Paired Cohen's d (:math:`d_z`): the mean per-query difference in units of its standard deviation.

    .. math:: d_z = \bar d / s_d, \qquad d_q = a_q - b_q,\; s_d \text{ with } n-1

    (Cohen 1988, *Statistical Power Analysis*, §2.3.5; Lakens 2013, Front. Psychol. 4:863, eq. 6.)
    Identical systems give 0; a constant non-zero difference gives ±inf; one query gives NaN.

    >>> round(cohens_d_paired([0.5, 0.6, 0.9], [0.4, 0.6, 0.7]), 4)
    1.0
    """
    d, _ = diff_list(a, b)  # (pure Python, numpy's floats: stats.sums)
    if not any(d):
        return 0.0
    if len(d) < 2:
        return math.nan
    mean = np_mean(d)
    sd = np_std(d, ddof=1)
    if sd == 0.0:
        return math.copysign(math.inf, mean)
    return mean / sd
