"""Seeded simulations of the A/B statistics (issue 25): the error rates they promise, checked against the
binomial 99% band of the number of simulations; vectorised or kept small so they run in about a second."""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from ranklens.stats.sequential import msprt_path
from ranklens.stats.srm import srm_test
from ranklens.stats.unpaired import welch_interval, welch_moments, welch_test
from ranklens.stats.variance_reduction import cuped

SIMS = 2_000
ALPHA = 0.05


def _band(p: float, n: int = SIMS) -> tuple[float, float]:
    low, high = st.binom.interval(0.99, n, p)
    return low / n, high / n


def _ndcg_like(rng: np.random.Generator, size: tuple[int, ...], shift: float = 0.0) -> np.ndarray:
    """Bounded, skewed per-user values with a point mass at 0, like nDCG@4 of users who watched nothing."""
    values = rng.beta(2.0, 1.2, size=size) * (rng.random(size) > 0.15)
    return values + shift


def test_welch_false_positive_rate_under_the_null_is_alpha() -> None:
    rng = np.random.default_rng(1)
    a = _ndcg_like(rng, (SIMS, 120))
    b = _ndcg_like(rng, (SIMS, 80))
    p = np.array([welch_test(a[i], b[i]).p_value for i in range(SIMS)])
    rate = float((p < ALPHA).mean())
    low, high = _band(ALPHA)
    assert low <= rate <= high, (rate, low, high)


def test_welch_interval_covers_the_true_difference() -> None:
    rng = np.random.default_rng(2)
    true_diff = 0.05
    a = _ndcg_like(rng, (SIMS, 90), shift=true_diff)
    b = _ndcg_like(rng, (SIMS, 150))
    covered = np.array([true_diff in welch_interval(a[i], b[i]) for i in range(SIMS)])
    rate = float(covered.mean())
    low, high = _band(1 - ALPHA)
    assert low <= rate <= high, (rate, low, high)


def test_cuped_reduces_variance_by_rho_squared_and_stays_unbiased() -> None:
    rng = np.random.default_rng(3)
    rho, n, sims, effect = 0.7, 1_000, 300, 0.1
    raw, adjusted, reductions = [], [], []
    for _ in range(sims):
        x = rng.normal(size=(2, n))
        y = rho * x + np.sqrt(1 - rho**2) * rng.normal(size=(2, n))
        y[1] += effect
        r = cuped(y[0], y[1], x[0], x[1])
        raw.append(y[1].mean() - y[0].mean())
        adjusted.append(r.difference)
        reductions.append(r.variance_reduction)
    assert abs(np.mean(reductions) - rho**2) < 0.02
    # unbiased: the mean adjusted difference lies within 3 standard errors of the true effect
    assert abs(np.mean(adjusted) - effect) < 3 * np.std(adjusted, ddof=1) / np.sqrt(sims)
    # and its variance over the simulations is (1 − ρ²) of the unadjusted one
    ratio = np.var(adjusted, ddof=1) / np.var(raw, ddof=1)
    assert abs(ratio - (1 - rho**2)) < 0.1, ratio


def test_daily_peeking_sequential_stays_below_alpha_while_naive_exceeds_it() -> None:
    rng = np.random.default_rng(4)
    days, per_day = 30, 40
    a = _ndcg_like(rng, (SIMS, days, per_day))
    b = _ndcg_like(rng, (SIMS, days, per_day))
    n = per_day * np.arange(1, days + 1)

    def cumulative(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s, s2 = np.cumsum(x.sum(axis=2), axis=1), np.cumsum((x**2).sum(axis=2), axis=1)
        mean = s / n
        return mean, (s2 - n * mean**2) / (n - 1)

    ma, va = cumulative(a)
    mb, vb = cumulative(b)
    naive_p = welch_moments(ma, va, n, mb, vb, n)[3]  # a fixed-horizon Welch test repeated every day
    naive_rate = float((naive_p < ALPHA).any(axis=1).mean())
    pooled_sd = float(np.sqrt((va[:, -1] + vb[:, -1]).mean() / 2))
    seq_p, _, _ = msprt_path(ma - mb, va / n + vb / n, 0.1 * pooled_sd, alpha=ALPHA)
    seq_rate = float((seq_p[:, -1] < ALPHA).mean())
    print(f"daily peeking over {days} days: naive repeated Welch FPR {naive_rate:.3f}, mSPRT FPR {seq_rate:.3f}")
    assert naive_rate > _band(ALPHA)[1]  # peeking inflates the fixed-horizon test
    assert seq_rate <= ALPHA


def test_confidence_sequence_covers_the_truth_at_every_look() -> None:
    rng = np.random.default_rng(6)
    days, per_day, effect = 30, 40, 0.05
    a = _ndcg_like(rng, (SIMS, days, per_day), shift=effect)
    b = _ndcg_like(rng, (SIMS, days, per_day))
    n = per_day * np.arange(1, days + 1)
    ma, mb = np.cumsum(a.sum(2), 1) / n, np.cumsum(b.sum(2), 1) / n
    va = (np.cumsum((a**2).sum(2), 1) - n * ma**2) / (n - 1)
    vb = (np.cumsum((b**2).sum(2), 1) - n * mb**2) / (n - 1)
    _, low, high = msprt_path(ma - mb, va / n + vb / n, 0.03, alpha=ALPHA)
    missed = ((low > effect) | (high < effect)).any(axis=1).mean()
    assert missed <= ALPHA


def test_srm_flags_a_52_48_split_of_20000_users() -> None:
    r = srm_test([10_400, 9_600], [0.5, 0.5])
    assert r.mismatch and r.p < 1e-6
    assert not srm_test([10_050, 9_950], [0.5, 0.5]).mismatch
