"""``ranklens push RESULTS.json --project P --system S [--at TIME] [--url URL]``."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

import click

from ranklens.errors import InputError, MissingDependencyError, Note, cli_wording


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--project", "-p", required=True, help="Project name.")
@click.option("--system", "-s", help="System name (algorithm version, A/B arm); default: the run's name.")
@click.option("--run", "run_name", help="Which run of a multi-run results file (default: every run, each as its own system).")
@click.option("--at", "at", help="Time of the snapshot, ISO 8601 (e.g. 2026-11-01T06:00Z); default: now. Use for backfills.")
@click.option("--tag", "tags", multiple=True, metavar="KEY[=VALUE]", help="A free tag; repeat for several.")
@click.option("--segments", "segments_file", type=click.Path(dir_okay=False),
              help="Query → segment pairs (JSON {query_id: segment}, 'query_id segment' lines or CSV/TSV with a header): "
              "the server stores the mean of every segment (needs --per-query results).")
@click.option("--id", "snapshot_id", help="Snapshot id (idempotency key); default: derived from the file, project, system and --at.")
@click.option("--url", envvar="RANKLENS_URL", default="http://127.0.0.1:8000", show_default=True, help="Server ($RANKLENS_URL).")
@click.option("--token", envvar="RANKLENS_TOKEN", help="Write token ($RANKLENS_TOKEN).")
@click.option("--fail-on-breach", is_flag=True, help="Exit 1 when a rule is breached by this snapshot.")
@click.option("--missing", type=click.Choice(["zero", "skip"]), default=None,
              help="Qrels queries the run did not answer (the JSON's skipped_queries): zero (default: scored 0, "
              "as the gate does) or skip (values over the answered queries, shown 'on 35 of 50 queries'). "
              "Coverage (answered / expected) is stored either way.")
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
def command(
    results: str,
    project: str,
    system: str | None,
    run_name: str | None,
    at: str | None,
    tags: tuple[str, ...],
    segments_file: str | None,
    snapshot_id: str | None,
    url: str,
    token: str | None,
    fail_on_breach: bool,
    missing: str | None,
    quiet: bool,
) -> None:
    """Push RESULTS.json (from `ranklens eval --format json`) to a monitor server as snapshot(s).

    The rules of the project are checked at once; breaches fire alerts.

    \b
    Examples:
      ranklens eval qrels.txt run.txt -m nDCG@10 AP --per-query --format json > results.json
      ranklens push results.json --project search --system bm25-v2
      ranklens push results.json -p search -s bm25-v2 --at 2026-10-01 --tag arm=B --url http://monitor:8000
    """
    try:
        from ranklens.monitor.client import MonitorClient
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(exc.name or "httpx", "monitor", "ranklens push") from None

    with click.open_file(results, "rb") as fh:
        raw = fh.read()
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"{results}: not JSON ({exc})") from None
    runs = _runs(doc, results)
    if run_name is not None:
        runs = [r for r in runs if r.get("run") == run_name]
        if not runs:
            raise InputError(f"{results}: no run named {run_name!r}")
    if system is not None and len(runs) > 1:
        names = ", ".join(str(r.get("run")) for r in runs)
        raise InputError(f"{results} holds {len(runs)} runs ({names}); pick one with --run, or drop --system to push each as its own system")
    when = _parse_time(at) if at else None
    tag_map = dict(_tag(t) for t in tags)
    segs = _segments(segments_file, runs, results) if segments_file else None
    breached = False
    with MonitorClient(url, token) as client:
        for run in runs:
            name = system or str(run.get("run") or "run")
            sid = snapshot_id if snapshot_id and len(runs) == 1 else None
            if sid is None:
                key = json.dumps([project, name, at, hashlib.sha256(raw).hexdigest(), snapshot_id])
                sid = "push-" + hashlib.sha256(key.encode()).hexdigest()[:32]
            out = client.push(
                run, project=project, system=name, at=when, id=sid, tags=tag_map or None, query_segments=segs, missing=missing
            )
            breached |= _report(out, quiet)
    if fail_on_breach and breached:
        raise SystemExit(1)


def _runs(doc: Any, source: str) -> list[dict[str, Any]]:
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list) and doc["runs"]:
        return [r for r in doc["runs"] if isinstance(r, dict)]
    if isinstance(doc, dict) and "aggregate" in doc:
        return [doc]
    raise InputError(f"{source}: expected the output of `ranklens eval --format json` (with 'runs')")


def _segments(path: str, runs: list[dict[str, Any]], source: str) -> dict[str, str]:
    """The query → segment pairs of ``path`` (any form :func:`~ranklens.data.segments.read_segments` takes),
    checked against the per-query results they will split."""
    from ranklens.data.segments import check_overlap, read_segments

    segs = read_segments(path)
    for run in runs:
        per_query = run.get("per_query")
        if not isinstance(per_query, dict) or not per_query:
            raise InputError(
                f"--segments needs per-query values, and {source} has none for run {run.get('run')!r}: "
                "write it with `ranklens eval … --per-query --format json`"
            )
        check_overlap(segs, list(per_query), source=path)
    return segs


def _tag(text: str) -> tuple[str, str]:
    key, _, value = text.partition("=")
    if not key:
        raise InputError(f"--tag needs KEY or KEY=VALUE; got {text!r}")
    return key, value


def _parse_time(text: str) -> dt.datetime:
    t = text.strip()
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    try:
        when = dt.datetime.fromisoformat(t)
    except ValueError:
        raise InputError(f"--at must be an ISO 8601 time such as 2026-11-01T06:00Z; got {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def _report(out: dict[str, Any], quiet: bool = False) -> bool:
    say = (lambda text: None) if quiet else click.echo
    state = "stored" if out["created"] else "already stored"
    values = ", ".join(f"{m}={v:.4f}" for m, v in out["values"].items())
    say(f"{out['system']}: snapshot {out['id']} {state} at {out['at']} ({values})")
    for data in out.get("note_data") or ():  # (the notes of the pushed results, as data, in the command line's words)
        say(f"  note: {data['text'] if data.get('kind') == 'text' else cli_wording(Note.from_data(data))}")
    cov = out.get("coverage")
    if cov and cov["answered"] < cov["expected"]:
        how = "left out of the values" if out.get("missing") == "skip" else "scored 0"
        say(f"  {cov['expected'] - cov['answered']} of {cov['expected']} expected queries unanswered ({how})")
    breached = False
    for r in out.get("rules", []):
        alert = r.get("alert") or {}
        extra = f" → alert #{alert['id']} {alert['change']}" if alert.get("change") in ("fired", "resolved") else ""
        say(f"  rule {r['rule_id']} {r['status']}: {r['rule']} — {r['detail']}{extra}")
        breached |= r["status"] == "breach"
    return breached
