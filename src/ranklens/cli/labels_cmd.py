"""``ranklens labels from-events EVENTS --rules RULES.toml -o qrels.trec``: graded qrels from engagement logs."""

from __future__ import annotations

import json

import click

from ranklens.cli._common import json_format_option
from ranklens.cli._quiet import say


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def command() -> None:
    """Derive relevance labels (qrels) from engagement logs.

    \b
    Example:
      ranklens labels from-events examples/engagement/ecommerce_events.csv \\
          --rules examples/engagement/ecommerce_rules.toml -o qrels.trec
    """


@command.command("from-events", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("events", type=click.Path(dir_okay=False))
@click.option("--rules", "-r", required=True, type=click.Path(dir_okay=False), help="The rules file (TOML).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the qrels here (.trec/.txt/.qrels, .csv, .json, .parquet …).")
@click.option("--pairs", type=click.Path(dir_okay=False), help="Also write the per-pair table (aggregates, grade, status) as CSV or Parquet.")
@click.option("--events-format", type=click.Choice(["csv", "tsv", "jsonl", "parquet"]), help="Event-log format (default: by extension).")
@json_format_option
def from_events(events: str, rules: str, output: str | None, pairs: str | None, events_format: str | None, as_json: bool) -> None:
    """Aggregate EVENTS per (query, item), apply the minimum support and the grade rules of RULES, write the
    qrels, and print how many pairs got each grade and how many were left unlabelled.

    Without -o the qrels are printed (TREC format) after the summary on stderr.
    """
    from ranklens.data.io import write_qrels
    from ranklens.labels import labels_from_events

    res = labels_from_events(events, rules, format=events_format)
    if pairs:
        if pairs.endswith(".parquet"):
            res.pairs.write_parquet(pairs)
        else:
            res.pairs.write_csv(pairs)
    summary = json.dumps(res.summary(), indent=2) + "\n" if as_json else res.summary_text()
    if output:
        write_qrels(res.qrels, output)
        click.echo(summary, nl=False)
        if not as_json:
            click.echo(f"wrote {len(res.qrels)} judgements to {output}")
        return
    say(summary, nl=False)
    for q, docs in res.qrels.to_dict().items():
        for d, label in docs.items():
            click.echo(f"{q} 0 {d} {label}")
