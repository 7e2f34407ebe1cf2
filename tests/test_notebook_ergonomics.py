"""Python objects print usefully in a notebook (sizes and a head, not every internal array); evaluate_many
takes names; Comparison.to_pandas(); saved results read back with ranklens.read_results."""

from __future__ import annotations

from pathlib import Path

import pytest

import ranklens
from ranklens import Qrels, Run

QRELS = {f"q{i}": {f"d{j}": (i + j) % 4 for j in range(30)} for i in range(200)}
RUN_A = {f"q{i}": {f"d{j}": float(30 - j) for j in range(30)} for i in range(200)}
RUN_B = {f"q{i}": {f"d{j}": float(j) for j in range(30)} for i in range(200)}


def test_qrels_repr_is_short() -> None:
    q = Qrels.from_dict(QRELS, source="judged.qrels")
    text = repr(q)
    assert len(text) < 400, text
    assert "array" not in text and "ChunkedArray" not in text
    assert "200 queries" in text and "6,000 judgements" in text and "judged.qrels" in text
    assert "q0" in text  # a head


def test_run_repr_is_short() -> None:
    r = Run.from_dict(RUN_A, name="bm25", source="bm25.run")
    text = repr(r)
    assert len(text) < 400, text
    assert "array" not in text
    assert "'bm25'" in text and "200 queries" in text and "6,000 rows" in text
    assert "q0" in text


def test_results_repr_is_short() -> None:
    measures = [f"nDCG@{k}" for k in range(1, 31)]
    res = ranklens.evaluate(QRELS, RUN_A, measures)
    text = repr(res)
    assert len(text) < 300, text
    assert "queries=200" in text and "nDCG@1=" in text and "more" in text


def test_comparison_repr_and_to_pandas() -> None:
    pytest.importorskip("pandas")
    cmp = ranklens.compare(QRELS, {"A": RUN_A, "B": RUN_B}, ["nDCG@10", "AP"])
    assert len(repr(cmp)) < 400
    df = cmp.to_pandas()
    assert list(df["measure"]) == ["nDCG@10", "AP"]
    assert {"baseline", "system", "diff", "p_value_adjusted", "significant"} <= set(df.columns)


def test_evaluate_many_takes_names() -> None:
    ev = ranklens.Evaluator(["nDCG@10"], QRELS)
    out = ev.evaluate_many({"A": RUN_A, "B": RUN_B})
    assert [r.run for r in out] == ["A", "B"]
    assert out[0]["nDCG@10"] != out[1]["nDCG@10"]
    assert [r.run for r in ev.evaluate_many([Run.from_dict(RUN_A, name="x")])] == ["x"]


def test_read_results_round_trip(tmp_path: Path) -> None:
    from ranklens.results import write_results

    a = ranklens.evaluate(QRELS, Run.from_dict(RUN_A, name="a"), ["nDCG@10", "AP", "NumRet"])
    b = ranklens.evaluate(QRELS, Run.from_dict(RUN_B, name="b"), ["nDCG@10", "AP", "NumRet"])
    for suffix in (".json", ".parquet", ".csv"):
        path = tmp_path / f"res{suffix}"
        write_results([a, b], path)
        back = ranklens.read_results(path)
        assert [r.run for r in back] == ["a", "b"]
        for orig, got in zip((a, b), back):
            assert got.query_ids == orig.query_ids
            assert got.per_query("AP") == orig.per_query("AP")
            assert got["NumRet"] == orig["NumRet"]


def test_read_results_aggregates_only(tmp_path: Path) -> None:
    from ranklens.results import write_results

    a = ranklens.evaluate(QRELS, RUN_A, ["AP"])
    path = tmp_path / "agg.json"
    write_results(a, path, per_query=False)
    [back] = ranklens.read_results(path)
    assert back.query_ids == () and back["AP"] == a["AP"]


def test_read_results_refuses_a_run(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"q1": {"d1": 1.0}}')
    with pytest.raises(ranklens.FormatError, match="not a results file"):
        ranklens.read_results(path)
