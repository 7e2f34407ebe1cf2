"""The body of ``ranklens gate`` without click: the rules read, the run (and baseline) evaluated through the
one dispatcher, the rules checked and the report written through ``out`` (standard output) and ``err``
(notes). :mod:`ranklens.cli.gate_cmd` runs it with click's options and printers; the express form
(:mod:`ranklens.cli.express_gate`) with its own, for the plain command lines it recognises before click."""

from __future__ import annotations

import functools
from dataclasses import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ranklens.engine.policy import EvalPolicy
    from ranklens.hooks import ProgressHook

__all__ = ["run_gate"]


def run_gate(
    qrels: str,
    run: str,
    *,
    mins: Sequence[str] = (),
    maxes: Sequence[str] = (),
    baseline: str | None = None,
    max_drops: Sequence[str] = (),
    alpha: float | None = None,
    test: str | None = None,
    segments: str | None = None,
    rules: str | None = None,
    fmt: str = "table",
    names: Sequence[str] = (),
    quiet: bool = False,
    engine: str = "memory",
    spark_master: str = "local[2]",
    memory_limit: str | None = None,
    policy: EvalPolicy,
    progress: ProgressHook | None = None,
    out: Callable[[str], object],
    err: Callable[[str], object],
) -> int:
    """Check ``run`` against the rules (``ranklens gate``'s options) and return the exit status: 0 when every
    rule holds, 1 when one fails (a bad input raises, as everywhere: the caller says it in one line, status 2).
    ``out`` writes a line of the report, ``err`` a line of notes (none with ``quiet``)."""
    from ranklens.cli._runs import final_names, named_runs
    from ranklens.errors import InputError
    from ranklens.evaluation import read_qrels_file
    from ranklens.gates import GateSettings, Rule, check_rules, one_measure, parse_rule, read_rules
    from ranklens.gates.inputs import compiled_gate_results, gate_results
    from ranklens.stats import canonical_correction, canonical_test

    named = named_runs([run, *([baseline] if baseline else [])], names)
    run, baseline = named[0][1], (named[1][1] if baseline else None)
    settings = GateSettings()
    rule_list: list[Rule] = []
    if rules:
        file_rules, settings = read_rules(rules)
        rule_list.extend(file_rules)
    rule_list.extend(parse_rule(text, kind="min") for text in mins)
    rule_list.extend(parse_rule(text, kind="max") for text in maxes)
    rule_list.extend(parse_rule(text, kind="max_drop") for text in max_drops)
    if alpha is not None:
        settings.alpha = alpha
    if test is not None:
        settings.test = test
    settings.test = canonical_test(settings.test)
    settings.correction = canonical_correction(settings.correction)
    if settings.test in ("tukey", "randomised-tukey"):
        raise InputError(f"the gate compares one run with one baseline; use a paired test, not {settings.test!r}")
    if not rule_list:
        raise InputError(
            "no rule given: use --min MEASURE=VALUE, --max MEASURE=VALUE, --max-drop MEASURE=VALUE or --rules FILE"
        )
    if any(r.kind == "max_drop" for r in rule_list) and baseline is None:
        raise InputError("--max-drop rules need --baseline BASE.run")

    resolved = {r.measure: policy.with_aggregate([one_measure(r.measure, policy.rel_level)])[0] for r in rule_list}
    rule_list = [replace(r, measure=str(resolved[r.measure])) for r in rule_list]
    measures = list(dict.fromkeys(resolved.values()))
    paths = [run, *([baseline] if baseline else [])]
    quick, choice = compiled_gate_results(qrels, paths, measures, policy, progress=progress, engine=engine)
    if quick is not None:  # (the compiled backend: every qrels query is in each run's Results)
        res, base_res = quick[0], (quick[1] if baseline else None)
        universe = list(res.query_ids)
    else:
        from ranklens.engine.evaluator import Evaluator

        def say_note(text: str) -> None:
            err(f"ranklens: note: {text}")

        q, _ = read_qrels_file(qrels, policy, on_note=None if quiet else say_note)
        evaluator = Evaluator(measures, q, policy=policy.replace(qrels_format=None, qrels_columns=None))
        on = functools.partial(
            gate_results, progress=progress, engine=engine, spark_master=spark_master, qrels_path=qrels,
            policy=policy, choice=choice, memory_limit=memory_limit,
        )
        res = on(evaluator, run)
        base_res = on(evaluator, baseline) if baseline else None
        universe = evaluator.qrels.query_ids.to_pylist()
    labels = final_names(named, [r.run for r in (res, base_res) if r is not None])
    res = res.replace(run=labels[0])
    base_res = base_res.replace(run=labels[1]) if base_res is not None else None
    for path, r in ((run, res), (baseline, base_res)):
        for note in r.notes if r is not None and not quiet else ():
            err(f"ranklens: note: {path}: {note}")

    report = check_rules(
        rule_list,
        res,
        base_res,
        segments,
        settings,
        run_path=run,
        baseline_path=baseline,
        universe=universe,
    )
    for note in report.notes:
        err(f"ranklens: note: {note}")
    if fmt == "json":
        import json

        out(json.dumps(report.to_dict(), indent=2, allow_nan=False))
    else:
        out("\n".join(report.lines()))
    return 0 if report.passed else 1
