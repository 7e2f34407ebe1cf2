"""``ranklens rag QRELS RUN [--pool POOL] -k 10 20``: RA-nWG@K and its companions for RAG context sets."""

from __future__ import annotations

from typing import Any

import click

from ranklens.results.render import FORMATS, render


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-k", "ks", multiple=True, type=click.IntRange(min=1), help="Context-set size K (repeatable). Default: 10, 20, 30.")
@click.option("--pool", type=click.Path(dir_okay=False), help="The candidate-pool run for PROC/%PROC (default: each run's own list).")
@click.option("--top", type=click.IntRange(min=1), help="The label that plays grade 5 (default 5).")
@click.option("--rarity", "alpha", type=click.FloatRange(min=0), help="Rarity exponent alpha (default 1; 0 = none).")
# the old name, hidden: --alpha is a significance level in every other command
@click.option("--alpha", "alpha_old", type=click.FloatRange(min=0), hidden=True)
@click.option("--cap4", type=click.FloatRange(min=0), help="Cap of the grade-4 weight (default 1.0).")
@click.option("--cap3", type=click.FloatRange(min=0), help="Cap of the grade-3 weight (default 0.25).")
@click.option("--ties", type=click.Choice(["trec", "average"]), help="Cutting ties at K: doc-id order (default) or expectation.")
@click.option("--per-query", "-q", is_flag=True, help="Also show the value of every query (NA = nan).")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help="Output format.")
@click.option(
    "--missing", type=click.Choice(["skip", "zero", "error"]), default="skip", show_default=True,
    help="Queries in the qrels but not in the run: skip, score 0, or fail.",
)
def command(
    qrels: str, runs: tuple[str, ...], ks: tuple[int, ...], pool: str | None, top: int | None, alpha: float | None,
    alpha_old: float | None, cap4: float | None, cap3: float | None, ties: str | None, per_query: bool, fmt: str, missing: str,
) -> None:
    """RA-nWG@K, N-Recall4+@K, N-Recall5@K, Precision4+@K, Harm@K, PROC@K and %PROC of each RUN (the run's
    top K is the set handed to the generator). NA queries are excluded from the means and counted in the
    notes. The same measures are available in `ranklens eval` as RAnWG@10, NRecall4p@10, PctPROC@10 ….

    \b
    Example:
      ranklens rag qrels.txt reranked.run --pool first_stage.run -k 10 -k 20
    """
    from ranklens.data.io import read_qrels, read_run
    from ranklens.rag import evaluate_rag

    alpha = alpha if alpha is not None else alpha_old
    q = read_qrels(qrels)
    params: dict[str, Any] = {k: v for k, v in (("top", top), ("alpha", alpha), ("cap4", cap4), ("cap3", cap3), ("ties", ties)) if v is not None}
    pool_run = read_run(pool) if pool else None
    results = []
    for path in runs:
        res = evaluate_rag(q, read_run(path), k=ks or (10, 20, 30), pool=pool_run, missing=missing, **params)
        for note in res.notes:
            click.echo(f"ranklens: note: {path}: {note}", err=True)
        results.append(res)
    click.echo(render(results, fmt, per_query=per_query, meta={"qrels": qrels, "run_files": list(runs)}), nl=False)
