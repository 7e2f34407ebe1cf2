"""A run's mean measure — or the mean difference of two runs — from few human-labelled queries and many
judge-labelled ones, by prediction-powered inference (:mod:`ranklens.stats.ppi` has the formula).

The *labelled* queries are those the human qrels label (each also needs judge labels); the judge-only
queries are those only the judge qrels label. PPI is valid when the labelled queries are a random sample of
all the queries.

>>> human = {f"q{i}": {"a": i % 2, "b": 1} for i in range(4)}
>>> judge = {f"q{i}": {"a": 1, "b": 1} for i in range(10)}
>>> run = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(10)}
>>> r = ppi_evaluate(human, judge, run, measure="P@1", tune=False)
>>> r.ppi.n, r.ppi.n_unlabelled, r.ppi.estimate, r.judge_only.estimate
(4, 6, 0.5, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ranklens.errors import InputError

__all__ = ["PPIReport", "ppi_evaluate"]


@dataclass(frozen=True)
class PPIReport:
    """The prediction-powered estimate of a mean measure next to the naive ones.

    Attributes:
        measure: the measure.
        system: the run's name, or ``"A - B"`` for a paired difference.
        ppi: the PPI (or PPI++) estimate and interval (:class:`ranklens.stats.MeanEstimate`).
        human_only: the plain mean over the human-labelled queries and its normal interval.
        judge_only: the plain mean of the judge's values over every judge-labelled query and its normal
            interval — what a judge-only evaluation reports; a biased judge's bias stays in it.
    """

    measure: str
    system: str
    ppi: Any
    human_only: Any
    judge_only: Any

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "measure": self.measure,
            "system": self.system,
            "ppi": self.ppi.to_dict(),
            "human_only": self.human_only.to_dict(),
            "judge_only": self.judge_only.to_dict(),
        }


def _per_query(evaluator: Any, run: Any, name: str | None) -> tuple[str, dict[str, float]]:
    res = evaluator(run, name=name, warn=False)
    return res.run, res.per_query(evaluator.measures[0])


def ppi_evaluate(
    human_qrels: Any,
    judge_qrels: Any,
    run: Any,
    *,
    vs: Any = None,
    measure: str = "nDCG@10",
    level: float = 0.95,
    tune: bool = True,
    names: tuple[str | None, str | None] = (None, None),
) -> PPIReport:
    """PPI of the mean ``measure`` of ``run`` (with ``vs``: of the paired difference ``run - vs``) from the
    human qrels and the judge qrels (paths, :class:`~ranklens.Qrels` or dicts; runs likewise).

    Args:
        vs: a second run; the estimate is then of the mean per-query difference, over the queries both runs
            are evaluated on.
        tune: power-tune λ (PPI++); ``False`` for classic PPI (λ = 1).
        names: names for ``run`` and ``vs`` (default: their tags).

    Raises:
        InputError: fewer than two labelled or two judge-only queries (no variance to estimate).
    """
    from ranklens import stats
    from ranklens.engine import Evaluator

    on_human, on_judge = Evaluator(measure, human_qrels), Evaluator(measure, judge_qrels)
    name_a, y = _per_query(on_human, run, names[0])
    _, f = _per_query(on_judge, run, names[0])
    system = name_a
    if vs is not None:
        name_b, yb = _per_query(on_human, vs, names[1])
        _, fb = _per_query(on_judge, vs, names[1])
        y = {q: v - yb[q] for q, v in y.items() if q in yb}
        f = {q: v - fb[q] for q, v in f.items() if q in fb}
        system = f"{name_a} - {name_b}"
    labelled = sorted(y.keys() & f.keys())
    judge_only = sorted(f.keys() - on_human.qrels.query_ids.to_pylist())
    if len(labelled) < 2:
        raise InputError(
            f"PPI needs at least two queries with both human and judge labels evaluated; got {len(labelled)}"
        )
    if len(judge_only) < 2:
        raise InputError(
            f"PPI needs at least two judge-only queries (judge qrels queries absent from the human qrels); got {len(judge_only)}"
        )
    yy = np.array([y[q] for q in labelled])
    ff = np.array([f[q] for q in labelled])
    fu = np.array([f[q] for q in judge_only])
    return PPIReport(
        measure=str(on_human.measures[0]),
        system=system,
        ppi=stats.ppi_mean(yy, ff, fu, level=level, tune=tune),
        human_only=stats.normal_mean(yy, level=level),
        judge_only=stats.normal_mean(np.concatenate([ff, fu]), level=level),
    )
