"""``ranklens trec-eval``: trec_eval 10.0's command line, byte for byte.

Accepts trec_eval's short options (``-q``, ``-c``, ``-n``, ``-J``, ``-l2``, ``-M20``, ``-N1000``, repeated
``-m`` with parameters such as ``-m ndcg.1=1,2=3,3=7``) and its long spellings (``--query_eval_wanted``,
``--measure``, ``--complete_rel_info_wanted``, ``--level_for_rel``, ``--nosummary``, ``--Judged_docs_only``,
``--Number_docs_in_coll``, ``--Max_retrieved_per_topic``). Numbers are read like C's ``atol`` (``-lx``
means 0). Messages go to stderr with trec_eval's exit statuses: 1 for a bad measure, 2 for unreadable
input, 4 when a qrels query has no retrieved document and ``-c`` is not given.
"""

from __future__ import annotations

import re

import click

from ranklens.trec_eval import TrecEvalOptions, run_trec_eval

__all__ = ["command"]

VERSION = "10.0"
_ATOL = re.compile(r"\s*([+-]?[0-9]+)")


def atol(text: str | None) -> int:
    """C's ``atol``: the leading integer of ``text`` (after spaces), 0 when there is none.

    >>> atol("2"), atol("20abc"), atol("x"), atol(" -3")
    (2, 20, 0, -3)
    """
    match = _ATOL.match(text or "")
    return int(match.group(1)) if match else 0


def _show_version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"trec_eval version {VERSION} (ranklens trec-eval)", err=True)
        ctx.exit(0)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-q", "--query_eval_wanted", "per_query", is_flag=True, help="Also print every query's values.")
@click.option(
    "-m", "--measure", "measures", multiple=True, metavar="MEASURE[.PARAMS]",
    help="Measure or nickname (official, set, all_trec); repeatable; e.g. -m ndcg_cut.5,10 -m ndcg.1=1,2=3.",
)
@click.option(
    "-c", "--complete_rel_info_wanted", "complete", is_flag=True,
    help="Average over every qrels query; queries missing from the run score 0.",
)
@click.option("-l", "--level_for_rel", "level", metavar="NUM", help="Smallest label that is relevant (default 1).")
@click.option("-n", "--nosummary", "no_summary", is_flag=True, help="Do not print the summary ('all') lines.")
@click.option("-J", "--Judged_docs_only", "judged_only", is_flag=True, help="Drop unjudged retrieved documents first.")
@click.option("-N", "--Number_docs_in_coll", "num_docs", metavar="NUM", help="Documents in the collection (utility).")
@click.option("-M", "--Max_retrieved_per_topic", "max_docs", metavar="NUM", help="Evaluate only the top NUM per query.")
@click.option("-R", "--Rel_info_format", "rel_format", default="qrels", metavar="FORMAT", help="Only 'qrels'.")
@click.option("-T", "--Results_format", "results_format", default="trec_results", metavar="FORMAT", help="Only 'trec_results'.")
@click.option("-o", "--Output_old_results_format", "old_format", is_flag=True, hidden=True)
@click.option(
    "-v", "--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
    help="Print the trec_eval version this command reproduces and exit.",
)
@click.pass_context
def command(
    ctx: click.Context,
    qrels: str,
    run: str,
    per_query: bool,
    measures: tuple[str, ...],
    complete: bool,
    level: str | None,
    no_summary: bool,
    judged_only: bool,
    num_docs: str | None,
    max_docs: str | None,
    rel_format: str,
    results_format: str,
    old_format: bool,
) -> None:
    """Evaluate RUN against QRELS exactly as trec_eval 10.0 does (same output, byte for byte).

    \b
    Examples:
      ranklens trec-eval qrels.txt run.txt
      ranklens trec-eval -q -c -m all_trec qrels.txt run.txt
      ranklens trec-eval -m ndcg_cut.5,10 -m P.5 -l2 -M100 qrels.txt run.txt
    """
    if rel_format != "qrels":
        _fail(ctx, f"trec_eval: Illegal rel_format '{rel_format}' (ranklens reads 'qrels')", 2)
    if results_format != "trec_results":
        _fail(ctx, f"trec_eval: Illegal retrieval results format '{results_format}'", 2)
    if run == "-":
        _fail(ctx, "trec_eval: reading the run from stdin is not supported; give a file", 2)
    options = TrecEvalOptions(
        qrels=qrels,
        run=run,
        measures=measures,
        per_query=per_query,
        complete=complete,
        summary=not no_summary,
        rel_level=atol(level) if level is not None else 1,
        max_docs=atol(max_docs) if max_docs is not None else None,
        judged_only=judged_only,
        num_docs=atol(num_docs) if num_docs is not None else 0,
    )
    result = run_trec_eval(options)
    if result.stdout:
        click.echo(result.stdout, nl=False)
    if result.stderr:
        click.echo(result.stderr, nl=False, err=True)
    ctx.exit(result.status)


def _fail(ctx: click.Context, message: str, status: int) -> None:
    click.echo(message, err=True)
    ctx.exit(status)
