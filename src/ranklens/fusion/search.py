"""``--optimise``: a fusion method's weights or parameters chosen on training qrels by grid search.

As ranx's ``optimize_fusion``: a weighted method searches the weights on the simplex grid (every tuple of
multiples of ``step`` in [0, 1] summing to 1, e.g. 66 tuples for 3 runs at step 0.1 — counted in integers,
so no tuple is lost to float rounding as in ranx, which keeps only those whose float sum is exactly 1.0);
``gmnz``, ``rbc``, ``logn_isr`` (0.01, 0.02, … 1) and ``rrf`` (k = 10, 20, … 100) search their parameter;
of the methods trained on qrels, ``probfuse`` searches n_segments 1 … 100 and ``slidefuse`` w 1 … 100 (as
ranx), the others are trained (their own rule: no search).
The measure is computed by ranklens's own engine; among equal best values the last trial wins (as in ranx).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ranklens.data import Run
from ranklens.errors import InputError
from ranklens.fusion.combine import Fused, as_qrels, check_method, lacking_notes, prepare, resolve
from ranklens.fusion.methods import METHODS
from ranklens.fusion.trained import model_summary

__all__ = ["optimise", "weight_grid"]


def weight_grid(nruns: int, step: float = 0.1) -> Iterator[tuple[float, ...]]:
    """Every weight tuple of multiples of ``step`` summing to 1.

    >>> list(weight_grid(2, 0.5))
    [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]
    """
    parts = int(round(1.0 / step))
    if parts < 1 or abs(parts * step - 1.0) > 1e-9:
        raise InputError(f"the weight step must divide 1 (0.1, 0.05, 0.25 …), got {step}")
    for head in itertools.product(range(parts + 1), repeat=nruns - 1):
        rest = parts - sum(head)
        if rest >= 0:
            yield tuple(round(k / parts, 10) for k in (*head, rest))


def optimise(
    runs: Sequence[Run],
    qrels: Any,
    method: str,
    *,
    norm: str | None = "min-max",
    metric: str = "nDCG@10",
    step: float = 0.1,
    name: str | None = None,
) -> Fused:
    """Fuse ``runs`` with the weights or parameters of ``method`` that maximise ``metric`` on ``qrels``.

    The result's ``optimisation`` holds the metric, the best value and every trial
    (``{"weights" or parameter: …, "value": …}``).

    >>> a = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="a")
    >>> b = Run.from_dict({"q1": {"d2": 2.0, "d1": 1.0}}, name="b")
    >>> best = optimise([a, b], {"q1": {"d2": 1}}, "wsum", metric="P@1", step=0.5)
    >>> best.weights, best.optimisation["value"]
    ((0.5, 0.5), 1.0)
    """
    from ranklens.engine import Evaluator

    spec = check_method(method)
    if spec.trainer is not None and not spec.grid:  # (posfuse, segfuse, bayesfuse, mapfuse: training is the rule)
        from ranklens.fusion.combine import fuse

        return fuse(runs, method, norm=norm, qrels=qrels, name=name)
    if not spec.weighted and not spec.grid:
        tunable = ", ".join(n for n, m in METHODS.items() if m.weighted or m.grid)
        raise InputError(f"{method} has no weights or parameters to optimise (methods that do: {tunable})")
    evaluator = Evaluator([metric], qrels)
    training = as_qrels(evaluator.qrels, method) if spec.trainer is not None else None
    prepared = prepare(runs, norm, reuse=True)
    models: dict[float, Any] = {}
    label = name or method
    trials: list[dict[str, Any]] = []
    best: tuple[float, np.ndarray, dict[str, float], Any] | None = None
    candidates: list[tuple[np.ndarray, dict[str, float]]]
    if spec.weighted:
        candidates = [(np.asarray(w), {}) for w in weight_grid(len(runs), step)]
    else:
        (key, values), = spec.grid.items()
        candidates = [(np.ones(len(runs)), {key: v}) for v in values]
    for weights, params in candidates:
        w, resolved, _ = resolve(method, len(runs), list(weights) if spec.weighted else None, params)
        model = None
        if training is not None:  # (slidefuse's model does not depend on w: learnt once)
            learnt = resolved.get("n_segments", 0.0)
            if learnt not in models:
                models[learnt] = prepared.train(method, training, resolved)
            model = models[learnt]
        run = prepared.aligned.to_run(prepared.combine(method, w, resolved, model), label)
        value = float(evaluator(run).aggregates[0])
        trial: dict[str, Any] = {"weights": [float(x) for x in w]} if spec.weighted else dict(resolved)
        trials.append({**trial, "value": value})
        if best is None or value >= best[0]:
            best = (value, w, resolved, model)
    assert best is not None
    value, w, resolved, model = best
    extra = {} if model is None else {"trained_on": training.source, "model": model_summary(model)}  # type: ignore[union-attr]
    return Fused(
        run=prepared.aligned.to_run(prepared.combine(method, w, resolved, model), label),
        method=method,
        norm=prepared.norm,
        weights=tuple(float(x) for x in w) if spec.weighted else None,
        params=resolved,
        notes=tuple(lacking_notes(prepared.aligned)),
        optimisation={"metric": metric, "value": value, "trials": trials, **extra},
    )
