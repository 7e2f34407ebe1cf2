"""``ranklens fuse RUN... --method NAME -o fused.trec``: fuse runs (ranx's methods and normalisations)."""

from __future__ import annotations

import json
from typing import Any

import click

from ranklens.cli._runs import name_option


def _weights(ctx: click.Context, param: click.Parameter, value: str | None) -> list[float] | None:
    if value is None:
        return None
    try:
        return [float(w) for w in value.split(",")]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas (0.3,0.7), got {value!r}") from None


def _params(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in value:
        key, eq, number = item.partition("=")
        try:
            if not eq or not key:
                raise ValueError
            out[key.strip()] = float(number)
        except ValueError:
            raise click.BadParameter(f"expected K=V with a number V (k=60), got {item!r}") from None
    return out


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--method", required=True, help="Fusion method as ranx spells it: rrf, sum, mnz, wsum, … (docs/fusion.md).")
@click.option("--norm", default="min-max", show_default=True, help="Score normalisation: min-max, max, sum, zmuv, rank, borda, min-max-inverted or none.")
@click.option("--weights", callback=_weights, metavar="W1,W2,…", help="One weight per run (weighted methods: wsum, wmnz, mixed, w_bordafuse, w_condorcet).")
@click.option("--param", "params", multiple=True, callback=_params, metavar="K=V", help="A method parameter (rrf k, gmnz gamma, rbc phi, logn_isr sigma, probfuse n_segments, slidefuse w); repeatable.")
@click.option("--qrels", type=click.Path(dir_okay=False), help="Training qrels for --optimise and the trained methods (posfuse, probfuse, segfuse, slidefuse, bayesfuse, mapfuse).")
@click.option("--optimise", "--optimize", "optimise", is_flag=True, help="Choose the weights or the parameter by grid search on --qrels.")
@click.option("--metric", default="nDCG@10", show_default=True, help="The measure --optimise maximises (computed by ranklens).")
@click.option("--step", type=click.FloatRange(0, 1, min_open=True), default=0.1, show_default=True, help="Weight grid step of --optimise.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The fused run (TREC unless the extension says otherwise; - for standard output).")
@click.option("--tag", help="The fused run's tag. Default: the method's name.")
@click.option("--run-format", help="Format of the input runs (default: from the extension).")
@click.option("--format", "-f", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True, help="Format of the summary.")
@name_option
def command(
    runs: tuple[str, ...], method: str, norm: str, weights: list[float] | None, params: dict[str, float],
    qrels: str | None, optimise: bool, metric: str, step: float, output: str, tag: str | None,
    run_format: str | None, fmt: str, names: tuple[str, ...],
) -> None:
    """Fuse RUN... into one run with a ranx fusion method, after normalising each run's scores per query.

    Runs over different query sets are fused over their union (a note counts what each lacked). With
    --optimise, the weights (weighted methods) or the parameter are chosen on --qrels by grid search, and the
    best value of --metric is reported. The fused run is an input to eval, compare and gate like any other.

    \b
    Examples:
      ranklens fuse bm25.run dense.run --method rrf -o fused.trec
      ranklens fuse bm25.run dense.run --method wsum --norm zmuv --weights 0.3,0.7 -o fused.trec
      ranklens fuse bm25.run dense.run --method wsum --qrels train.qrels --optimise -o fused.trec
      ranklens fuse bm25.run dense.run --method probfuse --qrels train.qrels --optimise -o fused.trec
    """
    from ranklens.cli._common import echo_note
    from ranklens.cli._runs import named_runs
    from ranklens.data.io import read_run, write_run
    from ranklens.errors import InputError
    from ranklens.fusion.combine import check_method, fuse, resolve, trained_methods
    from ranklens.fusion.normalise import check_norm

    spec = check_method(method)
    check_norm(norm)
    if optimise and qrels is None:
        raise InputError("--optimise needs --qrels (the training judgements the weights are chosen on)")
    if qrels is not None and not optimise and spec.trainer is None:
        raise InputError(f"--qrels is read only with --optimise or by a trained method ({', '.join(trained_methods())})")
    if spec.trainer is not None and qrels is None:
        raise InputError(f"{method} is trained on qrels: give the training judgements with --qrels TRAIN.qrels")
    if optimise and weights is not None and spec.weighted:
        raise InputError("--optimise chooses the weights: drop --weights")
    named = named_runs(runs, names)
    if len(named) < 2:
        raise InputError(f"fuse needs at least two runs, got {len(named)}")
    resolve(method, len(named), None if optimise else weights, params if not optimise else {k: g[0] for k, g in spec.grid.items()})
    loaded = [read_run(path, format=run_format, name=given) for given, path in named]
    if optimise:
        from ranklens.fusion.search import optimise as search

        fused = search(loaded, qrels, method, norm=norm, metric=metric, step=step, name=tag)
    else:
        fused = fuse(loaded, method, norm=norm, weights=weights, params=params, qrels=qrels, name=tag)
    for note in fused.notes:
        echo_note(note)
    write_run(fused.run, "/dev/stdout" if output == "-" else output, tag=tag or method)
    summary = _summary(fused, [r.name for r in loaded], output)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2), err=output == "-")
    else:
        click.echo(_text(summary), err=output == "-")


def _summary(fused: Any, names: list[str], output: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "output": output, "runs": names, "method": fused.method, "norm": fused.norm,
        "weights": list(fused.weights) if fused.weights is not None else None, "params": fused.params,
        "queries": fused.run.num_queries, "rows": len(fused.run), "notes": list(fused.notes),
    }
    if fused.optimisation:
        out["optimisation"] = fused.optimisation
    return out


def _text(summary: dict[str, Any]) -> str:
    parts = [f"fused {len(summary['runs'])} runs ({', '.join(summary['runs'])}) with {summary['method']}"]
    parts.append(f"normalisation {summary['norm'] or 'none'}")
    if summary["weights"] is not None:
        parts.append("weights " + ",".join(f"{w:g}" for w in summary["weights"]))
    if summary["params"]:
        parts.append(" ".join(f"{k}={v:g}" for k, v in summary["params"].items()))
    line = "; ".join(parts) + f": {summary['queries']} queries, {summary['rows']} rows → {summary['output']}"
    opt = summary.get("optimisation")
    if opt and "metric" in opt:
        line += f"\noptimised on the training qrels: {opt['metric']} = {opt['value']:.4f} (best of {len(opt['trials'])} trials)"
    elif opt:
        line += f"\ntrained on {opt['trained_on']}"
    return line
