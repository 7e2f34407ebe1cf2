"""`ranklens eval` through click's runner, on the bundled example data."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MOVIES_Q = str(EXAMPLES / "movies.qrels")
MOVIES_R = str(EXAMPLES / "movies.run")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_tsv_is_measure_query_value_at_full_precision() -> None:
    code, out, _ = run("eval", MOVIES_Q, MOVIES_R, "-m", "nDCG@5", "DCG@5", "-f", "tsv", "--per-query")
    assert code == 0
    lines = [line.split("\t") for line in out.splitlines()]
    assert [row[:2] for row in lines] == [["nDCG@5", "movies"], ["DCG@5", "movies"], ["nDCG@5", "all"], ["DCG@5", "all"]]
    # spec §0: DCG 5.361353, NDCG@5 0.909816, printed with every digit
    assert float(lines[0][2]) == pytest.approx(0.909816, abs=1e-6)
    assert float(lines[1][2]) == pytest.approx(5.361353, abs=1e-6)
    assert len(lines[0][2]) > 12


def test_tsv_without_per_query_has_only_aggregates() -> None:
    code, out, _ = run("eval", MOVIES_Q, MOVIES_R, "-m", "P@3", "-f", "tsv")
    assert code == 0
    assert out.splitlines() == ["P@3\tall\t0.6666666666666666"]


def test_table_lists_every_run_and_measure() -> None:
    code, out, _ = run(
        "eval", str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_bm25.run"), str(EXAMPLES / "toy_dense.run"),
        "-m", "nDCG@10", "AP",
    )
    assert code == 0
    assert "bm25" in out and "dense" in out and "nDCG@10" in out and "AP" in out


def test_missing_query_is_reported_not_dropped_silently() -> None:
    # the dense run never answers q12 (examples/make_toy.py)
    args = ["eval", str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_dense.run"), "-m", "nDCG@10", "-f", "json"]
    code, out, err = run(*args)
    assert code == 0
    assert "1 qrels query with no retrieved document: skipped" in err
    skipped = json.loads(out)["runs"][0]
    code, out, _ = run(*args, "--missing", "zero")
    zeroed = json.loads(out)["runs"][0]
    assert skipped["num_queries"] == 11 and zeroed["num_queries"] == 12
    assert zeroed["aggregate"]["nDCG@10"] == pytest.approx(skipped["aggregate"]["nDCG@10"] * 11 / 12)


def test_json_has_aggregates_and_per_query() -> None:
    code, out, _ = run("eval", MOVIES_Q, MOVIES_R, "-m", "nDCG@5", "-f", "json", "--per-query")
    doc = json.loads(out)
    assert doc["runs"][0]["run"] == "textbook"
    assert doc["runs"][0]["per_query"]["movies"]["nDCG@5"] == pytest.approx(0.909816, abs=1e-6)


def test_csv_and_parquet_outputs(tmp_path: Path) -> None:
    code, out, _ = run("eval", MOVIES_Q, MOVIES_R, "-m", "AP", "-f", "csv")
    assert out.splitlines() == ["run,measure,query_id,value", "textbook,AP,all,0.8055555555555555"]
    target = tmp_path / "res.parquet"
    code, _, _ = run("eval", MOVIES_Q, MOVIES_R, "-m", "AP", "--per-query", "-o", str(target))
    assert code == 0
    table = pq.read_table(target).to_pylist()
    assert {(r["query_id"], r["measure"]) for r in table} == {("movies", "AP"), ("all", "AP")}


def test_trec_names_and_several_measures_after_one_flag() -> None:
    code, out, _ = run("eval", MOVIES_Q, MOVIES_R, "-m", "ndcg_cut.3,5", "map", "-f", "tsv")
    assert code == 0
    assert [line.split("\t")[0] for line in out.splitlines()] == ["nDCG@3", "nDCG@5", "AP"]


def test_unknown_measure_is_a_one_line_error_with_suggestion() -> None:
    code, out, err = run("eval", MOVIES_Q, MOVIES_R, "-m", "ndgc@10")
    assert code == 2
    assert "Traceback" not in err
    assert "did you mean 'nDCG@10'?" in err


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    code, _, err = run("eval", MOVIES_Q, str(tmp_path / "nope.run"), "-m", "AP")
    assert code == 2
    assert "nope.run" in err and "Traceback" not in err
