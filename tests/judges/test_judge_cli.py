"""``ranklens judge run|pairs|calibrate`` through click's CliRunner, against the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli


def _write_pairs(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    path.write_text("".join(json.dumps({"query_id": q, "query": t, "doc_id": d, "text": x}) + "\n" for q, t, d, x in rows))
    return path


ROWS = [("q1", "good one", "d1", "x [g2]"), ("q1", "good one", "d2", "y [g0]"),
        ("q2", "always-500 b", "d1", "z [g1]"), ("q3", "malformed-once b", "d7", "w [g3]")]


def test_run_writes_qrels_summary_and_reuses_the_cache(llm_server, tmp_path: Path) -> None:
    pairs = _write_pairs(tmp_path / "pairs.jsonl", ROWS)
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."test-model"]\nprompt_per_million = 1.0\ncompletion_per_million = 2.0\n')
    args = ["judge", "run", str(pairs), "--endpoint", llm_server.url, "--model", "test-model", "-o",
            str(tmp_path / "judged.qrels"), "--cache", str(tmp_path / "c.sqlite"), "--concurrency", "2",
            "--rpm", "600", "--tpm", "100000", "--timeout", "5", "--retries", "2", "--backoff", "0.01",
            "--prices", str(prices), "--summary", str(tmp_path / "summary.json")]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert (tmp_path / "judged.qrels").read_text() == "q1 0 d1 2\nq1 0 d2 0\nq3 0 d7 3\n"
    summary = json.loads((tmp_path / "summary.json").read_text())
    # good 1 + 1, always-500: 3 attempts, malformed-once: 2
    assert {k: summary[k] for k in ("pairs", "judged", "from_cache", "unjudged", "requests")} == {
        "pairs": 4, "judged": 3, "from_cache": 0, "unjudged": 1, "requests": 7}
    assert (summary["prompt_tokens"], summary["completion_tokens"]) == (400, 40)
    assert summary["cost"] == pytest.approx((400 * 1.0 + 40 * 2.0) / 1e6)
    assert summary["unjudged_pairs"][0]["query_id"] == "q2" and "HTTP 503" in summary["unjudged_pairs"][0]["why"]
    assert "pairs: 4  judged: 3 (0 from cache)  unjudged after retries: 1" in out.stderr
    assert "unjudged: q2 d1" in out.stderr and "cost: 0.000480" in out.stderr

    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0
    s2 = json.loads((tmp_path / "summary.json").read_text())
    assert (s2["from_cache"], s2["requests"], s2["judged"]) == (3, 3, 3)  # only the unjudged pair is asked again
    assert (tmp_path / "judged.qrels").read_text() == "q1 0 d1 2\nq1 0 d2 0\nq3 0 d7 3\n"


def test_a_bad_pairs_line_is_one_line_exit_2(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"query_id": "q1", "query": "a", "doc_id": "d1", "text": "t"}) + "\n{\"query_id\": \"q1\"}\n")
    out = CliRunner().invoke(cli, ["judge", "run", str(pairs), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                                   "-o", str(tmp_path / "o.qrels")])
    assert out.exit_code == 2
    assert out.stderr == f"ranklens: error: {pairs}:2: missing field 'query'\n"
    assert not (tmp_path / "o.qrels").exists()


def test_a_refused_key_is_one_line_exit_2(llm_server, tmp_path: Path) -> None:
    pairs = _write_pairs(tmp_path / "p.jsonl", [("q1", "unauthorized", "d1", "t")])
    out = CliRunner().invoke(cli, ["judge", "run", str(pairs), "--endpoint", llm_server.url, "--model", "m",
                                   "-o", str(tmp_path / "o.qrels")])
    assert out.exit_code == 2 and out.stderr.startswith("ranklens: error: ") and "HTTP 401" in out.stderr
    assert out.stderr.count("\n") == 1


def test_judge_without_a_subcommand_says_what_to_type(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["judge", "missing.jsonl", "--endpoint", "http://x/v1"])
    assert out.exit_code == 2 and "ranklens judge run missing.jsonl" in out.stderr


def test_judge_pairs_file_is_judge_run(llm_server, tmp_path: Path) -> None:
    """The issue's form ``ranklens judge PAIRS --endpoint … -o …`` is ``judge run PAIRS``."""
    pairs = _write_pairs(tmp_path / "p.jsonl", ROWS[:1])
    short = CliRunner().invoke(cli, ["judge", str(pairs), "--endpoint", llm_server.url, "--model", "m",
                                     "-o", str(tmp_path / "a.qrels")])
    full = CliRunner().invoke(cli, ["judge", "run", str(pairs), "--endpoint", llm_server.url, "--model", "m",
                                    "-o", str(tmp_path / "b.qrels")])
    assert short.exit_code == 0 == full.exit_code, short.output
    assert (tmp_path / "a.qrels").read_text() == (tmp_path / "b.qrels").read_text() != ""


