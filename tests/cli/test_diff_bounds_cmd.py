"""``ranklens diff`` and ``ranklens bounds``: the JSON contracts of issue 28, the notes and the refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli

EX = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE = str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run")


def test_diff_json_contract_and_the_contributions_add_up() -> None:
    result = CliRunner().invoke(cli, ["diff", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP", "-k", "5", "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["only_in_a"] == ["q12"] and doc["queries_compared"] == 11
    a = ranklens.evaluate(QRELS, BM25, "AP").per_query("AP")
    b = ranklens.Evaluator("AP", QRELS)(DENSE, warn=False).per_query("AP")
    ap = doc["measures"]["AP"]
    assert math.isclose(ap["delta"], sum(b[q] - a[q] for q in b) / len(b), abs_tol=1e-12)
    for q, entry in ap["per_query"].items():
        assert set(entry) == {"delta", "contributions"}
        assert math.isclose(math.fsum(c["value"] for c in entry["contributions"]), b[q] - a[q], abs_tol=1e-12)
        assert {c["kind"] for c in entry["contributions"]} <= {"entered", "left", "moved"}
        assert all({"doc", "kind", "value"} <= set(c) for c in entry["contributions"])
    for o in doc["per_query"].values():
        assert 0.0 <= o["rbo"] <= 1.0 and (o["kendall_tau"] is None or -1.0 <= o["kendall_tau"] <= 1.0)


def test_diff_says_which_queries_it_compared() -> None:
    result = CliRunner().invoke(cli, ["diff", QRELS, BM25, DENSE, "-m", "P@5"])
    assert result.exit_code == 0
    assert "compared the 11 queries both runs answer; left out: 1 only in A (q12), 0 only in B" in result.stderr


def test_diff_refuses_a_measure_it_cannot_decompose_in_one_line() -> None:
    for measure in ("R@10", "nosuch@10"):
        result = CliRunner().invoke(cli, ["diff", QRELS, BM25, DENSE, "-m", measure])
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
        assert "Traceback" not in result.output


def test_bounds_json_contract() -> None:
    result = CliRunner().invoke(cli, ["bounds", QRELS, BM25, DENSE, "-m", "nDCG@10", "--missing", "zero", "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc["runs"]) == {"bm25", "dense"}
    for run, per_measure in doc["runs"].items():
        v = per_measure["nDCG@10"]
        assert set(v) == {"value", "low", "high"} and v["low"] <= v["high"]
        per_query = doc["per_query"][run]["nDCG@10"]
        assert math.isclose(v["low"], sum(r["low"] for r in per_query.values()) / len(per_query), abs_tol=1e-12)
    assert round(doc["runs"]["dense"]["nDCG@10"]["high"], 3) == 0.798


def test_bounds_refuses_a_measure_without_a_bound_beyond_the_limit() -> None:
    result = CliRunner().invoke(cli, ["bounds", QRELS, BM25, "-m", "ERR", "--exhaustive-limit", "2"])
    assert result.exit_code == 2 and "no bound is known" in result.stderr
