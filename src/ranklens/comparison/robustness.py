"""Does a comparison's conclusion survive the evaluation choices? A multiverse analysis (Ferrante, Ferro &
Fuhr 2021): the comparison of two systems re-run under every combination of the reasonable choices — the
measure's gain, ideal and tie policy where it has them, judged-only or not, missing queries skipped or scored
0, and the paired test — with the share of analyses that reach the default analysis's conclusion (the
direction of the difference and its significance at ``alpha``) and the choices that flip it.

Every number comes from the engine (the measure language, ``EvalPolicy(missing=…)``) and the paired tests
of :func:`ranklens.compare`; nothing here re-derives a value.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ranklens.comparison.core import compare
from ranklens.comparison.evaluation import evaluate_runs
from ranklens.comparison.rows import json_value
from ranklens.errors import InputError, MeasureError, RanklensWarning
from ranklens.measures.base import Measure
from ranklens.measures.language import parse_many

__all__ = ["Analysis", "Robustness", "robustness", "measure_choices"]

#: the paired tests a multiverse runs by default (those of ``compare``; the correction is moot for one pair)
DEFAULT_TESTS = ("t", "randomisation", "wilcoxon")
#: the missing-query policies (``EvalPolicy.missing``)
DEFAULT_MISSING = ("skip", "zero")
#: the measure parameters varied, with their alternatives, when the measure has the parameter
MEASURE_CHOICES: dict[str, tuple[Any, ...]] = {
    "gain": ("linear", "exp"),
    "ideal": ("global", "local", "recall", "max"),
    "ties": ("trec", "average"),
    "judged_only": (False, True),
}


@dataclass(frozen=True)
class Analysis:
    """One analysis of the multiverse: its ``choices``, the measure it evaluated (canonical name), the mean
    difference ``B − A`` over the queries compared, the test's p-value, whether it is significant at alpha
    and the ``direction`` (``better``: B's mean is higher, ``worse``: lower, ``equal``)."""

    choices: dict[str, Any]
    measure: str
    n: int
    mean_difference: float
    p: float
    significant: bool
    direction: str

    @property
    def conclusion(self) -> tuple[str, bool]:
        return self.direction, self.significant

    def to_dict(self) -> dict[str, Any]:
        return {
            "choices": dict(self.choices),
            "measure": self.measure,
            "n": self.n,
            "mean_difference": json_value(self.mean_difference),
            "p": json_value(self.p),
            "significant": self.significant,
            "direction": self.direction,
        }


@dataclass(frozen=True)
class Robustness:
    """What :func:`robustness` returns: the choices, every analysis and the default one.

    ``choices`` maps each varied dimension to its values, the default's value first; ``analyses`` holds one
    :class:`Analysis` per combination (their count is the product of the choice sizes).
    """

    systems: tuple[str, str]
    measure: str
    alpha: float
    choices: dict[str, tuple[Any, ...]]
    analyses: tuple[Analysis, ...]
    notes: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def default(self) -> Analysis:
        """The analysis with every choice at its default (the first value of each dimension)."""
        want = {k: v[0] for k, v in self.choices.items()}
        for a in self.analyses:
            if a.choices == want:
                return a
        raise InputError("no default analysis")  # pragma: no cover - the product always holds it

    def summary(self) -> dict[str, Any]:
        """The count and share of analyses agreeing with the default's conclusion (direction and
        significance); per dimension and value: analyses, agreeing, significant and flips (disagreeing); and
        the single changes from the default that flip it (``one_change_flips``)."""
        base = self.default
        agree = [a.conclusion == base.conclusion for a in self.analyses]
        per_choice: dict[str, dict[str, dict[str, int]]] = {}
        for dim, values in self.choices.items():
            per_choice[dim] = {}
            for v in values:
                group = [(a, ok) for a, ok in zip(self.analyses, agree) if a.choices[dim] == v]
                per_choice[dim][_label(v)] = {
                    "analyses": len(group),
                    "agree": sum(ok for _, ok in group),
                    "flips": sum(not ok for _, ok in group),
                    "significant": sum(a.significant for a, _ in group),
                }
        one_change = []
        for a in self.analyses:
            changed = [k for k in self.choices if a.choices[k] != base.choices[k]]
            if len(changed) == 1 and a.conclusion != base.conclusion:
                one_change.append({"choice": changed[0], "value": _label(a.choices[changed[0]]),
                                   "direction": a.direction, "significant": a.significant})
        n = len(self.analyses)
        return {
            "analyses": n,
            "default": base.to_dict(),
            "agree": sum(agree),
            "share_agree": sum(agree) / n if n else math.nan,
            "significant": sum(a.significant for a in self.analyses),
            "directions": {d: sum(a.direction == d for a in self.analyses) for d in ("better", "worse", "equal")},
            "per_choice": per_choice,
            "one_change_flips": one_change,
        }

    def to_json_dict(self) -> dict[str, Any]:
        from ranklens import __version__

        return {
            "ranklens_version": __version__,
            "systems": {"a": self.systems[0], "b": self.systems[1]},
            "measure": self.measure,
            "alpha": self.alpha,
            "difference": "b - a",
            "choices": {k: [_label(v) for v in vs] for k, vs in self.choices.items()},
            "options": self.options,
            "analyses": [a.to_dict() for a in self.analyses],
            "summary": self.summary(),
            "notes": list(self.notes),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_json_dict(), indent=indent, allow_nan=False)


def _label(v: Any) -> Any:
    return v if isinstance(v, (bool, int, float)) else str(v)


def measure_choices(measure: Measure) -> tuple[dict[str, tuple[Any, ...]], list[str]]:
    """The measure parameters to vary for ``measure`` (the ones its family has), each with the measure's own
    value first; and notes on flavours left out (the recall ideal needs a cutoff).

    >>> from ranklens.measures import parse
    >>> sorted(measure_choices(parse("P@10"))[0].items())
    [('judged_only', (False, True)), ('ties', ('trec', 'average'))]
    """
    names = {p.name for p in measure.family.all_params}
    out: dict[str, tuple[Any, ...]] = {}
    notes: list[str] = []
    for dim, values in MEASURE_CHOICES.items():
        if dim not in names:
            continue
        own = measure.get(dim)
        alts = [v for v in values if v != own]
        if dim == "ideal" and measure.cutoff is None and "recall" in alts:
            alts.remove("recall")
            notes.append(f"{measure}: ideal=recall left out (it needs a cutoff)")
        out[dim] = (own, *alts)
    return out, notes


def restrict(choices: Mapping[str, tuple[Any, ...]], only: Mapping[str, Sequence[Any]]) -> dict[str, tuple[Any, ...]]:
    """``choices`` with the dimensions of ``only`` cut to the values it names (in the order of ``choices``).

    >>> restrict({"ties": ("trec", "average"), "test": ("t", "wilcoxon")}, {"test": ["wilcoxon"]})
    {'ties': ('trec', 'average'), 'test': ('wilcoxon',)}
    >>> restrict({"ties": ("trec", "average")}, {"gain": ["exp"]})
    Traceback (most recent call last):
    ranklens.errors.InputError: --only gain: not a choice of this analysis (choices: ties)
    """
    out = dict(choices)
    for dim, wanted in only.items():
        if dim not in choices:
            raise InputError(f"--only {dim}: not a choice of this analysis (choices: {', '.join(choices)})")
        spelled = {str(_label(v)).lower(): v for v in choices[dim]}
        asked = [str(w).strip().lower() for w in wanted]
        unknown = [w for w in asked if w not in spelled]
        if unknown or not asked:
            raise InputError(
                f"--only {dim}: expected values among {', '.join(spelled)}; found {', '.join(unknown) or 'none'}"
            )
        out[dim] = tuple(v for k, v in spelled.items() if k in asked)
    return out


def variant(measure: Measure, choices: Mapping[str, Any], *, depth: int = 100) -> Measure:
    """``measure`` with the measure-level ``choices`` (gain, ideal, ties, judged_only) applied; the recall
    ideal reads ``max(depth, cutoff)`` documents (or the measure's own depth when it has one)."""
    params = {k: v for k, v in choices.items() if k in MEASURE_CHOICES}
    if "ideal" in params:
        if params["ideal"] == "recall":
            own = int(measure.get("depth")) if measure.get("ideal") == "recall" else 0
            params["depth"] = own or max(int(depth), int(measure.cutoff or 0))
        else:
            params["depth"] = 0
    return measure(**params)


def robustness(
    qrels: Any,
    run_a: Any,
    run_b: Any,
    measure: str | Measure,
    *,
    names: Sequence[str] | None = None,
    tests: Sequence[str] = DEFAULT_TESTS,
    missing: Sequence[str] = DEFAULT_MISSING,
    alpha: float = 0.05,
    samples: int = 10_000,
    seed: int | None = 0,
    depth: int = 100,
    only: Mapping[str, Sequence[Any]] | None = None,
) -> Robustness:
    """Compare ``run_b`` against ``run_a`` under every combination of the evaluation choices.

    The dimensions are the measure's ``gain``, ``ideal`` and ``ties`` (where its family has them, the measure's
    own value first), ``judged_only`` (False, True), ``missing`` (the given policies, the first the default)
    and ``test`` (the given paired tests of :func:`ranklens.compare`, the first the default). Each run is
    evaluated once per missing-query policy on every measure variant; each test is one ``compare`` call.

    Args:
        qrels, run_a, run_b: as :func:`ranklens.compare` takes them (paths, frames, dicts …).
        measure: one measure in the measure language, e.g. ``nDCG@10``.
        names: the two systems' names (default: as ``compare`` names them).
        tests: paired tests (``t``, ``randomisation``, ``wilcoxon``, ``bootstrap``, ``sign``).
        missing: missing-query policies (``skip``, ``zero``).
        alpha: significance level; samples, seed: Monte Carlo samples and seed of the randomised tests.
        depth: the depth of the recall ideal (at least the cutoff).
        only: restrict dimensions to some of their values, e.g. ``{"ideal": ["global", "local"]}`` (the
            first value kept is that dimension's default; values as the JSON spells them).

    >>> qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1, "d": 2}, "q3": {"e": 1}}
    >>> a = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 2.0, "d": 1.0}, "q3": {"x": 1.0}}
    >>> b = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"d": 2.0, "c": 1.0}, "q3": {"e": 1.0}}
    >>> r = robustness(qrels, a, b, "P@1", tests=["t"], missing=["skip"])
    >>> len(r.analyses), r.summary()["directions"]["better"]
    (4, 4)
    """
    parsed = parse_many([measure] if isinstance(measure, (str, Measure)) else measure)
    if len(parsed) != 1:
        raise InputError(f"robustness takes one measure; got {len(parsed)}")
    base = parsed[0].validate()
    if not tests or not missing:
        raise InputError("robustness needs at least one test and one missing-query policy")
    mchoices, notes = measure_choices(base)
    choices: dict[str, tuple[Any, ...]] = {**mchoices, "missing": tuple(missing), "test": tuple(tests)}
    choices = restrict(choices, only or {})
    mchoices = {k: v for k, v in choices.items() if k in mchoices}
    missing, tests = list(choices["missing"]), list(choices["test"])
    mdims = list(mchoices)
    combos = list(itertools.product(*mchoices.values()))
    variants: dict[tuple[Any, ...], Measure] = {}
    for combo in combos:
        try:
            variants[combo] = variant(base, dict(zip(mdims, combo)), depth=depth)
        except MeasureError as exc:
            raise InputError(f"robustness: {exc}") from None
    mlist = list(dict.fromkeys(variants.values()))
    labels = list(names) if names is not None else None
    if labels is not None and len(labels) != 2:
        raise InputError(f"robustness compares two systems; got {len(labels)} names")
    runs: dict[str, Any] | list[Any] = dict(zip(labels, (run_a, run_b))) if labels else [run_a, run_b]
    rows: dict[tuple[str, str, str], Any] = {}
    all_notes: list[str] = list(notes)
    systems: tuple[str, str] = ("a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        for miss in missing:
            _, results, run_notes = evaluate_runs(qrels, runs, mlist, {"missing": miss})
            all_notes.extend(f"missing={miss}: {n}" for n in run_notes)
            names_ = tuple(results)
            systems = (names_[0], names_[1])
            for test in tests:
                cmp = compare(None, results, mlist, baseline=systems[0], test=test, correction="none",
                              alpha=alpha, samples=samples, seed=seed)
                for r in cmp.select():
                    rows[(miss, test, r.measure)] = r
    analyses: list[Analysis] = []
    for combo in combos:
        m = str(variants[combo])
        for miss, test in itertools.product(missing, tests):
            r = rows[(miss, test, m)]
            diff = float(r.diff)
            direction = "better" if diff > 0 else "worse" if diff < 0 else "equal"
            analyses.append(Analysis(
                choices={**dict(zip(mdims, combo)), "missing": miss, "test": test},
                measure=m, n=int(r.n), mean_difference=diff, p=float(r.p_value),
                significant=bool(r.significant), direction=direction,
            ))
    options = {"alpha": float(alpha), "samples": int(samples), "seed": seed, "depth": int(depth)}
    return Robustness(systems, str(base), float(alpha), choices, tuple(analyses),
                      tuple(dict.fromkeys(all_notes)), options)
