"""Kappa against scikit-learn, Krippendorff's alpha against a brute force from the coincidence-matrix
definition (and the ``krippendorff`` package), the confusion matrix, the bootstrap interval, fail-closed."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from ranklens import stats
from ranklens.errors import InputError


def _pairs(seed: int, n: int, scale: int = 4) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    a = g.integers(0, scale, n)
    b = np.clip(a + g.integers(-1, 2, n), 0, scale - 1)
    return a, b


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(20))
def test_kappa_matches_sklearn(weights: str | None, seed: int) -> None:
    a, b = _pairs(seed, 5 + 7 * seed)
    expected = cohen_kappa_score(a, b, weights=weights, labels=[0, 1, 2, 3])
    assert stats.cohen_kappa(a, b, weights=weights, scale=[0, 1, 2, 3]) == pytest.approx(expected, abs=1e-12)
    if len(set(a) | set(b)) > 1 and not np.isnan(cohen_kappa_score(a, b, weights=weights)):
        assert stats.cohen_kappa(a, b, weights=weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)


def test_confusion_matrix_counts_every_pair() -> None:
    a, b = _pairs(3, 200)
    c = stats.confusion_matrix(a, b, scale=[0, 1, 2, 3])
    assert c.n == 200 and c.scale == (0.0, 1.0, 2.0, 3.0)
    for i, j in itertools.product(range(4), range(4)):
        assert c.counts[i, j] == int(((a == i) & (b == j)).sum())
    assert c.to_dict()["scale"] == [0, 1, 2, 3]


def test_kappa_fails_closed() -> None:
    with pytest.raises(InputError, match="no item"):
        stats.cohen_kappa([], [])
    with pytest.raises(InputError, match="undefined"):
        stats.cohen_kappa([2, 2, 2], [2, 2, 2])
    with pytest.raises(InputError, match="not on the scale"):
        stats.cohen_kappa([0, 5], [0, 1], scale=[0, 1, 2, 3])
    with pytest.raises(InputError, match="same items"):
        stats.cohen_kappa([0, 1], [0])
    with pytest.raises(InputError, match="unknown kappa weights"):
        stats.cohen_kappa([0, 1], [1, 0], weights="cubic")


def test_kappa_interval_is_seeded_and_covers_the_estimate() -> None:
    a, b = _pairs(7, 150)
    k = stats.cohen_kappa(a, b, weights="quadratic")
    one = stats.kappa_interval(a, b, weights="quadratic", seed=1, samples=500)
    two = stats.kappa_interval(a, b, weights="quadratic", seed=1, samples=500)
    assert one == two and one.method == "bootstrap" and one.level == 0.95
    assert one.low < k < one.high
    assert stats.kappa_interval(a, b, weights="quadratic", seed=2, samples=500) != one


# ── Krippendorff's alpha ────────────────────────────────────────────────────────────────────────


def _alpha_brute(data: list[list[float]], level: str) -> float:
    """Alpha written from the definition: pairable values, the coincidence matrix by loops over ordered
    pairs of ratings of each item, and the difference function of each level."""
    units = []
    for u in range(len(data[0])):
        vals = [row[u] for row in data if not math.isnan(row[u])]
        if len(vals) >= 2:
            units.append(vals)
    values = sorted({v for vals in units for v in vals})
    o = {(c, k): 0.0 for c in values for k in values}
    for vals in units:
        m = len(vals)
        for i, j in itertools.permutations(range(m), 2):
            o[vals[i], vals[j]] += 1.0 / (m - 1)
    n_c = {c: sum(o[c, k] for k in values) for c in values}
    n = sum(n_c.values())

    def delta(c: float, k: float) -> float:
        if level == "nominal":
            return 0.0 if c == k else 1.0
        if level == "interval":
            return (c - k) ** 2
        lo, hi = sorted((c, k))
        between = sum(n_c[g] for g in values if lo <= g <= hi)
        return (between - (n_c[c] + n_c[k]) / 2) ** 2

    d_o = sum(o[c, k] * delta(c, k) for c in values for k in values)
    d_e = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n - 1)
    return 1.0 - d_o / d_e


def _reliability(seed: int, raters: int, items: int, missing: float) -> list[list[float]]:
    g = np.random.default_rng(seed)
    truth = g.integers(0, 4, items)
    data = np.clip(truth + g.integers(-1, 2, (raters, items)), 0, 3).astype(float)
    data[g.random((raters, items)) < missing] = np.nan
    return data.tolist()


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(12))
def test_alpha_matches_brute_force(level: str, seed: int) -> None:
    data = _reliability(seed, 2 + seed % 3, 8 + 3 * seed, 0.15 if seed % 2 else 0.0)
    assert stats.krippendorff_alpha(data, level=level) == pytest.approx(_alpha_brute(data, level), abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(8))
def test_alpha_matches_the_krippendorff_package(level: str, seed: int) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    data = _reliability(100 + seed, 2 + seed % 2, 40, 0.1)
    expected = krippendorff.alpha(reliability_data=np.array(data), level_of_measurement=level)
    assert stats.krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-10)


def test_alpha_is_one_on_perfect_agreement_and_fails_closed() -> None:
    assert stats.krippendorff_alpha([[0, 1, 2, 3], [0, 1, 2, 3]]) == 1.0
    with pytest.raises(InputError, match="no pairable item"):
        stats.krippendorff_alpha([[0, math.nan], [math.nan, 1]])
    with pytest.raises(InputError, match="undefined"):
        stats.krippendorff_alpha([[1, 1], [1, 1]])
    with pytest.raises(InputError, match="unknown level"):
        stats.krippendorff_alpha([[0, 1], [1, 0]], level="ratio")
    with pytest.raises(InputError, match="2-D"):
        stats.krippendorff_alpha([0, 1])
