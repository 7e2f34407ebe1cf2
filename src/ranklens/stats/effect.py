"""Effect size of a paired difference."""

from __future__ import annotations

import math

from numpy.typing import ArrayLike

from ranklens.stats._common import diffs, is_tie

__all__ = ["cohens_d_paired"]


def cohens_d_paired(a: ArrayLike, b: ArrayLike) -> float:
    r"""Paired Cohen's d (:math:`d_z`): the mean per-query difference in units of its standard deviation.

    .. math:: d_z = \bar d / s_d, \qquad d_q = a_q - b_q,\; s_d \text{ with } n-1

    (Cohen 1988, *Statistical Power Analysis*, §2.3.5; Lakens 2013, Front. Psychol. 4:863, eq. 6.)
    Identical systems give 0; a constant non-zero difference gives ±inf; one query gives NaN.

    >>> round(cohens_d_paired([0.5, 0.6, 0.9], [0.4, 0.6, 0.7]), 4)
    1.0
    """
    d, _ = diffs(a, b)
    if is_tie(d):
        return 0.0
    if d.size < 2:
        return math.nan
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return math.copysign(math.inf, mean)
    return mean / sd
