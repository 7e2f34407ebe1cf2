"""Oracles of the unpaired statistics (issue 25): Welch and Mann–Whitney equal scipy's to 1e-12; sample sizes
and MDE equal statsmodels' power solvers to the unit; CUPED equals a hand computation; SRM equals scipy's χ²."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st
from statsmodels.stats.power import TTestIndPower, TTestPower

from ranklens.stats.power import minimum_detectable_effect, sample_size
from ranklens.stats.srm import srm_test
from ranklens.stats.unpaired import (
    mann_whitney_test,
    relative_lift,
    welch_interval,
    welch_test,
)
from ranklens.stats.variance_reduction import cuped

CASES = [
    (7, 5, 0.0, "normal"),
    (40, 25, 0.3, "normal"),
    (300, 280, 0.1, "grades"),  # many ties
    (3, 12, 1.0, "normal"),  # exact Mann–Whitney
    (8, 8, 0.5, "normal"),
    (9, 30, 0.2, "uniform"),
]


def _draw(n: int, shift: float, kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "grades":
        return rng.integers(0, 5, n) / 4 + (shift if rng.random() < 0 else 0.0)
    if kind == "uniform":
        return rng.random(n) + shift
    return rng.normal(shift, 1.0, n)


@pytest.mark.parametrize(("na", "nb", "shift", "kind"), CASES)
def test_welch_and_mann_whitney_equal_scipy(na: int, nb: int, shift: float, kind: str) -> None:
    rng = np.random.default_rng(na * 100 + nb)
    a, b = _draw(na, shift, kind, rng), _draw(nb, 0.0, kind, rng)
    ref = st.ttest_ind(a, b, equal_var=False)
    ours = welch_test(a, b)
    assert ours.statistic == pytest.approx(float(ref.statistic), abs=1e-12, rel=1e-12)
    assert ours.p_value == pytest.approx(float(ref.pvalue), abs=1e-12)
    low, high = ref.confidence_interval(0.95)
    ci = welch_interval(a, b)
    assert (ci.low, ci.high) == pytest.approx((float(low), float(high)), abs=1e-12)
    mw = st.mannwhitneyu(a, b)  # scipy's defaults: method="auto", use_continuity=True
    ours_mw = mann_whitney_test(a, b)
    assert ours_mw.statistic == pytest.approx(float(mw.statistic), abs=1e-12)
    assert ours_mw.p_value == pytest.approx(float(mw.pvalue), abs=1e-12)


@pytest.mark.parametrize("effect", [0.1, 0.25, 0.5, 0.8])
def test_sample_size_and_mde_equal_statsmodels(effect: float) -> None:
    sd = 0.3
    delta = effect * sd
    for design, solver in (("unpaired", TTestIndPower()), ("paired", TTestPower())):
        n, exact = sample_size(delta, sd, alpha=0.05, power=0.8, design=design)
        ref = solver.solve_power(effect_size=effect, alpha=0.05, power=0.8, alternative="two-sided")
        assert n == math.ceil(ref), (design, n, ref)
        assert exact == pytest.approx(ref, abs=1e-3)
        mde = minimum_detectable_effect(n, sd, alpha=0.05, power=0.8, design=design)
        key = "nobs1" if design == "unpaired" else "nobs"
        ref_d = solver.solve_power(effect_size=None, alpha=0.05, power=0.8, alternative="two-sided", **{key: n})
        assert mde == pytest.approx(ref_d * sd, rel=1e-5)  # (statsmodels' root finder stops near 1e-6)
        assert solver.power(effect_size=mde / sd, alpha=0.05, **{key: n}) == pytest.approx(0.8, abs=1e-9)


def test_cuped_equals_the_hand_computation() -> None:
    # theta = cov(X, Y) / var(X) on the pooled users of both arms, written out
    yc, xc = [1.0, 2.0, 3.0, 4.0], [1.1, 1.9, 3.2, 3.9]
    yt, xt = [2.0, 3.0, 4.0, 5.0], [1.0, 2.1, 2.9, 4.0]
    y = yc + yt
    x = xc + xt
    mx, my = sum(x) / 8, sum(y) / 8
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y)) / 7
    var = sum((a - mx) ** 2 for a in x) / 7
    theta = cov / var
    adj_c = [b - theta * (a - mx) for a, b in zip(xc, yc)]
    adj_t = [b - theta * (a - mx) for a, b in zip(xt, yt)]
    diff = sum(adj_t) / 4 - sum(adj_c) / 4

    def var_of(v: list[float]) -> float:
        m = sum(v) / len(v)
        return sum((e - m) ** 2 for e in v) / (len(v) - 1)

    reduction = 1 - (var_of(adj_t) / 4 + var_of(adj_c) / 4) / (var_of(yt) / 4 + var_of(yc) / 4)
    r = cuped(yc, yt, xc, xt)
    assert r.theta == pytest.approx((theta,), rel=1e-12)
    assert r.difference == pytest.approx(diff, rel=1e-12)
    assert r.variance_reduction == pytest.approx(reduction, rel=1e-12)
    ref = st.ttest_ind(adj_t, adj_c, equal_var=False)
    assert (r.ci.low, r.ci.high) == pytest.approx(tuple(map(float, ref.confidence_interval(0.95))), abs=1e-12)


def test_cuped_without_pre_values_regresses_on_the_indicator_too() -> None:
    # users without a pre-period value: covariates (value or 0, has-value indicator); least squares by hand
    rng = np.random.default_rng(5)
    x = rng.normal(size=40)
    y = 0.8 * x + rng.normal(size=40)
    x_missing = x.copy()
    x_missing[[3, 17, 25]] = np.nan
    r = cuped(y[:20], y[20:], x_missing[:20], x_missing[20:])
    has = ~np.isnan(x_missing)
    design = np.column_stack([np.where(has, x_missing, 0.0), has.astype(float), np.ones(40)])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    assert r.theta == pytest.approx(tuple(coef[:2]), rel=1e-9)
    assert r.n_without_pre == (2, 1)


def test_relative_lift_delta_method_by_hand() -> None:
    t, c = np.array([0.9, 0.7, 0.8, 0.6]), np.array([0.5, 0.4, 0.6, 0.3, 0.5])
    se = math.sqrt(t.var(ddof=1) / 4 / c.mean() ** 2 + t.mean() ** 2 * c.var(ddof=1) / 5 / c.mean() ** 4)
    lift, low, high = relative_lift(t, c)
    assert lift == pytest.approx(t.mean() / c.mean() - 1, rel=1e-12)
    assert (low, high) == pytest.approx((lift - 1.959963984540054 * se, lift + 1.959963984540054 * se), rel=1e-12)


def test_srm_equals_scipy_chisquare() -> None:
    ref = st.chisquare([10_400, 9_600], [10_000, 10_000])
    r = srm_test([10_400, 9_600], [0.5, 0.5])
    assert r.chi2 == pytest.approx(float(ref.statistic), rel=1e-12)
    assert r.p == pytest.approx(float(ref.pvalue), rel=1e-9)
    assert r.mismatch


def test_plan_command_json_equals_statsmodels(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from click.testing import CliRunner

    import ranklens
    from ranklens.cli.main import cli

    rng = np.random.default_rng(9)
    qrels = {f"u{i}": {"a": 1, "b": int(rng.integers(0, 3))} for i in range(60)}
    run = {u: {"a": float(rng.random()), "b": float(rng.random()), "c": float(rng.random())} for u in qrels}
    res = ranklens.evaluate(qrels, run, ["nDCG@2"])
    pilot = tmp_path / "pilot.json"
    pilot.write_text(res.to_json())
    out = CliRunner().invoke(cli, ["plan", str(pilot), "-m", "nDCG@2", "--delta", "0.05", "--design", "unpaired", "--n", "400", "-f", "json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    x = res.column("nDCG@2")
    sd = float(np.std(x, ddof=1))
    ref = TTestIndPower().solve_power(effect_size=0.05 / sd, alpha=0.05, power=0.8)
    assert d["n"] == math.ceil(ref)
    assert d["mde_at_n"] == pytest.approx(TTestIndPower().solve_power(nobs1=400, alpha=0.05, power=0.8) * sd, rel=1e-5)
