"""Power of the t-test: the sample size needed to detect a difference and the minimum detectable effect at
a given size, for paired (queries; offline) and unpaired (users per arm; online) designs."""

from __future__ import annotations

import math

from ranklens.errors import InputError
from ranklens.stats._common import scipy_stats

__all__ = ["DESIGNS", "minimum_detectable_effect", "sample_size", "t_power"]

#: ``paired``: one sample of per-query differences (n queries); ``unpaired``: two equal arms (n users each).
DESIGNS = ("paired", "unpaired")


def _check(alpha: float, power: float | None, design: str) -> None:
    if design not in DESIGNS:
        raise InputError(f"design must be paired or unpaired; got {design!r}")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be between 0 and 1; got {alpha!r}")
    if power is not None and not alpha < power < 1.0:
        raise InputError(f"power must lie between alpha ({alpha}) and 1; got {power!r}")


def t_power(effect: float, n: float, *, alpha: float = 0.05, design: str = "unpaired") -> float:
    r"""The power of the two-sided t-test at standardised effect ``effect`` (Cohen's d: the difference over
    the sd of the differences for ``paired``, over the per-user sd for ``unpaired``) with ``n`` queries
    (paired) or ``n`` users per arm (unpaired).

    With ν degrees of freedom and noncentrality δ (paired: ν = n − 1, δ = d√n; unpaired, equal arms:
    ν = 2n − 2, δ = d√(n/2)) and :math:`c = t_{1-\alpha/2,\nu}`, the power is
    :math:`P(T'_{\nu,\delta} > c) + P(T'_{\nu,\delta} < -c)` for the noncentral t :math:`T'`
    (Cohen 1988, ch. 2; as ``statsmodels``' ``TTestPower``/``TTestIndPower``).

    >>> round(t_power(0.5, 64, design="unpaired"), 4)
    0.8015
    """
    _check(alpha, None, design)
    if n <= 1:
        return math.nan
    st = scipy_stats()
    df, nc = (n - 1.0, effect * math.sqrt(n)) if design == "paired" else (2.0 * n - 2.0, effect * math.sqrt(n / 2.0))
    crit = float(st.t.isf(alpha / 2.0, df))
    upper, lower = float(st.nct.sf(crit, df, nc)), float(st.nct.cdf(-crit, df, nc))
    # scipy's noncentral t gives NaN deep in a tail: there the tail's mass is 0 to double precision
    return (0.0 if math.isnan(upper) else upper) + (0.0 if math.isnan(lower) else lower)


def _solve(f: object, low: float, high: float) -> float:
    from scipy.optimize import brentq

    while f(high) < 0:  # type: ignore[operator]
        high *= 2.0
        if high > 1e12:
            raise InputError("no sample size reaches the power asked for")
    return float(brentq(f, low, high, xtol=1e-10, rtol=1e-12))  # type: ignore[arg-type]


def sample_size(
    delta: float, sd: float, *, alpha: float = 0.05, power: float = 0.8, design: str = "unpaired"
) -> tuple[int, float]:
    """``(n, n_exact)``: the smallest whole number of queries (paired) or users per arm (unpaired) whose
    t-test detects a difference ``delta`` at ``alpha`` with at least ``power``, and the real-valued
    solution of ``t_power(delta/sd, n) = power``. ``sd`` is the standard deviation of the per-query
    differences (paired) or of the per-user values (unpaired).

    For the paired design this is the t-test-based topic-set size of Sakai (2016, *Topic set size design*,
    Information Retrieval Journal 19:256–283).

    >>> sample_size(0.05, 0.2, design="unpaired")[0]
    253
    """
    _check(alpha, power, design)
    if not (delta > 0 and sd > 0 and math.isfinite(delta) and math.isfinite(sd)):
        raise InputError(f"the difference and the sd must be positive numbers; got delta={delta!r}, sd={sd!r}")
    d = delta / sd
    exact = _solve(lambda n: t_power(d, n, alpha=alpha, design=design) - power, 2.0 + 1e-9, 16.0)
    return math.ceil(exact - 1e-9), exact


def minimum_detectable_effect(
    n: float, sd: float, *, alpha: float = 0.05, power: float = 0.8, design: str = "unpaired"
) -> float:
    """The smallest difference (on the scale of ``sd``) the t-test detects with ``power`` at ``alpha`` with
    ``n`` queries (paired) or users per arm (unpaired).

    >>> round(minimum_detectable_effect(253, 0.2, design="unpaired"), 4)
    0.0499
    """
    _check(alpha, power, design)
    if not n > 2:
        raise InputError(f"the minimum detectable effect needs n > 2; got {n!r}")
    if not sd > 0:
        raise InputError(f"the sd must be positive; got {sd!r}")
    d = _solve(lambda e: t_power(e, n, alpha=alpha, design=design) - power, 1e-9, 1.0)
    return d * sd
