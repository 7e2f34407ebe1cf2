"""Properties of the paired tests (hypothesis), and agreement with scipy and brute force on random data."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens import stats
from ranklens.errors import InputError

# IR-like scores: multiples of 1/100 in [0, 1], so mathematically equal differences are common
score = st.integers(0, 100).map(lambda k: k / 100)


@st.composite
def paired_scores(draw: st.DrawFn, min_size: int = 2, max_size: int = 14) -> tuple[list[float], list[float]]:
    n = draw(st.integers(min_size, max_size))
    a = draw(st.lists(score, min_size=n, max_size=n))
    b = draw(st.lists(score, min_size=n, max_size=n))
    return a, b


FAST = settings(max_examples=40, deadline=None)
TESTS = ["t", "randomisation", "bootstrap", "wilcoxon", "sign"]


def _run(test: str, a: list[float], b: list[float]) -> stats.TestResult:
    return stats.paired_test(a, b, test, samples=400, seed=11)


@FAST
@given(paired_scores(), st.sampled_from(TESTS))
def test_swapping_systems_flips_the_difference_and_keeps_p(data: tuple[list[float], list[float]], test: str) -> None:
    a, b = data
    ab, ba = _run(test, a, b), _run(test, b, a)
    assert ab.p_value == pytest.approx(ba.p_value, rel=1e-12, abs=0) or (
        math.isnan(ab.p_value) and math.isnan(ba.p_value)
    )
    if test in ("t", "randomisation", "bootstrap"):
        assert ab.statistic == pytest.approx(-ba.statistic, abs=1e-12) or ab.statistic == ba.statistic == 0.0
    d_ab = float(np.mean(np.subtract(a, b)))
    d_ba = float(np.mean(np.subtract(b, a)))
    assert d_ab == pytest.approx(-d_ba, abs=1e-12)
    ci_ab, ci_ba = stats.t_interval(a, b), stats.t_interval(b, a)
    if not math.isnan(ci_ab.low):
        assert (ci_ab.low, ci_ab.high) == pytest.approx((-ci_ba.high, -ci_ba.low), abs=1e-12)
    w_ab, w_ba = stats.win_tie_loss(a, b), stats.win_tie_loss(b, a)
    assert w_ab == w_ba[::-1]
    assert stats.cohens_d_paired(a, b) == pytest.approx(-stats.cohens_d_paired(b, a), abs=1e-12) or (
        math.isnan(stats.cohens_d_paired(a, b))
    )


@FAST
@given(st.lists(score, min_size=1, max_size=30), st.sampled_from(TESTS))
def test_identical_systems_give_p_one_and_an_interval_containing_zero(a: list[float], test: str) -> None:
    r = _run(test, a, list(a))
    assert r.p_value == 1.0
    for method in ("t", "bootstrap"):
        ci = stats.confidence_interval(a, list(a), method, samples=200, seed=3)
        assert 0.0 in ci
    assert stats.cohens_d_paired(a, a) == 0.0
    assert stats.win_tie_loss(a, a) == (0, len(a), 0)


@FAST
@given(paired_scores(min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_seeds_make_monte_carlo_reproducible(data: tuple[list[float], list[float]], seed: int) -> None:
    a, b = data
    for run in (
        lambda: stats.randomisation_test(a, b, samples=300, exact_max_n=0, seed=seed),
        lambda: stats.bootstrap_test(a, b, samples=300, seed=seed),
        lambda: stats.bootstrap_interval(a, b, samples=300, seed=seed),
    ):
        assert run() == run()


@FAST
@given(paired_scores(min_size=1, max_size=30))
def test_p_values_are_probabilities(data: tuple[list[float], list[float]]) -> None:
    a, b = data
    for test in TESTS:
        p = _run(test, a, b).p_value
        assert math.isnan(p) or 0.0 < p <= 1.0 or (test == "t" and p == 0.0)
    mc = stats.randomisation_test(a, b, samples=50, exact_max_n=0, seed=0)
    assert mc.p_value >= 1 / 51  # (count + 1) / (B + 1) is never 0


@FAST
@given(paired_scores(min_size=2, max_size=25))
def test_t_test_matches_scipy(data: tuple[list[float], list[float]]) -> None:
    a, b = data
    d = np.subtract(a, b)
    if np.ptp(d) == 0:  # constant differences: scipy divides by zero; our convention is tested elsewhere
        return
    ours = stats.paired_t_test(a, b)
    ref = scipy.stats.ttest_rel(a, b)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-9)


@FAST
@given(paired_scores(min_size=1, max_size=12) | paired_scores(min_size=14, max_size=40))
def test_wilcoxon_matches_scipy(data: tuple[list[float], list[float]]) -> None:
    a, b = data
    # (n = 13 with ties is skipped only for speed: scipy enumerates 2^13 sign flips in a slow permutation test)
    if not np.any(np.subtract(a, b)):
        return  # all ties: scipy divides by zero; we return p = 1 (tested above)
    ref = scipy.stats.wilcoxon(a, b)
    ours = stats.wilcoxon_test(a, b)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert ours.statistic == ref.statistic


@FAST
@given(paired_scores(min_size=1, max_size=25))
def test_sign_test_matches_scipy_binomtest(data: tuple[list[float], list[float]]) -> None:
    a, b = data
    wins = sum(x > y for x, y in zip(a, b))
    losses = sum(x < y for x, y in zip(a, b))
    if wins + losses == 0:
        return
    assert stats.sign_test(a, b).p_value == pytest.approx(scipy.stats.binomtest(wins, wins + losses).pvalue, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(paired_scores(min_size=1, max_size=9))
def test_exact_randomisation_matches_brute_force(data: tuple[list[float], list[float]]) -> None:
    a, b = data
    d = [Fraction(str(x)) - Fraction(str(y)) for x, y in zip(a, b)]
    observed = abs(sum(d))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d))) >= observed for signs in itertools.product((1, -1), repeat=len(d))
    )
    assert stats.randomisation_test(a, b).p_value == pytest.approx(hits / 2 ** len(d), abs=1e-15)


def test_exact_limit_switches_to_monte_carlo() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.random(21), rng.random(21)
    assert stats.randomisation_test(a[:20], b[:20]).samples is None
    mc = stats.randomisation_test(a, b, samples=2_000, seed=1)
    assert mc.samples == 2_000
    exact = stats.randomisation_test(a, b, exact_max_n=21)
    assert abs(mc.p_value - exact.p_value) < 4 * math.sqrt(exact.p_value * (1 - exact.p_value) / 2_000) + 1e-3


@FAST
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_corrections_order_and_bounds(p: list[float]) -> None:
    holm, bonf, bh = stats.holm(p), stats.bonferroni(p), stats.benjamini_hochberg(p)
    raw = np.asarray(p)
    assert np.all(raw <= holm + 1e-15) and np.all(holm <= bonf + 1e-15)
    assert np.all(raw <= bh + 1e-15) and np.all(bh <= holm + 1e-15)
    assert np.all(holm <= 1) and np.all(bh <= 1)
    order = np.argsort(raw, kind="stable")
    assert np.all(np.diff(holm[order]) >= -1e-15)  # step-down keeps the order
    assert np.all(np.diff(bh[order]) >= -1e-15)


def test_corrections_leave_nan_out_of_the_family() -> None:
    out = stats.holm([0.01, math.nan, 0.04])
    assert math.isnan(out[1])
    assert out[[0, 2]] == pytest.approx([0.02, 0.04])
    with pytest.raises(InputError, match="did you mean 'bonferroni'"):
        stats.adjust_p_values([0.1], "bonferoni")


@FAST
@given(st.integers(2, 7), st.integers(1, 3), st.integers(0, 2**16))
def test_pareto_dominators_match_brute_force(m: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 4, m) / 4
    c = rng.integers(0, 4, (m, k)).astype(float)
    got = stats.dominators(q, c)
    for i in range(m):
        expected = [
            j
            for j in range(m)
            if q[j] >= q[i]
            and all(c[j, x] <= c[i, x] for x in range(k))
            and (q[j] > q[i] or any(c[j, x] < c[i, x] for x in range(k)))
        ]
        assert got[i] == expected


def test_two_systems_blocked_tukey_equals_paired_t() -> None:
    # with m = 2 the studentized range is √2·|t| and Tukey's p is the paired t-test's p
    rng = np.random.default_rng(9)
    a, b = rng.random(15), rng.random(15)
    pair = stats.tukey_hsd(np.column_stack([a, b])).pair(0, 1)
    t = scipy.stats.ttest_rel(a, b)
    assert pair.statistic == pytest.approx(math.sqrt(2) * abs(t.statistic), rel=1e-9)
    assert pair.p_value == pytest.approx(t.pvalue, rel=1e-6)


def test_constant_difference_conventions() -> None:
    a, b = [0.5, 0.6, 0.7], [0.4, 0.5, 0.6]
    r = stats.paired_t_test(a, b)
    assert r.statistic == math.inf and r.p_value == 0.0
    assert stats.cohens_d_paired(a, b) == math.inf
    assert stats.paired_t_test([0.5], [0.4]).p_value != stats.paired_t_test([0.5], [0.4]).p_value  # NaN


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([0.1, 0.2], [0.1], "same queries"),
        ([], [], "no query in common"),
        ([0.1, math.nan], [0.1, 0.2], "finite"),
        ([[0.1]], [[0.2]], "1-D"),
    ],
)
def test_bad_inputs_are_input_errors(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(InputError, match=message):
        stats.paired_t_test(a, b)


def test_unknown_test_name_suggests() -> None:
    with pytest.raises(InputError, match="did you mean 'wilcoxon'"):
        stats.paired_test([0.1], [0.2], "wilcoxn")
    assert stats.canonical_test("Permutation") == "randomisation"
    with pytest.raises(InputError, match="all systems at once"):
        stats.paired_test([0.1], [0.2], "tukey")
