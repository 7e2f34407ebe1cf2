"""`ranklens explain` shows the textbook computation; its totals agree with the engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.explain import explain

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_movies_example_table() -> None:
    result = CliRunner().invoke(
        cli, ["explain", str(EXAMPLES / "movies.qrels"), str(EXAMPLES / "movies.run"), "--query", "movies", "-m", "nDCG@5"]
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    # spec §0: DCG 5.361353, IDCG 5.892789, NDCG@5 0.909816
    assert "DCG = 5.361353" in out
    assert "IDCG = 5.892789" in out
    assert "= 0.909816" in out
    for doc in ("inception", "cats", "heat", "alien", "norbit"):
        assert doc in out
    assert "1/log2(rank+1)" in out and "global" in out


@pytest.mark.parametrize(
    "measure",
    ["nDCG@10", "nDCG(gain=exp)@5", "nDCG(ideal=local)@10", "nDCG(ties=average)@10", "DCG@5",
     "nDCG(ideal=recall,depth=20)@10", "nDCG(ideal=max,max_rel=3)@5"],
)
def test_explained_totals_match_the_engine(measure: str) -> None:
    qrels, run = str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_bm25.run")
    for query in ("q1", "q5", "q9"):
        e = explain(qrels, run, query, measure)
        engine = ranklens.evaluate(qrels, run, [measure]).per_query(measure)[query]
        assert e.value == pytest.approx(engine, abs=1e-12)
        if e.measure.name == "nDCG" and e.idcg:
            assert e.dcg / e.idcg == pytest.approx(engine, abs=1e-12)


def test_binary_measure_explanation() -> None:
    e = explain(str(EXAMPLES / "movies.qrels"), str(EXAMPLES / "movies.run"), "movies", "P@3")
    assert [r["relevant"] for r in e.rows] == ["yes", "no", "yes"]
    assert e.value == pytest.approx(2 / 3)


def test_unknown_query_suggests() -> None:
    result = CliRunner().invoke(
        cli, ["explain", str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_bm25.run"), "--query", "q99x", "-m", "AP"]
    )
    assert result.exit_code == 2
    assert "query 'q99x' is not in the qrels" in result.stderr
