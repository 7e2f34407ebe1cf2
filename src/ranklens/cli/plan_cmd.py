"""``ranklens plan PILOT... -m MEASURE --delta D --design paired|unpaired``: how many queries or users per arm."""

from __future__ import annotations

import json
import math

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("pilot", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", required=True, help="The measure, as the pilot results name it (nDCG@10).")
@click.option("--delta", type=float, required=True, help="The difference to detect (absolute, on the measure's scale).")
@click.option("--design", type=click.Choice(("paired", "unpaired")), required=True, help="paired: queries (offline, both systems on the same queries); unpaired: users per arm (online A/B).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--power", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.8, show_default=True)
@click.option("--n", "n", type=click.IntRange(min=3), help="Also give the minimum detectable effect at this n.")
@click.option("--pre", type=click.Path(dir_okay=False), help="Per-user results of a pre-period (unpaired): CUPED-adjusted variance.")
@click.option("--format", "-f", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
def command(
    pilot: tuple[str, ...], measure: str, delta: float, design: str, alpha: float, power: float, n: int | None,
    pre: str | None, fmt: str,
) -> None:
    """Sample size to detect a difference of DELTA with a t-test, from pilot results (eval -q -f json).

    paired: two systems' per-query values (two files, or one file with two runs) → the number of queries
    (Sakai's t-test topic-set size). unpaired: per-user values of one or two arms → users per arm.

    \b
    Examples:
      ranklens plan bm25.json dense.json -m nDCG@10 --delta 0.02 --design paired
      ranklens plan control.json -m nDCG@4 --delta 0.03 --design unpaired --n 5000 -f json
    """
    from ranklens.online.planning import plan

    r = plan(list(pilot), measure, delta=delta, design=design, alpha=alpha, power=power, n=n, pre=pre)
    if fmt == "json":
        click.echo(json.dumps({k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.to_dict().items()}, indent=2))
        return
    unit = "queries" if design == "paired" else "users per arm"
    sd_what = "sd of the per-query differences" if design == "paired" else "pooled per-user sd"
    click.echo(f"{measure}: to detect a difference of {delta:g} at α = {alpha:g} with power {power:g} ({design} t-test):")
    click.echo(f"  n = {r.n} {unit}   ({sd_what} {r.sd:.4f} from {r.pilot_n} pilot values)")
    if r.rho is not None:
        click.echo(f"  CUPED: pre-period correlation ρ = {r.rho:.3f}; sd {r.sd_raw:.4f} → {r.sd:.4f}")
    if r.mde_at_n is not None:
        click.echo(f"  minimum detectable effect at n = {n}: {r.mde_at_n:.4f}")
