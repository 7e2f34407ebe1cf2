"""Evaluating the runs of a comparison once each (results files and Results pass through), naming them, and
the measures evaluated alongside (the DCG behind every nDCG, for the ordering-consistency check)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from ranklens.comparison.inputs import is_results_file, one_results
from ranklens.data.names import file_stem, unique_names
from ranklens.errors import InputError, Note, did_you_mean
from ranklens.measures.base import Measure
from ranklens.measures.language import MeasuresArg
from ranklens.results.core import Results

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["evaluate_runs", "evaluation_measures", "resolve_baseline"]


def evaluate_runs(
    qrels: Any, runs: Mapping[str, Any] | Sequence[Any], measures: MeasuresArg, policy: dict[str, Any]
) -> tuple[list[Measure], dict[str, Results], list[str]]:
    from ranklens.measures.language import parse_many

    items = list(runs.items()) if isinstance(runs, Mapping) else [(None, r) for r in runs]
    if not items:
        raise InputError("compare needs at least two runs; got none")
    evaluator = None
    if qrels is not None:  # (Results evaluated already, by any backend, need no engine: no pyarrow, no kernels)
        from ranklens.engine.evaluator import Evaluator

        evaluator = Evaluator(measures, qrels, **policy)
    measure_values = list(evaluator.measures) if evaluator else [m.validate() for m in parse_many(measures)]
    checks = _consistency_pairs(measure_values)
    if evaluator is not None and checks:
        # also evaluate the DCG behind every nDCG, to check that both order the systems alike (spec §5)
        extra = [u for _, u in checks if u not in measure_values]
        read = {k: v for k, v in policy.items() if k not in ("qrels_columns", "qrels_format")}  # (qrels read already)
        evaluator = type(evaluator)([*measure_values, *extra], evaluator.qrels, **read)
    if not measure_values:
        raise InputError("no measure given; e.g. nDCG@10")
    evaluated: list[tuple[str | None, Any, Results]] = []
    notes: list[str] = []
    for name, run in items:
        if isinstance(run, (str, os.PathLike)) and is_results_file(run):
            run = one_results(run)
        if isinstance(run, Results):
            for m in measure_values:
                run.column_values(m)  # raises MeasureError naming the measures it has
            res = run
        elif evaluator is None:
            raise InputError("qrels are needed to evaluate runs (only precomputed Results may omit them)")
        else:
            res = evaluator(run, name=name, warn=False)  # compare warns the notes once, with the system's name
        evaluated.append((name, run, res))
    labels = unique_names([(n if n is not None else r.run, src) for n, src, r in evaluated])
    results: dict[str, Results] = {}
    for label, (_, _, res) in zip(labels, evaluated):
        results[label] = res
        notes.extend(note.with_prefix(f"{label}: ") if isinstance(note, Note) else f"{label}: {note}" for note in res.notes)
    notes.extend(_consistency_notes(results, checks))
    return measure_values, results, notes


def evaluation_measures(measures: Sequence[Measure]) -> list[Measure]:
    """What :func:`compare` evaluates for ``measures``: them, then the DCG behind every nDCG (to check that
    both order the systems alike); for callers that evaluate runs themselves and pass Results."""
    extra = [u for _, u in _consistency_pairs(measures) if u not in measures]
    return [*measures, *extra]


def _consistency_pairs(measures: Sequence[Measure]) -> list[tuple[Measure, Measure]]:
    """(nDCG measure, its unnormalised DCG) for every nDCG measure compared."""
    from ranklens.unbiased.consistency import unnormalised_of

    return [(m, unnormalised_of(m)) for m in measures if m.name == "nDCG"]


def _consistency_notes(results: Mapping[str, Results], checks: Sequence[tuple[Measure, Measure]]) -> list[str]:
    """Say when mean nDCG and mean DCG order the systems differently (normalisation can invert them)."""
    from ranklens.unbiased.consistency import ordering_consistency

    out: list[str] = []
    for primary, dcg in checks:
        if len(results) < 2 or not all(primary in r.measures and dcg in r.measures for r in results.values()):
            continue  # precomputed Results without the DCG: nothing to check
        out.extend(ordering_consistency(results, primary, dcg).messages())
    return out


def resolve_baseline(baseline: str | int | None, names: tuple[str, ...]) -> str | None:
    if baseline is None:
        return None
    numpy = sys.modules.get("numpy")  # (a numpy integer comes only from a caller that imported numpy)
    if isinstance(baseline, (int, numpy.integer) if numpy is not None else int) and not isinstance(baseline, bool):
        if not -len(names) <= int(baseline) < len(names):
            raise InputError(f"baseline index {baseline} out of range for {len(names)} systems")
        return names[int(baseline)]
    if baseline in names:
        return str(baseline)
    if isinstance(baseline, (str, os.PathLike)) and file_stem(baseline) in names:
        return file_stem(baseline)
    raise InputError(
        f"unknown baseline {baseline!r}; the systems are {', '.join(names)}" + did_you_mean(str(baseline), names)
    )
