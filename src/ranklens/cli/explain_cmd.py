"""``ranklens explain QRELS RUN --query Q -m nDCG@5``: the worked computation for one query."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import click

from ranklens.cli._common import policy_options
from ranklens.cli._quiet import say

if TYPE_CHECKING:
    from ranklens.engine.policy import EvalPolicy


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
    from ranklens.data.io import read_qrels, read_run
    from ranklens.explain import explain

    query = query if query is not None else query_short
    if query is None:
        raise click.UsageError("Missing option '--query' (the query id to explain).")

    from ranklens.backends import choose_backend

    choose_backend([measure], policy, qrels, [run], needs="intermediates")  # (the reference: forcing another fails)
    q = read_qrels(qrels, format=policy.qrels_format, columns=policy.qrels_columns, labels=policy.labels or "int")
    r = read_run(run, format=policy.run_format, columns=policy.run_columns)
    for path, notes in ((qrels, q.notes), (run, r.notes)):
        for note in notes:
            say(f"ranklens: note: {path}: {note}")
    e = explain(q, r, query, measure, policy=policy.replace(qrels_columns=None, run_columns=None))
    click.echo(render_explanation(e), nl=False)


def render_explanation(e: object) -> str:
    """The explanation as text tables (rich, no colour)."""
    from rich.console import Console
    from rich.table import Table

    from ranklens.explain import Explanation

    assert isinstance(e, Explanation)
    buf = io.StringIO()
    con = Console(file=buf, width=110, force_terminal=False, color_system=None)
    con.print(f"{e.measure} for query {e.query} ({e.total_retrieved} documents retrieved)")
    for key, val in e.settings.items():
        con.print(f"  {key}: {val}")
    if e.rows:
        cols = list(e.rows[0])
        t = Table(title="ranking", title_justify="left")
        for c in cols:
            t.add_column(c.replace("_", " "), justify="left" if c in ("doc", "label", "relevant") else "right")
        for row in e.rows:
            t.add_row(*(_fmt(row[c]) for c in cols))
        con.print(t)
    else:
        con.print("ranking: no document within the cutoff")
    if e.dcg is not None:
        con.print(f"DCG = {e.dcg:.6f}")
        if e.measure.name != "DCG":
            if e.ideal_rows:
                t = Table(title="ideal ordering", title_justify="left")
                for c in e.ideal_rows[0]:
                    t.add_column(c, justify="left" if c in ("doc", "label") else "right")
                for row in e.ideal_rows:
                    t.add_row(*(_fmt(v) for v in row.values()))
                con.print(t)
            con.print(f"IDCG = {e.idcg:.6f}")
            if e.measure.name == "nDCG" and e.min_dcg is not None:
                con.print(f"minDCG = {e.min_dcg:.6f}")
                low, top = e.min_dcg, float(e.idcg or 0.0)
                ratio = (
                    "0 (IDCG = minDCG)" if not top - low
                    else f"({e.dcg:.6f} − {low:.6f}) / ({top:.6f} − {low:.6f})"
                )
                con.print(f"{e.measure} = (DCG − minDCG) / (IDCG − minDCG) = {ratio} = {e.value:.6f}")
            elif e.measure.name == "nDCG":
                ratio = "0 (IDCG = 0: no relevant judged document)" if not e.idcg else f"{e.dcg:.6f} / {e.idcg:.6f}"
                con.print(f"{e.measure} = DCG / IDCG = {ratio} = {e.value:.6f}")
    else:
        con.print(f"{e.measure} = {e.value:.6f}")
    for note in e.notes:
        con.print(f"note: {note}")
    return buf.getvalue()


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)
