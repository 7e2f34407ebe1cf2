"""Parity of ranklens.spark.evaluate (both paths) with the in-memory engine, at 1e-12 per query."""

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


@pytest.mark.parametrize("path", ["arrow", "sql"])
@pytest.mark.parametrize("policy", [EvalPolicy(), EvalPolicy(missing="zero", negative="zero", judged_only=True, max_docs=3)],
                         ids=["default", "zero-judged-maxdocs"])
def test_parity_integer_labels(spark, path, policy):
    from ranklens.spark import evaluate

    measures = SQL_MEASURES + (ARROW_ONLY if path == "arrow" else [])
    rdf, qdf = _frames(spark, RUN, QRELS)
    ev = evaluate(rdf, qdf, measures, policy=policy, path=path, warn=False)
    _check(ev, _reference(QRELS, RUN, measures, policy))
    assert ev.results.run == "run"


@pytest.mark.parametrize("path", ["arrow", "sql"])
def test_parity_float_labels(spark, path):
    from ranklens.spark import evaluate

    policy = EvalPolicy(labels="float")
    rdf, qdf = _frames(spark, FLOAT_RUN, FLOAT_QRELS, "double")
    ev = evaluate(rdf, qdf, FLOAT_MEASURES, policy=policy, path=path, warn=False)
    _check(ev, _reference(ranklens.Qrels.from_dict(FLOAT_QRELS, labels="float"), FLOAT_RUN, FLOAT_MEASURES, policy))


@pytest.mark.parametrize("path", ["arrow", "sql"])
def test_duplicates_are_rejected_with_the_key(spark, path):
    from ranklens.spark import evaluate

    rdf, qdf = _frames(spark, RUN, QRELS)
    with pytest.raises(DuplicateError, match="document 'b' appears twice for query 'q1'"):
        evaluate(rdf.union(rdf.filter("query_id = 'q1' and doc_id = 'b'")), qdf, ["AP"], path=path)
    with pytest.raises(DuplicateError, match="document 'x' is judged twice for query 'q2'"):
        evaluate(rdf, qdf.union(qdf.filter("doc_id = 'x'")), ["AP"], path=path)


@pytest.mark.parametrize("path", ["arrow", "sql"])
def test_empty_inputs_are_an_error_not_nan(spark, path):
    from ranklens.spark import evaluate

    rdf, qdf = _frames(spark, RUN, QRELS)
    with pytest.raises(InputError, match="no query to evaluate"):
        evaluate(rdf.limit(0), qdf, ["nDCG@10"], path=path)
    with pytest.raises(InputError, match="no query to evaluate"):
        evaluate(rdf, qdf.limit(0), ["nDCG@10"], path=path)


def test_missing_error_names_the_queries(spark):
    from ranklens.errors import QuerySetError
    from ranklens.spark import evaluate

    rdf, qdf = _frames(spark, RUN, QRELS)
    with pytest.raises(QuerySetError, match=r"1 qrels query not in the run .*\['q5'\]"):
        evaluate(rdf, qdf, ["P@1"], policy=EvalPolicy(missing="error"), path="sql")


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
