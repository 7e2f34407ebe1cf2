"""numpy's sum, mean and standard deviation of a vector, in pure Python and to the last bit.

The faces that answer from the compiled pass (``compare``, ``gate``, ``trec-eval``) print means, standard
deviations and t statistics that the reference computes with numpy; importing numpy costs them more than the
evaluation. These functions add in numpy's order — its pairwise summation (``pairwise_sum`` in numpy's
``loops_utils.h``: eight accumulators up to 128 values, halves above, a plain loop below 8) — so a face gives
the same float whether or not numpy was imported (``tests/stats/test_sums.py`` checks them against numpy on
random vectors of 0 to 100,000 values, numpy 2.x). They take any sequence of floats (lists, ``array.array``).

>>> values = [0.1] * 10
>>> np_sum(values), sum(values)
(1.0, 0.9999999999999999)
>>> np_mean([0.5, 0.25]), np_std([1.0, 2.0, 4.0], ddof=1)
(0.375, 1.5275252316519465)
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["np_mean", "np_std", "np_sum"]

_BLOCK = 128  # numpy's PW_BLOCKSIZE


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= _BLOCK:
        r0, r1, r2, r3, r4, r5, r6, r7 = a[lo : lo + 8]
        i = lo + 8
        end = lo + n - (n % 8)
        while i < end:
            r0 += a[i]
            r1 += a[i + 1]
            r2 += a[i + 2]
            r3 += a[i + 3]
            r4 += a[i + 4]
            r5 += a[i + 5]
            r6 += a[i + 6]
            r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for j in range(i, lo + n):
            res += a[j]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)


def np_sum(values: Sequence[float]) -> float:
    """``float(numpy.sum(values))`` of a 1-D float64 vector, bit for bit (0.0 when empty)."""
    return _pairwise(values, 0, len(values))


def np_mean(values: Sequence[float]) -> float:
    """``float(numpy.mean(values))``, bit for bit (NaN when empty, without numpy's warning)."""
    n = len(values)
    return _pairwise(values, 0, n) / n if n else math.nan


def np_std(values: Sequence[float], ddof: int = 0) -> float:
    """``float(numpy.std(values, ddof=ddof))``, bit for bit (NaN when there are ``ddof`` values or fewer)."""
    n = len(values)
    if n - ddof <= 0:
        return math.nan
    mean = _pairwise(values, 0, n) / n
    squares = [(x - mean) * (x - mean) for x in values]
    return math.sqrt(_pairwise(squares, 0, n) / (n - ddof))
