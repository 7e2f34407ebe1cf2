"""Parity of ranklens.spark.evaluate (both paths; the Arrow path's two plans) with the in-memory engine, at 1e-12
per query. ``scan``: the inputs as Parquet files of 3-row row groups (queries straddle the scan's tasks), read
by the Python workers (``plan="scan"``, :mod:`ranklens.spark.scan`); the test asserts the scan ran."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ranklens
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import DuplicateError, InputError, MeasureError

SQL_MEASURES = [
    "nDCG@3", "nDCG@10", "nDCG", "nDCG(gain=exp)@5", "DCG@3", "P@2", "P@10", "P(rel=2)@3", "R@3", "R@100",
    "AP", "AP@3", "AP(rel=2)", "RR", "RR@2", "Success@1", "Success@20",
]
ARROW_ONLY = ["ERR@10", "MZRBP(p=0.8)", "nDCG(ideal=local)@3", "nDCG(ties=average)@3", "bpref", "P(ties=input)@2"]

# ties at the cutoff (q1: three documents tied at rank 2–4), k beyond the list (q2: two documents), a
# query only in the qrels (q5), all-zero grades (q3), negative labels (q4), unjudged documents, a
# query only in the run (q9)
QRELS = {
    "q1": {"a": 2, "b": 1, "c": 0, "d": 1, "e": 3, "f": 2},
    "q2": {"a": 1, "x": 1, "y": 2},
    "q3": {"a": 0, "b": 0},
    "q4": {"a": -1, "b": 2, "c": -2, "d": 1},
    "q5": {"z": 1},
}
RUN = {
    "q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0, "g": 0.5, "f": -1.0},
    "q2": {"x": 1.0, "u": 0.0},
    "q3": {"a": 1.0, "b": 1.0, "c": 1.0},
    "q4": {"a": 5.0, "b": 4.0, "c": 3.0, "n": 3.0, "d": 1.0},
    "q9": {"a": 1.0},
}
FLOAT_QRELS = {"q1": {"a": 0.25, "b": 1.5, "c": 0.0, "d": 0.9}, "q2": {"a": 2.75, "b": 0.5}}
FLOAT_RUN = {"q1": {"a": 1.0, "b": 1.0, "c": 3.0, "z": 2.0}, "q2": {"b": 2.0, "a": 1.0}}
FLOAT_MEASURES = ["nDCG@2", "nDCG", "DCG@3", "P(rel=0.5)@2", "R(rel=1.5)@3", "AP(rel=0.5)", "RR(rel=0.9)", "Success(rel=2)@2"]


def _frames(spark, run, qrels, label_type="int"):
    rdf = spark.createDataFrame(
        [(q, d, float(s)) for q, ds in run.items() for d, s in ds.items()], "query_id string, doc_id string, score double"
    )
    qdf = spark.createDataFrame(
        [(q, d, l) for q, ds in qrels.items() for d, l in ds.items()], f"query_id string, doc_id string, relevance {label_type}"
    )
    return rdf, qdf


def _rows(run, qrels):
    return ([(q, d, float(s)) for q, ds in run.items() for d, s in ds.items()],
            [(q, d, l) for q, ds in qrels.items() for d, l in ds.items()])


def _parquet(tmp_path, run_rows, qrels_rows, label_type="int"):
    """The rows as Parquet files of 3-row row groups: the paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = str(tmp_path / "run.parquet"), str(tmp_path / "qrels.parquet")
    pq.write_table(pa.table({"query_id": pa.array([r[0] for r in run_rows], pa.string()),
                             "doc_id": pa.array([r[1] for r in run_rows], pa.string()),
                             "score": pa.array([r[2] for r in run_rows], pa.float64())}), paths[0], row_group_size=3)
    pq.write_table(pa.table({"query_id": pa.array([r[0] for r in qrels_rows], pa.string()),
                             "doc_id": pa.array([r[1] for r in qrels_rows], pa.string()),
                             "relevance": pa.array([r[2] for r in qrels_rows], pa.int32() if label_type == "int" else pa.float64())}),
             paths[1], row_group_size=3)
    return paths


def _inputs(spark, tmp_path, path, run, qrels, label_type="int"):
    """``(run, qrels, keyword arguments)`` of ``evaluate`` for ``path`` ("arrow", "sql" or "scan")."""
    if path == "scan":
        return (*_parquet(tmp_path, *_rows(run, qrels), label_type), {"path": "arrow", "plan": "scan"})
    return (*_frames(spark, run, qrels, label_type), {"path": path})