def test_the_openai_backend_needs_endpoint_and_model(tmp_path: Path) -> None:
    pairs = _write_pairs(tmp_path / "p.jsonl", ROWS[:1])
    out = CliRunner().invoke(cli, ["judge", "run", str(pairs), "-o", str(tmp_path / "o.qrels")])
    assert out.exit_code == 2 and "needs --endpoint URL and --model NAME" in out.stderr


def test_a_custom_scale_goes_into_the_prompt(llm_server, tmp_path: Path) -> None:
    scale = tmp_path / "scale.toml"
    scale.write_text('version = "five/v1"\nmin = 1\nmax = 5\nrubric = """\n5 = perfect\n1 = off topic\n"""\n')
    pairs = _write_pairs(tmp_path / "p.jsonl", [("q1", "good", "d1", "t [g5]"), ("q1", "good", "d2", "t [g0]")])
    out = CliRunner().invoke(cli, ["judge", "run", str(pairs), "--endpoint", llm_server.url, "--model", "m", "-o",
                                   str(tmp_path / "o.qrels"), "--scale", str(scale), "--retries", "1", "--backoff", "0"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "o.qrels").read_text() == "q1 0 d1 5\n"  # grade 0 is off the 1..5 scale: unjudged
    system = llm_server.bodies[0]["messages"][0]["content"]
    assert "5 = perfect" in system and "integer from 1 to 5" in system
    assert llm_server.bodies[0]["response_format"]["json_schema"]["schema"]["properties"]["grade"]["maximum"] == 5


def test_pairs_from_a_pool_of_runs(tmp_path: Path) -> None:
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d4 1 1.0 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d3 1 9.0 b\nq1 Q0 d5 2 8.0 b\n")
    (tmp_path / "topics.tsv").write_text("q1\tfirst query\nq2\tsecond query\n")
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"doc_id": f"d{i}", "text": f"text {i}"}) + "\n" for i in range(1, 6)))
    (tmp_path / "human.qrels").write_text("q1 0 d1 2\n")
    out = CliRunner().invoke(cli, ["judge", "pairs", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--depth", "2",
                                   "--topics", str(tmp_path / "topics.tsv"), "--corpus", str(tmp_path / "docs.jsonl"),
                                   "--qrels", str(tmp_path / "human.qrels"), "-o", str(tmp_path / "pairs.jsonl")])
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert [(r["query_id"], r["doc_id"]) for r in rows] == [("q1", "d2"), ("q1", "d3"), ("q1", "d5"), ("q2", "d4")]
    assert rows[0] == {"query_id": "q1", "query": "first query", "doc_id": "d2", "text": "text 2"}
    assert "wrote 4 pairs over 2 queries" in out.stderr


