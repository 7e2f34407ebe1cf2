"""Kendall's τ-b against scipy, τ_AP against a brute force from its definition, and their properties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens import stats
from ranklens.errors import InputError


def _tau_ap_brute(reference: list[float], candidate: list[float]) -> float:
    """Yilmaz et al. 2008, from the definition: walk the candidate ranking; at rank i count the systems
    above that the reference also puts above."""
    ranked = sorted(range(len(candidate)), key=lambda s: -candidate[s])
    total = 0.0
    for i in range(1, len(ranked)):
        current = ranked[i]
        correct = sum(1 for above in ranked[:i] if reference[above] > reference[current])
        total += correct / i
    return 2.0 / (len(ranked) - 1) * total - 1.0


@pytest.mark.parametrize("seed", range(30))
def test_tau_matches_scipy_with_ties(seed: int) -> None:
    g = np.random.default_rng(seed)
    n = 3 + seed
    a = g.integers(0, 6, n) / 5  # ties are common
    b = a + g.normal(0, 0.3, n).round(1)
    if len(set(a)) == 1 or len(set(b)) == 1:
        pytest.skip("tau undefined")
    assert stats.kendall_tau(a, b) == pytest.approx(scipy.stats.kendalltau(a, b).statistic, abs=1e-12)


@pytest.mark.parametrize("seed", range(30))
def test_tau_ap_matches_brute_force(seed: int) -> None:
    g = np.random.default_rng(seed)
    n = 2 + seed
    a = g.permutation(n).tolist()
    b = (np.array(a) + g.normal(0, n / 3, n)).tolist()
    assert stats.tau_ap(a, b) == pytest.approx(_tau_ap_brute(a, b), abs=1e-12)


def test_tau_ap_is_exhaustively_right_on_four_systems() -> None:
    ref = [4, 3, 2, 1]
    for perm in itertools.permutations(ref):
        assert stats.tau_ap(ref, list(perm)) == pytest.approx(_tau_ap_brute(ref, list(perm)), abs=1e-12)


distinct = st.lists(st.integers(-1000, 1000), min_size=2, max_size=25, unique=True)


@settings(max_examples=200, deadline=None)
@given(distinct)
def test_identity_and_reversal(xs: list[int]) -> None:
    rev = [-x for x in xs]
    assert stats.kendall_tau(xs, xs) == pytest.approx(1.0)
    assert stats.kendall_tau(xs, rev) == pytest.approx(-1.0)
    assert stats.tau_ap(xs, xs) == pytest.approx(1.0)
    assert stats.tau_ap(xs, rev) == pytest.approx(-1.0)


@settings(max_examples=200, deadline=None)
@given(distinct, st.randoms(use_true_random=False))
def test_tau_is_symmetric_and_bounded(xs: list[int], rnd: object) -> None:
    ys = list(xs)
    rnd.shuffle(ys)  # type: ignore[attr-defined]
    t = stats.kendall_tau(xs, ys)
    assert t == pytest.approx(stats.kendall_tau(ys, xs))
    assert -1.0 - 1e-12 <= t <= 1.0 + 1e-12
    assert -1.0 - 1e-12 <= stats.tau_ap(xs, ys) <= 1.0 + 1e-12


def test_tau_ap_is_not_symmetric() -> None:
    # a swap at the top of the candidate costs more than at the bottom
    ref, cand = [5, 4, 3, 2, 1], [5, 3, 2, 1, 4]
    assert stats.tau_ap(ref, cand) != pytest.approx(stats.tau_ap(cand, ref))
    assert stats.kendall_tau(ref, cand) == pytest.approx(stats.kendall_tau(cand, ref))
    # top swap vs bottom swap: same tau, different tau_AP
    top, bottom = [4, 5, 3, 2, 1], [5, 4, 3, 1, 2]
    assert stats.kendall_tau(ref, top) == stats.kendall_tau(ref, bottom)
    assert stats.tau_ap(ref, top) < stats.tau_ap(ref, bottom)


def test_fail_closed() -> None:
    with pytest.raises(InputError, match="at least two systems"):
        stats.kendall_tau([1.0], [1.0])
    with pytest.raises(InputError, match="undefined"):
        stats.kendall_tau([1, 1, 1], [1, 2, 3])
    with pytest.raises(InputError, match="strict ordering"):
        stats.tau_ap([1, 2, 3], [1, 1, 3])
    with pytest.raises(InputError, match="aligned"):
        stats.tau_ap([1, 2, 3], [1, 2])
