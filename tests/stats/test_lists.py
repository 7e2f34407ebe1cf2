"""The numpy-free forms the light faces use give numpy's floats, bit for bit: the t statistic, its interval,
Cohen's d, wins/ties/losses and the corrections, against the numpy formulas written out here (the forms
``compare`` used before) and statsmodels' corrections."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from ranklens import stats
from ranklens.stats.corrections import adjust_p_list
from ranklens.stats.lists import diff_list, paired_lists, win_tie_loss
from ranklens.stats.student_t import t_isf


def numpy_diffs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    tol = 1e-12 * max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    d = a - b
    d[np.abs(d) <= tol] = 0.0
    return d


def pairs() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(26)
    out = []
    for n in (2, 3, 7, 8, 9, 12, 50, 128, 129, 300, 1000):
        for _ in range(4):
            a = rng.random(n)
            b = np.where(rng.random(n) < 0.2, a, rng.random(n))  # (some ties, as measures have)
            out.append((a, b))
    return out


@pytest.mark.parametrize(("a", "b"), pairs())
def test_t_interval_and_effect_are_numpys_floats(a: np.ndarray, b: np.ndarray) -> None:
    d = numpy_diffs(a, b)
    n = d.size
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    got = stats.paired_t_test(a.tolist(), b.tolist())
    assert got.statistic == mean / (sd / math.sqrt(n))
    assert stats.cohens_d_paired(a.tolist(), b.tolist()) == mean / sd
    q = t_isf(0.5 - 0.95 / 2.0, n - 1)  # (as t_interval asks: 0.025000000000000022)
    assert q is not None
    ci = stats.t_interval(a.tolist(), b.tolist())
    assert (ci.low, ci.high) == (mean - q * sd / math.sqrt(n), mean + q * sd / math.sqrt(n))
    assert diff_list(a.tolist(), b.tolist())[0] == d.tolist()
    assert win_tie_loss(a, b) == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))


def test_the_bit_checks_can_fail() -> None:
    """A mean taken left to right differs from numpy's on these values: the equalities above see the order."""
    a, b = pairs()[-1]
    d = numpy_diffs(a, b)
    assert sum(d.tolist()) / d.size != float(d.mean())


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh"])
def test_corrections_equal_statsmodels(method: str) -> None:
    rng = np.random.default_rng(3)
    name = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}[method]
    for m in (1, 2, 5, 17, 60):
        p = rng.random(m) ** 3
        p[rng.random(m) < 0.2] = p[0]  # (ties: the stable order matters)
        expected = multipletests(p, method=name)[1]
        got = adjust_p_list(p.tolist(), method)
        assert got == pytest.approx(expected.tolist(), rel=1e-14, abs=0)
        assert stats.adjust_p_values(p, method).tolist() == got


def test_nan_p_values_stay_out_of_the_family() -> None:
    got = adjust_p_list([0.01, math.nan, 0.04], "holm")
    assert got[0] == 0.02 and math.isnan(got[1]) and got[2] == 0.04


def test_bad_input_says_what_numpy_says() -> None:
    with pytest.raises(Exception, match="same queries"):
        paired_lists([0.1, 0.2], [0.1])
    with pytest.raises(Exception, match="finite"):
        paired_lists([0.1, math.nan], [0.1, 0.2])
    with pytest.raises(Exception, match="1-D"):
        paired_lists([[0.1], [0.2]], [0.1, 0.2])
    with pytest.raises(Exception, match="no query"):
        paired_lists([], [])
