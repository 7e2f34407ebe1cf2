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
@click.option("--settle", is_flag=True,
              help="For two runs and one measure: the fewest unjudged documents to judge to settle which is better.")
@click.option("--to-judge", "to_judge", type=click.Path(dir_okay=False),
              help="With --settle: write those documents as a TREC run, the input of `ranklens judge pairs`.")
@json_format_option
def command(qrels: str, runs: tuple[str, ...], measures: tuple[str, ...], missing: str, exhaustive_limit: int,
            settle: bool, to_judge: str | None, as_json: bool) -> None:
    """The range of each measure of each RUN over every labelling of its unjudged top-k documents with
    the lowest and the highest grade of QRELS (exact: attained by a labelling, up to --exhaustive-limit
    unjudged documents per query; beyond, a bound for nDCG and AP, said in a note).

    With --settle (two runs, one measure): the documents whose grade alone can change which run is better —
    judging exactly those settles the comparison whatever their grades, and no smaller set does
    (docs/research.md); --to-judge FILE writes them for `ranklens judge pairs FILE --depth K …`.

    \b
    Examples:
      ranklens bounds qrels.txt bm25.run dense.run -m nDCG@10 -f json
      ranklens bounds qrels.txt bm25.run dense.run -m RR@10 --settle --to-judge to_judge.trec
    """
    from ranklens.data.io import read_qrels, read_run
    from ranklens.data.names import unique_names
    from ranklens.errors import InputError
    from ranklens.research.bounds import bounds

    if to_judge and not settle:
        raise InputError("--to-judge needs --settle (the documents to judge are those that settle a comparison)")
    if settle and (len(runs) != 2 or len(measures) != 1):
        raise InputError(f"--settle compares two runs on one measure; got {len(runs)} runs and {len(measures)} measures")
    q = read_qrels(qrels)
    loaded = [read_run(path) for path in runs]
    names = unique_names([(r.name, path) for r, path in zip(loaded, runs)])
    b = bounds(q, dict(zip(names, loaded)), list(measures), exhaustive_limit=exhaustive_limit, missing=missing)
    document = b.to_json()
    settled = None
    if settle:
        from ranklens.research.settle import settle as settle_pair
        from ranklens.research.settle import write_to_judge

        settled = settle_pair(q, dict(zip(names, loaded)), list(measures), exhaustive_limit=exhaustive_limit,
                              missing=missing)
        document["settle"] = settled.to_json()
        if to_judge:
            write_to_judge(settled, to_judge)
    for note in b.notes + (settled.notes if settled else []):
        say(f"ranklens: note: {note}")
    if as_json:
        click.echo(json.dumps(document, indent=2))
        return
    click.echo(render(b))
    if settled is not None:
        click.echo(render_settle(settled, to_judge))


def render(b: Any) -> str:
    """One line per run and measure: the value and its range."""
    low, high = b.grades
    lines = [f"unjudged documents labelled {low:g} … {high:g}"]
    width = max(len(name) for name in b.runs)
    for name, per_measure in b.runs.items():
        for measure, v in per_measure.items():
            lines.append(f"{name:<{width}}  {measure}  {v['value']:.4f}  in [{v['low']:.4f}, {v['high']:.4f}]")
    return "\n".join(lines)


def render_settle(s: Any, to_judge: str | None) -> str:
    """Whether the comparison is settled, and how many documents settle it."""
    a, b = s.systems
    d = s.difference
    head = f"{b} − {a} on {s.measure}: {d['value']:+.4f} as judged, in [{d['low']:+.4f}, {d['high']:+.4f}] over the labellings"
    if s.settled:
        return head + "\nsettled by the judgements: no labelling of the unjudged documents changes which run is better"
    tail = f" (written to {to_judge})" if to_judge else ""
    return (head + f"\nnot settled: judge {len(s.to_judge)} of the {s.unjudged} unjudged documents to settle it "
            f"whatever their grades{tail}")
