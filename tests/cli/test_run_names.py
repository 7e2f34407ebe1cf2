"""One naming rule for runs in eval, compare and gate and in every output they write: the TREC tag, made
unique by the file stem when tags collide (Anserini tags every run ``Anserini``), overridden by ``NAME=PATH``
or ``--name`` (repeatable, in order)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.comparison import unique_names

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 1\n"
RUN_A = "q1 Q0 a 1 2.0 Anserini\nq1 Q0 b 2 1.0 Anserini\nq2 Q0 c 1 1.0 Anserini\n"
RUN_B = "q1 Q0 b 1 2.0 Anserini\nq1 Q0 a 2 1.0 Anserini\nq2 Q0 d 1 2.0 Anserini\nq2 Q0 c 2 1.0 Anserini\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str, str]:
    (tmp_path / "q.qrels").write_text(QRELS)
    (tmp_path / "bm25.run").write_text(RUN_A)
    (tmp_path / "dense.run").write_text(RUN_B)
    return str(tmp_path / "q.qrels"), str(tmp_path / "bm25.run"), str(tmp_path / "dense.run")


def run(*args: str) -> str:
    out = CliRunner().invoke(cli, list(args))
    assert out.exit_code == 0, out.output
    return out.output


def test_unique_names_rule() -> None:
    assert unique_names([("Anserini", "runs/bm25.run"), ("Anserini", "runs/dense.trec.gz")]) == ["bm25", "dense"]
    assert unique_names([("bm25", "a.run"), ("dense", "b.run")]) == ["bm25", "dense"]
    # a name given by the user (source None) is kept; a colliding tag falls back to its file stem
    assert unique_names([("bm25", None), ("bm25", "x/other.run")]) == ["bm25", "other"]


def test_eval_same_tags_take_file_stems(files: tuple[str, str, str]) -> None:
    q, a, b = files
    table = run("eval", q, a, b, "-m", "P@1")
    header = next(line for line in table.splitlines() if "measure" in line)
    assert "bm25" in header and "dense" in header and "Anserini" not in header
    rows = run("eval", q, a, b, "-m", "P@1", "-f", "csv").splitlines()[1:]
    assert {r.split(",")[0] for r in rows} == {"bm25", "dense"}
    doc = json.loads(run("eval", q, a, b, "-m", "P@1", "-f", "json"))
    assert [r["run"] for r in doc["runs"]] == ["bm25", "dense"]
    tsv = run("eval", q, a, b, "-m", "P@1", "-f", "tsv")
    assert "runid\tall\tbm25" in tsv and "runid\tall\tdense" in tsv


def test_eval_parquet_output_names(files: tuple[str, str, str], tmp_path: Path) -> None:
    q, a, b = files
    out = tmp_path / "res.parquet"
    run("eval", q, a, b, "-m", "P@1", "-o", str(out))
    assert sorted(set(pq.read_table(out).column("run").to_pylist())) == ["bm25", "dense"]


def test_compare_and_eval_name_runs_alike(files: tuple[str, str, str]) -> None:
    q, a, b = files
    doc = json.loads(run("compare", q, a, b, "-m", "P@1", "-f", "json"))
    assert doc["systems"] == ["bm25", "dense"]


def test_name_equals_path(files: tuple[str, str, str]) -> None:
    q, a, b = files
    doc = json.loads(run("eval", q, f"first={a}", f"second={b}", "-m", "P@1", "-f", "json"))
    assert [r["run"] for r in doc["runs"]] == ["first", "second"]
    doc = json.loads(run("compare", q, f"first={a}", f"second={b}", "-m", "P@1", "-f", "json"))
    assert doc["systems"] == ["first", "second"]


def test_name_option_in_order(files: tuple[str, str, str]) -> None:
    q, a, b = files
    doc = json.loads(run("eval", q, a, b, "-m", "P@1", "--name", "x", "--name", "y", "-f", "json"))
    assert [r["run"] for r in doc["runs"]] == ["x", "y"]
    doc = json.loads(run("compare", q, a, b, "-m", "P@1", "--name", "x", "--name", "y", "-f", "json"))
    assert doc["systems"] == ["x", "y"]
    # fewer names than runs: the rest keep the rule
    doc = json.loads(run("eval", q, a, b, "-m", "P@1", "--name", "x", "-f", "json"))
    assert [r["run"] for r in doc["runs"]] == ["x", "Anserini"]


def test_gate_names(files: tuple[str, str, str]) -> None:
    q, a, b = files
    out = CliRunner().invoke(cli, ["gate", q, f"new={b}", "--baseline", f"prod={a}", "--max-drop", "P@1=1"])
    assert out.exit_code == 0, out.output
    assert "vs baseline 'prod'" in out.output
    out = CliRunner().invoke(cli, ["gate", q, b, "--baseline", a, "--max-drop", "P@1=1"])
    assert "vs baseline 'bm25'" in out.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--name", "x", "--name", "y", "--name", "z"], "--name is given 3 times for 2 runs"),
        (["--name", "x", "--name", "x"], "two runs are named 'x'"),
    ],
)
def test_name_errors(files: tuple[str, str, str], extra: list[str], message: str) -> None:
    q, a, b = files
    out = CliRunner().invoke(cli, ["eval", q, a, b, "-m", "P@1", *extra])
    assert out.exit_code == 2
    assert message in out.output


def test_a_path_holding_an_equals_sign_is_a_path(tmp_path: Path, files: tuple[str, str, str]) -> None:
    q, a, _ = files
    odd = tmp_path / "k=10.run"
    odd.write_text(RUN_A)
    doc = json.loads(run("eval", q, str(odd), "-m", "P@1", "-f", "json"))
    assert doc["runs"][0]["run"] == "Anserini"
