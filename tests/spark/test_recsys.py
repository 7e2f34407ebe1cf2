"""The recommender side on Spark (issue 16): ``train=``, ``items=``, ``exclude_seen=``, ``empty=`` and
``aggregate=`` give the in-memory engine's numbers and notes on the Arrow path — per user for the per-list
measures (the training statistics are global, sent to every bucket), the value for the system-level ones
(computed on the driver over every user's list) — on the bundled MovieLens-shaped example and on small
random data; the SQL path refuses them naming path='arrow'; ``eval --engine spark --train --exclude-seen``
prints the in-memory engine's ``-f tsv`` byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.engine.evaluator import Evaluator
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import MeasureError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "movielens"
TOL = 1e-12

PER_LIST = [
    "nDCG@10", "Novelty@10", "ARP@10", "ILD@10", "ILD(on=cooccurrence)@5", "Serendipity(rel=4)@10", "F1(rel=4)@5",
    "FallOut(rel=4)@10", "AUC(rel=4)", "RR(ties=input)",
]
SYSTEM = ["Coverage@10", "EntropyCoverage@10", "Gini@10", "Personalization@10", "AUC(pooled=true,rel=4)", "Coverage@3"]


def _frames(spark, run: pd.DataFrame, qrels: pd.DataFrame):
    rows = [(str(q), str(d), float(s)) for q, d, s in run.itertuples(index=False)]
    judged = [(str(q), str(d), int(r)) for q, d, r in qrels.itertuples(index=False)]
    return (spark.createDataFrame(rows, "query_id string, doc_id string, score double"),
            spark.createDataFrame(judged, "query_id string, doc_id string, relevance int"))


def _movielens():
    recs = pd.read_csv(EXAMPLE / "recs.csv", dtype={"user": str, "item": str})
    test = pd.read_csv(EXAMPLE / "test.csv", dtype={"user": str, "item": str})
    run = recs.rename(columns={"user": "query_id", "item": "doc_id"})[["query_id", "doc_id", "score"]]
    qrels = test.rename(columns={"user": "query_id", "item": "doc_id", "rating": "relevance"})
    return run, qrels


def _assert_same(spark_eval, memory, *, per_query: bool = True) -> None:
    a, b = spark_eval.results, memory
    assert [str(m) for m in a.measures] == [str(m) for m in b.measures]
    assert a.query_ids == b.query_ids
    assert a.notes == b.notes
    assert a.options == b.options
    assert a.system == b.system  # the system-level measures (their values: the aggregates below)
    if per_query:
        assert np.array_equal(np.isnan(a.values), np.isnan(b.values))
        both = ~np.isnan(b.values)
        assert np.all(np.abs(a.values[both] - b.values[both]) <= TOL)
    for m, x, y in zip(b.measures, a.aggregates, b.aggregates):
        assert (np.isnan(x) and np.isnan(y)) or abs(x - y) <= TOL, (str(m), x, y)


def _both(spark, run, qrels, measures, policy, **kw):
    run_df, qrels_df = _frames(spark, run, qrels)
    got = __import__("ranklens.spark", fromlist=["evaluate"]).evaluate(
        run_df, qrels_df, measures, policy=policy, warn=False, **kw
    )
    want = Evaluator(measures, qrels, policy=policy)(run, warn=False)
    return got, want


# ------------------------------------------------------------------------------------------ MovieLens


@pytest.mark.parametrize(
    "options",
    [
        dict(train="train.csv", items="items.csv", exclude_seen=True),
        dict(train="train.csv", exclude_seen=True, empty="skip"),
        dict(train="train.csv", items="items.csv", empty="zero"),
    ],
    ids=["train-items-exclude", "exclude-empty-skip", "items-empty-zero"],
)
def test_movielens_matches_the_engine(spark, options):
    run, qrels = _movielens()
    policy = EvalPolicy(**{k: str(EXAMPLE / v) if k in ("train", "items") else v for k, v in options.items()})
    got, want = _both(spark, run, qrels, PER_LIST + SYSTEM, policy)
    _assert_same(got, want)
    assert len(want.system) == len(SYSTEM)
    if options.get("exclude_seen"):
        assert any(n.startswith("exclude-seen: dropped 1,210 of 4,000") for n in got.notes)
    # the per-query DataFrame holds the same values
    pq = {(r["query_id"], r["measure"]): r["value"] for r in got.per_query.collect()}
    j = [str(m) for m in want.measures].index("Novelty@10")
    assert all(abs(pq[(q, "Novelty@10")] - want.values[i, j]) <= TOL for i, q in enumerate(want.query_ids))
    got.unpersist()


def test_movielens_aggregate_and_buckets(spark):
    run, qrels = _movielens()
    policy = EvalPolicy(train=str(EXAMPLE / "train.csv"), items=str(EXAMPLE / "items.csv"), exclude_seen=True,
                        aggregate="median")
    measures = ["Novelty@10", "ILD@10", "ARP@10", "Coverage@10", "Gini@10", "nDCG@10"]
    for buckets in (1, 7):
        got, want = _both(spark, run, qrels, measures, policy, buckets=buckets)
        _assert_same(got, want)


# ------------------------------------------------------------------------------------------ random data


def _random(seed: int):
    """Users with lists of varying length (ties in the scores), items absent from the training data and from the
    catalog, users absent from the training data, graded judgments (some users without a relevant item)."""
    rng = np.random.default_rng(seed)
    items = [f"i{j}" for j in range(30)]
    run_rows, qrels_rows, train_rows = [], [], []
    for u in range(int(rng.integers(15, 40))):
        user = f"u{u}"
        k = int(rng.integers(1, 15))
        for item, score in zip(rng.choice(items, k, replace=False), rng.integers(0, 6, k).astype(float)):
            run_rows.append((user, str(item), float(score)))
        for item in rng.choice(items, int(rng.integers(1, 8)), replace=False):
            qrels_rows.append((user, str(item), int(rng.integers(0, 4))))
        if rng.random() < 0.8:
            for item in rng.choice(items[:-4], int(rng.integers(1, 10)), replace=False):  # i26..i29: never trained
                train_rows.append((user, str(item)))
    train_rows.append(("t_only", "i0"))
    catalog = pd.DataFrame({
        "item": items[2:-2],  # i0, i1, i28, i29: not in the catalog
        "genre": [f"g{int(rng.integers(0, 4))}" for _ in items[2:-2]],
        "f1": rng.integers(0, 3, len(items) - 4).astype(float),
        "f2": rng.random(len(items) - 4),
    })
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    train = pd.DataFrame(train_rows, columns=["user", "item"])
    return run, qrels, train, catalog


RANDOM_MEASURES = [
    "Novelty@5", "ARP@5", "ILD(on=features)@5", "ILD(on=category)@5", "ILD(on=cooccurrence)@5",
    "Serendipity(rel=2)@5", "Serendipity(rel=2,sim=features)@5", "F1(rel=2)@5", "FallOut(rel=2)@5", "AUC(rel=2)",
    "P(ties=input)@3", "AP", "Coverage@5", "EntropyCoverage@5", "Gini@5", "Personalization@5", "Gini@2",
    "AUC(pooled=true,rel=2)",
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "options",
    [dict(exclude_seen=True), dict(exclude_seen=True, empty="skip", missing="zero"), dict(empty="one")],
    ids=["exclude", "exclude-skip-missing-zero", "empty-one"],
)
def test_random_data_matches_the_engine(spark, seed, options):
    run, qrels, train, catalog = _random(seed)
    columns = {"item": "item", "genre": "category", "f1": "feature", "f2": "feature"}
    policy = EvalPolicy(train=train, items=catalog, items_columns=columns, **options)
    got, want = _both(spark, run, qrels, RANDOM_MEASURES, policy, buckets=3, check_duplicates=False)
    _assert_same(got, want)
    assert any("not in the training data" in n for n in want.notes)  # the summed recommender notes are covered


def test_random_data_without_side_tables(spark):
    # Personalization, EntropyCoverage, F1 and the pooled AUC need no side table
    run, qrels, _, _ = _random(5)
    measures = ["Personalization@4", "EntropyCoverage@4", "F1@4", "AUC(pooled=true)", "AUC", "nDCG@4"]
    got, want = _both(spark, run, qrels, measures, EvalPolicy(), buckets=4)
    _assert_same(got, want)


def test_sql_path_names_the_arrow_path(spark):
    run, qrels, train, _ = _random(3)
    run_df, qrels_df = _frames(spark, run, qrels)
    from ranklens.spark import evaluate

    with pytest.raises(MeasureError, match="path='arrow'"):
        evaluate(run_df, qrels_df, ["nDCG@5"], policy=EvalPolicy(train=train, exclude_seen=True), path="sql")
    with pytest.raises(MeasureError, match="path='arrow'"):
        evaluate(run_df, qrels_df, ["Personalization@5"], path="sql")


# ------------------------------------------------------------------------------------------ the CLI


def _cli(*args: str):
    result = CliRunner().invoke(cli, ["eval", *args])
    assert result.exit_code == 0, result.output
    return result


def test_cli_tsv_byte_for_byte_with_train_and_exclude_seen(spark, tmp_path):
    run, qrels = _movielens()
    (tmp_path / "recs.run").write_text(
        "".join(f"{q} Q0 {d} {i + 1} {s!r} recs\n" for i, (q, d, s) in enumerate(run.itertuples(index=False)))
    )
    (tmp_path / "test.qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    measures = ["-m", "nDCG@10", "Coverage@10", "Novelty@10", "ILD@10", "Gini@10", "Serendipity(rel=4)@10",
                "Personalization@10", "AUC(pooled=true,rel=4)", "F1(rel=4)@10"]
    side = ["--train", str(EXAMPLE / "train.csv"), "--items", str(EXAMPLE / "items.csv"), "--exclude-seen"]
    base = [str(tmp_path / "test.qrels"), str(tmp_path / "recs.run"), *measures, *side, "-f", "tsv"]
    for extra in ([], ["-q"]):
        memory = _cli(*base, *extra)
        on_spark = _cli(*base, *extra, "--engine", "spark", "--spark-master", "local[2]")
        assert memory.stdout.count("\n") >= 9
        assert on_spark.stdout == memory.stdout
        assert on_spark.stderr == memory.stderr
    assert "exclude-seen: dropped 1,210 of 4,000" in memory.stderr


def test_training_statistics_are_computed_once_for_every_bucket():
    # what the buckets receive with the side tables: the similarity / history / unit vectors the measures use
    from ranklens.spark.core import train_statistics

    run, qrels, train, catalog = _random(4)
    columns = {"item": "item", "genre": "category", "f1": "feature", "f2": "feature"}
    ev = Evaluator(["Serendipity@5", "ILD(on=features)@5"], qrels, train=train, items=catalog, items_columns=columns)
    assert len(train_statistics(ev)) >= 2
    assert train_statistics(Evaluator(["Novelty@5"], qrels, train=train)) == {}
