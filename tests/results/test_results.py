"""Results: one type, every conversion, the notes about what was left out."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ranklens
from ranklens import Evaluator, Qrels, Run
from ranklens.errors import python_wording

# RUN misses q9 and has q7, which the qrels lack: every evaluation notes (and warns about) both;
# test_notes_say_what_was_left_out checks the warnings, the other tests ignore them
pytestmark = pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")

QRELS = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}, "q2": {"dA": 1, "dB": 0, "dC": 0}, "q9": {"x": 1}}
RUN = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}, "q2": {"dA": 1.0, "dB": 1.0, "dC": 1.0}, "q7": {"y": 1.0}}


def test_single_measure_still_returns_results() -> None:
    res = ranklens.evaluate(QRELS, RUN, "AP")
    assert isinstance(res, ranklens.Results)
    assert res.query_ids == ("q1", "q2")
    # spec §7.4: AP(q1) = 0.805556; q2: only dA relevant, ranked 3rd by the doc-id tie-break → 1/3
    assert res.per_query("AP") == pytest.approx({"q1": 0.805556, "q2": 1 / 3}, abs=1e-6)
    assert res["AP"] == pytest.approx((0.805556 + 1 / 3) / 2, abs=1e-6)


def test_notes_say_what_was_left_out() -> None:
    with pytest.warns(ranklens.RanklensWarning) as record:
        res = ranklens.evaluate(QRELS, RUN, ["P@1"])
    assert any("1 run query (1 rows) not in the qrels: ignored" in n for n in res.notes)
    assert any("1 qrels query with no retrieved document: skipped" in n for n in res.notes)
    # and warns them, in a notebook, in the Python API's words (the notes are data: each face words them)
    assert [str(w.message) for w in record] == [f"run: {python_wording(n)}" for n in res.notes]
    assert "pass missing='zero' (trec_eval -c)" in str(record[-1].message)


def test_missing_zero_counts_the_missing_query() -> None:
    res = ranklens.evaluate(QRELS, RUN, ["nDCG", "NumQ"], missing="zero")
    assert res.query_ids == ("q1", "q2", "q9")
    assert res.per_query("nDCG")["q9"] == 0.0
    assert res["NumQ"] == 3


def test_missing_error_raises() -> None:
    with pytest.raises(ranklens.InputError, match="qrels query not in the run"):
        ranklens.evaluate(QRELS, RUN, ["P@1"], missing="error")


def test_conversions_agree() -> None:
    res = ranklens.evaluate(QRELS, RUN, ["nDCG@5", "RR"])
    d = res.to_dict()
    assert d["q1"]["nDCG@5"] == pytest.approx(0.909816, abs=1e-6)
    assert d["all"]["RR"] == pytest.approx((1 + 1 / 3) / 2)
    doc = json.loads(res.to_json())
    assert doc["aggregate"]["RR"] == d["all"]["RR"]
    assert doc["per_query"]["q2"]["RR"] == pytest.approx(1 / 3)
    df = res.to_pandas()
    assert list(df.columns) == ["nDCG@5", "RR"] and df.loc["q2", "RR"] == pytest.approx(1 / 3)
    pl = res.to_polars()
    assert pl["query_id"].to_list() == ["q1", "q2"]
    long = res.to_long_arrow().to_pylist()
    assert {"run": "run", "measure": "RR", "query_id": "all", "value": d["all"]["RR"]} in long
    assert len(long) == 2 * 2 + 2


def test_unknown_measure_lookup_in_results() -> None:
    res = ranklens.evaluate(QRELS, RUN, ["RR"])
    with pytest.raises(ranklens.MeasureError, match="was not evaluated"):
        res["AP"]


def test_evaluator_reused_across_runs_matches_one_shot() -> None:
    ev = Evaluator(["nDCG@10", "AP"], Qrels.from_dict(QRELS))
    other = {"q1": {"d5": 3.0, "d4": 2.0}, "q2": {"dA": 2.0}}
    for run in (RUN, other):
        a = ev(run)
        b = ranklens.evaluate(QRELS, run, ["nDCG@10", "AP"])
        np.testing.assert_array_equal(a.values, b.values)


def test_a_run_sharing_no_query_with_the_qrels_is_an_error_not_a_nan_mean() -> None:
    with pytest.raises(ranklens.InputError, match="no query to evaluate"):
        ranklens.evaluate(QRELS, {"zz": {"a": 1.0}}, ["AP", "NumQ"])


def test_run_name_and_frames_in() -> None:
    pd = pytest.importorskip("pandas")
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d3"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d3"], "relevance": [1, 1]})
    res = ranklens.evaluate(qrels, run, ["P@2"])
    assert res["P@2"] == 1.0
    assert Run.from_dict(RUN, name="x").name == "x"


def test_top_k_only_measures_skip_deep_rows_without_changing_values() -> None:
    """Evaluator joins only the rows the measures read (rows_needed); the values must not change."""
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    qrels = str(examples / "toy.qrels")
    shallow = ["nDCG@10", "P@5", "RR@3", "ERR@4", "Judged@10", "nDCG(ideal=recall,depth=20)@5"]
    for run in ("toy_bm25.run", "toy_dense.run"):  # bm25 has ties at the cut-offs
        path = str(examples / run)
        fast = Evaluator(shallow, qrels)
        assert fast.depth == 20
        full = ranklens.evaluate(qrels, path, [*shallow, "AP"])
        np.testing.assert_array_equal(fast(path).values, full.values[:, : len(shallow)])
