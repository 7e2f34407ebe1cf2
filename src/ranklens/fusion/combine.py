"""``fuse``: normalise runs and combine them into one run (the engine of ``ranklens fuse``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.data import Qrels, Run
from ranklens.errors import InputError
from ranklens.fusion.align import Aligned, align, rank_column, rank_within
from ranklens.fusion.methods import METHODS, Frame, Method
from ranklens.fusion.normalise import check_norm, normalise
from ranklens.fusion.trained import model_summary

__all__ = ["Fused", "Prepared", "as_qrels", "check_method", "fuse", "prepare", "resolve"]


@dataclass(frozen=True)
class Fused:
    """A fused run and how it was made.

    Attributes:
        run: the fused run (every document any run retrieved for a query).
        method, norm: the method and normalisation (canonical names).
        weights: the weights used (None for an unweighted method).
        params: the method's parameters used.
        notes: what the caller should know (queries some runs lacked, defaults assumed).
        optimisation: with ``--optimise``, the metric and the best value on the training qrels.
    """

    run: Run
    method: str
    norm: str | None
    weights: tuple[float, ...] | None
    params: dict[str, float]
    notes: tuple[str, ...] = ()
    optimisation: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Prepared:
    """Runs aligned and normalised once, ready to be fused with any weights and parameters (the scores are
    normalised in place: ``aligned.scores`` is ``frame.scores``, so the matrix is held once)."""

    aligned: Aligned
    frame: Frame
    norm: str | None

    def combine(self, method: str, weights: np.ndarray, params: Mapping[str, float], model: Any = None) -> np.ndarray:
        """The fused score of every candidate (``model``: what a trained method learnt, see :meth:`train`)."""
        return METHODS[method].apply(self.frame, weights, {**params, "model": model} if model is not None else params)

    def train(self, method: str, qrels: Qrels, params: Mapping[str, float]) -> list[np.ndarray] | None:
        """The model a trained method learns on ``qrels`` (None for an untrained method)."""
        trainer = METHODS[method].trainer
        return None if trainer is None else trainer(self.aligned, self.frame, qrels, params)


def check_method(name: str) -> Method:
    """The :class:`Method` called ``name`` (a one-line :class:`InputError` naming the choices otherwise)."""
    if name not in METHODS:
        from ranklens.errors import did_you_mean

        raise InputError(f"unknown fusion method {name!r}{did_you_mean(name, list(METHODS))} (one of: {', '.join(METHODS)})")
    return METHODS[name]


def prepare(runs: Sequence[Run], norm: str | None = "min-max", *, reuse: bool = False) -> Prepared:
    """Align ``runs`` on their candidates and normalise their scores (see :func:`fuse`). ``reuse``: the result
    will be combined many times (keep the ranks once computed; one fusion ranks one run at a time instead)."""
    if len(runs) < 2:
        raise InputError(f"fusion needs at least two runs, got {len(runs)}")
    canonical = check_norm(norm)
    aligned = align(runs)
    bounds = aligned.bounds
    scores = aligned.scores
    if canonical is not None:  # (the rank-based normalisations read the ranks of the scores as given)
        rank_based = canonical in ("rank", "borda")
        given = rank_within(aligned.query, aligned.doc, scores, aligned.rows) if rank_based else scores
        scores = normalise(scores, bounds, given, canonical, out=scores)
    frame = Frame(
        scores=scores,
        ranker=lambda s: rank_within(aligned.query, aligned.doc, s, aligned.rows),
        bounds=bounds,
        column_ranker=lambda i: rank_column(
            aligned.query, aligned.doc, scores[:, i], aligned.rows[i] if i < len(aligned.rows) else None
        ),
        reuse=reuse,
    )
    return Prepared(aligned, frame, canonical)


def resolve(
    method: str, nruns: int, weights: Sequence[float] | None, params: Mapping[str, float] | None
) -> tuple[np.ndarray, dict[str, float], list[str]]:
    """Check ``weights`` and ``params`` against ``method``; fill defaults. Returns weights, params, notes."""
    spec = check_method(method)
    notes: list[str] = []
    given = dict(params or {})
    unknown = sorted(set(given) - set(spec.params))
    if unknown:
        known = ", ".join(spec.params) or "none"
        raise InputError(f"{method} takes no parameter {unknown[0]!r} (its parameters: {known})")
    resolved: dict[str, float] = {}
    for key, default in spec.params.items():
        if key in given:
            resolved[key] = float(given[key])
        elif default is None:
            raise InputError(f"{method} needs the parameter {key} (--param {key}=VALUE, or --optimise with --qrels)")
        else:
            resolved[key] = float(default)
    if weights is None:
        w = np.ones(nruns) if not spec.weighted else np.full(nruns, 1.0 / nruns)
        if spec.weighted:
            notes.append(f"{method}: no weights given; each run weighs 1/{nruns}")
    else:
        if not spec.weighted:
            raise InputError(f"{method} takes no weights (weighted methods: {', '.join(n for n, m in METHODS.items() if m.weighted)})")
        if len(weights) != nruns:
            raise InputError(f"{len(weights)} weight{'s' if len(weights) != 1 else ''} for {nruns} runs; give one weight per run")
        w = np.asarray(weights, dtype=np.float64)
        if not np.all(np.isfinite(w)):
            raise InputError(f"weights must be finite numbers, got {list(weights)}")
    return w, resolved, notes


def as_qrels(qrels: Any, method: str) -> Qrels:
    """The training qrels of a trained ``method`` (a path, a dict or a :class:`Qrels`)."""
    if qrels is None:
        raise InputError(f"{method} is trained on qrels: give the training judgements (fuse --qrels FILE; compare --fuse {method}:qrels=FILE)")
    if isinstance(qrels, Qrels):
        return qrels
    from ranklens.data.io import read_qrels

    return read_qrels(qrels)


def lacking_notes(aligned: Aligned) -> list[str]:
    """One note per run that lacks some of the union's queries (it contributes nothing to those)."""
    total = aligned.num_queries
    return [
        f"run {name!r} has no results for {n} of the {total} queries; fused over the union of the runs' queries"
        for name, n in zip(aligned.names, aligned.lacking)
        if n
    ]


