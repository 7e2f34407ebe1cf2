"""``ranklens bounds QRELS RUN... -m nDCG@10``: what the unjudged documents could do to each value."""

from __future__ import annotations

import json
from typing import Any

import click

from ranklens.cli._common import json_format_option
from ranklens.cli._measure_args import MeasureArgsCommand
from ranklens.cli._quiet import say


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, default=("nDCG@10",), show_default=True,
              help="A measure (repeatable; -m A B C).")
@click.option("--missing", type=click.Choice(["skip", "zero"]), default="skip", show_default=True,
              help="Judged queries a run has no results for: skipped, or scored 0.")
@click.option("--exhaustive-limit", type=int, default=16, show_default=True,
              help="Label every combination of up to this many unjudged documents per query (2^n labellings).")
@json_format_option
def command(qrels: str, runs: tuple[str, ...], measures: tuple[str, ...], missing: str, exhaustive_limit: int,
            as_json: bool) -> None:
    """The range of each measure of each RUN over every labelling of its unjudged top-k documents with
    the lowest and the highest grade of QRELS (exact: attained by a labelling, up to --exhaustive-limit
    unjudged documents per query; beyond, a bound for nDCG and AP, said in a note).

    \b
    Example:
      ranklens bounds qrels.txt bm25.run dense.run -m nDCG@10 -f json
    """
    from ranklens.data.io import read_qrels, read_run
    from ranklens.data.names import unique_names
    from ranklens.research.bounds import bounds

    q = read_qrels(qrels)
    loaded = [read_run(path) for path in runs]
    names = unique_names([(r.name, path) for r, path in zip(loaded, runs)])
    b = bounds(q, dict(zip(names, loaded)), list(measures), exhaustive_limit=exhaustive_limit, missing=missing)
    for note in b.notes:
        say(f"ranklens: note: {note}")
    if as_json:
        click.echo(json.dumps(b.to_json(), indent=2))
        return
    click.echo(render(b))


def render(b: Any) -> str:
    """One line per run and measure: the value and its range."""
    low, high = b.grades
    lines = [f"unjudged documents labelled {low:g} … {high:g}"]
    width = max(len(name) for name in b.runs)
    for name, per_measure in b.runs.items():
        for measure, v in per_measure.items():
            lines.append(f"{name:<{width}}  {measure}  {v['value']:.4f}  in [{v['low']:.4f}, {v['high']:.4f}]")
    return "\n".join(lines)
