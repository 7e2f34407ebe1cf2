r"""Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, *Science* 2023) for a
mean measure, and its power-tuned form PPI++ (Angelopoulos, Duchi & Zrnic 2023).

The setting: ``n`` queries carry a human value :math:`Y_i` (the measure under human labels) and a judge
value :math:`f_i` (the same measure under judge labels); ``N`` further queries carry only a judge value
:math:`\tilde f_j`. Both sets must be drawn from the same population of queries (the human-labelled queries
a random sample, not the easy ones). The estimate of the mean of :math:`Y` is

.. math:: \hat\theta_\lambda = \lambda\,\overline{\tilde f}_N + \overline{(Y - \lambda f)}_n
          = \overline{Y}_n + \lambda\bigl(\overline{\tilde f}_N - \overline{f}_n\bigr)

— the judge's mean over the many queries, corrected by the *rectifier* (the judge's mean error on the
labelled ones). Its standard error and the normal-approximation interval at level :math:`1-\alpha` are

.. math:: \hat\sigma^2 = \frac{s^2_n(Y - \lambda f)}{n} + \lambda^2\,\frac{s^2_N(\tilde f)}{N}, \qquad
          \hat\theta_\lambda \pm z_{1-\alpha/2}\,\hat\sigma

with sample variances :math:`s^2` (ddof 1). :math:`\lambda = 1` is classic PPI; ``tune=True`` takes the
variance-minimising :math:`\lambda = \frac{\widehat{\mathrm{Cov}}_n(Y, f)/n}{s^2_n(f)/n + s^2_N(\tilde f)/N}`
clipped to :math:`[0, 1]` (PPI++): 0 falls back to the human-only mean when the judge carries no signal.
A biased judge moves :math:`\overline{\tilde f}_N` and :math:`\overline{f}_n` alike, so the bias cancels; a
judge-only mean keeps it, however many queries it averages.

For a paired difference between two systems apply the same to the per-query differences
(:func:`ppi_paired_difference`).

>>> y = [0.5, 0.7, 0.4, 0.6]            # human nDCG on 4 labelled queries
>>> f = [0.6, 0.8, 0.5, 0.6]            # judge nDCG on the same queries
>>> fu = [0.7, 0.5, 0.6, 0.8, 0.6, 0.7]  # judge nDCG on 6 more queries
>>> r = ppi_mean(y, f, fu)
>>> round(r.estimate, 4), r.lam, r.method
(0.575, 1.0, 'ppi')
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError
from ranklens.stats._common import check_level
from ranklens.stats.types import Interval

__all__ = ["MeanEstimate", "normal_mean", "ppi_mean", "ppi_paired_difference"]


@dataclass(frozen=True)
class MeanEstimate:
    """An estimated mean with its standard error and normal-approximation interval.

    Attributes:
        estimate: the point estimate.
        std_error: its estimated standard error.
        low, high, level: the confidence interval and its nominal coverage.
        method: ``ppi``, ``ppi++`` (tuned λ) or ``normal`` (a plain sample mean).
        n: values with a human label (for ``normal``: the values averaged).
        n_unlabelled: judge-only values (0 for ``normal``).
        lam: the power-tuning weight λ (1 for classic PPI; ``None`` for ``normal``).
    """

    estimate: float
    std_error: float
    low: float
    high: float
    level: float
    method: str
    n: int
    n_unlabelled: int = 0
    lam: float | None = None

    @property
    def interval(self) -> Interval:
        """The interval as an :class:`~ranklens.stats.types.Interval`."""
        return Interval(self.low, self.high, self.level, self.method)

    def to_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict."""
        return dict(self.__dict__)


def _vector(values: ArrayLike, role: str, minimum: int = 2) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise InputError(f"{role} must be 1-D (one value per query); got shape {x.shape}")
    if x.size < minimum:
        raise InputError(f"{role}: need at least {minimum} queries for a variance; got {x.size}")
    if not np.isfinite(x).all():
        raise InputError(f"{role} must be finite numbers (found NaN or infinity)")
    return x


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + check_level(level) / 2.0)


