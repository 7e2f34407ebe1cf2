"""Multiple-comparison corrections of a family of p-values: Holm, Bonferroni, Benjamini–Hochberg."""

from __future__ import annotations

import math

from ranklens.errors import InputError, did_you_mean

TYPE_CHECKING = False
if TYPE_CHECKING:  # (numpy is imported by the functions that return arrays)
    import numpy as np
    from numpy.typing import ArrayLike

__all__ = ["CORRECTIONS", "adjust_p_list", "adjust_p_values", "benjamini_hochberg", "bonferroni", "canonical_correction", "holm"]

#: Canonical correction names; ``none`` leaves the p-values as they are.
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
_ALIASES = {
    "benjamini-hochberg": "bh",
    "benjamini_hochberg": "bh",
    "fdr": "bh",
    "fdr_bh": "bh",
    "holm-bonferroni": "holm",
    "no": "none",
}


def canonical_correction(name: str) -> str:
    """The canonical name of a correction (``holm``, ``bonferroni``, ``bh``, ``none``); aliases accepted."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in CORRECTIONS:
        raise InputError(
            f"unknown correction {name!r}; expected one of {', '.join(CORRECTIONS)}"
            + did_you_mean(name, [*CORRECTIONS, *_ALIASES])
        )
    return key


def _finite(p: ArrayLike) -> list[float]:
    """The p-values as a flat list of floats, each NaN or in [0, 1]."""
    if hasattr(p, "reshape"):
        arr = p.reshape(-1).tolist()  # type: ignore[union-attr]
    elif isinstance(p, (int, float)):
        arr = [p]
    else:
        arr = list(p)  # type: ignore[arg-type]
    arr = [float(v) for v in arr]
    if any(v == v and not 0.0 <= v <= 1.0 for v in arr):
        raise InputError("p-values must lie in [0, 1]")
    return arr


def _array(values: list[float]) -> np.ndarray:
    import numpy as np

    return np.asarray(values, dtype=np.float64)


def _bonferroni(p: list[float]) -> list[float]:
    m = sum(1 for v in p if v == v)
    return [min(1.0, v * m) if v == v else v for v in p]


def _holm(p: list[float]) -> list[float]:
    kept = [i for i, v in enumerate(p) if v == v]
    m = len(kept)
    order = sorted(range(m), key=lambda k: p[kept[k]])  # (stable, as numpy's argsort kind="stable")
    out = list(p)
    running = -math.inf
    for rank, k in enumerate(order):
        running = max(running, min(1.0, p[kept[k]] * (m - rank)))
        out[kept[k]] = running
    return out


def _benjamini_hochberg(p: list[float]) -> list[float]:
    kept = [i for i, v in enumerate(p) if v == v]
    m = len(kept)
    order = sorted(range(m), key=lambda k: p[kept[k]])
    out = list(p)
    running = math.inf
    for rank in range(m - 1, -1, -1):
        k = order[rank]
        running = min(running, p[kept[k]] * m / (rank + 1))
        out[kept[k]] = min(1.0, running)
    return out


def bonferroni(p: ArrayLike) -> np.ndarray:
    r"""Bonferroni: :math:`\tilde p_i = \min(1, m\,p_i)` over the m non-NaN p-values (NaN stays NaN).

    Controls the family-wise error rate (Dunn 1961).

    >>> bonferroni([0.010, 0.040, 0.030, 0.200]).round(3).tolist()
    [0.04, 0.16, 0.12, 0.8]
    """
    return _array(_bonferroni(_finite(p)))


def holm(p: ArrayLike) -> np.ndarray:
    r"""Holm's step-down correction.

    Sort :math:`p_{(1)} \le \dots \le p_{(m)}`; then
    :math:`\tilde p_{(j)} = \max_{i \le j} \min(1, (m - i + 1)\,p_{(i)})`. Controls the family-wise error
    rate and is uniformly more powerful than Bonferroni (Holm 1979, Scand. J. Statist. 6:65–70;
    METRICS.md §8.2). NaN p-values are left out of the family and stay NaN.

    >>> holm([0.010, 0.040, 0.030, 0.200]).round(3).tolist()
    [0.04, 0.09, 0.09, 0.2]
    """
    return _array(_holm(_finite(p)))


def benjamini_hochberg(p: ArrayLike) -> np.ndarray:
    r"""Benjamini–Hochberg step-up adjustment (false discovery rate).

    Sort :math:`p_{(1)} \le \dots \le p_{(m)}`; then
    :math:`\tilde p_{(j)} = \min_{i \ge j} \min(1, \tfrac{m}{i}\,p_{(i)})` (Benjamini & Hochberg 1995,
    JRSS B 57:289–300). NaN p-values are left out of the family and stay NaN.

    >>> benjamini_hochberg([0.010, 0.040, 0.030, 0.200]).round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.2]
    """
    return _array(_benjamini_hochberg(_finite(p)))


def adjust_p_list(p: ArrayLike, method: str = "holm") -> list[float]:
    """:func:`adjust_p_values` as a list of floats, without numpy (``compare`` and ``gate`` on a small
    collection).

    >>> adjust_p_list([0.010, 0.040, 0.030, 0.200], "bh")
    [0.04, 0.05333333333333334, 0.05333333333333334, 0.2]
    """
    key = canonical_correction(method)
    values = _finite(p)
    if key == "holm":
        return _holm(values)
    if key == "bonferroni":
        return _bonferroni(values)
    if key == "bh":
        return _benjamini_hochberg(values)
    return values


def adjust_p_values(p: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjust one family of p-values with ``method`` (``holm``, ``bonferroni``, ``bh`` or ``none``).

    >>> adjust_p_values([0.01, 0.04], "none").tolist()
    [0.01, 0.04]
    """
    return _array(adjust_p_list(p, method))
