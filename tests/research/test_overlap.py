"""Tie-aware RBO against a brute-force average over the orderings of the ties; Kendall's τ against scipy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens.research.overlap import kendall_tau, rbo


def plain_rbo_ext(a: list[str], b: list[str], k: int, p: float) -> float:
    """Webber et al. (2010) eq. 32 on two untied lists cut at k, written out from the definition."""
    total = 0.0
    for d in range(1, k + 1):
        total += len(set(a[:d]) & set(b[:d])) / d * p**d
    x_k = len(set(a[:k]) & set(b[:k]))
    return (1 - p) / p * total + x_k / k * p**k


def orderings(docs: list[str], scores: list[float]) -> list[list[str]]:
    """Every ordering of ``docs`` that keeps scores descending (ties permuted)."""
    groups = [[d for d, s in zip(docs, scores) if s == v] for v in sorted(set(scores), reverse=True)]
    return [list(itertools.chain(*combo)) for combo in itertools.product(*(itertools.permutations(g) for g in groups))]


ranking = st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=6, unique=True).flatmap(
    lambda docs: st.tuples(st.just(docs), st.lists(st.integers(0, 2), min_size=len(docs), max_size=len(docs)))
)


@settings(max_examples=80, deadline=None)
@given(ranking, ranking, st.integers(1, 7), st.sampled_from([0.5, 0.9]))
def test_rbo_is_the_average_over_the_orderings_of_ties(x: tuple, y: tuple, k: int, p: float) -> None:
    (da, ia), (db, ib) = x, y
    # rank order: score descending (any fixed order within ties; rbo must not depend on it)
    oa = sorted(zip(da, ia), key=lambda t: -t[1])
    ob = sorted(zip(db, ib), key=lambda t: -t[1])
    da, sa = [d for d, _ in oa], np.array([float(s) for _, s in oa])
    db, sb = [d for d, _ in ob], np.array([float(s) for _, s in ob])
    depth = min(k, len(da), len(db))
    want = np.mean([plain_rbo_ext(a, b, depth, p) for a in orderings(da, list(sa)) for b in orderings(db, list(sb))])
    assert rbo(da, sa, db, sb, k, p) == pytest.approx(want, abs=1e-12)


def test_identical_untied_rankings_have_rbo_one() -> None:
    docs, scores = list("abcde"), np.arange(5.0)[::-1]
    assert rbo(docs, scores, docs, scores, 5) == pytest.approx(1.0, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(ranking, ranking, st.integers(2, 7))
def test_kendall_tau_is_scipys_tau_b_on_the_shared_top_k(x: tuple, y: tuple, k: int) -> None:
    (da, ia), (db, ib) = x, y
    sa, sb = np.array(ia, float), np.array(ib, float)
    shared = [d for d in da[:k] if d in db[:k]]
    got = kendall_tau(da, sa, db, sb, k)
    if len(shared) < 2:
        assert got is None
        return
    xa = [sa[da.index(d)] for d in shared]
    xb = [sb[db.index(d)] for d in shared]
    want = scipy.stats.kendalltau(xa, xb, variant="b").statistic
    if np.isnan(want):
        assert got is None
    else:
        assert got == pytest.approx(want, abs=1e-12)
