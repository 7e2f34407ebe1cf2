"""The grouped IPS/SNIPS estimator (:mod:`ranklens.engine.ips`), the one formulation under ``ips_dcg`` and the
production windows, against independent computations: per-group Python loops over pages for the values,
:func:`scipy.stats.sem` for the IPS standard error, a jackknife over pages for the delta-method SNIPS one, and a
brute-force bootstrap replicate for :meth:`GroupedIPS.resampled`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ranklens.engine.ips import ips_by_group


def _log(seed: int, n_pages: int, n_groups: int):
    rng = np.random.default_rng(seed)
    rows_per_page = rng.integers(1, 6, size=n_pages)
    page = np.repeat(np.arange(n_pages), rows_per_page)
    click = (rng.random(page.size) < 0.3).astype(np.float64)
    weight = rng.uniform(0.1, 3.0, size=page.size)
    theta = rng.uniform(0.2, 1.0, size=page.size)
    page_group = rng.integers(0, n_groups, size=n_pages)
    return page, click, weight, theta, page_group


def _by_loops(page, click, weight, theta, page_group, g):
    """(IPS, SNIPS, per-page rewards, dens, nums) of group g by Python loops over its pages."""
    rewards, dens, nums = [], [], []
    for p in np.flatnonzero(page_group == g):
        rows = page == p
        rewards.append(float(sum(c * w for c, w in zip(click[rows], weight[rows]))))
        dens.append(float(sum(theta[rows])))
        nums.append(float(sum(t * w for t, w in zip(theta[rows], weight[rows]))))
    ips = sum(rewards) / len(rewards)
    return ips, ips * sum(dens) / sum(nums), np.array(rewards), np.array(dens), np.array(nums)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_and_standard_errors_per_group_equal_independent_computations(seed: int) -> None:
    page, click, weight, theta, page_group = _log(seed, 3000, 4)
    ips = ips_by_group(page, click, weight, theta, page_group=page_group, n_groups=5)
    snips = ips_by_group(page, click, weight, theta, page_group=page_group, n_groups=5, self_normalize=True)
    for g in range(4):
        v_ips, v_snips, r, d, u = _by_loops(page, click, weight, theta, page_group, g)
        assert ips.value[g] == pytest.approx(v_ips, rel=1e-12)
        assert snips.value[g] == pytest.approx(v_snips, rel=1e-12)
        assert ips.pages[g] == r.size
        assert ips.se[g] == pytest.approx(stats.sem(r), rel=1e-10)
        # the jackknife standard error of the ratio estimator: leave one page out
        n = r.size
        loo = (r.sum() - r) / (n - 1) * (d.sum() - d) / (u.sum() - u)
        jack = math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
        assert snips.se[g] == pytest.approx(jack, rel=0.02)
    # the group with no pages: NaN, not 0
    assert ips.pages[4] == 0 and math.isnan(ips.value[4]) and math.isnan(snips.se[4])


def test_one_group_at_a_time_equals_all_groups_at_once() -> None:
    page, click, weight, theta, page_group = _log(5, 500, 3)
    together = ips_by_group(page, click, weight, theta, page_group=page_group, self_normalize=True)
    for g in range(3):
        pages = np.flatnonzero(page_group == g)
        rows = np.isin(page, pages)
        code = np.searchsorted(pages, page[rows])
        alone = ips_by_group(code, click[rows], weight[rows], theta[rows], self_normalize=True)
        assert alone.value[0] == pytest.approx(together.value[g], rel=1e-12)
        assert alone.se[0] == pytest.approx(together.se[g], rel=1e-9)


def test_a_resample_is_the_estimator_on_the_pages_drawn() -> None:
    page, click, weight, theta, _ = _log(7, 40, 1)
    est = ips_by_group(page, click, weight, theta, self_normalize=True)
    rng = np.random.default_rng(0)
    drawn = rng.integers(0, 40, size=40)
    counts = np.bincount(drawn, minlength=40).astype(np.float64)
    # brute force: copy the drawn pages' rows under new page codes and estimate again
    rows = [np.flatnonzero(page == p) for p in drawn]
    code = np.concatenate([np.full(r.size, i) for i, r in enumerate(rows)])
    idx = np.concatenate(rows)
    again = ips_by_group(code, click[idx], weight[idx], theta[idx], self_normalize=True)
    assert est.resampled(counts[None, :])[0] == pytest.approx(again.value[0], rel=1e-12)
