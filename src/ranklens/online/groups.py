"""The statistics of one comparison of two groups of per-user values — one row of an A/B report: each arm's
n, mean and sd, the difference and its interval, the relative lift, the three p-values; CUPED and the
sequential (always-valid) result when asked for. :func:`compare_row` is the one implementation behind
``ranklens ab``, :func:`ranklens.online.ab` and :func:`ranklens.online.ab_values` (the monitor's A/B page);
:func:`compare_groups` is its convenience form for two plain lists."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ranklens.errors import InputError, did_you_mean
from ranklens.stats.sequential import DEFAULT_TAU_SD, PVALUE_KIND, msprt_path
from ranklens.stats.unpaired import bootstrap_unpaired, mann_whitney_test, relative_lift, welch_interval, welch_test
from ranklens.stats.variance_reduction import cuped

__all__ = ["CIS", "choice", "compare_groups", "compare_row", "cuped_row", "sequential_row"]

CIS = ("welch", "bootstrap")

def choice(value: str, choices: Sequence[str], what: str) -> str:
    """``value`` as one of ``choices`` (case, ``-`` and ``_`` ignored), or an error naming them."""
    key = str(value).strip().lower().replace("-", "").replace("_", "")
    for c in choices:
        if key == c.replace("-", ""):
            return c
    raise InputError(f"unknown {what} {value!r}; expected one of {', '.join(choices)}" + did_you_mean(str(value), choices))


def _arm_stats(x: np.ndarray) -> dict[str, Any]:
    return {"n": int(x.size), "mean": float(x.mean()), "sd": float(x.std(ddof=1))}


def compare_groups(
    control: Any, treatment: Any, *, alpha: float = 0.05, ci: str = "welch", samples: int = 10_000, seed: Any = 0,
    bootstrap: bool = True,
) -> dict[str, Any]:
    """The between-subjects statistics of two groups of per-user values, as one measure's entry of
    :meth:`ABResult.to_dict` (``control``, ``treatment``, ``difference``, ``ci``, ``relative_lift``, ``p`` …),
    by :func:`compare_row`, as ``ranklens ab`` computes it. ``bootstrap=False``
    leaves the bootstrap out (its p-value NaN; the interval must then be ``welch``).

    >>> r = compare_groups([0.5, 0.4, 0.6, 0.3, 0.5], [0.9, 0.7, 0.8, 0.6], bootstrap=False)
    >>> round(r["difference"], 2), round(r["p"]["welch"], 4), r["ci_method"]
    (0.29, 0.012, 'welch')
    """
    xc, xt = (np.asarray(v, dtype=np.float64) for v in (control, treatment))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return compare_row(xc, xt, choice(ci, CIS, "ci"), float(alpha), int(samples), rng, bootstrap=bootstrap)


def compare_row(
    xc: np.ndarray, xt: np.ndarray, ci: str, alpha: float, samples: int, rng: np.random.Generator, *, bootstrap: bool = True
) -> dict[str, Any]:
    level = 1.0 - alpha
    if bootstrap:
        boot_ci, boot = bootstrap_unpaired(xt, xc, level=level, samples=samples, seed=rng)
    elif ci != "welch":
        raise InputError("a bootstrap interval needs the bootstrap (bootstrap=True)")
    interval = welch_interval(xt, xc, level=level) if ci == "welch" else boot_ci
    lift, lift_low, lift_high = relative_lift(xt, xc, level=level)
    return {
        "control": _arm_stats(xc),
        "treatment": _arm_stats(xt),
        "difference": float(xt.mean() - xc.mean()),
        "ci": [interval.low, interval.high],
        "ci_method": interval.method,
        "relative_lift": lift,
        "relative_lift_ci": [lift_low, lift_high],
        "p": {
            "welch": welch_test(xt, xc).p_value,
            "mannwhitney": mann_whitney_test(xt, xc).p_value,
            "bootstrap": boot.p_value if bootstrap else math.nan,
        },
    }


def cuped_row(xc: np.ndarray, xt: np.ndarray, pc: np.ndarray, pt: np.ndarray, alpha: float) -> dict[str, Any]:
    r = cuped(xc, xt, pc, pt, level=1.0 - alpha)
    return {
        "difference": r.difference, "ci": [r.ci.low, r.ci.high], "p": r.p, "variance_reduction": r.variance_reduction,
        "theta": list(r.theta), "users_with_pre": {"control": r.n_with_pre[0], "treatment": r.n_with_pre[1]},
        "users_without_pre": {"control": r.n_without_pre[0], "treatment": r.n_without_pre[1]},
        "missing_pre": "adjusted with the indicator of having a pre-period value as a second covariate (Deng et al. 2013)"
        if sum(r.n_without_pre) else "none",
    }


def sequential_row(
    xc: np.ndarray, xt: np.ndarray, tc: np.ndarray | None, tt: np.ndarray | None, tau: float | None, alpha: float
) -> dict[str, Any]:
    pooled_sd = float(np.sqrt((xc.var(ddof=1) * (xc.size - 1) + xt.var(ddof=1) * (xt.size - 1)) / (xc.size + xt.size - 2)))
    t = float(tau) if tau is not None else DEFAULT_TAU_SD * pooled_sd
    if not t > 0:
        t = DEFAULT_TAU_SD  # every value equal: any positive tau gives p = 1
    looks: list[str] = []
    diffs, variances = [], []
    if tc is None or tt is None:
        diffs.append(float(xt.mean() - xc.mean()))
        variances.append(float(xt.var(ddof=1) / xt.size + xc.var(ddof=1) / xc.size))
    else:
        for when in sorted(set(tc.tolist()) | set(tt.tolist())):
            c, tr = xc[tc <= when], xt[tt <= when]
            if c.size < 2 or tr.size < 2:
                continue
            looks.append(str(when))
            diffs.append(float(tr.mean() - c.mean()))
            variances.append(float(tr.var(ddof=1) / tr.size + c.var(ddof=1) / c.size))
    p, low, high = msprt_path(np.asarray(diffs), np.asarray(variances), t, alpha=alpha)
    out: dict[str, Any] = {"p": float(p[-1]), "ci": [float(low[-1]), float(high[-1])], "kind": PVALUE_KIND, "tau": t, "looks": len(diffs)}
    if looks:
        out["path"] = [
            {"time": w, "difference": d, "p": float(pp), "ci": [float(lo), float(hi)]}
            for w, d, pp, lo, hi in zip(looks, diffs, p.tolist(), low.tolist(), high.tolist())
        ]
    return out
