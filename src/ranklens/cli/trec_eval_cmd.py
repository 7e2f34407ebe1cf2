"""``ranklens trec-eval``: trec_eval 10.0's command line, byte for byte.

Accepts trec_eval's short options (``-q``, ``-c``, ``-n``, ``-J``, ``-l2``, ``-M20``, ``-N1000``, repeated
``-m`` with parameters such as ``-m ndcg.1=1,2=3,3=7``) and its long spellings (``--query_eval_wanted``,
``--measure``, ``--complete_rel_info_wanted``, ``--level_for_rel``, ``--nosummary``, ``--Judged_docs_only``,
``--Number_docs_in_coll``, ``--Max_retrieved_per_topic``). Numbers are read like C's ``atol`` (``-lx``
means 0). Messages go to stderr with trec_eval's exit statuses: 1 for a bad measure, 2 for unreadable
input, 4 when a qrels query has no retrieved document and ``-c`` is not given.
"""

from __future__ import annotations

import click

from ranklens.trec_eval.c_numbers import atol

__all__ = ["REL_FORMATS", "command"]

#: the -R formats trec_eval 10.0 reads (formats.c)
REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")

VERSION = "10.0"


def _show_version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"trec_eval version {VERSION} (ranklens trec-eval)", err=True)
        ctx.exit(0)


def supported() -> str:
    """The help text's list of input formats, measures (with the format each reads) and nicknames."""
    from ranklens.trec_eval.table import NICKNAMES, TABLE

    by_format: dict[str, list[str]] = {}
    for entry in TABLE:
        by_format.setdefault(entry.rel_format or "any", []).append(entry.name)
    lines = ["\b", "Relevance formats (-R): " + ", ".join(REL_FORMATS) + "; results format (-T): trec_results.", ""]
    titles = {
        "any": "Measures of every format",
        "qrels": "Measures of -R qrels",
        "prefs": "Measures of -R prefs and -R qrels_prefs",
        "qrels_jg": "Measures of -R qrels_jg",
    }
    for key in ("any", "qrels", "prefs", "qrels_jg"):
        lines += ["\b", f"{titles[key]}:", *_wrapped(by_format[key]), ""]
    lines += ["\b", "Nicknames (-m NAME selects the set):"]
    for name, members in NICKNAMES.items():
        lines += [f"  {name}:", *(" " + line for line in _wrapped(list(members), width=94))]
    return "\n".join(lines)


def _wrapped(names: list[str], width: int = 96) -> list[str]:
    out: list[str] = []
    line = " "
    for name in names:
        if len(line) + len(name) + 1 > width:
            out.append(line)
            line = " "
        line += " " + name
    return [*out, line]


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, epilog=supported())
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
@click.option(
    "-R", "--Rel_info_format", "rel_format", default="qrels", metavar="FORMAT",
    help="Format of QRELS: qrels (default), qrels_jg (judgment groups), prefs, qrels_prefs (qrels read as preferences).",
)
@click.option(
    "-T", "--Results_format", "results_format", default="trec_results", metavar="FORMAT",
    help="Format of RUN: trec_results (the only one trec_eval 10.0 has).",
)
@click.option(
    "-Z", "--Zscore", "zscores", metavar="FILE", type=click.Path(dir_okay=False),
    help="Print z-scores against the means and deviations of FILE (lines: qid measure mean stddev).",
)
@click.option(
    "-D", "--Debug_level", "debug", metavar="LEVEL[.QID]",
    help="Debug level; LEVEL.QID evaluates only query QID (debug traces are not printed).",
)
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
    zscores: str | None,
    debug: str | None,
    old_format: bool,
) -> None:
    """Evaluate RUN against QRELS exactly as trec_eval 10.0 does (same output, byte for byte).

    \b
    Examples:
      ranklens trec-eval qrels.txt run.txt
      ranklens trec-eval -q -c -m all_trec qrels.txt run.txt
      ranklens trec-eval -m ndcg_cut.5,10 -m P.5 -l2 -M100 qrels.txt run.txt
    """
    if rel_format not in REL_FORMATS:
        _fail(ctx, f"trec_eval: Illegal rel_format '{rel_format}'; expected one of {', '.join(REL_FORMATS)}", 2)
    if results_format != "trec_results":
        _fail(ctx, f"trec_eval: Illegal retrieval results format '{results_format}'; expected trec_results", 2)
    from ranklens.trec_eval.runner import TrecEvalOptions, run_trec_eval

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
        rel_format=rel_format,
        zscores=zscores,
        debug_query=debug.partition(".")[2] or None if debug else None,
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
