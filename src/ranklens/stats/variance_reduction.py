"""CUPED: variance reduction of a difference in means with a pre-experiment covariate (Deng, Xu, Kohavi &
Walker, WSDM 2013, "Improving the sensitivity of online controlled experiments by utilizing
pre-experiment data")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError
from ranklens.stats.types import Interval
from ranklens.stats.unpaired import samples_of, welch_interval, welch_test

__all__ = ["CupedResult", "cuped"]


@dataclass(frozen=True)
class CupedResult:
    """The CUPED-adjusted comparison of ``treatment − control``.

    Attributes:
        difference: the adjusted difference in means.
        ci: its Welch interval on the adjusted values.
        p: Welch's p-value on the adjusted values.
        theta: the regression coefficients (one per covariate: the pre-period value, then the indicator
            of having one when some users lack it).
        variance_reduction: ``1 − Var(adjusted difference)/Var(unadjusted difference)``, both estimated
            as Welch's ``s²_t/n_t + s²_c/n_c``.
        n_with_pre: users with a pre-period value (control, treatment).
        n_without_pre: users without one (control, treatment).
    """

    difference: float
    ci: Interval
    p: float
    theta: tuple[float, ...]
    variance_reduction: float
    n_with_pre: tuple[int, int]
    n_without_pre: tuple[int, int]


def cuped(
    control: ArrayLike,
    treatment: ArrayLike,
    control_pre: ArrayLike,
    treatment_pre: ArrayLike,
    *,
    level: float = 0.95,
) -> CupedResult:
    r"""CUPED-adjusted difference ``mean(treatment) − mean(control)``.

    With one covariate X per user (the pre-period value of the measure), on the pooled users of both arms:

    .. math:: \theta = \frac{\operatorname{cov}(X, Y)}{\operatorname{var}(X)},\qquad
       Y^{cv}_i = Y_i - \theta\,(X_i - \bar X)

    and the comparison is Welch's on :math:`Y^{cv}` (Deng et al. 2013; θ estimated on the pooled data of
    both arms, as the paper does). ``NaN`` in ``control_pre``/``treatment_pre`` marks a user without a
    pre-period value (a new user): as the paper suggests for them, whether a user has pre-period data is
    itself a covariate — the covariate becomes the pair
    (pre-period value or 0, indicator of having one) and θ the least-squares coefficients of Y on both
    (:math:`\theta = \Sigma_{XX}^{-1}\Sigma_{XY}`, pooled): users without a pre-period value are adjusted
    by their group's mean only, and, the covariate being independent of the assignment, the estimate
    stays unbiased.

    >>> y_c, x_c = [1.0, 2.0, 3.0, 4.0], [1.1, 1.9, 3.2, 3.9]
    >>> y_t, x_t = [2.0, 3.0, 4.0, 5.0], [1.0, 2.1, 2.9, 4.0]
    >>> r = cuped(y_c, y_t, x_c, x_t)
    >>> round(r.difference, 3), round(r.variance_reduction, 3)
    (1.025, 0.991)
    """
    yc, yt = samples_of(control, treatment)
    xc = np.asarray(control_pre, dtype=np.float64).reshape(-1)
    xt = np.asarray(treatment_pre, dtype=np.float64).reshape(-1)
    if xc.shape != yc.shape or xt.shape != yt.shape:
        raise InputError(
            f"CUPED needs one pre-period value (or NaN) per user: {yc.size}/{yt.size} users, "
            f"{xc.size}/{xt.size} pre-period values"
        )
    if np.isinf(xc).any() or np.isinf(xt).any():
        raise InputError("pre-period values must be finite numbers (NaN marks a user without one)")
    has_c, has_t = ~np.isnan(xc), ~np.isnan(xt)
    if not has_c.any() and not has_t.any():
        raise InputError("no user has a pre-period value: nothing to adjust with")
    y = np.concatenate([yc, yt])
    has = np.concatenate([has_c, has_t])
    x = np.where(has, np.concatenate([xc, xt]), 0.0)
    covariates = [x] if has.all() else [x, has.astype(np.float64)]
    design = np.column_stack(covariates)
    centred = design - design.mean(axis=0)
    yc_all = y - y.mean()
    sxx = centred.T @ centred
    sxy = centred.T @ yc_all
    theta = np.linalg.lstsq(sxx, sxy, rcond=None)[0]
    adjusted = y - centred @ theta
    ac, at = adjusted[: yc.size], adjusted[yc.size :]
    ci = welch_interval(at, ac, level=level)
    var_raw = yt.var(ddof=1) / yt.size + yc.var(ddof=1) / yc.size
    var_adj = at.var(ddof=1) / at.size + ac.var(ddof=1) / ac.size
    reduction = float(1.0 - var_adj / var_raw) if var_raw > 0 else 0.0
    return CupedResult(
        difference=float(at.mean() - ac.mean()),
        ci=ci,
        p=welch_test(at, ac).p_value,
        theta=tuple(float(v) for v in theta),
        variance_reduction=reduction,
        n_with_pre=(int(has_c.sum()), int(has_t.sum())),
        n_without_pre=(int((~has_c).sum()), int((~has_t).sum())),
    )
