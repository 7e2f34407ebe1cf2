"""METRICS.md §8.3: the worked example, number by number.

Expected values come from the spec, from scipy, or from brute force written here (exact rational
arithmetic); never from ranklens' own output. The spec's Monte Carlo numbers come from an RNG stream we need
not reproduce: for them we test agreement within a few standard errors, and seed reproducibility.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats

from ranklens import stats

A = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
B = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
C = [0.60, 0.38, 0.50, 0.66, 0.35, 0.47, 0.55, 0.40, 0.50, 0.64]
EXACT_RANDOMISATION_P = 10 / 1024


def _se(p: float, samples: int) -> float:
    """Standard error of a Monte Carlo proportion."""
    return math.sqrt(p * (1 - p) / samples)


# ----------------------------------------------------------------------------------------- paired t


def test_means_and_sd_of_differences() -> None:
    d = np.subtract(A, B)
    assert np.mean(A) == pytest.approx(0.530000, abs=1e-6)
    assert np.mean(B) == pytest.approx(0.489000, abs=1e-6)
    assert d.mean() == pytest.approx(0.041000, abs=1e-6)
    assert d.std(ddof=1) == pytest.approx(0.034140, abs=1e-6)


def test_paired_t_matches_spec_and_scipy() -> None:
    r = stats.paired_t_test(A, B)
    ref = scipy.stats.ttest_rel(A, B)
    assert r.statistic == pytest.approx(3.797671, abs=1e-6)
    assert r.p_value == pytest.approx(0.004232, abs=5e-7)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert r.n == 10 and r.test == "t"


def test_t_interval_matches_scipy() -> None:
    ci = stats.t_interval(A, B, level=0.95)
    ref = scipy.stats.ttest_rel(A, B).confidence_interval(0.95)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), rel=1e-10)
    assert ci.method == "t" and ci.level == 0.95


# ----------------------------------------------------------------------------------- randomisation


def _brute_force_exact_p(a: list[float], b: list[float]) -> Fraction:
    """All 2^n sign flips in exact decimal arithmetic (the scores are decimals with 2 digits)."""
    d = [Fraction(str(x)) - Fraction(str(y)) for x, y in zip(a, b)]
    observed = abs(sum(d))
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(d))
        if abs(sum(s * x for s, x in zip(signs, d))) >= observed
    )
    return Fraction(hits, 2 ** len(d))


def test_exact_randomisation_is_10_over_1024() -> None:
    assert _brute_force_exact_p(A, B) == Fraction(10, 1024)
    r = stats.randomisation_test(A, B)
    assert r.p_value == EXACT_RANDOMISATION_P
    assert r.samples is None
    assert r.statistic == pytest.approx(0.041, abs=1e-12)


def test_raw_float_comparison_would_miss_two_permutations() -> None:
    # METRICS.md §8.2: without a tolerance (ranx style) the same data give 8/1024
    d = np.subtract(A, B)
    observed = abs(np.mean(A) - np.mean(B))
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=10):
        s = np.array(signs)
        c = np.where(s > 0, A, B)
        t = np.where(s > 0, B, A)
        hits += abs(np.mean(c) - np.mean(t)) >= observed
    assert hits == 8
    assert stats.randomisation_test(A, B).p_value * 1024 == 10 == round(_brute_force_exact_p(A, B) * 1024)
    assert d.size == 10


def test_monte_carlo_randomisation_agrees_with_exact_p() -> None:
    samples = 100_000
    r = stats.randomisation_test(A, B, samples=samples, exact_max_n=0, seed=42)
    assert r.samples == samples
    # spec: 0.009720 with +1 from its own stream; ours must agree with the exact p within 4 standard errors
    assert abs(r.p_value - EXACT_RANDOMISATION_P) < 4 * _se(EXACT_RANDOMISATION_P, samples)
    assert abs(r.p_value - 0.009720) < 4 * _se(EXACT_RANDOMISATION_P, samples) * math.sqrt(2)
    # (count + 1) / (B + 1): the numerator is a whole number
    count = r.p_value * (samples + 1) - 1
    assert count == pytest.approx(round(count), abs=1e-6)


def test_monte_carlo_randomisation_is_reproducible_by_seed() -> None:
    first = stats.randomisation_test(A, B, samples=20_000, exact_max_n=0, seed=42)
    again = stats.randomisation_test(A, B, samples=20_000, exact_max_n=0, seed=42)
    other = stats.randomisation_test(A, B, samples=20_000, exact_max_n=0, seed=43)
    assert first == again
    assert other.p_value != first.p_value
    generator_run = stats.randomisation_test(A, B, samples=20_000, exact_max_n=0, seed=np.random.default_rng(42))
    assert generator_run == first


# --------------------------------------------------------------------------------- rank-based tests


def test_wilcoxon_matches_spec_and_scipy() -> None:
    r = stats.wilcoxon_test(A, B)
    ref = scipy.stats.wilcoxon(A, B)
    assert r.statistic == 3.0 == ref.statistic
    assert r.p_value == pytest.approx(0.009766, abs=5e-7)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_sign_test_matches_spec_binomial_and_scipy() -> None:
    r = stats.sign_test(A, B)
    # 8 wins of 10: 2 · P(X ≥ 8), X ~ Bin(10, ½) = 2 · (45 + 10 + 1) / 1024
    assert r.statistic == 8
    assert r.p_value == 2 * (math.comb(10, 8) + math.comb(10, 9) + math.comb(10, 10)) / 1024 == 0.109375
    assert r.p_value == pytest.approx(scipy.stats.binomtest(8, 10).pvalue, rel=1e-12)
    assert stats.win_tie_loss(A, B) == (8, 0, 2)


# ---------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_percentile_interval_close_to_spec() -> None:
    ci = stats.bootstrap_interval(A, B, level=0.95, samples=10_000, seed=7)
    # spec: [0.021000, 0.060000]; quantiles of 10,000 resample means move by well under 0.005 across streams
    assert ci.low == pytest.approx(0.021, abs=0.005)
    assert ci.high == pytest.approx(0.060, abs=0.005)
    assert ci.method == "bootstrap" and 0.041 in ci


def test_bootstrap_seed_behaviour() -> None:
    same = [stats.bootstrap_interval(A, B, samples=2_000, seed=7) for _ in range(2)]
    assert same[0] == same[1]
    others = {stats.bootstrap_interval(A, B, samples=2_000, seed=s) for s in range(5)}
    assert len(others) > 1  # different seeds, different resamples
    for ci in others:
        assert ci.low < 0.041 < ci.high


def test_bootstrap_interval_is_the_quantile_of_resampled_means() -> None:
    # brute force on a tiny case: with n = 2 every resample mean is one of d1, (d1+d2)/2, d2
    a, b = [1.0, 0.0], [0.0, 0.0]
    means = set(stats.bootstrap_means(a, b, samples=500, seed=1).tolist())
    assert means <= {0.0, 0.5, 1.0}
    ci = stats.bootstrap_interval(a, b, level=0.5, samples=4_000, seed=1)
    assert ci.low == 0.0 or ci.low == 0.5
    assert ci.high in (0.5, 1.0)


def test_sakai_bootstrap_test_close_to_spec() -> None:
    samples = 10_000
    r = stats.bootstrap_test(A, B, samples=samples, seed=7)
    assert abs(r.p_value - 0.008300) < 4 * _se(0.0083, samples)
    assert r.statistic == pytest.approx(3.797671, abs=1e-6)  # t_obs
    assert r == stats.bootstrap_test(A, B, samples=samples, seed=7)


# -------------------------------------------------------------------------------------- corrections


RAW = [0.010, 0.040, 0.030, 0.200]


def test_holm_and_bonferroni_match_spec() -> None:
    assert stats.holm(RAW) == pytest.approx([0.040, 0.090, 0.090, 0.200], abs=1e-12)
    assert stats.bonferroni(RAW) == pytest.approx([0.040, 0.160, 0.120, 0.800], abs=1e-12)


def test_benjamini_hochberg_matches_its_definition() -> None:
    m = len(RAW)
    order = sorted(range(m), key=lambda i: RAW[i])
    expected = [0.0] * m
    for rank, i in enumerate(order, 1):
        expected[i] = min(1.0, min(RAW[order[j - 1]] * m / j for j in range(rank, m + 1)))
    assert stats.benjamini_hochberg(RAW) == pytest.approx(expected, abs=1e-12)
    assert stats.adjust_p_values(RAW, "fdr_bh") == pytest.approx(expected, abs=1e-12)


# ----------------------------------------------------------------------------------- many systems


def test_two_way_anova_sums_of_squares() -> None:
    t = stats.blocked_anova(np.column_stack([A, B, C]))
    assert t.ss_systems == pytest.approx(0.008540, abs=5e-7)
    assert t.ss_topics == pytest.approx(0.329347, abs=5e-7)
    assert t.ss_error == pytest.approx(0.010593, abs=5e-7)
    assert t.df_error == 18
    assert t.ms_error == pytest.approx(0.000589, abs=5e-7)
    assert t.ss_total == pytest.approx(t.ss_systems + t.ss_topics + t.ss_error, rel=1e-12)


@pytest.mark.parametrize(
    ("i", "j", "q", "p"),
    [(0, 1, 5.344459, 0.003736), (0, 2, 3.258817, 0.080858), (1, 2, 2.085643, 0.325936)],
)
def test_blocked_tukey_hsd_q_and_p(i: int, j: int, q: float, p: float) -> None:
    res = stats.tukey_hsd(np.column_stack([A, B, C]))
    pair = res.pair(i, j)
    assert pair.statistic == pytest.approx(q, abs=1e-6)
    assert pair.p_value == pytest.approx(p, abs=1e-6)
    # independently: the studentized range survival function at the spec's q
    assert pair.p_value == pytest.approx(scipy.stats.studentized_range.sf(q, 3, 18), abs=1e-6)


def test_blocked_tukey_is_not_the_one_way_tukey() -> None:
    ours = stats.tukey_hsd(np.column_stack([A, B, C])).p_matrix()
    one_way = scipy.stats.tukey_hsd(A, B, C).pvalue
    assert one_way[0, 1] == pytest.approx(0.695864, abs=1e-6)  # spec's last column
    assert ours[0, 1] < 0.01 < one_way[0, 1]


def test_randomised_tukey_hsd_close_to_spec() -> None:
    samples = 20_000
    res = stats.randomised_tukey_hsd(np.column_stack([A, B, C]), samples=samples, seed=3)
    for (i, j), spec_p in {(0, 1): 0.005200, (0, 2): 0.183150, (1, 2): 0.513650}.items():
        assert abs(res.pair(i, j).p_value - spec_p) < 4 * _se(spec_p, samples) + 1 / samples
    assert res == stats.randomised_tukey_hsd(np.column_stack([A, B, C]), samples=samples, seed=3)
    assert res.samples == samples