def fuse(
    runs: Sequence[Run],
    method: str,
    *,
    norm: str | None = "min-max",
    weights: Sequence[float] | None = None,
    params: Mapping[str, float] | None = None,
    qrels: Any = None,
    name: str | None = None,
) -> Fused:
    """Fuse ``runs`` into one run: normalise each run's scores per query, then combine them.

    Method and normalisation names are ranx's (see :mod:`ranklens.fusion.methods` and
    :mod:`ranklens.fusion.normalise`); the default normalisation is ranx's (``min-max``). Runs over different
    query sets are fused over the union (a run contributes nothing to a query it lacks; a note says so).
    The methods trained on qrels (``posfuse``, ``probfuse``, ``segfuse``, ``slidefuse``, ``bayesfuse``,
    ``mapfuse``: :mod:`ranklens.fusion.trained`) learn their model on ``qrels`` (training judgements);
    ``Fused.optimisation["model"]`` holds it.

    >>> a = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0}}, name="a")
    >>> b = Run.from_dict({"q1": {"d2": 9.0, "d3": 1.0}}, name="b")
    >>> fuse([a, b], "rrf", params={"k": 60}).run.to_dict()["q1"]["d2"] == 1 / 62 + 1 / 61
    True
    """
    spec = check_method(method)
    w, resolved, notes = resolve(method, len(runs), weights, params)
    training = as_qrels(qrels, method) if spec.trainer is not None else None
    if training is None and qrels is not None:
        raise InputError(f"{method} is not trained on qrels (trained methods: {', '.join(trained_methods())}); drop the qrels")
    prepared = prepare(runs, norm)
    model = prepared.train(method, training, resolved) if training is not None else None
    score = prepared.combine(method, w, resolved, model)
    notes = lacking_notes(prepared.aligned) + notes
    return Fused(
        run=prepared.aligned.to_run(score, name or method),
        method=method,
        norm=prepared.norm,
        weights=tuple(float(x) for x in w) if METHODS[method].weighted else None,
        params=resolved,
        notes=tuple(notes),
        optimisation={} if model is None else {"trained_on": training.source, "model": model_summary(model)},  # type: ignore[union-attr]
    )


def trained_methods() -> list[str]:
    """The methods trained on qrels.

    >>> trained_methods()
    ['posfuse', 'probfuse', 'segfuse', 'slidefuse', 'bayesfuse', 'mapfuse']
    """
    return [n for n, m in METHODS.items() if m.trainer is not None]
