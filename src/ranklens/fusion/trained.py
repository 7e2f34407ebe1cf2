"""The fusion methods trained on qrels, as ranx 0.3.21 defines them: ``posfuse``, ``probfuse``, ``segfuse``,
``slidefuse``, ``bayesfuse``, ``mapfuse``.

Training reads, for every run and every query of the training qrels, the run's *hit list*: its ranked
documents (after normalisation; score descending, ties by document id descending) marked 1 where the qrels
grade them ≥ 1. With ``Q`` the qrels' queries, ``p`` a 0-based position and ``L`` a run's list length:

- ``posfuse`` (Lillis et al. 2010): ``P(p)`` = hits at ``p`` / lists reaching ``p``; a document scores
  ``P(p)`` in each run (0 past the longest training list), summed over the runs that retrieved it.
- ``slidefuse`` (Lillis et al. 2008): the same ``P``, averaged over the window ``[p − w, p + w]`` clipped to
  the list (positions past the training lists count 0); parameter ``w``.
- ``probfuse`` (Lillis et al. 2006): ``n_segments`` segments of ``ceil(L / n)`` positions; ``P(k)`` = the
  mean over ``Q`` of each list's hit rate in segment ``k``; a document in segment ``k`` scores ``P(k) / (k + 1)``.
- ``segfuse`` (Shokouhi 2007): segments at 0, 5, 15, 35, … 5115 (``10·2^(k−1) − 5``); ``P(k)`` = the mean over
  ``Q`` of hits in the segment / its size; a document scores ``P(k)·(s + 1)``, ``s`` its normalised score.
- ``bayesfuse`` (Aslam & Montague 2001): segments at 0, 5, 10, 15, 20, 30, 100, 200, 500, 1000; ``p̄(k)`` the
  mean precision of the segment over ``Q`` (0 → 0.001, 1 → 0.999 in its complement); a document scores
  Σ over all runs of ``log(p̄ / (1 − p̄))`` at its position, ``log(0.001/0.999)`` where the run lacks it.
  ranx indexes its 1,000-entry table with the position, so a document past rank 1000 reads memory beyond the
  table (an arbitrary value); ranklens scores it as a document the run did not retrieve (no estimate).
- ``mapfuse`` (Lillis et al. 2010): a document at position ``p`` scores ``MAP / (p + 1)`` per run, MAP the
  run's mean AP on the training qrels (computed by ranklens's engine, queries the run lacks scoring 0).

>>> from ranklens.data import Run
>>> from ranklens.fusion import fuse
>>> a = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="a")
>>> b = Run.from_dict({"q1": {"d2": 2.0, "d3": 1.0}}, name="b")
>>> fuse([a, b], "posfuse", qrels={"q1": {"d2": 1}}).run.to_dict()["q1"]
{'d1': 0.0, 'd2': 2.0, 'd3': 0.0}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow.compute as pc

from ranklens.data import Qrels
from ranklens.fusion.align import Aligned
from ranklens.fusion.frame import Frame

__all__ = ["TRAINED", "Hits", "Trainer", "hits", "model_summary"]

SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
BAYESFUSE_BOUNDS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)
MIN_ODDS = float(np.log(0.001 / 0.999))


@dataclass(frozen=True, eq=False)
class Hits:
    """The runs' hit lists on the training queries, as flat arrays per run.

    Attributes:
        num_queries: ``Q``, the training qrels' queries.
        position, hit, query: per run, for every document it retrieved for a training query: its 0-based
            position, 1.0 if the qrels grade it ≥ 1 (else 0.0), and the training query's index.
        length: per run, the length of its list for every training query (0 where it lacks the query).
    """

    num_queries: int
    position: tuple[np.ndarray, ...]
    hit: tuple[np.ndarray, ...]
    query: tuple[np.ndarray, ...]
    length: tuple[np.ndarray, ...]


def hits(aligned: Aligned, frame: Frame, qrels: Qrels) -> Hits:
    """The hit lists of every run of ``frame`` on the queries of ``qrels``."""
    train_q = pc.index_in(aligned.query_ids, value_set=qrels.query_ids).fill_null(-1).to_numpy().astype(np.int64)
    qcode = pc.index_in(qrels.query_ids, value_set=aligned.query_ids).fill_null(-1).to_numpy().astype(np.int64)
    dcode = pc.index_in(qrels.doc_ids, value_set=aligned.doc_ids).fill_null(-1).to_numpy().astype(np.int64)
    qq, dd = qcode[qrels.query], dcode[qrels.doc]
    keep = (qrels.label >= 1) & (qq >= 0) & (dd >= 0)
    ndocs = max(len(aligned.doc_ids), 1)
    relevant = np.unique(qq[keep] * ndocs + dd[keep])
    keys = aligned.query.astype(np.int64) * ndocs + aligned.doc
    is_hit = np.isin(keys, relevant).astype(np.float64)
    cand_q = train_q[aligned.query] if len(aligned.query) else np.zeros(0, np.int64)
    nq = len(qrels.query_ids)
    position, hit, query, length = [], [], [], []
    for i in range(frame.scores.shape[1]):
        rows = np.flatnonzero(frame.present[:, i] & (cand_q >= 0))
        position.append((frame.ranks[rows, i] - 1.0).astype(np.int64))
        hit.append(is_hit[rows])
        query.append(cand_q[rows])
        length.append(np.bincount(cand_q[rows], minlength=nq).astype(np.int64))
    return Hits(nq, tuple(position), tuple(hit), tuple(query), tuple(length))


def _positions(frame: Frame, i: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.flatnonzero(frame.present[:, i])
    return rows, (frame.ranks[rows, i] - 1.0).astype(np.int64)


def _sum_over_runs(frame: Frame, model: list[np.ndarray], score: Callable[[Frame, int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    out = np.zeros(frame.scores.shape[0])
    for i in range(frame.scores.shape[1]):
        rows, pos = _positions(frame, i)
        out[rows] += score(frame, i, rows, pos, model[i])
    return out


# PosFuse and SlideFuse ---------------------------------------------------------------------------------


def _fit_positions(h: Hits, params: Mapping[str, float]) -> list[np.ndarray]:
    model = []
    for i in range(len(h.position)):
        longest = int(h.length[i].max()) if h.length[i].size else 0
        numerators = np.bincount(h.position[i], weights=h.hit[i], minlength=longest)[:longest]
        reaching = np.cumsum(np.bincount(h.length[i], minlength=longest + 1)[::-1])[::-1][1:]
        model.append(numerators / reaching[:longest] if longest else np.zeros(0))
    return model


def _posfuse(frame: Frame, i: int, rows: np.ndarray, pos: np.ndarray, probs: np.ndarray) -> np.ndarray:
    return np.where(pos < probs.size, probs[np.minimum(pos, max(probs.size - 1, 0))] if probs.size else 0.0, 0.0)


def _slidefuse(w: int) -> Callable[[Frame, int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    def score(frame: Frame, i: int, rows: np.ndarray, pos: np.ndarray, probs: np.ndarray) -> np.ndarray:
        n = frame.retrieved[rows, i].astype(np.int64)
        a = np.maximum(pos - w, 0)
        b = np.minimum(pos + w, n - 1)
        cumulative = np.r_[0.0, np.cumsum(probs)]
        total = cumulative[np.minimum(b + 1, probs.size)] - cumulative[np.minimum(a, probs.size)]
        return total / (b - a + 1)  # type: ignore[no-any-return]

    return score


# ProbFuse ----------------------------------------------------------------------------------------------


def _segment_of(pos: np.ndarray, length: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """ProbFuse's segment of every position and its size: ``ceil(L / n)`` positions, the last one clipped."""
    size = -(-length // n)
    k = pos // np.maximum(size, 1)
    return k, np.minimum((k + 1) * size, length) - k * size


def _fit_probfuse(h: Hits, params: Mapping[str, float]) -> list[np.ndarray]:
    n = int(params["n_segments"])
    model = []
    for i in range(len(h.position)):
        k, seg = _segment_of(h.position[i], h.length[i][h.query[i]], n)
        model.append(np.bincount(k, weights=h.hit[i] / np.maximum(seg, 1), minlength=n)[:n] / max(h.num_queries, 1))
    return model


def _probfuse(n: int) -> Callable[[Frame, int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    def score(frame: Frame, i: int, rows: np.ndarray, pos: np.ndarray, probs: np.ndarray) -> np.ndarray:
        k, _ = _segment_of(pos, frame.retrieved[rows, i].astype(np.int64), n)
        return probs[k] / (k + 1.0)  # type: ignore[no-any-return]

    return score


# SegFuse and BayesFuse ---------------------------------------------------------------------------------


def _segment_rates(h: Hits, i: int, bounds: np.ndarray) -> np.ndarray:
    """Per segment of ``bounds``: the hits in it summed over the training lists, divided by its size."""
    inside = h.position[i] < bounds[-1]
    k = np.searchsorted(bounds, h.position[i][inside], side="right") - 1
    counts = np.bincount(k, weights=h.hit[i][inside], minlength=bounds.size - 1)
    return counts / np.diff(bounds)  # type: ignore[no-any-return]


def _fit_segfuse(h: Hits, params: Mapping[str, float]) -> list[np.ndarray]:
    return [_segment_rates(h, i, SEGFUSE_BOUNDS) / max(h.num_queries, 1) for i in range(len(h.position))]


def _segfuse(frame: Frame, i: int, rows: np.ndarray, pos: np.ndarray, probs: np.ndarray) -> np.ndarray:
    inside = pos < SEGFUSE_BOUNDS[-1]
    k = np.searchsorted(SEGFUSE_BOUNDS, np.where(inside, pos, 0), side="right") - 1
    return np.where(inside, probs[k], 0.0) * (frame.scores[rows, i] + 1.0)  # type: ignore[no-any-return]


def _fit_bayesfuse(h: Hits, params: Mapping[str, float]) -> list[np.ndarray]:
    model = []
    for i in range(len(h.position)):
        precision = _segment_rates(h, i, BAYESFUSE_BOUNDS) / max(h.num_queries, 1)
        precision = np.where(precision == 0, 0.001, precision)
        complement = 1.0 - precision
        model.append(np.log(precision / np.where(complement == 0, 0.001, complement)))
    return model


def _bayesfuse(frame: Frame, w: np.ndarray, p: Mapping[str, Any]) -> np.ndarray:
    model: list[np.ndarray] = p["model"]
    out = np.full(frame.scores.shape[0], MIN_ODDS * frame.scores.shape[1])
    for i in range(frame.scores.shape[1]):
        rows, pos = _positions(frame, i)
        inside = pos < BAYESFUSE_BOUNDS[-1]
        k = np.searchsorted(BAYESFUSE_BOUNDS, pos[inside], side="right") - 1
        out[rows[inside]] += model[i][k] - MIN_ODDS
    return out


# MAPFuse -----------------------------------------------------------------------------------------------


def _fit_mapfuse(aligned: Aligned, frame: Frame, qrels: Qrels) -> list[np.ndarray]:
    from ranklens.data import Run
    from ranklens.data._arrow import from_numpy
    from ranklens.engine import Evaluator

    evaluator = Evaluator(["AP"], qrels, missing="zero")
    model = []
    for i in range(frame.scores.shape[1]):
        rows = np.flatnonzero(frame.present[:, i])
        run = Run.from_arrays(
            aligned.query_ids.take(from_numpy(aligned.query[rows])),
            aligned.doc_ids.take(from_numpy(aligned.doc[rows])),
            -frame.ranks[rows, i],  # the frame's order, ties already broken
            name=aligned.names[i],
        )
        model.append(np.array([float(evaluator(run, warn=False).aggregates[0])]))
    return model


def _mapfuse(frame: Frame, i: int, rows: np.ndarray, pos: np.ndarray, value: np.ndarray) -> np.ndarray:
    return value[0] / (pos + 1.0)  # type: ignore[no-any-return]


# The table ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trainer:
    """How a trained method learns its model: from the hit lists, or (MAPFuse) from the runs and qrels."""

    fit: Callable[[Hits, Mapping[str, float]], list[np.ndarray]] | None = None
    fit_runs: Callable[[Aligned, Frame, Qrels], list[np.ndarray]] | None = None

    def __call__(self, aligned: Aligned, frame: Frame, qrels: Qrels, params: Mapping[str, float]) -> list[np.ndarray]:
        if self.fit_runs is not None:
            return self.fit_runs(aligned, frame, qrels)
        assert self.fit is not None
        return self.fit(hits(aligned, frame, qrels), params)


def _per_run(score: Callable[..., np.ndarray]) -> Callable[[Frame, np.ndarray, Mapping[str, Any]], np.ndarray]:
    return lambda f, w, p: _sum_over_runs(f, p["model"], score)


#: trained method → (its trainer, how it scores a frame with its model in ``params["model"]``)
TRAINED: dict[str, tuple[Trainer, Callable[[Frame, np.ndarray, Mapping[str, Any]], np.ndarray]]] = {
    "posfuse": (Trainer(_fit_positions), _per_run(_posfuse)),
    "probfuse": (Trainer(_fit_probfuse), lambda f, w, p: _sum_over_runs(f, p["model"], _probfuse(int(p["n_segments"])))),
    "segfuse": (Trainer(_fit_segfuse), _per_run(_segfuse)),
    "slidefuse": (Trainer(_fit_positions), lambda f, w, p: _sum_over_runs(f, p["model"], _slidefuse(int(p["w"])))),
    "bayesfuse": (Trainer(_fit_bayesfuse), _bayesfuse),
    "mapfuse": (Trainer(fit_runs=_fit_mapfuse), _per_run(_mapfuse)),
}


def model_summary(model: list[np.ndarray]) -> list[list[float]]:
    """The model as JSON-ready lists (one per run)."""
    return [[float(x) for x in m] for m in model]
