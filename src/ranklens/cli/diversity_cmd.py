"""``ranklens diversity QRELS RUN [RUN...] -m alpha-nDCG@10``: the intent-aware measures over intent-level qrels."""

from __future__ import annotations

import click

from ranklens.cli._measure_args import expand_measure_args
from ranklens.cli._quiet import say
from ranklens.results.rendering import FORMATS, render


class _DiversityCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        import ranklens.measures  # noqa: F401  (so that -m A B C recognises alpha-nDCG)

        return super().parse_args(ctx, expand_measure_args(args))


@click.command(cls=_DiversityCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "-m", "--measure", "measures", multiple=True,
    help="Intent-aware measures (alpha-nDCG@k, alpha-DCG@k, ERR-IA@k, nERR-IA@k, NRBP, nNRBP, P-IA@k, AP-IA, "
    "StRecall@k), e.g. -m alpha-nDCG@10 'alpha-nDCG(alpha=0.3)@20'. Default: alpha-nDCG@5, @10, @20.",
)
@click.option("--per-query", "-q", is_flag=True, help="Also show the value of every query.")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help="Output format.")
@click.option(
    "--missing", type=click.Choice(["skip", "zero", "error"]), default="skip", show_default=True,
    help="Queries in the qrels but not in the run: skip, score 0, or fail.",
)
def command(qrels: str, runs: tuple[str, ...], measures: tuple[str, ...], per_query: bool, fmt: str, missing: str) -> None:
    """Evaluate RUNs with intent-aware measures against intent-level QRELS (lines 'qid intent docid rel',
    the TREC diversity format). The ideal ranking is greedy, ties broken by document id descending (ndeval).
    With document-level qrels too, use --intents FILE on eval, compare, gate, explain or ab.

    \b
    Example:
      ranklens diversity div.qrels run.txt -m alpha-nDCG@10 'alpha-nDCG(alpha=0.3)@20'
    """
    from ranklens.diversity import evaluate_diversity, read_intent_qrels

    iq = read_intent_qrels(qrels)
    chosen = measures or ("alpha-nDCG@5", "alpha-nDCG@10", "alpha-nDCG@20")
    results = []
    for path in runs:
        res = evaluate_diversity(iq, path, chosen, missing=missing)
        for note in res.notes:
            say(f"ranklens: note: {path}: {note}")
        results.append(res)
    click.echo(render(results, fmt, per_query=per_query, meta={"qrels": qrels, "run_files": list(runs)}), nl=False)
