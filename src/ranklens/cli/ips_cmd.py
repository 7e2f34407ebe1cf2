"""``ranklens ips``: position bias from click logs, unbiased (IPS) DCG of a target ranking, and the
DCG-vs-nDCG ordering check."""

from __future__ import annotations

import json
from typing import Any

import click

from ranklens.cli._alpha import alpha_options, confidence_level
from ranklens.cli._common import json_format_option, parse_column_pairs
from ranklens.cli._quiet import say

_LOG_ROLES = ("query", "item", "position", "click", "impression", "intervention")


def _log_columns(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, str]:
    return {} if value is None else parse_column_pairs(value, _LOG_ROLES)


def _only(columns: dict[str, str], *roles: str) -> dict[str, Any]:
    """The keyword arguments (query=…, item=…) of a function that reads these roles of the log."""
    return {role: column for role, column in columns.items() if role in roles}


columns_option = click.option(
    "--columns",
    "columns",
    callback=_log_columns,
    metavar="ROLE=COLUMN,…",
    help="The log's column names where they differ from the defaults, as labels' [columns] table: roles "
    "query, item, position, click, impression, intervention (e.g. query=user,item=video,click=watched).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def command() -> None:
    """Unbiased offline evaluation from click logs (position-based model, spec §5).

    \b
    Examples:
      ranklens ips position-bias clicks.csv --method em --plot bias.html
      ranklens ips dcg clicks.csv new_ranker.run --examination em --clip 10
      ranklens ips consistency qrels.txt a.run b.run -m nDCG@10
    """


@command.command("position-bias", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("--method", type=click.Choice(["em", "intervention"]), default="em", show_default=True,
              help="em: position-based-model EM over all rows; intervention: rows with intervention = 1.")
@click.option("--max-position", type=click.IntRange(min=1), help="Only positions 1..N.")
@click.option("--boot", "n_boot", type=click.IntRange(min=0), default=200, show_default=True, help="Bootstrap replicates for the intervals.")
@alpha_options("--confidence")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Write a plot (.html; images need kaleido). Needs plotly.")
@json_format_option
@columns_option
def position_bias(log: str, method: str, max_position: int | None, n_boot: int, alpha: float | None,
                  legacy_level: float | None, seed: int, plot_path: str | None, as_json: bool,
                  columns: dict[str, str]) -> None:
    """Estimate examination probabilities θ_k/θ_1 from the click LOG (columns query, item, position,
    click; intervention for --method intervention), with bootstrap intervals."""
    from ranklens.errors import MissingDependencyError
    from ranklens.unbiased import estimate_position_bias

    confidence = confidence_level(alpha, legacy_level, "--confidence")
    pb = estimate_position_bias(
        log, method=method, max_position=max_position, n_boot=n_boot, confidence=confidence, seed=seed,
        **_only(columns, "query", "item", "position", "click", "intervention"),
    )
    click.echo(json.dumps(pb.to_dict(), indent=2) if as_json else pb.table().rstrip())
    if plot_path:
        try:
            pb.plot(plot_path)
            say(f"plot written to {plot_path}")
        except MissingDependencyError as e:
            say(f"ranklens: note: plot skipped: {e}")


@command.command("dcg", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("log", type=click.Path(dir_okay=False))
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--examination", default="dcg", show_default=True,
              help="θ_k: dcg (1/log2(k+1)), em or intervention (estimated from LOG), or comma-separated θ_1,θ_2,….")
@click.option("-k", "k", type=click.IntRange(min=1), help="The target shows its top k (default: all it ranks).")
@click.option("--clip", type=click.FloatRange(min=0, min_open=True), help="Clip weights at M.")
@click.option("--self-normalize", is_flag=True, help="Self-normalised estimate.")
@click.option("--logging-exposure", help="Column of LOG with known logging exposures (default: empirical).")
@click.option("--boot", "n_boot", type=click.IntRange(min=0), default=1000, show_default=True)
@alpha_options("--confidence")
@click.option("--seed", type=int, default=0, show_default=True)
@json_format_option
@columns_option
def dcg(log: str, target: str, examination: str, k: int | None, clip: float | None, self_normalize: bool,
        logging_exposure: str | None, n_boot: int, alpha: float | None, legacy_level: float | None, seed: int,
        as_json: bool, columns: dict[str, str]) -> None:
    """Estimate the DCG (expected clicks per page) of the TARGET ranking (a run file) from the click LOG
    of the logging policy (columns query, item, position, click, impression)."""
    from ranklens.errors import InputError
    from ranklens.unbiased import estimate_position_bias, ips_dcg

    confidence = confidence_level(alpha, legacy_level, "--confidence")
    exam: object
    if examination == "dcg":
        exam = None
    elif examination in ("em", "intervention"):
        exam = estimate_position_bias(log, method=examination, n_boot=0,
                                      **_only(columns, "query", "item", "position", "click", "intervention"))
    else:
        try:
            exam = [float(x) for x in examination.split(",")]
        except ValueError:
            raise InputError(f"--examination must be dcg, em, intervention or numbers θ_1,θ_2,…; got {examination!r}") from None
    est = ips_dcg(log, target, examination=exam, k=k, clip=clip, self_normalize=self_normalize,  # type: ignore[arg-type]
                  logging_exposure=logging_exposure, n_boot=n_boot, confidence=confidence, seed=seed,
                  **_only(columns, "query", "item", "position", "click", "impression"))
    click.echo(json.dumps(est.to_dict(), indent=2) if as_json else str(est).rstrip())


@command.command("consistency", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "primary", default="nDCG@10", show_default=True, help="The normalised measure.")
@click.option("--unnormalised", help="The unnormalised counterpart (default: the DCG with the same gain, discount and cutoff).")
@json_format_option
def consistency(qrels: str, runs: tuple[str, ...], primary: str, unnormalised: str | None, as_json: bool) -> None:
    """Check whether mean nDCG orders the RUNs as mean DCG does (spec §5); exit 0 either way."""
    from ranklens.data.io import read_qrels, read_run
    from ranklens.data.names import unique_names
    from ranklens.engine.evaluator import Evaluator
    from ranklens.measures import parse
    from ranklens.unbiased import ordering_consistency, unnormalised_of

    p = parse(primary)
    u = parse(unnormalised) if unnormalised else unnormalised_of(p)
    ev = Evaluator([p, u], read_qrels(qrels))
    loaded = [read_run(path) for path in runs]
    names = unique_names([(r.name, path) for r, path in zip(loaded, runs)])
    report = ordering_consistency({n: ev(r) for n, r in zip(names, loaded)}, p, u)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    click.echo(f"{report.num_queries} common queries")
    click.echo(f"by mean {report.primary}: " + " > ".join(f"{s} ({report.means_primary[s]:.4f})" for s in report.order_primary))
    click.echo(f"by mean {report.unnormalised}: " + " > ".join(f"{s} ({report.means_unnormalised[s]:.4f})" for s in report.order_unnormalised))
    click.echo("consistent: the orderings agree" if report.consistent else "\n".join(f"inversion: {m}" for m in report.messages()))
