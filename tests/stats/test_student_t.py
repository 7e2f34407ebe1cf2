"""The pure-Python Student t (``ranklens.stats.student_t``) against scipy's ``t.sf``/``t.isf``: a relative
1e-12 over degrees of freedom 3 … MAX_DF (closed forms for 1 and 2) and tails from the centre to 1e-300; outside its domain it says None."""

from __future__ import annotations

import math

import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from ranklens.stats.student_t import MAX_DF, t_isf, t_sf  # noqa: E402

DFS = [1, 2, 3, 4, 5, 7, 10, 11, 19, 30, 49, 99, 169, 170, 171, 340, 341, 342, 999, 4999, 7777, MAX_DF]
TS = [0.0, 1e-8, 0.01, 0.1, 0.5, 0.9, 1.0, 1.5, 1.96, 2.0, 2.5, 3.0, 4.0, 6.0, 10.0, 30.0, 100.0, 1e3, 1e5, 1e9]


def closed_form(t: float, df: int) -> float:
    """P(T > t) for ν = 1 (Cauchy: atan(1/t)/π) and ν = 2 (1/(s(s+t)), s = √(t²+2)), written without
    cancellation; scipy's ``t.sf`` is off by 3e-9 at ν = 1, t = 1e-8 (0.4999999952568131, where atan gives
    0.49999999681690114)."""
    if t < 0:
        return 1.0 - closed_form(-t, df)
    if df == 1:
        return math.atan2(1.0, t) / math.pi
    s = math.sqrt(t * t + 2.0)
    return 1.0 / (s * (s + t))


@pytest.mark.parametrize("df", DFS)
def test_the_tail_is_scipys(df: int) -> None:
    for t in TS + [-t for t in TS]:
        want = float(scipy_stats.t.sf(t, df)) if df > 2 else closed_form(t, df)
        got = t_sf(t, df)
        assert got is not None
        if want < 1e-300:
            assert got < 1e-290, (df, t, got, want)
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=0), (df, t, got, want)


@pytest.mark.parametrize("df", DFS)
def test_the_quantile_is_scipys(df: int) -> None:
    for q in [0.5, 0.4, 0.25, 0.1, 0.05, 0.025, 0.005, 0.0005, 1e-6, 1e-10, 0.975, 0.9]:
        want = float(scipy_stats.t.isf(q, df))
        got = t_isf(q, df)
        assert got is not None
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (df, q, got, want)


def test_outside_the_domain_it_says_none() -> None:
    assert t_sf(1.0, 0.5) is None and t_sf(1.0, MAX_DF + 1) is None and t_sf(math.nan, 5) is None
    assert t_isf(0.0, 5) is None and t_isf(1.0, 5) is None and t_isf(0.1, MAX_DF * 2) is None
