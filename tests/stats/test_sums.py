"""The pure-Python sums the light faces print equal numpy's to the last bit (the oracle is numpy itself)."""

from __future__ import annotations

import array

import numpy as np
import pytest

from ranklens.stats.sums import np_mean, np_std, np_sum

SIZES = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 127, 128, 129, 255, 256, 257, 1000, 4097, 20_000, 100_003]


@pytest.mark.parametrize("n", SIZES)
def test_bit_for_bit_equal_to_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(5):
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
        as_list, as_array = x.tolist(), array.array("d", x.tolist())
        for values in (as_list, as_array):
            assert np_sum(values) == float(x.sum())
            if n:
                assert np_mean(values) == float(x.mean())
            if n > 1:
                assert np_std(values, ddof=1) == float(x.std(ddof=1))
                assert np_std(values) == float(x.std())


def test_the_order_matters_so_the_test_can_fail() -> None:
    """A plain left-to-right sum differs from numpy's on these values: the checks above see the order."""
    x = np.random.default_rng(7).standard_normal(1000)
    assert sum(x.tolist()) != float(x.sum()) and np_sum(x.tolist()) == float(x.sum())


def test_empty_and_too_few() -> None:
    assert np_sum([]) == 0.0
    assert np.isnan(np_mean([])) and np.isnan(np_std([1.0], ddof=1))