def _scanned(ev, path):
    assert ev.plan == ("scan" if path == "scan" else "sql" if path == "sql" else "shuffle"), ev.plan_note
    return ev


def _reference(qrels, run, measures, policy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ranklens.Evaluator(measures, qrels, policy=policy)(run)


def _check(ev, ref):
    res = ev.results
    assert res.query_ids == ref.query_ids
    assert [str(m) for m in res.measures] == [str(m) for m in ref.measures]
    np.testing.assert_allclose(res.values, ref.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.aggregates, ref.aggregates, rtol=0, atol=1e-12)
    assert res.notes == ref.notes
    assert res.options == ref.options
    rows = {(r["query_id"], r["measure"]): r["value"] for r in ev.per_query.collect()}
    assert len(rows) == len(ref.query_ids) * len(ref.measures)
    for j, m in enumerate(ref.measures):
        for i, q in enumerate(ref.query_ids):
            assert abs(rows[(q, str(m))] - ref.values[i, j]) <= 1e-12
    ev.unpersist()


PATHS = ["arrow", "sql", "scan"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("policy", [EvalPolicy(), EvalPolicy(missing="zero", negative="zero", judged_only=True, max_docs=3)],
                         ids=["default", "zero-judged-maxdocs"])
def test_parity_integer_labels(spark, tmp_path, path, policy):
    from ranklens.spark import evaluate

    measures = SQL_MEASURES + (ARROW_ONLY if path != "sql" else [])
    run, qrels, kw = _inputs(spark, tmp_path, path, RUN, QRELS)
    ev = _scanned(evaluate(run, qrels, measures, policy=policy, warn=False, **kw), path)
    _check(ev, _reference(QRELS, RUN, measures, policy))
    assert ev.results.run == "run"


@pytest.mark.parametrize("path", PATHS)
def test_parity_float_labels(spark, tmp_path, path):
    from ranklens.spark import evaluate

    policy = EvalPolicy(labels="float")
    run, qrels, kw = _inputs(spark, tmp_path, path, FLOAT_RUN, FLOAT_QRELS, "double")
    ev = _scanned(evaluate(run, qrels, FLOAT_MEASURES, policy=policy, warn=False, **kw), path)
    _check(ev, _reference(ranklens.Qrels.from_dict(FLOAT_QRELS, labels="float"), FLOAT_RUN, FLOAT_MEASURES, policy))


@pytest.mark.parametrize("path", PATHS)
def test_duplicates_are_rejected_with_the_key(spark, tmp_path, path):
    from ranklens.spark import evaluate

    run_rows, qrels_rows = _rows(RUN, QRELS)
    twice_b = run_rows + [r for r in run_rows if r[:2] == ("q1", "b")]
    twice_x = qrels_rows + [r for r in qrels_rows if r[1] == "x"]
    for name, rr, qr, message in (("run", twice_b, qrels_rows, "document 'b' appears twice for query 'q1'"),
                                  ("qrels", run_rows, twice_x, "document 'x' is judged twice for query 'q2'")):
        if path == "scan":
            (tmp_path / name).mkdir()
            run, qrels = _parquet(tmp_path / name, rr, qr)
            kw = {"path": "arrow", "plan": "scan"}
        else:
            run = spark.createDataFrame(rr, "query_id string, doc_id string, score double")
            qrels = spark.createDataFrame(qr, "query_id string, doc_id string, relevance int")
            kw = {"path": path}
        with pytest.raises(DuplicateError, match=message):
            evaluate(run, qrels, ["AP"], **kw)


@pytest.mark.parametrize("path", PATHS)
def test_empty_inputs_are_an_error_not_nan(spark, tmp_path, path):
    from ranklens.spark import evaluate

    if path == "scan":
        run_rows, qrels_rows = _rows(RUN, QRELS)
        for name, rr, qr in (("no_run", [], qrels_rows), ("no_qrels", run_rows, [])):
            (tmp_path / name).mkdir()
            with pytest.raises(InputError, match="no query to evaluate"):
                evaluate(*_parquet(tmp_path / name, rr, qr), ["nDCG@10"], plan="scan")
        return
    rdf, qdf = _frames(spark, RUN, QRELS)
    with pytest.raises(InputError, match="no query to evaluate"):
        evaluate(rdf.limit(0), qdf, ["nDCG@10"], path=path)
    with pytest.raises(InputError, match="no query to evaluate"):
        evaluate(rdf, qdf.limit(0), ["nDCG@10"], path=path)


@pytest.mark.parametrize("path", ["sql", "scan"])
def test_missing_error_names_the_queries(spark, tmp_path, path):
    from ranklens.errors import QuerySetError
    from ranklens.spark import evaluate

    run, qrels, kw = _inputs(spark, tmp_path, path, RUN, QRELS)
    with pytest.raises(QuerySetError, match=r"1 qrels query not in the run .*\['q5'\]"):
        evaluate(run, qrels, ["P@1"], policy=EvalPolicy(missing="error"), **kw)


def test_sql_path_names_the_arrow_path_for_other_measures(spark):
    from ranklens.spark import evaluate

    rdf, qdf = _frames(spark, RUN, QRELS)
    for m in ("ERR@10", "nDCG(ideal=local)@10", "P(ties=average)@5"):
        with pytest.raises(MeasureError, match="path='arrow'"):
            evaluate(rdf, qdf, [m], path="sql")


def test_column_maps_and_engine_errors_cross_the_workers(spark):
    from ranklens.errors import FormatError
    from ranklens.spark import evaluate

    rdf, qdf = _frames(spark, RUN, QRELS)
    policy = EvalPolicy(run_columns={"user": "query_id", "item": "doc_id", "s": "score"})
    renamed = rdf.withColumnRenamed("query_id", "user").withColumnRenamed("doc_id", "item").withColumnRenamed("score", "s")
    segments = {"q1": "long", "q2": "short", "q3": "short", "q4": "long"}
    ev = evaluate(renamed, qdf, ["nDCG@3"], policy=policy, warn=False, segments=segments)
    ref = _reference(QRELS, RUN, ["nDCG@3"], EvalPolicy())
    assert {s: r.aggregates for s, r in ev.by_segment().items()} == {s: r.aggregates for s, r in ref.by_segment(segments).items()}
    _check(ev, ref)
    halves = qdf.selectExpr("query_id", "doc_id", "relevance + 0.5 as relevance")
    with pytest.raises(FormatError, match="relevance label must be an integer"):
        evaluate(rdf, halves, ["nDCG@3"], path="arrow")
    with pytest.raises(FormatError, match="relevance label must be an integer"):
        evaluate(rdf, halves, ["nDCG@3"], path="sql")


def test_column_maps_segments_and_refusals_on_the_scan_plan(spark, tmp_path):
    """The scan plan reads the mapped columns; a label it does not read (a fraction) is refused by the shuffle
    plan with the path in the message (the scan says why it did not evaluate)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ranklens.errors import FormatError
    from ranklens.spark import evaluate

    run_rows, qrels_rows = _rows(RUN, QRELS)
    run_path, qrels_path = str(tmp_path / "run.parquet"), str(tmp_path / "qrels.parquet")
    pq.write_table(pa.table({"user": [r[0] for r in run_rows], "item": [r[1] for r in run_rows],
                             "s": [r[2] for r in run_rows]}), run_path, row_group_size=4)
    pq.write_table(pa.table({"query_id": [r[0] for r in qrels_rows], "doc_id": [r[1] for r in qrels_rows],
                             "relevance": pa.array([r[2] for r in qrels_rows], pa.int64())}), qrels_path, row_group_size=5)
    policy = EvalPolicy(run_columns={"user": "query_id", "item": "doc_id", "s": "score"})
    segments = {"q1": "long", "q2": "short", "q3": "short", "q4": "long"}
    ev = _scanned(evaluate(run_path, qrels_path, ["nDCG@3", "AP"], policy=policy, warn=False, segments=segments), "scan")
    ref = _reference(QRELS, RUN, ["nDCG@3", "AP"], EvalPolicy())
    assert {s: r.aggregates for s, r in ev.by_segment().items()} == {s: r.aggregates for s, r in ref.by_segment(segments).items()}
    _check(ev, ref)
    halves = str(tmp_path / "halves.parquet")
    pq.write_table(pa.table({"query_id": [r[0] for r in qrels_rows], "doc_id": [r[1] for r in qrels_rows],
                             "relevance": [r[2] + 0.5 for r in qrels_rows]}), halves)
    with pytest.raises(FormatError, match=r"halves\.parquet: relevance label must be an integer"):
        evaluate(run_path, halves, ["nDCG@3"], policy=policy)
    with pytest.raises(InputError, match="plan='scan' reads Parquet paths"):
        evaluate(*_frames(spark, RUN, QRELS), ["nDCG@3"], plan="scan")
