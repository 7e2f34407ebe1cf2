"""``ranklens gate QRELS RUN --min nDCG@10=0.85 [--baseline BASE --max-drop nDCG@10=0.01 --alpha 0.05]``.

A regression gate for CI: exit 0 when every rule holds, 1 when one fails (saying which, by how much and on
which segment), 2 on bad input. The gate fails closed: every qrels query counts (one the run misses scores
0, as with trec_eval -c) unless ``--missing skip`` says otherwise, and then each check says on how many
queries it was made ("on 5 of 12 queries"); a check over no query fails; a run (or baseline) sharing no
query with the qrels, or segments labelling none of its queries, is bad input (exit 2).
Rules come from the command line and/or a TOML rules file, in the syntax and format of
:mod:`ranklens.gates` (the same file the monitor loads); the rule model and the checks live there.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from typing import TYPE_CHECKING

import click

from ranklens.cli._common import engine_options, policy_options
from ranklens.cli._runs import name_option

if TYPE_CHECKING:
    from ranklens.engine.policy import EvalPolicy

__all__ = ["command"]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path())
@click.argument("run", type=click.Path())
@click.option(
    "--min",
    "mins",
    multiple=True,
    metavar="MEASURE=VALUE",
    help="The run's mean MEASURE must be at least VALUE, e.g. --min nDCG@10=0.85 (repeatable).",
)
@click.option(
    "--max",
    "maxes",
    multiple=True,
    metavar="MEASURE=VALUE",
    help="The run's mean MEASURE must be at most VALUE (repeatable).",
)
@click.option("--baseline", "-b", type=click.Path(dir_okay=False), help="A baseline run for --max-drop rules.")
@click.option(
    "--max-drop",
    "max_drops",
    multiple=True,
    metavar="MEASURE=VALUE",
    help="The run may trail the baseline's mean MEASURE by at most VALUE, e.g. --max-drop nDCG@10=0.01.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="With --max-drop: fail only when the drop is also significant at this level (paired test, "
    "Holm-corrected across segments).",
)
@click.option("--test", "-t", help="Paired test for drops: t (default), randomisation, bootstrap, wilcoxon, sign.")
@click.option(
    "--segments",
    type=click.Path(dir_okay=False),
    help="Query → segment pairs ('query_id segment' lines, CSV/TSV with a header, or JSON {query_id: segment}): "
    "every rule is also checked in every segment.",
)
@click.option(
    "--rules",
    type=click.Path(dir_okay=False),
    help='A TOML rules file (shared with the monitor): [min], [max] and [max_drop] tables of "MEASURE" = VALUE, '
    'rules = ["nDCG@10 >= 0.85", …], optional alpha, test, correction and [segment.NAME] overrides.',
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["table", "json", "text"]),
    metavar="[table|json]",
    default="table",
    show_default=True,
    help="Report as lines of text (table) or JSON.",
)
@name_option
@click.option("--quiet", is_flag=True, help="No progress display and no notes.")
@engine_options
@policy_options(missing="zero")
def command(
    qrels: str,
    run: str,
    mins: tuple[str, ...],
    maxes: tuple[str, ...],
    baseline: str | None,
    max_drops: tuple[str, ...],
    alpha: float | None,
    test: str | None,
    segments: str | None,
    rules: str | None,
    fmt: str,
    names: tuple[str, ...],
    quiet: bool,
    engine: str,
    spark_master: str,
    memory_limit: str | None,
    policy: EvalPolicy,
) -> None:
    """Check RUN against quality rules: exit 0 when every rule holds, 1 when one fails, 2 on bad input.

    --min rules bound the run's mean; --max-drop rules bound how far it may trail --baseline (paired
    query by query). With --alpha a drop beyond the limit fails only when it is significant. With
    --segments every rule is checked over all queries and within every segment.

    Every qrels query counts: one a run misses scores 0 (--missing zero, the gate's default). With
    --missing skip the checks use the queries the run answered and say how many ("on 5 of 12 queries").
    A check over no query fails.

    \b
    Examples:
      ranklens gate qrels.txt run.txt --min nDCG@10=0.85 --min P@5=0.4
      ranklens gate qrels.txt new.run --baseline prod.run --max-drop nDCG@10=0.01 --alpha 0.05
      ranklens gate qrels.txt new.run --baseline prod.run --rules gate.toml --segments segments.tsv
      ranklens gate qrels.parquet new.parquet --min nDCG@10=0.85 --engine spark
    """
    from ranklens.cli._common import echo_note, progress_hook
    from ranklens.cli._progress import wanted
    from ranklens.cli._runs import final_names, named_runs
    from ranklens.errors import InputError
    from ranklens.evaluation import read_qrels_file
    from ranklens.gates import GateSettings, Rule, check_rules, one_measure, parse_rule, read_rules
    from ranklens.gates.inputs import compiled_gate_results, gate_results
    from ranklens.stats import canonical_correction, canonical_test

    named = named_runs([run, *([baseline] if baseline else [])], names)
    run, baseline = named[0][1], (named[1][1] if baseline else None)
    show = wanted(quiet)
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
    rule_list = [dataclasses.replace(r, measure=str(resolved[r.measure])) for r in rule_list]
    measures = list(dict.fromkeys(resolved.values()))
    paths = [run, *([baseline] if baseline else [])]
    quick, choice = compiled_gate_results(qrels, paths, measures, policy, progress=progress_hook(show), engine=engine)
    if quick is not None:  # (the compiled backend: every qrels query is in each run's Results)
        res, base_res = quick[0], (quick[1] if baseline else None)
        universe = list(res.query_ids)
    else:
        from ranklens.engine.evaluator import Evaluator

        q, _ = read_qrels_file(qrels, policy, on_note=None if quiet else echo_note)
        evaluator = Evaluator(measures, q, policy=policy.replace(qrels_format=None, qrels_columns=None))
        on = functools.partial(
            gate_results, progress=progress_hook(show), engine=engine, spark_master=spark_master, qrels_path=qrels,
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
            click.echo(f"ranklens: note: {path}: {note}", err=True)

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
        click.echo(f"ranklens: note: {note}", err=True)
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2, allow_nan=False))
    else:
        click.echo("\n".join(report.lines()))
    if not report.passed:
        sys.exit(1)
