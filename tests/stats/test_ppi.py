"""Prediction-powered inference: the formula on a small case, and coverage by simulation with a biased judge
(seeded): PPI's 95% interval covers the true mean about 95% of the time; the judge-only interval does not."""

from __future__ import annotations

import numpy as np
import pytest

from ranklens import stats
from ranklens.errors import InputError

REPETITIONS = 400
N_LABELLED, N_UNLABELLED = 80, 1500
TRUE_MEAN = 0.4  # Beta(2, 3)


def _population(g: np.random.Generator, size: int, bias: float = 0.08) -> tuple[np.ndarray, np.ndarray]:
    """Per-query human nDCG-like values in [0, 1] and a judge that is correlated, noisy and biased upward."""
    y = g.beta(2.0, 3.0, size)
    f = np.clip(y + bias + g.normal(0.0, 0.08, size), 0.0, 1.0)
    return y, f


def _coverage(seed: int, tune: bool) -> dict[str, float]:
    g = np.random.default_rng(seed)
    hits = {"ppi": 0, "human": 0, "judge": 0}
    widths = {"ppi": 0.0, "human": 0.0}
    for _ in range(REPETITIONS):
        y, f = _population(g, N_LABELLED)
        _, fu = _population(g, N_UNLABELLED)
        ppi = stats.ppi_mean(y, f, fu, tune=tune)
        human = stats.normal_mean(y)
        judge = stats.normal_mean(np.concatenate([f, fu]))
        for key, r in (("ppi", ppi), ("human", human), ("judge", judge)):
            hits[key] += r.low <= TRUE_MEAN <= r.high
        widths["ppi"] += ppi.high - ppi.low
        widths["human"] += human.high - human.low
    out = {k: v / REPETITIONS for k, v in hits.items()}
    out["width_ratio"] = widths["ppi"] / widths["human"]
    return out


@pytest.mark.parametrize("tune", [False, True])
def test_ppi_covers_the_true_mean_and_the_judge_alone_does_not(tune: bool) -> None:
    cov = _coverage(seed=14, tune=tune)
    assert 0.92 <= cov["ppi"] <= 0.98, cov
    assert cov["judge"] < 0.5, cov  # the bias does not average away
    assert cov["width_ratio"] < 0.75, cov  # and the judge's queries make PPI tighter than human-only


def test_ppi_paired_difference_covers_the_true_difference() -> None:
    g = np.random.default_rng(2023)
    hits_ppi = hits_judge = 0
    true_diff = 0.05
    for _ in range(REPETITIONS):
        ya, fa = _population(g, N_LABELLED + N_UNLABELLED, bias=0.05)
        # system B: worse by 0.05 for humans; the judge over-rates B more (a bias that favours B)
        yb = np.clip(ya - true_diff + g.normal(0, 0.05, ya.size), -1, 2)
        fb = yb + 0.12 + g.normal(0, 0.08, ya.size)
        n = N_LABELLED
        r = stats.ppi_paired_difference(ya[:n], yb[:n], fa[:n], fb[:n], fa[n:], fb[n:], tune=True)
        judge = stats.normal_mean(fa - fb)
        hits_ppi += r.low <= true_diff <= r.high
        hits_judge += judge.low <= true_diff <= judge.high
    assert 0.92 <= hits_ppi / REPETITIONS <= 0.98
    assert hits_judge / REPETITIONS < 0.5


def test_the_formula_on_a_small_case() -> None:
    y, f, fu = [0.5, 0.7, 0.4, 0.6], [0.6, 0.8, 0.5, 0.6], [0.7, 0.5, 0.6, 0.8, 0.6, 0.7]
    r = stats.ppi_mean(y, f, fu, level=0.9)
    rect = np.subtract(y, f)
    se = np.sqrt(rect.var(ddof=1) / 4 + np.var(fu, ddof=1) / 6)
    assert r.estimate == pytest.approx(np.mean(fu) + rect.mean())
    assert r.std_error == pytest.approx(se)
    assert r.high - r.estimate == pytest.approx(1.6448536269514722 * se)
    assert (r.n, r.n_unlabelled, r.lam, r.level) == (4, 6, 1.0, 0.9)
    assert r.interval.method == "ppi" and r.estimate in r.interval


def test_tuning_falls_back_to_the_human_mean_for_a_useless_judge() -> None:
    g = np.random.default_rng(0)
    y = g.random(50)
    f = np.full(50, 0.3)
    r = stats.ppi_mean(y, f, np.full(200, 0.3), tune=True)
    assert r.lam == 0.0 and r.estimate == pytest.approx(y.mean())


def test_fail_closed() -> None:
    with pytest.raises(InputError, match="same queries"):
        stats.ppi_mean([0.1, 0.2, 0.3], [0.1, 0.2], [0.1, 0.2])
    with pytest.raises(InputError, match="at least 2"):
        stats.ppi_mean([0.1], [0.1], [0.1, 0.2])
    with pytest.raises(InputError, match="finite"):
        stats.ppi_mean([0.1, float("nan")], [0.1, 0.2], [0.1, 0.2])
    with pytest.raises(InputError, match="confidence level"):
        stats.ppi_mean([0.1, 0.2], [0.1, 0.2], [0.1, 0.2], level=95)
