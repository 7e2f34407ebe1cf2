"""The Arrow path's workers (issue 30): the compiled pass over a bucket's Arrow columns equals the reference
engine, the duplicate check folded into the buckets words the same refusal as Spark's own aggregate, and the
buckets the compiled pass declines go to the reference engine."""

from __future__ import annotations

import collections
import random
import warnings

import numpy as np
import pyarrow as pa
import pytest

import ranklens
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import DuplicateError
from ranklens.express import available, express_specs
from ranklens.measures import parse_many
from ranklens.spark.core import STATS
from ranklens.spark.worker import compiled_bucket, duplicate_rows

COMPILED = ["nDCG@3", "nDCG@10", "nDCG", "DCG@3", "P@2", "P@10", "R@3", "AP", "AP@3", "RR", "RR@2"]


def _collection(seed: int, queries: int = 60) -> tuple[dict, dict]:
    """Run and qrels dicts: ties, run-only and qrels-only queries, all-zero grades, unjudged documents."""
    rng = random.Random(seed)
    run, qrels = {}, {}
    for i in range(queries):
        q = f"q{i}"
        docs = [f"d{j}" for j in rng.sample(range(40), rng.randint(1, 25))]
        if i % 7 != 3:
            run[q] = {d: float(rng.randint(0, 5)) for d in docs}
        if i % 11 != 5:
            grades = (0,) if i % 13 == 0 else (0, 1, 2, 3)
            qrels[q] = {d: rng.choice(grades) for d in rng.sample(docs, max(1, len(docs) // 2))}
            qrels[q][f"x{i}"] = rng.choice(grades)  # judged, never retrieved
    return run, qrels


def _tables(run: dict, qrels: dict) -> tuple[pa.Table, pa.Table]:
    r = [(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    random.Random(1).shuffle(r)  # (a bucket's rows come in no order)
    j = [(q, d, g) for q, ds in qrels.items() for d, g in ds.items()]
    run_t = pa.table({"query_id": [x[0] for x in r], "doc_id": [x[1] for x in r], "score": [x[2] for x in r]})
    qrels_t = pa.table({"query_id": [x[0] for x in j], "doc_id": [x[1] for x in j],
                        "relevance": pa.array([x[2] for x in j], pa.int64())})
    return run_t, qrels_t


def _reference(run: dict, qrels: dict, measures: list[str]):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ranklens.Evaluator(measures, qrels)
        return ev.results(ranklens.Run.from_dict(run), allow_empty=True), ev


needs_compiled = pytest.mark.skipif(not available(), reason="the compiled pass is not built here")


@needs_compiled
@pytest.mark.parametrize("seed", range(5))
def test_compiled_bucket_equals_the_reference_engine(seed):
    run, qrels = _collection(seed)
    specs = express_specs(parse_many(COMPILED))
    rows = compiled_bucket(*_tables(run, qrels), specs, len(STATS))
    assert rows is not None
    ref, _ = _reference(run, qrels, COMPILED)
    got = {(r[1], r[2]): r[3] for r in rows if r[0] == 0}
    assert sorted({q for q, _ in got}) == sorted(ref.query_ids)
    for i, q in enumerate(ref.query_ids):
        for j in range(len(COMPILED)):
            assert abs(got[(q, j)] - ref.values[i, j]) <= 1e-12
    counts = {STATS[r[2]]: int(r[3]) for r in rows if r[0] == 1}
    assert counts["run_queries"] == len(run) and counts["qrels_queries"] == len(qrels)
    assert counts["run_only_queries"] == len(set(run) - set(qrels))
    assert counts["qrels_only_queries"] == len(set(qrels) - set(run))
    assert counts["run_only_rows"] == sum(len(run[q]) for q in set(run) - set(qrels))


@needs_compiled
@pytest.mark.parametrize("case", ["duplicate run row", "duplicate judgement", "negative label", "null doc id",
                                  "float label", "empty qrels", "nan score"])
def test_compiled_bucket_declines_what_the_reference_engine_words(case):
    run_t, qrels_t = _tables(*_collection(0, 10)[::1])
    if case == "duplicate run row":
        run_t = pa.concat_tables([run_t, run_t.slice(0, 1)])
    elif case == "duplicate judgement":
        qrels_t = pa.concat_tables([qrels_t, qrels_t.slice(3, 1)])
    elif case == "negative label":
        qrels_t = qrels_t.set_column(2, "relevance", pa.array([-1] + qrels_t["relevance"].to_pylist()[1:], pa.int64()))
    elif case == "null doc id":
        run_t = run_t.set_column(1, "doc_id", pa.array([None] + run_t["doc_id"].to_pylist()[1:], pa.string()))
    elif case == "float label":
        qrels_t = qrels_t.set_column(2, "relevance", qrels_t["relevance"].cast(pa.float64()))
    elif case == "empty qrels":
        qrels_t = qrels_t.slice(0, 0)
    else:
        run_t = run_t.set_column(2, "score", pa.array([float("nan")] + run_t["score"].to_pylist()[1:]))
    assert compiled_bucket(run_t, qrels_t, express_specs(parse_many(["AP"])), len(STATS)) is None


def test_duplicate_rows_count_every_extra_row_and_name_the_smallest_pair():
    rng = random.Random(4)
    pairs = [(f"q{rng.randint(0, 5)}", f"d{rng.randint(0, 8)}") for _ in range(120)]
    t = pa.table({"query_id": [p[0] for p in pairs], "doc_id": [p[1] for p in pairs]})
    counted = collections.Counter(pairs)
    many = sorted(p for p, c in counted.items() if c > 1)
    assert duplicate_rows(t, 1) == [(7, many[0][0], 1, float(sum(c - 1 for c in counted.values())), many[0][1])]
    unique = pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "b"]})
    assert duplicate_rows(unique, 0) == []


# ── on Spark: several buckets


def _frames(spark, run: dict, qrels: dict, extra_run=(), extra_qrels=()):  # type: ignore[no-untyped-def]
    rdf = spark.createDataFrame(
        [(q, d, float(s)) for q, ds in run.items() for d, s in ds.items()] + list(extra_run),
        "query_id string, doc_id string, score double",
    )
    qdf = spark.createDataFrame(
        [(q, d, g) for q, ds in qrels.items() for d, g in ds.items()] + list(extra_qrels),
        "query_id string, doc_id string, relevance int",
    )
    return rdf, qdf


@needs_compiled
@pytest.mark.parametrize("negative", [False, True], ids=["every-bucket-compiled", "one-bucket-declined"])
def test_spark_buckets_run_the_compiled_pass_with_the_reference_values(spark, capfd, monkeypatch, negative):
    from ranklens.spark import evaluate

    run, qrels = _collection(7, 120)
    if negative:  # (the compiled pass declines a negative label: that bucket goes to the reference engine)
        qrels["q1"]["d_neg"] = -1
    monkeypatch.setenv("RANKLENS_DEBUG", "1")
    ev = evaluate(*_frames(spark, run, qrels), COMPILED, warn=False, buckets=4)
    ref, _ = _reference(run, qrels, COMPILED)
    assert ev.results.query_ids == ref.query_ids
    np.testing.assert_allclose(ev.results.values, ref.values, rtol=0, atol=1e-12)
    assert ev.results.notes == ref.notes
    ev.unpersist()
    err = capfd.readouterr().err
    assert f"the compiled pass evaluated {3 if negative else 4} of 4" in err


def test_spark_duplicates_across_buckets_are_the_sql_aggregates_refusal(spark):
    from ranklens.spark import evaluate
    from ranklens.spark.core import reject_duplicates

    run, qrels = _collection(3, 80)
    extra_run = [(q, d, 0.0) for q in ("q1", "q2", "q40", "q77") if q in run for d in list(run[q])[:2]]
    extra_qrels = [(q, d, 1) for q in ("q9", "q60") if q in qrels for d in list(qrels[q])[:1]]
    rdf, qdf = _frames(spark, run, qrels, extra_run, extra_qrels)
    with pytest.raises(DuplicateError) as oracle:  # (Spark's own groupBy aggregate: the SQL path's check)
        reject_duplicates(rdf, "run", "appears twice for query", "A ranking lists each document once", "<run DataFrame>")
    with pytest.raises(DuplicateError) as got:
        evaluate(rdf, qdf, ["AP", "ERR@5"], warn=False, buckets=4)  # (ERR: the reference engine's buckets)
    assert str(got.value) == str(oracle.value)
    with pytest.raises(DuplicateError) as got:
        evaluate(rdf, qdf, ["AP"], warn=False, buckets=4)
    assert str(got.value) == str(oracle.value)
    rdf, qdf = _frames(spark, run, qrels, (), extra_qrels)
    with pytest.raises(DuplicateError) as oracle:
        reject_duplicates(qdf, "qrels", "is judged twice for query", "Remove the duplicates", "<qrels DataFrame>")
    with pytest.raises(DuplicateError) as got:
        evaluate(rdf, qdf, ["nDCG@10"], warn=False, buckets=4, policy=EvalPolicy())
    assert str(got.value) == str(oracle.value)
