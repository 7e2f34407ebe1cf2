"""Multiple-comparison corrections of a family of p-values: Holm, Bonferroni, Benjamini–Hochberg."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError, did_you_mean

__all__ = ["CORRECTIONS", "adjust_p_values", "benjamini_hochberg", "bonferroni", "canonical_correction", "holm"]

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


def _finite(p: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(p, dtype=np.float64).reshape(-1)
    ok = ~np.isnan(arr)
    if np.any((arr[ok] < 0) | (arr[ok] > 1)):
        raise InputError("p-values must lie in [0, 1]")
    return arr, ok


def bonferroni(p: ArrayLike) -> np.ndarray:
    r"""Bonferroni: :math:`\tilde p_i = \min(1, m\,p_i)` over the m non-NaN p-values (NaN stays NaN).

    Controls the family-wise error rate (Dunn 1961).

    >>> bonferroni([0.010, 0.040, 0.030, 0.200]).round(3).tolist()
    [0.04, 0.16, 0.12, 0.8]
    """
    arr, ok = _finite(p)
    out = arr.copy()
    out[ok] = np.minimum(1.0, arr[ok] * int(ok.sum()))
    return out


def holm(p: ArrayLike) -> np.ndarray:
    r"""Holm's step-down correction.

    Sort :math:`p_{(1)} \le \dots \le p_{(m)}`; then
    :math:`\tilde p_{(j)} = \max_{i \le j} \min(1, (m - i + 1)\,p_{(i)})`. Controls the family-wise error
    rate and is uniformly more powerful than Bonferroni (Holm 1979, Scand. J. Statist. 6:65–70;
    METRICS.md §8.2). NaN p-values are left out of the family and stay NaN.

    >>> holm([0.010, 0.040, 0.030, 0.200]).round(3).tolist()
    [0.04, 0.09, 0.09, 0.2]
    """
    arr, ok = _finite(p)
    out = arr.copy()
    vals = arr[ok]
    m = vals.size
    if m == 0:
        return out
    order = np.argsort(vals, kind="stable")
    scaled = np.minimum(1.0, vals[order] * (m - np.arange(m)))
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    out[ok] = adjusted
    return out


def benjamini_hochberg(p: ArrayLike) -> np.ndarray:
    r"""Benjamini–Hochberg step-up adjustment (false discovery rate).

    Sort :math:`p_{(1)} \le \dots \le p_{(m)}`; then
    :math:`\tilde p_{(j)} = \min_{i \ge j} \min(1, \tfrac{m}{i}\,p_{(i)})` (Benjamini & Hochberg 1995,
    JRSS B 57:289–300). NaN p-values are left out of the family and stay NaN.

    >>> benjamini_hochberg([0.010, 0.040, 0.030, 0.200]).round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.2]
    """
    arr, ok = _finite(p)
    out = arr.copy()
    vals = arr[ok]
    m = vals.size
    if m == 0:
        return out
    order = np.argsort(vals, kind="stable")
    scaled = vals[order] * m / np.arange(1, m + 1)
    stepped = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    adjusted = np.empty(m)
    adjusted[order] = stepped
    out[ok] = adjusted
    return out


def adjust_p_values(p: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjust one family of p-values with ``method`` (``holm``, ``bonferroni``, ``bh`` or ``none``).

    >>> adjust_p_values([0.01, 0.04], "none").tolist()
    [0.01, 0.04]
    """
    key = canonical_correction(method)
    if key == "holm":
        return holm(p)
    if key == "bonferroni":
        return bonferroni(p)
    if key == "bh":
        return benjamini_hochberg(p)
    return _finite(p)[0].copy()
