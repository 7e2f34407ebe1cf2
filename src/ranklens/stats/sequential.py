"""Peeking-safe comparison of two means: the mixture sequential probability ratio test (mSPRT) with its
always-valid p-value and confidence sequence (Johari, Koomen, Pekelis & Walsh, KDD 2017, "Peeking at A/B
tests: why it matters, and what to do about it"; Johari, Pekelis & Walsh, Operations Research 2022,
"Always valid inference")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError

__all__ = ["DEFAULT_TAU_SD", "PVALUE_KIND", "SequentialResult", "msprt", "msprt_path"]

#: What kind of p-value :func:`msprt` gives, as reports say it.
PVALUE_KIND = "always-valid p-value (mSPRT, normal mixture; Johari et al. 2017): valid however often it is looked at"

#: The default mixing standard deviation τ, in units of the pooled per-user standard deviation: the effect
#: size (Cohen's d = 0.1) the test is most sensitive to; any fixed τ keeps the guarantee.
DEFAULT_TAU_SD = 0.1


@dataclass(frozen=True)
class SequentialResult:
    """The always-valid p-value and confidence sequence at the last look.

    ``p`` is the running minimum of the per-look mSPRT p-values; ``ci`` the running intersection of the
    per-look confidence intervals; ``looks`` how many looks there were; ``tau`` the mixing sd on the scale of
    the difference."""

    p: float
    ci: tuple[float, float]
    looks: int
    tau: float
    kind: str = PVALUE_KIND


def msprt(diff: ArrayLike, var: ArrayLike, tau: float, *, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""The mSPRT p-value and confidence-sequence half-width of one look, vectorised over looks.

    With :math:`\hat\Delta` the observed difference, :math:`V = s_t^2/n_t + s_c^2/n_c` its variance and a
    normal mixture :math:`N(0, \tau^2)` over the true difference, the mixture likelihood ratio against
    :math:`\Delta = 0` is

    .. math:: \Lambda = \sqrt{\frac{V}{V + \tau^2}}\;\exp\Bigl(\frac{\tau^2\,\hat\Delta^2}{2V(V + \tau^2)}\Bigr)

    and :math:`p = \min(1, 1/\Lambda)`; by Ville's inequality the running minimum of p over any number of
    looks stays below α with probability ≥ 1 − α under the null (Johari et al. 2017, §3). Inverting the
    test at every Δ gives the interval :math:`\hat\Delta \pm \sqrt{\frac{V(V+\tau^2)}{\tau^2}\bigl(2\log
    \frac1\alpha + \log\frac{V+\tau^2}{V}\bigr)}`.

    >>> p, half = msprt(0.0, 0.01, 0.1)
    >>> float(p), round(float(half), 3)
    (1.0, 0.366)
    """
    if not tau > 0 or not math.isfinite(tau):
        raise InputError(f"the mixing sd tau must be a positive number; got {tau!r}")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be between 0 and 1; got {alpha!r}")
    d = np.asarray(diff, dtype=np.float64)
    v = np.asarray(var, dtype=np.float64)
    t2 = float(tau) ** 2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_lr = 0.5 * np.log(v / (v + t2)) + t2 * d**2 / (2.0 * v * (v + t2))
        p = np.minimum(1.0, np.exp(-log_lr))
        half = np.sqrt(v * (v + t2) / t2 * (2.0 * math.log(1.0 / alpha) + np.log((v + t2) / v)))
    p = np.where(v > 0, p, np.where(d == 0, 1.0, 0.0))
    half = np.where(v > 0, half, 0.0)
    return p, half


def msprt_path(
    diff: ArrayLike, var: ArrayLike, tau: float, *, alpha: float = 0.05
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The always-valid p-value and confidence sequence along looks (the last axis): running minimum of the
    p-values, running intersection of the intervals. Returns ``(p, low, high)`` shaped like ``diff``.

    >>> p, low, high = msprt_path([0.5, 0.3, 0.2], [0.04, 0.02, 0.01], 0.2)
    >>> p.round(3).tolist(), bool(np.all(np.diff(high - low) <= 0))
    ([0.296, 0.296, 0.296], True)
    """
    d = np.asarray(diff, dtype=np.float64)
    p, half = msprt(d, var, tau, alpha=alpha)
    return (
        np.minimum.accumulate(p, axis=-1),
        np.maximum.accumulate(d - half, axis=-1),
        np.minimum.accumulate(d + half, axis=-1),
    )
