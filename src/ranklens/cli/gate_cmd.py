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
    from ranklens.cli._common import progress_hook
    from ranklens.cli._progress import wanted
    from ranklens.cli.gate_run import run_gate

    status = run_gate(
        qrels, run, mins=mins, maxes=maxes, baseline=baseline, max_drops=max_drops, alpha=alpha, test=test,
        segments=segments, rules=rules, fmt=fmt, names=names, quiet=quiet, engine=engine, spark_master=spark_master,
        memory_limit=memory_limit, policy=policy, progress=progress_hook(wanted(quiet)),
        out=click.echo, err=lambda text: click.echo(text, err=True),
    )
    if status:
        sys.exit(status)
