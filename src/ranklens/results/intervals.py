"""Bootstrap confidence intervals of the mean of per-query (per-user) values: ``ranklens eval --ci``."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ranklens.results.core import Results

__all__ = ["MeanInterval", "mean_intervals"]


class MeanInterval(NamedTuple):
    """The percentile bootstrap interval of one measure's mean over the queries where it is defined."""

    measure: str
    mean: float
    low: float
    high: float
    n: int


def mean_intervals(res: Results, *, level: float = 0.95, samples: int = 10_000, seed: int = 0) -> list[MeanInterval]:
    """A :class:`MeanInterval` per per-query measure of ``res`` (system-level measures have none; NA
    queries are left out), by :func:`ranklens.stats.bootstrap.bootstrap_interval` against 0.

    >>> import ranklens
    >>> res = ranklens.evaluate({"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 1}},
    ...                         {"a": {"x": 1.0}, "b": {"x": 1.0}, "c": {"z": 1.0}}, ["P@1"])
    >>> [(i.measure, round(i.mean, 4), i.n) for i in mean_intervals(res, samples=200)]
    [('P@1', 0.6667, 3)]
    """
    from ranklens.stats.bootstrap import bootstrap_interval

    out = []
    for j, m in enumerate(res.measures):
        if m.family.is_system(m):
            continue
        values = res.values[:, j]
        values = values[~np.isnan(values)]
        if values.size == 0:
            out.append(MeanInterval(str(m), math.nan, math.nan, math.nan, 0))
            continue
        ci = bootstrap_interval(values, np.zeros(values.size), level=level, samples=samples, seed=seed)
        out.append(MeanInterval(str(m), float(values.mean()), ci.low, ci.high, int(values.size)))
    return out
