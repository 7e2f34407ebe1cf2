"""Fusion methods, as ranx 0.3.21 defines them (names as ranx spells them), vectorised over all queries.

Every method maps the aligned, normalised ``candidates × runs`` scores ``s`` (NaN: the run did not retrieve
the candidate), the runs' 1-based ranks ``r`` and the weights ``w`` to one fused score per candidate. With
``n`` the number of runs that retrieved a candidate and sums over those runs:

- ``sum`` Σs, ``anz`` Σs/n, ``mnz`` Σs·n, ``gmnz`` Σs·n^gamma, ``max``/``min``/``med`` over the retrieving runs
- ``wsum`` Σw·s (weights over all runs), ``wmnz`` Σs·Σw, ``mixed`` Σw·s·√n
- ``rrf`` Σ1/(k + r) (k = 60), ``isr`` Σ1/r²·n, ``log_isr`` Σ1/r²·ln n, ``logn_isr`` Σ1/r²·ln(n + sigma)
  (sigma = 0.01), ``rbc`` Σ(1 − phi)·phi^(r − 1)
- ``bordafuse`` Σ over all runs of c − r + 1 for a retrieved candidate and (c − m + 1)/2 otherwise (c the
  query's candidates, m the run's retrieved documents); ``w_bordafuse`` the same weighted
- ``condorcet``/``w_condorcet``: candidates sorted by pairwise (weighted) majority, scored c, c − 1, …
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cmp_to_key

import numpy as np

__all__ = ["METHODS", "Frame", "Method"]


@dataclass(frozen=True, eq=False)
class Frame:
    """What a method reads: normalised ``scores`` and ``ranks`` (candidates × runs, NaN where missing),
    ``candidates`` (per candidate: its query's number of candidates), ``retrieved`` (per candidate and run:
    how many documents the run retrieved for the query), ``bounds`` (each query's candidate rows)."""

    scores: np.ndarray
    ranks: np.ndarray
    candidates: np.ndarray
    retrieved: np.ndarray
    bounds: np.ndarray

    @property
    def present(self) -> np.ndarray:
        return ~np.isnan(self.scores)

    @property
    def filled(self) -> np.ndarray:
        return np.where(self.present, self.scores, 0.0)

    @property
    def count(self) -> np.ndarray:
        return self.present.sum(axis=1).astype(np.float64)

    def by_rank(self, value: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Σ over the retrieving runs of ``value(rank)``."""
        ranks = np.where(self.present, self.ranks, 1.0)
        return np.where(self.present, value(ranks), 0.0).sum(axis=1)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Method:
    """A fusion method: its function, whether it takes weights, its parameters and their defaults (None:
    required) and the grid ``--optimise`` searches for each parameter."""

    apply: Callable[[Frame, np.ndarray, Mapping[str, float]], np.ndarray]
    weighted: bool = False
    params: Mapping[str, float | None] = field(default_factory=dict)
    grid: Mapping[str, tuple[float, ...]] = field(default_factory=dict)


def _steps(low: float, high: float, step: float) -> tuple[float, ...]:
    n = int(round((high - low) / step))
    return tuple(round(low + i * step, 10) for i in range(n + 1))


def _borda_points(f: Frame) -> np.ndarray:
    c = f.candidates[:, None]
    return np.where(f.present, c - np.where(f.present, f.ranks, 1.0) + 1.0, (c - f.retrieved + 1.0) / 2.0)


def _isr(f: Frame) -> np.ndarray:
    return f.by_rank(lambda r: 1.0 / (r * r))


def _condorcet(f: Frame, w: np.ndarray) -> np.ndarray:
    """Per query, a merge sort of the candidates (document order) by the pairwise majority."""
    out = np.empty(f.scores.shape[0])
    missing = np.where(f.present, f.ranks, np.inf)
    for q in range(len(f.bounds) - 1):
        lo, hi = int(f.bounds[q]), int(f.bounds[q + 1])
        ranks = missing[lo:hi]

        def first(x: int, y: int, ranks: np.ndarray = ranks) -> int:
            ahead = float(w[ranks[x] < ranks[y]].sum())
            return -1 if ahead >= float(w.sum()) - ahead else 1

        order = sorted(range(hi - lo), key=cmp_to_key(first))
        out[lo + np.asarray(order, dtype=np.int64)] = np.arange(hi - lo, 0, -1, dtype=np.float64)
    return out


def _ones(f: Frame) -> np.ndarray:
    return np.ones(f.scores.shape[1])


#: method name (as ranx spells it) → :class:`Method`
METHODS: dict[str, Method] = {
    "sum": Method(lambda f, w, p: f.filled.sum(axis=1)),
    "anz": Method(lambda f, w, p: f.filled.sum(axis=1) / f.count),
    "mnz": Method(lambda f, w, p: f.filled.sum(axis=1) * f.count),
    "gmnz": Method(
        lambda f, w, p: f.filled.sum(axis=1) * f.count ** p["gamma"],
        params={"gamma": None}, grid={"gamma": _steps(0.01, 1.0, 0.01)},
    ),
    "max": Method(lambda f, w, p: np.fmax.reduce(f.scores, axis=1)),
    "min": Method(lambda f, w, p: np.fmin.reduce(f.scores, axis=1)),
    "med": Method(lambda f, w, p: np.nanmedian(f.scores, axis=1)),
    "wsum": Method(lambda f, w, p: f.filled @ w, weighted=True),
    "wmnz": Method(lambda f, w, p: f.filled.sum(axis=1) * (f.present @ w), weighted=True),
    "mixed": Method(lambda f, w, p: (f.filled @ w) * np.sqrt(f.count), weighted=True),
    "rrf": Method(
        lambda f, w, p: f.by_rank(lambda r: 1.0 / (p["k"] + r)),
        params={"k": 60.0}, grid={"k": _steps(10, 100, 10)},
    ),
    "isr": Method(lambda f, w, p: _isr(f) * f.count),
    "log_isr": Method(lambda f, w, p: _isr(f) * np.log(f.count)),
    "logn_isr": Method(
        lambda f, w, p: _isr(f) * np.log(f.count + p["sigma"]),
        params={"sigma": 0.01}, grid={"sigma": _steps(0.01, 1.0, 0.01)},
    ),
    "rbc": Method(
        lambda f, w, p: f.by_rank(lambda r: (1.0 - p["phi"]) * p["phi"] ** (r - 1.0)),
        params={"phi": None}, grid={"phi": _steps(0.01, 1.0, 0.01)},
    ),
    "bordafuse": Method(lambda f, w, p: _borda_points(f).sum(axis=1)),
    "w_bordafuse": Method(lambda f, w, p: _borda_points(f) @ w, weighted=True),
    "condorcet": Method(lambda f, w, p: _condorcet(f, _ones(f))),
    "w_condorcet": Method(lambda f, w, p: _condorcet(f, w), weighted=True),
}
