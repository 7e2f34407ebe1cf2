"""How far to trust a judge: agreement of its labels with human labels on the pairs both judged, and — what
matters for evaluation — whether the systems rank the same under either set of labels (docs/judges.md).

>>> human = {"q1": {"a": 3, "b": 0, "c": 2, "d": 1}, "q2": {"a": 0, "b": 2, "c": 3}}
>>> judge = {"q1": {"a": 3, "b": 0, "c": 3, "d": 1}, "q2": {"a": 0, "b": 2, "c": 3, "x": 1}}
>>> res = agreement(human, judge)
>>> res.overlap, round(res.kappa_quadratic, 4), res.judge_only
(7, 0.953, 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.errors import InputError

__all__ = ["JudgeAgreement", "SystemOrdering", "agreement", "system_ordering"]


@dataclass(frozen=True)
class SystemOrdering:
    """The systems ordered by a measure under human and under judge labels, on the queries both label.

    Attributes:
        measure: the measure (e.g. ``nDCG@10``).
        systems: the run names, in the order given.
        human, judge: the mean of the measure per system under human / judge labels.
        queries: the number of queries the means are over.
        kendall_tau: Kendall's τ-b between the two orderings (``None`` when undefined: all tied).
        tau_ap: τ_AP of the judge ordering against the human one (``None`` with a tie in either).
        human_top, judge_top: the best system under each (first given on a tie).
        notes: why a statistic is missing.
    """

    measure: str
    systems: tuple[str, ...]
    human: tuple[float, ...]
    judge: tuple[float, ...]
    queries: int
    kendall_tau: float | None
    tau_ap: float | None
    human_top: str
    judge_top: str
    notes: tuple[str, ...] = ()

    @property
    def top_agrees(self) -> bool:
        """Whether the human and the judge labels pick the same best system."""
        return self.human_top == self.judge_top

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "measure": self.measure,
            "queries": self.queries,
            "systems": [{"name": s, "human": h, "judge": j} for s, h, j in zip(self.systems, self.human, self.judge)],
            "kendall_tau": self.kendall_tau,
            "tau_ap": self.tau_ap,
            "human_top": self.human_top,
            "judge_top": self.judge_top,
            "top_agrees": self.top_agrees,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class JudgeAgreement:
    """Agreement of judge labels with human labels on the (query, document) pairs both labelled.

    Attributes:
        overlap: pairs with a label ≥ 0 from both (the items every statistic is over).
        human_only, judge_only: pairs labelled by one side only (not in any statistic).
        unjudged: pairs in both files with a negative label on either side (pooled but unjudged; left out).
        confusion: human labels (rows) against judge labels (columns) over the scale.
        kappa, kappa_linear, kappa_quadratic: Cohen's kappa unweighted, linear and quadratic weights.
        kappa_quadratic_interval: percentile bootstrap interval of the quadratic kappa (seeded).
        alpha_ordinal, alpha_interval, alpha_nominal: Krippendorff's alpha at each level of measurement.
        exact: the share of overlapping pairs with the same label.
        ordering: the system orderings when runs were given, else ``None``.
    """

    overlap: int
    human_only: int
    judge_only: int
    unjudged: int
    confusion: Any  # ranklens.stats.Confusion
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    kappa_quadratic_interval: Any  # ranklens.stats.Interval
    alpha_ordinal: float
    alpha_interval: float
    alpha_nominal: float
    exact: float
    ordering: SystemOrdering | None = None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        iv = self.kappa_quadratic_interval
        return {
            "overlap": self.overlap,
            "human_only": self.human_only,
            "judge_only": self.judge_only,
            "unjudged": self.unjudged,
            "exact_agreement": self.exact,
            "kappa": self.kappa,
            "kappa_linear": self.kappa_linear,
            "kappa_quadratic": self.kappa_quadratic,
            "kappa_quadratic_interval": {"low": iv.low, "high": iv.high, "level": iv.level, "method": iv.method},
            "alpha_ordinal": self.alpha_ordinal,
            "alpha_interval": self.alpha_interval,
            "alpha_nominal": self.alpha_nominal,
            "confusion": self.confusion.to_dict(),
            "ordering": None if self.ordering is None else self.ordering.to_dict(),
            "notes": list(self.notes),
        }


def _qrels(source: Any, role: str) -> Any:
    from ranklens.data import Qrels
    from ranklens.data.io import read_qrels

    q = source if isinstance(source, Qrels) else read_qrels(source)
    if q.label_kind != "int":
        raise InputError(f"{q.source}: {role} labels must be integer grades for agreement statistics")
    return q


def _labels(q: Any) -> dict[tuple[str, str], int]:
    qs, ds = q.query_ids.to_pylist(), q.doc_ids.to_pylist()
    return {(qs[a], ds[b]): int(v) for a, b, v in zip(q.query.tolist(), q.doc.tolist(), q.label.tolist())}


def agreement(
    human_qrels: Any,
    judge_qrels: Any,
    *,
    runs: Mapping[str, Any] | Sequence[Any] | None = None,
    measure: str = "nDCG@10",
    scale: Sequence[int] | None = None,
    level: float = 0.95,
    samples: int = 2000,
    seed: int = 0,
) -> JudgeAgreement:
    """Agreement of ``judge_qrels`` with ``human_qrels`` (each a :class:`~ranklens.Qrels`, a path or a
    ``{qid: {doc: grade}}`` dict) on the pairs both label, and with ``runs`` the system orderings.

    Args:
        runs: ``{name: run}`` or runs (paths, :class:`~ranklens.Run`, dicts; named by their tag): each is
            evaluated with ``measure`` under both qrels, on the queries both evaluations cover.
        measure: the measure that orders the systems.
        scale: the label scale (default: the labels seen on the overlap); kappa weights use its positions.
        level, samples, seed: the bootstrap interval of the quadratic kappa.

    Raises:
        InputError: no overlapping pair (an agreement over nothing is an error), a statistic undefined
            (both sides use one label only), fewer than two runs, or no query in common for the runs.
    """
    from ranklens import stats

    human, judge = _labels(_qrels(human_qrels, "human")), _labels(_qrels(judge_qrels, "judge"))
    both = sorted(human.keys() & judge.keys())
    pairs = [k for k in both if human[k] >= 0 and judge[k] >= 0]
    if not pairs:
        raise InputError(
            f"no (query, document) pair is labelled by both the human and the judge qrels "
            f"({len(human)} human, {len(judge)} judge labels); are these the same topics and documents?"
        )
    h = np.array([human[k] for k in pairs])
    j = np.array([judge[k] for k in pairs])
    conf = stats.confusion_matrix(h, j, scale=scale)
    kappas = {w: stats.cohen_kappa(h, j, weights=w, scale=conf.scale) for w in stats.KAPPA_WEIGHTS}
    interval = stats.kappa_interval(h, j, weights="quadratic", scale=conf.scale, level=level, samples=samples, seed=seed)
    rel = np.vstack([h, j]).astype(np.float64)
    alphas = {lv: stats.krippendorff_alpha(rel, level=lv) for lv in stats.ALPHA_LEVELS}
    ordering = None if runs is None else system_ordering(human_qrels, judge_qrels, runs, measure=measure)
    return JudgeAgreement(
        overlap=len(pairs),
        human_only=len(human.keys() - judge.keys()),
        judge_only=len(judge.keys() - human.keys()),
        unjudged=len(both) - len(pairs),
        confusion=conf,
        kappa=kappas[None],
        kappa_linear=kappas["linear"],
        kappa_quadratic=kappas["quadratic"],
        kappa_quadratic_interval=interval,
        alpha_ordinal=alphas["ordinal"],
        alpha_interval=alphas["interval"],
        alpha_nominal=alphas["nominal"],
        exact=float(np.mean(h == j)),
        ordering=ordering,
    )


def _named(runs: Mapping[str, Any] | Sequence[Any]) -> list[tuple[str, Any]]:
    from ranklens.data import Run
    from ranklens.data.io import read_run

    if isinstance(runs, Mapping):
        named = [(str(k), v) for k, v in runs.items()]
    else:
        named = []
        for r in runs:
            run = r if isinstance(r, Run) else read_run(r)
            named.append((run.name, run))
    names = [n for n, _ in named]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise InputError(f"two runs are named {dup!r}; give them as {{name: run}}")
    if len(named) < 2:
        raise InputError(f"system orderings need at least two runs; got {len(named)}")
    return named


def system_ordering(
    human_qrels: Any, judge_qrels: Any, runs: Mapping[str, Any] | Sequence[Any], *, measure: str = "nDCG@10"
) -> SystemOrdering:
    """Evaluate every run with ``measure`` under both qrels, on the queries both evaluations of every run
    cover, and compare the orderings (τ-b, τ_AP of the judge against the human ordering, the top system).

    >>> human, judge = {"q1": {"a": 1, "b": 0}}, {"q1": {"a": 0, "b": 1}}
    >>> runs = {"ab": {"q1": {"a": 2, "b": 1}}, "ba": {"q1": {"b": 2, "a": 1}}, "c": {"q1": {"z": 1}}}
    >>> o = system_ordering(human, judge, runs, measure="nDCG@2")
    >>> o.human_top, o.judge_top, round(o.kendall_tau, 4), o.tau_ap, o.top_agrees
    ('ab', 'ba', 0.3333, 0.0, False)
    """
    from ranklens import stats
    from ranklens.engine import Evaluator

    named = _named(runs)
    hq, jq = _qrels(human_qrels, "human"), _qrels(judge_qrels, "judge")
    on_human, on_judge = Evaluator(measure, hq), Evaluator(measure, jq)
    results = [(on_human(run, name=name, warn=False), on_judge(run, name=name, warn=False)) for name, run in named]
    common = set.intersection(*(set(a.query_ids) & set(b.query_ids) for a, b in results))
    if not common:
        raise InputError("no query is evaluated under both the human and the judge qrels for every run")
    human = tuple(float(np.mean(list(a.subset(common).per_query(measure).values()))) for a, _ in results)
    judge = tuple(float(np.mean(list(b.subset(common).per_query(measure).values()))) for _, b in results)
    names = tuple(n for n, _ in named)
    notes: list[str] = []
    tau: float | None = None
    tap: float | None = None
    try:
        tau = stats.kendall_tau(human, judge)
    except InputError as exc:
        notes.append(str(exc))
    try:
        tap = stats.tau_ap(human, judge)
    except InputError as exc:
        notes.append(str(exc))
    return SystemOrdering(
        measure=str(on_human.measures[0]),
        systems=names,
        human=human,
        judge=judge,
        queries=len(common),
        kendall_tau=tau,
        tau_ap=tap,
        human_top=names[int(np.argmax(human))],
        judge_top=names[int(np.argmax(judge))],
        notes=tuple(notes),
    )
