"""`ranklens push`, `ranklens demo-monitor`, `ranklens serve --help`; the store's migrations and validation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ranklens.cli import demo_monitor_cmd, push_cmd, serve_cmd

from .conftest import ServerProcess, eval_json


def test_push_command(server: ServerProcess, project: str, tmp_path: Path) -> None:
    doc = eval_json({"q1": {"nDCG@10": 0.7, "AP": 0.5}, "q2": {"nDCG@10": 0.9, "AP": 0.7}}, run="bm25")
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    segs = tmp_path / "segs.json"
    segs.write_text(json.dumps({"q1": "books", "q2": "toys"}))
    runner = CliRunner()
    env = {"RANKLENS_URL": server.url, "RANKLENS_TOKEN": server.token}
    with server.client() as c:
        c.add_rule(project, "nDCG@10 >= 0.85")
    args = [str(path), "--project", project, "--at", "2026-09-01T06:00Z", "--tag", "arm=B", "--tag", "canary", "--segments", str(segs)]
    res = runner.invoke(push_cmd.command, args, env=env)
    assert res.exit_code == 0, res.output
    assert "bm25: snapshot push-" in res.output and " stored at 2026-09-01T06:00:00Z" in res.output
    assert re.search(r"rule \d+ breach: nDCG@10 >= 0.85", res.output) and "alert #" in res.output and "fired" in res.output
    again = runner.invoke(push_cmd.command, [*args, "--fail-on-breach"], env=env)
    assert again.exit_code == 1 and "already stored" in again.output
    with server.client() as c:
        snaps = c.snapshots(project)
        assert snaps["total"] == 1
        assert snaps["snapshots"][0]["tags"] == {"arm": "B", "canary": ""}
        detail = c.snapshot(project, snaps["snapshots"][0]["id"])
        assert {row["segment"] for row in detail["values"]} == {"(all)", "books", "toys"}


def test_push_command_errors(server: ServerProcess, project: str, tmp_path: Path) -> None:
    runner = CliRunner()
    two = eval_json({"q1": {"AP": 0.5}}, run="a")
    two["runs"].append({**two["runs"][0], "run": "b"})
    path = tmp_path / "two.json"
    path.write_text(json.dumps(two))
    env = {"RANKLENS_URL": server.url, "RANKLENS_TOKEN": server.token}
    res = runner.invoke(push_cmd.command, [str(path), "-p", project, "-s", "x"], env=env)
    assert res.exit_code != 0 and "pick one with --run" in str(res.exception)
    res = runner.invoke(push_cmd.command, [str(path), "-p", project, "--run", "b", "-s", "x"], env=env)
    assert res.exit_code == 0, res.output
    res = runner.invoke(push_cmd.command, [str(path), "-p", project], env={**env, "RANKLENS_TOKEN": "bad"})
    assert res.exit_code != 0 and "401 unauthorized" in str(res.exception)


@pytest.mark.parametrize(
    ("name", "text"),
    [("segs.tsv", "q1\tbooks\nq2\ttoys\n"), ("segs.csv", "query_id,category\nq1,books\nq2,toys\n")],
)
def test_push_reads_every_segments_form(server: ServerProcess, project: str, tmp_path: Path, name: str, text: str) -> None:
    # the `qid segment` lines of compare/gate and CSV with a header work as well as JSON (no traceback)
    from ranklens.cli.main import cli

    path = tmp_path / "results.json"
    path.write_text(json.dumps(eval_json({"q1": {"AP": 0.5}, "q2": {"AP": 0.7}}, run="bm25")))
    segs = tmp_path / name
    segs.write_text(text)
    env = {"RANKLENS_URL": server.url, "RANKLENS_TOKEN": server.token}
    res = CliRunner().invoke(cli, ["push", str(path), "-p", project, "--segments", str(segs)], env=env)
    assert res.exit_code == 0, res.output
    with server.client() as c:
        snap = c.snapshots(project)["snapshots"][0]
        detail = c.snapshot(project, snap["id"])
    values = {row["segment"]: row["values"] for row in detail["values"]}
    assert values["books"]["AP"] == pytest.approx(0.5) and values["toys"]["AP"] == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("text", "per_query", "message"),
    [
        ("q1 books\nq2\n", True, "segs.txt:2: expected 2 columns (query_id segment)"),
        ('{"zz": "books"}', True, "segs.txt: no evaluated query has a segment"),
        ("q1 books\n", False, "--segments needs per-query values"),
    ],
)
def test_push_segment_errors_are_one_line(tmp_path: Path, text: str, per_query: bool, message: str) -> None:
    from ranklens.cli.main import cli

    doc = eval_json({"q1": {"AP": 0.5}}, run="bm25")
    if not per_query:
        del doc["runs"][0]["per_query"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    segs = tmp_path / "segs.txt"
    segs.write_text(text)
    # the segments are checked before any request: no server needed
    res = CliRunner().invoke(cli, ["push", str(path), "-p", "x", "--segments", str(segs), "--url", "http://127.0.0.1:9"])
    assert res.exit_code == 2, res.output
    assert message in res.stderr and "Traceback" not in res.stderr


def test_demo_monitor_command(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    runner = CliRunner()
    res = runner.invoke(demo_monitor_cmd.command, ["--db", str(db), "--days", "30"])
    assert res.exit_code == 0, res.output
    assert "60 snapshots" in res.output
    res = runner.invoke(demo_monitor_cmd.command, ["--db", str(db)])
    assert "already exists" in res.output


def test_demo_data_has_exactly_one_threshold_breach(tmp_path: Path) -> None:
    from ranklens.monitor import views
    from ranklens.monitor.db import Database
    from ranklens.monitor.demo import DEMO_PROJECT, seed

    url = f"sqlite:///{tmp_path / 'd.db'}"
    assert seed(url) == 180
    db = Database(url)
    with db.read() as s:
        alerts = views.alerts_view(s, DEMO_PROJECT)["alerts"]
        overview = views.overview_view(s, DEMO_PROJECT)
    db.dispose()
    # the one dip (neural-v2, fashion) breaches the fashion floor, and the general drop and significance rules
    # in the fashion segment (a rule without a segment is checked in every segment, as by the gate): three
    # alerts over the same days, all in fashion, all resolved; one threshold breach
    assert {(a["system"], a["segment"], a["state"]) for a in alerts} == {("neural-v2", "fashion", "resolved")}
    assert len({(a["started_at"], a["resolved_at"]) for a in alerts}) == 1
    assert len([a for a in alerts if ">= 0.55" in a["rule"]]) == 1
    assert {r["system"] for r in overview["systems"]} == {"bm25-v1", "neural-v2"}
    assert overview["segments"] == ["books", "electronics", "fashion", "home"]


def test_serve_help() -> None:
    res = CliRunner().invoke(serve_cmd.command, ["--help"])
    assert res.exit_code == 0 and "--db URL" in res.output and "127.0.0.1" in res.output


@pytest.mark.parametrize("backend_name", ["sqlite", "postgresql"])
def test_migrations_match_the_models(backend_name: str, tmp_path: Path) -> None:
    import os

    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from ranklens.monitor.db import Database, current_revision
    from ranklens.monitor.models import Base

    from .conftest import PG_ENV, make_db_url

    if backend_name == "postgresql" and not os.environ.get(PG_ENV):
        pytest.skip(f"{PG_ENV} not set")
    url, pg = make_db_url(backend_name, tmp_path)
    try:
        db = Database(url)
        db.migrate()
        db.migrate()  # a second start finds nothing to do
        assert current_revision(db.engine) == "0007_ingest_project_key"
        with db.engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diff == []
        db.dispose()
    finally:
        if pg is not None:
            pg.drop()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"system": "s", "values": {"P@5": 0.1}, "results": {"runs": [{"aggregate": {"AP": 0.1}}]}}, "either"),
        ({"system": "s", "results": {"runs": [{"run": "a", "aggregate": {"AP": 0.1}}, {"run": "b", "aggregate": {"AP": 0.2}}]}},
         "hold 2 runs (a, b); say which with 'run'"),
        ({"system": "s", "values": {"AP": 0.1}, "query_segments": {"q1": "x"}}, "query_segments needs per-query values"),
    ],
)
def test_normalise_errors(body: dict[str, Any], message: str) -> None:
    from ranklens.errors import InputError
    from ranklens.monitor.schemas import SnapshotIn
    from ranklens.monitor.service import normalise_snapshot

    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        normalise_snapshot(SnapshotIn.model_validate(body))


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("nDCG@10 = 0.8", "must look like"),
        ("ndgc@10 >= 0.8", "did you mean 'nDCG@10'"),
        ("nDCG@10 >= 1e999", "finite"),
    ],
)
def test_rule_expressions(expr: str, message: str) -> None:
    from ranklens.errors import InputError
    from ranklens.monitor.schemas import RuleIn

    with pytest.raises(InputError, match=message):
        RuleIn(expr=expr).resolved()


def test_push_carries_the_notes_as_data(server: ServerProcess, project: str, tmp_path: Path) -> None:
    """``eval -f json`` writes the notes as data; ``push`` sends them, the server checks they are notes and hands
    them back as data, and the command line words them (nothing parses the words). By hand: the toy dense run
    lacks one qrels query."""
    from ranklens.cli.main import cli
    from ranklens.monitor.client import MonitorAPIError

    ex = Path(__file__).resolve().parents[2] / "examples"
    doc = CliRunner().invoke(cli, ["eval", str(ex / "toy.qrels"), str(ex / "toy_dense.run"), "-m", "P@5", "-q", "-f", "json"]).stdout
    path = tmp_path / "results.json"
    path.write_text(doc)
    env = {"RANKLENS_URL": server.url, "RANKLENS_TOKEN": server.token}
    res = CliRunner().invoke(push_cmd.command, [str(path), "--project", project], env=env)
    assert res.exit_code == 0, res.output
    assert ("  note: 1 qrels query with no retrieved document: skipped; use --missing zero (trec_eval -c) to count "
            "them as 0\n") in res.output
    run = json.loads(doc)["runs"][0]
    with server.client() as c:
        snap = c.push(run, project=project, system="again")
        assert snap["note_data"] == [{"kind": "qrels_only_queries", "count": 1, "scored_zero": False}]
        with pytest.raises(MonitorAPIError) as info:
            c.push({**run, "note_data": [{"kind": "qrels_only_queries", "count": "one"}]}, project=project, system="bad")
        assert info.value.status == 422
