"""Issue 27: the Python API takes measures as objects and keeps the type of the ids it was given.

Oracles: values are computed by hand below (or by the same call with measure names, whose values the
parity suites check against pytrec_eval); ids are compared with the ones the test itself built."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import ranklens
from ranklens.errors import InputError, MeasureError
from ranklens.measures import AP, RR, P, nDCG

# q1: a relevant at rank 1, c relevant at rank 3 → AP = (1/1 + 2/3)/2, P@2 = 0.5, RR = 1
# q2: b relevant at rank 2 → AP = 1/2, P@2 = 0.5, RR = 1/2
QRELS = {"q1": {"a": 1, "c": 1}, "q2": {"b": 1}}
RUN = {"q1": {"a": 3.0, "x": 2.0, "c": 1.0}, "q2": {"y": 2.0, "b": 1.0}}
AP_MEAN = ((1 + 2 / 3) / 2 + 1 / 2) / 2


# ---------------------------------------------------------------------------------------- measure objects


def test_evaluate_takes_a_family_a_measure_and_a_single_measure() -> None:
    res = ranklens.evaluate(QRELS, RUN, [AP])
    assert math.isclose(res["AP"], AP_MEAN)
    single = ranklens.evaluate(QRELS, RUN, AP)  # not in a list
    assert math.isclose(single["AP"], AP_MEAN)
    mixed = ranklens.evaluate(QRELS, RUN, (RR, P @ 2, "AP"))
    assert [str(m) for m in mixed.measures] == ["RR", "P@2", "AP"]
    assert math.isclose(mixed["RR"], 0.75) and mixed["P@2"] == 0.5
    assert ranklens.evaluate(QRELS, RUN, nDCG @ 3)["nDCG@3"] > 0


def test_evaluator_and_compare_take_measure_objects() -> None:
    ev = ranklens.Evaluator(AP, QRELS)
    assert math.isclose(ev(RUN)["AP"], AP_MEAN)
    worse = {"q1": {"x": 3.0, "a": 1.0}, "q2": {"y": 2.0, "b": 1.0}}
    cmp = ranklens.compare(QRELS, {"good": RUN, "worse": worse}, AP)
    assert cmp.measures == ("AP",)
    cmp2 = ranklens.compare(QRELS, {"good": RUN, "worse": worse}, [AP, P @ 2])
    assert cmp2.measures == ("AP", "P@2")


def test_a_family_that_needs_a_cutoff_says_so() -> None:
    with pytest.raises(MeasureError, match="P needs a cutoff"):
        ranklens.evaluate(QRELS, RUN, P)


def test_something_that_is_not_a_measure_is_one_clear_error() -> None:
    with pytest.raises(MeasureError, match="expected a measure .* got int 3"):
        ranklens.evaluate(QRELS, RUN, 3)  # type: ignore[arg-type]
    with pytest.raises(MeasureError, match="got NoneType"):
        ranklens.evaluate(QRELS, RUN, [AP, None])  # type: ignore[list-item]


def test_ir_measures_objects() -> None:
    irm = pytest.importorskip("ir_measures")
    res = ranklens.evaluate(QRELS, RUN, [irm.nDCG @ 3, irm.AP, irm.P(rel=1) @ 2])
    assert [str(m) for m in res.measures] == ["nDCG@3", "AP", "P@2"]
    assert math.isclose(res["AP"], AP_MEAN)
    assert math.isclose(ranklens.evaluate(QRELS, RUN, irm.RR)["RR"], 0.75)


# ------------------------------------------------------------------------------------------ integer ids


def _int_frames() -> tuple[object, object]:
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [10, 11, 20, 30], "rating": [1, 1, 1, 1]})
    run = pd.DataFrame(
        {"user_id": [1, 1, 2, 2, 3], "item_id": [10, 99, 98, 20, 97], "score": [2.0, 1.0, 2.0, 1.0, 1.0]}
    )
    return qrels, run


def test_integer_ids_come_back_as_integers() -> None:
    qrels, run = _int_frames()
    res = ranklens.evaluate(qrels, run, ["P@1", "RR"])
    # user 1: 10 first (relevant); user 2: 20 second; user 3: nothing relevant retrieved
    assert res.per_query("P@1") == {1: 1.0, 2: 0.0, 3: 0.0}
    assert res.per_query("RR")[2] == 0.5
    assert list(res.ids) == [1, 2, 3]
    assert res.query_ids == ("1", "2", "3")  # the engine's form (matched as strings, as trec_eval does)


def test_subset_and_by_segment_take_integer_ids() -> None:
    pd = pytest.importorskip("pandas")
    qrels, run = _int_frames()
    res = ranklens.evaluate(qrels, run, ["P@1"])
    sub = res.subset([1, 2])
    assert sub.query_ids == ("1", "2") and sub["P@1"] == 0.5
    seg = res.by_segment({1: "a", 2: "b", 3: "a"})
    assert {s: r["P@1"] for s, r in seg.items()} == {"a": 0.5, "b": 0.0}
    frame = pd.DataFrame({"user_id": [1, 2, 3], "segment": ["a", "b", "a"]})
    assert {s: r["P@1"] for s, r in res.by_segment(frame).items()} == {"a": 0.5, "b": 0.0}


def test_by_segment_reads_a_file(tmp_path: Path) -> None:
    qrels, run = _int_frames()
    res = ranklens.evaluate(qrels, run, ["P@1"])
    path = tmp_path / "seg1.csv"
    path.write_text("user_id,segment\n1,a\n2,b\n3,a\n")
    assert {s: r["P@1"] for s, r in res.by_segment(str(path)).items()} == {"a": 0.5, "b": 0.0}
    assert set(res.by_segment(path)) == {"a", "b"}


def test_a_lookup_that_matches_nothing_is_an_error() -> None:
    res = ranklens.evaluate(QRELS, RUN, ["P@1"])
    with pytest.raises(InputError, match=r"none of the 2 query ids given \(1, 2\) was evaluated.*q1, q2"):
        res.subset([1, 2])
    with pytest.raises(InputError, match="no evaluated query has a segment"):
        res.by_segment({"u1": "a"})


def test_to_pandas_joins_back_on_integer_ids() -> None:
    pd = pytest.importorskip("pandas")
    qrels, run = _int_frames()
    res = ranklens.evaluate(qrels, run, ["P@1"])
    users = pd.DataFrame({"user_id": [1, 2, 3], "country": ["fr", "de", "fr"]})
    joined = users.join(res.to_pandas(), on="user_id")
    assert joined["P@1"].tolist() == [1.0, 0.0, 0.0]
    long = res.to_pandas(layout="long")
    assert set(long.columns) == {"run", "measure", "query_id", "value"}
    per_query = long[long["query_id"].notna()]
    assert sorted(per_query["query_id"].tolist()) == [1, 2, 3]
    assert res.to_arrow().schema.field("query_id").type == __import__("pyarrow").int64()


def test_the_long_pandas_layout_keeps_integer_ids_integers() -> None:
    """The long layout's aggregate rows have no query id (null): the column must stay integer (pandas'
    nullable ``Int64``), not become float64 with NaN, where 1.0 would stand for the user 1."""
    pd = pytest.importorskip("pandas")
    qrels, run = _int_frames()
    long = ranklens.evaluate(qrels, run, ["P@1"]).to_pandas(layout="long")
    assert pd.api.types.is_integer_dtype(long["query_id"].dtype), long["query_id"].dtype
    ids = long["query_id"].dropna().tolist()
    assert sorted(ids) == [1, 2, 3] and all(isinstance(q, int) for q in ids), ids
    assert int(long["query_id"].isna().sum()) == 1  # the aggregate row
    strings = ranklens.evaluate(QRELS, RUN, ["P@1"]).to_pandas(layout="long")
    assert sorted(strings["query_id"].tolist()) == ["all", "q1", "q2"]


def test_string_ids_stay_strings() -> None:
    res = ranklens.evaluate(QRELS, RUN, ["P@1"])
    assert res.per_query("P@1") == {"q1": 1.0, "q2": 0.0}
    assert list(res.to_pandas().index) == ["q1", "q2"]


def test_mixed_looking_integer_ids_of_a_nested_dict() -> None:
    res = ranklens.evaluate({1: {"a": 1}, 2: {"b": 1}}, {1: {"a": 1.0}, 2: {"c": 1.0}}, ["P@1"])
    assert res.per_query("P@1") == {1: 1.0, 2: 0.0}


# --------------------------------------------------------------------------------- compare and segments


def test_compare_takes_qrels_columns_for_frames_and_paths(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"u": ["q1", "q1", "q2"], "i": ["a", "c", "b"], "stars": [1, 1, 1]})
    worse = {"q1": {"x": 3.0, "a": 1.0}, "q2": {"y": 2.0, "b": 1.0}}
    cols = {"u": "query_id", "i": "doc_id", "stars": "label"}
    cmp = ranklens.compare(qrels, {"good": RUN, "worse": worse}, ["nDCG@3", "AP"], qrels_columns=cols)
    assert math.isclose(cmp.mean("good", "AP"), AP_MEAN)
    path = tmp_path / "q.csv"
    qrels.to_csv(path, index=False)
    cmp2 = ranklens.compare(str(path), {"good": RUN, "worse": worse}, ["nDCG@3", "AP"], qrels_columns=cols)
    assert math.isclose(cmp2.mean("good", "AP"), AP_MEAN)


def test_read_segments_takes_a_user_id_frame() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"user_id": [1, 2], "segment": ["a", "b"]})
    assert ranklens.read_segments(frame) == {"1": "a", "2": "b"}


# ------------------------------------------------------------------------------ judged_only per measure


def test_judged_only_is_a_parameter_of_each_measure() -> None:
    qrels = {"q1": {"a": 1, "c": 0}, "q2": {"b": 1, "d": 0}}
    run = {"q1": {"x": 3.0, "a": 2.0, "c": 1.0}, "q2": {"y": 3.0, "d": 2.0, "b": 1.0}}
    # without the unjudged x and y: q1 ranks a first, q2 ranks d (judged 0) then b → P@1 = (1 + 0)/2
    res = ranklens.Evaluator(["P@1", "P(judged_only=true)@1", "RR(judged_only=true)"], qrels)(run, warn=False)
    assert res.per_query("P@1") == {"q1": 0.0, "q2": 0.0}
    assert res.per_query("P(judged_only=true)@1") == {"q1": 1.0, "q2": 0.0}
    assert res.per_query("RR(judged_only=true)") == {"q1": 1.0, "q2": 0.5}
    every = ranklens.Evaluator(["P@1", "RR"], qrels, judged_only=True)(run, warn=False)  # trec_eval -J, for all
    assert every.per_query("P@1") == res.per_query("P(judged_only=true)@1")
    assert every.per_query("RR") == res.per_query("RR(judged_only=true)")
    assert any(n.startswith("P(judged_only=true)@1, RR(judged_only=true): ") for n in res.notes), res.notes


def test_iterables_of_ir_measures_namedtuples() -> None:
    irm = pytest.importorskip("ir_measures")
    qrels = [irm.Qrel(q, d, rel) for q, docs in QRELS.items() for d, rel in docs.items()]
    run = (irm.ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items())  # a generator, read once
    res = ranklens.evaluate(qrels, run, ["AP"])
    assert math.isclose(res["AP"], AP_MEAN)
    assert math.isclose(ranklens.evaluate(iter(qrels), RUN, irm.AP)["AP"], AP_MEAN)


def test_to_polars_keeps_integer_ids_in_both_layouts() -> None:
    pl = pytest.importorskip("polars")
    qrels, run = _int_frames()
    res = ranklens.evaluate(qrels, run, ["P@1"])
    wide = res.to_polars()
    assert wide.schema["query_id"] == pl.Int64 and wide["query_id"].to_list() == [1, 2, 3]
    long = res.to_polars("long")
    assert long.filter(pl.col("query_id").is_not_null())["query_id"].to_list() == [1, 2, 3]
    with pytest.raises(InputError, match="layout must be 'wide' or 'long'"):
        res.to_pandas(layout="tall")  # type: ignore[arg-type]


def test_spark_refuses_a_measures_own_judged_only_before_any_job() -> None:
    pytest.importorskip("pyspark")
    from ranklens.spark import evaluate as spark_evaluate

    with pytest.raises(InputError, match=r"P\(judged_only=true\)@10: a measure's own judged_only is computed in memory"):
        spark_evaluate(None, None, ["P@5", "P(judged_only=true)@10"])


def test_comparison_deltas_keep_integer_ids() -> None:
    qrels, run = _int_frames()
    pd = pytest.importorskip("pandas")
    other = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [99, 10, 20, 30], "score": [2.0, 1.0, 1.0, 1.0]})
    cmp = ranklens.compare(qrels, {"a": run, "b": other}, ["P@1"], test="sign")
    assert [d.query_id for d in cmp.deltas()] == [1, 2, 3]
    assert [(d.query_id, d.delta) for d in cmp.worst(5)] == [(1, -1.0)]
    qids, _, _ = cmp.paired_scores("a", "b", "P@1")
    assert qids == [1, 2, 3]


def test_the_other_entry_points_take_measure_objects_too() -> None:
    from ranklens.diversity.alpha import _measures
    from ranklens.measures import get_family

    alpha = get_family("alpha-nDCG")
    assert [str(m) for m in _measures(alpha @ 10)] == ["alpha-nDCG@10"]
    assert [str(m) for m in _measures([alpha @ 5, "alpha-nDCG@10"])] == ["alpha-nDCG@5", "alpha-nDCG@10"]
    res = ranklens.evaluate(QRELS, RUN, [AP])
    assert res[AP] == res["AP"] and res.per_query(AP) == res.per_query("AP")
