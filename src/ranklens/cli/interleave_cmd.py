"""``ranklens interleave LOG``: analyse a team-draft interleaving log."""

from __future__ import annotations

import json

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--samples", "-B", type=click.IntRange(min=1), default=10_000, show_default=True, help="Bootstrap samples.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--format", "-f", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
def command(log: str, alpha: float, samples: int, seed: int, fmt: str) -> None:
    """Credit each impression of a team-draft interleaving LOG to ranker A or B and test the preference.

    LOG: CSV/TSV with a header, or JSON Lines, one row per shown item: impression, team (A or B), click (0/1),
    optionally segment. Per impression, the ranker with more clicked items wins; Δ_AB = (wins_A + ties/2)/N − ½
    (positive: A preferred), with a sign (binomial) test and a bootstrap interval; per segment too. -f json
    also lists every impression's credit (clicks on A's and on B's items, the winner).

    \b
    Example:
      ranklens interleave interleaving.csv
    """
    from ranklens.online.interleaving import credit, interleave, read_log

    rows = read_log(log)
    results = interleave(rows, alpha=alpha, samples=samples, seed=seed)
    if fmt == "json":
        impressions = [
            {"impression": c.impression, "clicks_a": c.clicks_a, "clicks_b": c.clicks_b, "winner": c.winner,
             "segment": c.segment}
            for c in credit(rows)
        ]
        click.echo(json.dumps({"results": [r.to_dict() for r in results], "impressions": impressions}, indent=2))
        return
    level = round(100 * (1 - alpha), 2)
    click.echo(f"team-draft interleaving: Δ_AB > 0 means A is preferred; sign test; {level:g}% bootstrap interval")
    head = f"{'segment':<10} {'impressions':>11} {'A wins':>7} {'B wins':>7} {'ties':>6} {'Δ_AB':>8} {'interval':>20} {'p':>8}"
    click.echo(head)
    click.echo("-" * len(head))
    for r in results:
        p = "<0.0001" if r.p < 1e-4 else f"{r.p:.4f}"
        ci = f"[{r.ci[0]:+.4f}, {r.ci[1]:+.4f}]"
        click.echo(f"{r.segment or 'all':<10} {r.impressions:>11} {r.wins_a:>7} {r.wins_b:>7} {r.ties:>6} {r.delta:>+8.4f} {ci:>20} {p:>8}")
