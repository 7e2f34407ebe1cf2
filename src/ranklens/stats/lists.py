"""The paired tests' input checks and per-query differences on plain lists, without numpy: what the t-test,
its interval, Cohen's d and wins/ties/losses need (``compare`` and ``gate`` on a small collection spend more
time importing numpy than comparing). Same checks, same tolerance and, with :mod:`ranklens.stats.sums`, the
same floats as the numpy forms in :mod:`ranklens.stats._common` (``tests/stats/test_lists.py``).

>>> diff_list([0.5, 0.2 + 1e-17, 0.3], [0.4, 0.2, 0.9])
([0.09999999999999998, 0.0, -0.6000000000000001], 1e-12)
>>> win_tie_loss([0.5, 0.2, 0.3], [0.4, 0.2, 0.9])
(1, 1, 1)
"""

from __future__ import annotations

import math
import sys

from ranklens.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "TIE_RTOL", "check_level", "check_samples", "diff_list", "floats", "not_one_dimensional", "paired_lists", "win_tie_loss",
]

#: Relative tolerance under which two scores, or a permuted and an observed statistic, count as equal.
#: Mathematically equal values computed in a different order can differ in the last ulp (METRICS.md §8.2).
TIE_RTOL = 1e-12


def floats(values: Any) -> list[float] | None:
    """``values`` (a numpy vector, an ``array.array``, a list of numbers) as a list of floats, or None when it
    is not a flat sequence of real numbers (the numpy checks then say what is wrong)."""
    if hasattr(values, "tolist"):
        if getattr(values, "ndim", 1) != 1:
            return None
        values = values.tolist()
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        return None
    if any(isinstance(v, (bool, str, bytes)) or hasattr(v, "__len__") for v in values):
        return None
    return out


def paired_lists(a: Any, b: Any) -> tuple[list[float], list[float]]:
    """``a`` and ``b`` as lists of floats of the same length, one value per query, all finite (the errors of
    :func:`ranklens.stats._common.paired`, word for word)."""
    x, y = floats(a), floats(b)
    if x is None or y is None:  # (not a flat sequence of numbers: numpy reads it as the numpy form does)
        import numpy as np

        xs, ys = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if xs.ndim != 1 or ys.ndim != 1:
            raise not_one_dimensional(xs.shape, ys.shape)
        x, y = xs.tolist(), ys.tolist()
    if len(x) != len(y):
        raise InputError(f"paired scores must cover the same queries; got {len(x)} and {len(y)} values")
    if not x:
        raise InputError("paired test on no query: the two systems have no query in common")
    if not all(math.isfinite(v) for v in x) or not all(math.isfinite(v) for v in y):
        raise InputError("paired scores must be finite numbers (found NaN or infinity)")
    return x, y


def not_one_dimensional(shape_a: object, shape_b: object) -> InputError:
    """The error of paired scores that are not one value per query."""
    return InputError(f"paired scores must be 1-D (one value per query); got shapes {shape_a} and {shape_b}")


def diff_list(a: Any, b: Any) -> tuple[list[float], float]:
    """The per-query differences ``a - b``, those within ``1e-12 × max(1, max|score|)`` set to exactly 0, and
    that tolerance (:func:`ranklens.stats._common.diffs` without numpy)."""
    x, y = paired_lists(a, b)
    tol = TIE_RTOL * max(1.0, max(map(abs, x)), max(map(abs, y)))
    return [0.0 if abs(d) <= tol else d for d in (p - q for p, q in zip(x, y))], tol


def win_tie_loss(a: Any, b: Any) -> tuple[int, int, int]:
    """How many queries ``a`` wins, ties (within ``1e-12 × max(1, max|score|)``) and loses against ``b``."""
    d, _ = diff_list(a, b)
    wins = sum(1 for v in d if v > 0)
    losses = sum(1 for v in d if v < 0)
    return wins, len(d) - wins - losses, losses


def check_samples(samples: int) -> int:
    """A positive number of Monte Carlo samples."""
    numpy = sys.modules.get("numpy")  # (a numpy integer comes only from a caller that imported numpy)
    integer = (int, numpy.integer) if numpy is not None else int
    if isinstance(samples, bool) or not isinstance(samples, integer) or samples < 1:
        raise InputError(f"the number of samples must be a positive integer; got {samples!r}")
    return int(samples)


def check_level(level: float) -> float:
    """A confidence level strictly between 0 and 1."""
    if not 0.0 < float(level) < 1.0:
        raise InputError(f"confidence level must be between 0 and 1 (e.g. 0.95); got {level!r}")
    return float(level)