def normal_mean(values: ArrayLike, *, level: float = 0.95) -> MeanEstimate:
    r"""The sample mean with the normal-approximation interval :math:`\bar x \pm z\,s/\sqrt{n}` — the naive
    interval of human-only or judge-only values.

    >>> r = normal_mean([0.5, 0.7, 0.4, 0.6])
    >>> round(r.estimate, 4), round(r.std_error, 4)
    (0.55, 0.0645)
    """
    x = _vector(values, "values")
    se = float(np.std(x, ddof=1) / np.sqrt(x.size))
    m, z = float(x.mean()), _z(level)
    return MeanEstimate(m, se, m - z * se, m + z * se, float(level), "normal", int(x.size))


def ppi_mean(
    y: ArrayLike, f: ArrayLike, f_unlabelled: ArrayLike, *, level: float = 0.95, tune: bool = False
) -> MeanEstimate:
    """The prediction-powered estimate and interval of the mean of ``y`` (module docstring for the formula).

    Args:
        y: human values on the labelled queries.
        f: judge values on the same queries, aligned with ``y``.
        f_unlabelled: judge values on the judge-only queries.
        level: nominal coverage of the interval.
        tune: choose λ to minimise the variance (PPI++); default λ = 1 (classic PPI).

    Raises:
        InputError: ``y`` and ``f`` not aligned, fewer than two values in either set, non-finite values.

    >>> r = ppi_mean([0.5, 0.7, 0.4, 0.6], [0.6, 0.8, 0.5, 0.6], [0.7, 0.5, 0.6, 0.8, 0.6, 0.7], tune=True)
    >>> r.method, 0.0 <= r.lam <= 1.0, r.low < r.estimate < r.high
    ('ppi++', True, True)
    """
    yy, ff = _vector(y, "human values"), _vector(f, "judge values on the labelled queries")
    if yy.shape != ff.shape:
        raise InputError(f"human and judge values must cover the same queries; got {yy.size} and {ff.size}")
    fu = _vector(f_unlabelled, "judge-only values")
    n, big_n = yy.size, fu.size
    var_fu = float(np.var(fu, ddof=1))
    lam = 1.0
    if tune:
        var_f = float(np.var(ff, ddof=1))
        cov = float(np.cov(yy, ff, ddof=1)[0, 1])
        den = var_f / n + var_fu / big_n
        constant = np.ptp(ff) == 0  # a judge that says the same everywhere carries no signal
        lam = 0.0 if constant or den <= 0 else float(np.clip((cov / n) / den, 0.0, 1.0))
    rect = yy - lam * ff
    estimate = lam * float(fu.mean()) + float(rect.mean())
    se = float(np.sqrt(np.var(rect, ddof=1) / n + lam * lam * var_fu / big_n))
    z = _z(level)
    return MeanEstimate(
        estimate, se, estimate - z * se, estimate + z * se, float(level), "ppi++" if tune else "ppi", n, big_n, lam
    )


def ppi_paired_difference(
    y_a: ArrayLike,
    y_b: ArrayLike,
    f_a: ArrayLike,
    f_b: ArrayLike,
    f_unlabelled_a: ArrayLike,
    f_unlabelled_b: ArrayLike,
    *,
    level: float = 0.95,
    tune: bool = False,
) -> MeanEstimate:
    """PPI for the mean paired difference A − B: :func:`ppi_mean` of the per-query differences
    ``y_a - y_b`` (human), ``f_a - f_b`` (judge, labelled queries) and ``f_unlabelled_a - f_unlabelled_b``.

    >>> r = ppi_paired_difference([0.5, 0.7, 0.4], [0.4, 0.6, 0.4], [0.6, 0.8, 0.5], [0.5, 0.8, 0.4],
    ...                           [0.7, 0.5, 0.6], [0.6, 0.5, 0.5])
    >>> round(r.estimate, 4)
    0.0667
    """
    pairs = []
    for a, b, role in ((y_a, y_b, "human"), (f_a, f_b, "judge labelled"), (f_unlabelled_a, f_unlabelled_b, "judge-only")):
        x, z = _vector(a, f"{role} values of A"), _vector(b, f"{role} values of B")
        if x.shape != z.shape:
            raise InputError(f"{role} values of A and B must be paired on the same queries; got {x.size} and {z.size}")
        pairs.append(x - z)
    return ppi_mean(pairs[0], pairs[1], pairs[2], level=level, tune=tune)
