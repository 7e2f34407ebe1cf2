"""``ranklens windows IMPRESSIONS EVENTS --labels RULES.toml --window 1d -m nDCG@10 DCG@10 IPS-DCG@10 -f json``:
per-window quality and drift from production logs (a face over :func:`ranklens.production.compute_windows`)."""

from __future__ import annotations

import json

import click

from ranklens.cli._common import json_format_option, parse_column_pairs
from ranklens.cli._quiet import say


class _WindowsCommand(click.Command):
    """``-m A B C`` means ``-m A -m B -m C``, IPS-DCG@k and SNIPS-DCG@k included (they are not engine measures)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from ranklens.cli._measure_args import expand_measure_args
        from ranklens.production.windows import IPS_MEASURE

        return super().parse_args(ctx, expand_measure_args(args, also=lambda token: IPS_MEASURE.match(token) is not None))


_IMP_ROLES = ("request", "query", "item", "position", "score", "timestamp")
_EV_ROLES = ("request", "item", "event", "timestamp", "value")


@click.command(cls=_WindowsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("impressions", type=click.Path(dir_okay=False))
@click.argument("events", type=click.Path(dir_okay=False))
@click.option("--labels", "rules", required=True, type=click.Path(dir_okay=False), help="Label rules (TOML), as for `labels from-events`.")
@click.option("--window", default="1d", show_default=True, help="Window width: 1h, 1d, 30m, 1w …")
@click.option("--measure", "-m", "measures", multiple=True, help="nDCG@k, DCG@k (the engine's measures) and IPS-DCG@k / SNIPS-DCG@k; several after one -m.")
@click.option("--segment-col", help="Impressions column holding the segment (default: one segment 'all').")
@click.option("--system-col", help="Impressions column holding the system/variant (default: one system 'all').")
@click.option("--label-delay", default="24h", show_default=True, help="How long after an impression its engagement counts.")
@click.option("--reference-window", help="Start of the drift reference window (e.g. 2026-01-05); default: the first window.")
@click.option("--as-of", help="The time the data is complete up to (default: the latest event); decides provisional windows.")
@click.option("--impressions-columns", help="ROLE=COLUMN,… for request, query, item, position, score, timestamp.")
@click.option("--events-columns", help="ROLE=COLUMN,… for request, item, event, timestamp, value.")
@click.option("--click-signal", default="click", show_default=True, help="The rules' event signal IPS-DCG counts as clicks.")
@click.option("--boot", default=0, show_default=True, type=click.IntRange(0),
              help="Bootstrap replicates for IPS intervals (0: the analytic interval, normal or delta method).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--position-bias", type=click.Choice(["em", "intervention"]),
              help="Refit IPS's examination θ on every window from its own clicks (rows theta@p in the output).")
@json_format_option
def command(impressions: str, events: str, rules: str, window: str, measures: tuple[str, ...], segment_col: str | None,
            system_col: str | None, label_delay: str, reference_window: str | None, as_of: str | None,
            impressions_columns: str | None, events_columns: str | None, click_signal: str, boot: int, seed: int, position_bias: str | None,
            as_json: bool) -> None:
    """Per window × segment × system: the mean of each measure over the window's requests with an interval,
    whether the window is provisional (its label window still open), and drift (PSI, KS) of the score and
    shown-item popularity distributions against a reference window.

    \b
    Example:
      ranklens windows impressions.csv events.csv --labels rules.toml --window 1d \\
          -m nDCG@10 DCG@10 IPS-DCG@10 --segment-col segment --system-col system -f json
    """
    from ranklens.production import EngagementColumns, ImpressionColumns, compute_windows

    icols = ImpressionColumns(**parse_column_pairs(impressions_columns, _IMP_ROLES)) if impressions_columns else ImpressionColumns()
    ecols = EngagementColumns(**parse_column_pairs(events_columns, _EV_ROLES)) if events_columns else EngagementColumns()
    report = compute_windows(
        impressions, events, rules, window=window, measures=list(measures) or ["nDCG@10", "DCG@10", "IPS-DCG@10"],
        segment_col=segment_col, system_col=system_col, label_delay=label_delay, reference_window=reference_window,
        as_of=as_of, impression_columns=icols, engagement_columns=ecols, click_signal=click_signal, n_boot=boot, seed=seed, position_bias=position_bias,
    )
    for note in report.notes():
        say(f"note: {note}")
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    click.echo(f"as of {report.as_of}; drift reference window {report.reference_window}")
    click.echo(f"{'start':<21} {'segment':<10} {'system':<10} {'measure':<12} {'value':>9} {'interval':>21} {'n':>6}")
    for w in report.windows:
        ci = "" if w.ci[0] != w.ci[0] else f"[{w.ci[0]:.4f}, {w.ci[1]:.4f}]"
        click.echo(f"{w.start:<21} {w.segment:<10} {w.system:<10} {w.measure:<12} {w.value:>9.4f} {ci:>21} {w.n:>6}"
                   + ("  provisional" if w.provisional else ""))
    flagged = [d for d in report.drift if d.flag]
    click.echo(f"drift: {len(flagged)} of {len(report.drift)} checks flagged (PSI > 0.2 or KS p < 0.01)")
    for d in flagged:
        click.echo(f"  {d.start} {d.segment} {d.system} {d.what}: PSI {d.psi:.3f}, KS p {d.ks_p:.2g}")
