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
- trained on qrels (:mod:`ranklens.fusion.trained`): ``posfuse``, ``probfuse`` (n_segments), ``segfuse``,
  ``slidefuse`` (w), ``bayesfuse``, ``mapfuse``
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

import numpy as np

from ranklens.fusion.frame import Frame
from ranklens.fusion.trained import TRAINED, Trainer

__all__ = ["METHODS", "Frame", "Method"]


@dataclass(frozen=True)
class Method:
    """A fusion method: its function, whether it takes weights, its parameters and their defaults (None:
    required), the grid ``--optimise`` searches for each parameter and, for the methods trained on qrels, their
    trainer (the model it learns reaches ``apply`` as ``params["model"]``)."""

    apply: Callable[[Frame, np.ndarray, Mapping[str, Any]], np.ndarray]
    weighted: bool = False
    params: Mapping[str, float | None] = field(default_factory=dict)
    grid: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    #: trained on qrels (``fuse(..., qrels=)``): how the method learns its model (None: untrained)
    trainer: Trainer | None = None


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
    "sum": Method(lambda f, w, p: f.total()),
    "anz": Method(lambda f, w, p: f.total() / f.count),
    "mnz": Method(lambda f, w, p: f.total() * f.count),
    "gmnz": Method(
        lambda f, w, p: f.total() * f.count ** p["gamma"],
        params={"gamma": None}, grid={"gamma": _steps(0.01, 1.0, 0.01)},
    ),
    "max": Method(lambda f, w, p: np.fmax.reduce(f.scores, axis=1)),
    "min": Method(lambda f, w, p: np.fmin.reduce(f.scores, axis=1)),
    "med": Method(lambda f, w, p: np.nanmedian(f.scores, axis=1)),
    "wsum": Method(lambda f, w, p: f.total(w), weighted=True),
    "wmnz": Method(lambda f, w, p: f.total() * (f.present @ w), weighted=True),
    "mixed": Method(lambda f, w, p: f.total(w) * np.sqrt(f.count), weighted=True),
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
    "posfuse": Method(TRAINED["posfuse"][1], trainer=TRAINED["posfuse"][0]),
    "probfuse": Method(
        TRAINED["probfuse"][1], trainer=TRAINED["probfuse"][0],
        params={"n_segments": None}, grid={"n_segments": _steps(1, 100, 1)},
    ),
    "segfuse": Method(TRAINED["segfuse"][1], trainer=TRAINED["segfuse"][0]),
    "slidefuse": Method(
        TRAINED["slidefuse"][1], trainer=TRAINED["slidefuse"][0], params={"w": None}, grid={"w": _steps(1, 100, 1)},
    ),
    "bayesfuse": Method(TRAINED["bayesfuse"][1], trainer=TRAINED["bayesfuse"][0]),
    "mapfuse": Method(TRAINED["mapfuse"][1], trainer=TRAINED["mapfuse"][0]),
}
