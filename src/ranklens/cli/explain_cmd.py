"""``ranklens explain QRELS RUN --query Q -m nDCG@5``: the worked computation for one query."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ranklens.cli._common import policy_options
from ranklens.cli._quiet import say
from ranklens.explain.text import render_explanation

if TYPE_CHECKING:
    from ranklens.engine.policy import EvalPolicy
    from ranklens.explain.model import Explanation

__all__ = ["command", "render_explanation"]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--query", metavar="ID", help="The query id to explain (required).")
@click.option("-q", "query_short", hidden=True)  # the old short form; elsewhere -q is --per-query
@click.option("-m", "--measure", default="nDCG@10", show_default=True, help="The measure to explain.")
@policy_options
def command(
    qrels: str,
    run: str,
    query: str | None,
    query_short: str | None,
    measure: str,
    policy: EvalPolicy,
) -> None:
    """Show, for one QUERY, how MEASURE is computed from RUN and QRELS: rank, document, label, gain,
    discount, contribution and running DCG; the ideal ordering with its IDCG; the final value.

    \b
    Example:
      ranklens explain qrels.txt run.txt --query q3 -m nDCG@5
      ranklens explain qrels.txt run.txt --query q3 -m 'nDCG(ties=average,gain=exp)@10'
    """
    query = query if query is not None else query_short
    if query is None:
        raise click.UsageError("Missing option '--query' (the query id to explain).")

    from ranklens.backends import choose_backend, run_compiled
    from ranklens.explain.compiled import compiled_explanation
    from ranklens.express import express_measures

    measures = express_measures([measure]) or _parsed(measure)  # (plain words without the measure language)
    choice = choose_backend(measures, policy, qrels, [run], needs="intermediates")
    e = run_compiled(choice, lambda why: compiled_explanation(qrels, run, query, measures[0], why))
    if e is None:
        e = _reference(qrels, run, query, measure, policy)
    click.echo(render_explanation(e), nl=False)


def _parsed(measure: str) -> list[Any]:
    from ranklens.measures import parse_many

    return parse_many([measure])  # type: ignore[return-value]


def _reference(qrels: str, run: str, query: str, measure: str, policy: EvalPolicy) -> Explanation:
    """The reference's explanation (the files read by the data layer, whose notes are said first)."""
    from ranklens.data.io import read_qrels, read_run
    from ranklens.explain.reference import reference_explanation

    q = read_qrels(qrels, format=policy.qrels_format, columns=policy.qrels_columns, labels=policy.labels or "int")
    r = read_run(run, format=policy.run_format, columns=policy.run_columns)
    for path, notes in ((qrels, q.notes), (run, r.notes)):
        for note in notes:
            say(f"ranklens: note: {path}: {note}")
    return reference_explanation(q, r, query, measure, policy=policy.replace(qrels_columns=None, run_columns=None))
