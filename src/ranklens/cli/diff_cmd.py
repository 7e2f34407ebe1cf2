"""``ranklens diff QRELS RUN_A RUN_B -m nDCG@10``: which documents changed the number, query by query."""

from __future__ import annotations

import json
from typing import Any

import click

from ranklens.cli._common import json_format_option
from ranklens.cli._measure_args import MeasureArgsCommand
from ranklens.cli._quiet import say


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run_a", type=click.Path(dir_okay=False))
@click.argument("run_b", type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, default=("nDCG@10",), show_default=True,
              help="A measure to decompose (repeatable): nDCG, DCG, P, RR, AP with their parameters.")
@click.option("-k", "k", type=int, default=10, show_default=True, help="Depth of RBO, Kendall's tau and entered/left.")
@click.option("--rbo-p", "p", type=float, default=0.9, show_default=True, help="RBO persistence p.")
@click.option("--top", type=int, default=5, show_default=True, help="Queries shown in the table (largest |change|).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Also write a self-contained HTML view (every query's decomposition, worst queries linked).")
@json_format_option
def command(qrels: str, run_a: str, run_b: str, measures: tuple[str, ...], k: int, p: float, top: int,
            html_path: str | None, as_json: bool) -> None:
    """Decompose the change from RUN_A to RUN_B of each measure into per-document contributions
    (documents that entered, left or moved within the measure's cutoff; they add up exactly to the
    change), with the tie-aware rank-biased overlap and Kendall's tau of the two rankings at -k.

    \b
    Examples:
      ranklens diff qrels.txt bm25.run dense.run -m nDCG@10 -m AP -f json
      ranklens diff qrels.txt bm25.run dense.run -m nDCG@10 --html diff.html
    """
    from ranklens.data.io import read_qrels, read_run
    from ranklens.errors import InputError
    from ranklens.research.diff import diff_runs

    if not 0.0 < p < 1.0:
        raise InputError(f"--rbo-p must be between 0 and 1 (exclusive); got {p}")
    q = read_qrels(qrels)
    a, b = read_run(run_a), read_run(run_b)
    d = diff_runs(q, a, b, list(measures), k=k, p=p)
    for note in d.notes:
        say(f"ranklens: note: {note}")
    if html_path:
        from pathlib import Path

        from ranklens.research.diff_html import render_html

        Path(html_path).write_text(render_html([(a.name, b.name, d)], title=f"ranklens diff: {b.name} vs {a.name}"),
                                   encoding="utf-8")
        say(f"ranklens: wrote the HTML view to {html_path}")
    if as_json:
        click.echo(json.dumps({"a": run_a, "b": run_b, **d.to_json()}, indent=2))
        return
    click.echo(render(d, top))


def render(d: Any, top: int) -> str:
    """The terminal report: one line per measure, then the queries that changed most."""
    lines = [f"{len(d.compared)} queries compared (k = {d.k}, RBO p = {d.p})"]
    for md in d.measures:
        kinds = " ".join(f"{v:+.4f} {kind}" for kind, v in md.by_kind.items())
        lines.append(f"{md.measure}: {md.value_a:.4f} → {md.value_b:.4f}  Δ {md.delta:+.4f} = {kinds}")
        worst = sorted(md.per_query.items(), key=lambda kv: -abs(kv[1][0]))[:top]
        for qid, (delta, contributions) in worst:
            o = d.overlap[qid]
            tau = "n/a" if o["kendall_tau"] is None else f"{o['kendall_tau']:+.3f}"
            lines.append(f"  {qid}: Δ {delta:+.4f}  RBO {o['rbo']:.3f}  tau {tau}")
            for c in sorted(contributions, key=lambda c: -abs(c.value))[:3]:
                where = f"{c.rank_a or '-'}→{c.rank_b or '-'}"
                lines.append(f"      {c.value:+.4f} {c.kind:<7} {c.doc} (rank {where})")
    return "\n".join(lines)