def test_calibrate_then_run_offline(tmp_path: Path) -> None:
    pytest.importorskip("wordllama")
    rows = [("q1", "how do vaccines work", "a", "Vaccines train the immune system to recognise a pathogen."),
            ("q1", "how do vaccines work", "b", "Tomatoes grow best in full sun."),
            ("q2", "store fresh basil", "a", "Store fresh basil stems in a glass of water."),
            ("q2", "store fresh basil", "b", "The French Revolution began in 1789.")]
    pairs = _write_pairs(tmp_path / "pairs.jsonl", rows)
    (tmp_path / "human.qrels").write_text("q1 0 a 3\nq1 0 b 0\nq2 0 a 3\nq2 0 b 0\n")
    out = CliRunner().invoke(cli, ["judge", "calibrate", str(tmp_path / "human.qrels"), str(pairs), "-o",
                                   str(tmp_path / "t.json")])
    assert out.exit_code == 0, out.output
    assert "calibrated on 4 labelled pairs" in out.stderr and "weighted agreement 1.000" in out.stderr
    out = CliRunner().invoke(cli, ["judge", "run", str(pairs), "--backend", "embedding", "--thresholds",
                                   str(tmp_path / "t.json"), "-o", str(tmp_path / "o.qrels"), "--cache",
                                   str(tmp_path / "c.sqlite"), "--summary", str(tmp_path / "s.json")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "o.qrels").read_text() == "q1 0 a 3\nq1 0 b 0\nq2 0 a 3\nq2 0 b 0\n"
    assert json.loads((tmp_path / "s.json").read_text())["requests"] == 0


def test_agreement_joins_the_group_only_when_its_module_exists(tmp_path: Path, monkeypatch) -> None:
    import sys

    import ranklens.cli.judge_cmd as judge_cmd

    monkeypatch.setattr(judge_cmd, "AGREEMENT_MODULE", "ranklens_test_no_such_module")
    monkeypatch.setattr(judge_cmd, "PPI_MODULE", "ranklens_test_no_such.module")
    listing = CliRunner().invoke(cli, ["judge", "--help"])
    assert listing.exit_code == 0 and "agreement" not in listing.output and "ppi" not in listing.output
    assert CliRunner().invoke(cli, ["judge", "agreement"]).exit_code == 2

    (tmp_path / "fake_agreement_cmd.py").write_text(
        "import click\n\n@click.command('agreement')\ndef agreement():\n    '''Agreement.'''\n    click.echo('agreed')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(judge_cmd, "AGREEMENT_MODULE", "fake_agreement_cmd")
    assert "agreement" in CliRunner().invoke(cli, ["judge", "--help"]).output
    out = CliRunner().invoke(cli, ["judge", "agreement"])
    assert out.exit_code == 0 and out.output == "agreed\n"
    sys.modules.pop("fake_agreement_cmd", None)


def test_a_bad_scale_file_is_one_line_exit_2(tmp_path: Path) -> None:
    scale = tmp_path / "scale.toml"
    scale.write_text('version = "v"\nmin = 3\nmax = 1\nrubric = "x"\n')
    pairs = _write_pairs(tmp_path / "p.jsonl", ROWS[:1])
    out = CliRunner().invoke(cli, ["judge", "run", str(pairs), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                                   "-o", str(tmp_path / "o.qrels"), "--scale", str(scale)])
    assert out.exit_code == 2
    assert out.stderr == f"ranklens: error: {scale}: min and max must be integers with min < max, got 3 and 1\n"


def test_the_progress_bar_counts_pairs(capsys) -> None:
    from ranklens.cli.judge_cmd import _progress

    with _progress(3, True) as advance:
        advance(1)
        advance(2)
    with _progress(3, False) as advance:
        advance(3)  # disabled: does nothing


def test_two_judge_run_processes_on_one_cache_pay_once_and_write_the_cache(llm_server, tmp_path: Path) -> None:
    import sqlite3
    import subprocess
    import sys

    # a model that answers another grade on every ask, a little slow: two processes that both asked a pair would
    # pay twice and could each write a different grade
    rows = [(f"q{i}", f"fickle {i}", f"d{i}", f"text {i}") for i in range(24)]
    pairs = _write_pairs(tmp_path / "pairs.jsonl", rows)
    cache = tmp_path / "shared.sqlite"
    cmd = [sys.executable, "-c", "from ranklens.cli.entry import main; main()", "judge", "run", str(pairs),
           "--endpoint", llm_server.url, "--model", "m", "--cache", str(cache), "--concurrency", "2", "--quiet"]
    procs = [subprocess.Popen([*cmd, "-o", str(tmp_path / f"{n}.qrels")], stderr=subprocess.PIPE, text=True)
             for n in ("a", "b")]
    outs = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert llm_server.requests == 24  # each pair asked once, by one of the two processes
    with sqlite3.connect(cache) as db:
        stored = {f"q{q.split()[1]} 0 d{q.split()[1]} {g}" for q, g in db.execute("SELECT query, grade FROM judgments")}
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    for n in ("a", "b"):
        assert set((tmp_path / f"{n}.qrels").read_text().splitlines()) == stored
