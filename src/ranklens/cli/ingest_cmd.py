"""``ranklens ingest IMPRESSIONS [EVENTS] --project P [--url URL]``: send production logs to a monitor server
(``POST /api/v1/projects/{p}/ingest``), a chunk at a time."""

from __future__ import annotations

from typing import Any

import click

from ranklens.cli._common import parse_column_pairs
from ranklens.cli._quiet import say
from ranklens.errors import InputError, MissingDependencyError

_IMP_ROLES = ("id", "request", "query", "item", "position", "score", "timestamp", "segment", "system")
_EV_ROLES = ("id", "request", "item", "event", "timestamp", "value")
_SHOWN = 20  # rejections printed one by one; the rest are counted


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("impressions", type=click.Path(dir_okay=False))
@click.argument("events", required=False, type=click.Path(dir_okay=False))
@click.option("--project", "-p", required=True, help="Project name (created on first use).")
@click.option("--url", envvar="RANKLENS_URL", default="http://127.0.0.1:8000", show_default=True, help="Server ($RANKLENS_URL).")
@click.option("--token", envvar="RANKLENS_TOKEN", help="Write token ($RANKLENS_TOKEN).")
@click.option("--batch", default=1000, show_default=True, type=click.IntRange(1, 50_000), help="Events per request.")
@click.option("--impressions-columns", help="ROLE=COLUMN,… for id, request, query, item, position, score, timestamp, segment, system.")
@click.option("--events-columns", help="ROLE=COLUMN,… for id, request, item, event, timestamp, value.")
@click.option("--events-only", is_flag=True, help="IMPRESSIONS is an engagement log (send late events alone).")
def command(impressions: str, events: str | None, project: str, url: str, token: str | None, batch: int,
            impressions_columns: str | None, events_columns: str | None, events_only: bool) -> None:
    """Send IMPRESSIONS (one row per shown item) and EVENTS (clicks, purchases … on shown items) to the
    monitor's store. CSV, TSV, JSONL or Parquet (.gz for the text formats), read a chunk at a time.

    Rows without an `id` column get one derived from their content, so loading a file again stores nothing
    twice. Rows the server refuses are printed with their reason (file, row, field) and counted; the exit
    status is 2 when any was refused (the others are stored).

    \b
    Example:
      ranklens ingest impressions.csv.gz events.jsonl --project search --url http://monitor:8000
    """
    try:
        from ranklens.monitor.client import MonitorClient
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(exc.name or "httpx", "monitor", "ranklens ingest") from None

    imp_map = _rename(impressions_columns, _IMP_ROLES)
    ev_map = _rename(events_columns, _EV_ROLES)
    jobs = [("event", impressions, ev_map)] if events_only else [("impression", impressions, imp_map)]
    if events:
        jobs.append(("event", events, ev_map))
    refused = 0
    with MonitorClient(url, token) as client:
        for kind, path, rename in jobs:
            totals = {"received": 0, "stored": 0, "duplicates": 0, "rejected": 0}
            for rows, first_row in _batches(path, rename, batch, kind):
                out = client.ingest(project, **{("impressions" if kind == "impression" else "events"): rows})
                part = out["impressions" if kind == "impression" else "events"]
                for key in totals:
                    totals[key] += int(part[key])
                for r in out["rejected"]:
                    refused += 1
                    if refused <= _SHOWN:
                        click.echo(f"{path}: row {first_row + r['index']}: {r['field'] or 'row'}: {r['reason']}", err=True)
            say(f"{path}: {totals['received']} {kind}s read, {totals['stored']} stored, "
                f"{totals['duplicates']} already stored, {totals['rejected']} refused")
    if refused > _SHOWN:
        click.echo(f"… and {refused - _SHOWN} more refused rows", err=True)
    if refused:
        raise SystemExit(2)


def _rename(text: str | None, roles: tuple[str, ...]) -> dict[str, str]:
    return {column: role for role, column in parse_column_pairs(text, roles).items()} if text else {}


def _batches(path: str, rename: dict[str, str], size: int, kind: str) -> Any:
    """``(rows, number of the first row)`` of ``size`` rows each, ids derived where missing."""
    from ranklens.production.events import content_id, read_chunks

    row = 1
    pending: list[dict[str, Any]] = []
    for chunk in read_chunks(path, rows=max(size, 1000), rename=rename):
        for r in chunk:
            if r.get("id") in (None, ""):
                r["id"] = content_id(kind, r)
            pending.append(r)
            if len(pending) == size:
                yield pending, row
                row += len(pending)
                pending = []
    if pending:
        yield pending, row
    elif row == 1:
        raise InputError(f"{path}: no rows")
