"""The scan plan (``ranklens.spark.evaluate(paths, plan="scan")``, :mod:`ranklens.spark.scan`): a query whose rows
lie in several of the scan's tasks is never evaluated in pieces. The oracle is the in-memory engine (values to
1e-12, the same notes); the scan's own counters (tasks, queries deferred to the driver, scans) say which way the
plan took, so each test asserts that the case it builds is the case that ran."""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ranklens
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import DuplicateError

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "nDCG(ties=average)@3", "P(ties=input)@2"]


def _collection(queries: int = 60, per: int = 12, seed: int = 3) -> tuple[list[tuple], list[tuple]]:
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(queries):
        docs = rng.choice(40, size=per, replace=False)
        for d in docs:
            run.append((f"q{q}", f"d{d}", float(np.round(rng.random(), 1))))  # (ties)
            if rng.random() < 0.5:
                qrels.append((f"q{q}", f"d{d}", int(rng.integers(0, 3))))
    qrels += [("qx1", "a", 1), ("qx2", "b", 2)]  # (queries only in the qrels)
    run += [("qr1", "a", 1.0)]  # (a query only in the run)
    return run, qrels


def _write(path, rows, value: str, group: int, kind=None) -> str:
    pq.write_table(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                             value: pa.array([r[2] for r in rows], kind or pa.float64())}), path, row_group_size=group)
    return str(path)


def _reference(run, qrels, measures, policy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = ranklens.Qrels.from_arrays([r[0] for r in qrels], [r[1] for r in qrels], np.array([r[2] for r in qrels]))
        r = ranklens.Run.from_arrays(pa.array([r[0] for r in run]), pa.array([r[1] for r in run]), np.array([r[2] for r in run]))
        return ranklens.Evaluator(measures, q, policy=policy)(r)


def _same(ev, ref):
    res = ev.results
    assert res.query_ids == ref.query_ids
    np.testing.assert_allclose(res.values, ref.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.aggregates, ref.aggregates, rtol=0, atol=1e-12)
    assert res.notes == ref.notes
    rows = {(r["query_id"], r["measure"]): r["value"] for r in ev.per_query.collect()}
    assert len(rows) == len(ref.query_ids) * len(ref.measures)
    ev.unpersist()


@pytest.mark.parametrize("policy", [EvalPolicy(), EvalPolicy(missing="zero")], ids=["skip", "zero"])
def test_a_run_not_grouped_by_query_gives_the_in_memory_values(spark, tmp_path, policy):
    """Queries interleaved across row groups (every query in most tasks): the first scan finds queries evaluated
    by one task while another holds rows of them, the second defers them to the driver."""
    from ranklens.spark import evaluate

    run, qrels = _collection()
    shuffled = [run[i] for i in np.random.default_rng(7).permutation(len(run))]
    run_path = _write(tmp_path / "run.parquet", shuffled, "score", 50)
    qrels_path = _write(tmp_path / "qrels.parquet", qrels, "relevance", 40, pa.int32())
    ev = evaluate(run_path, qrels_path, MEASURES, policy=policy, plan="scan", warn=False)
    assert ev.plan == "scan" and ev.scan_counts is not None
    assert ev.scan_counts["scans"] == 2 and ev.scan_counts["deferred_queries"] > 50
    _same(ev, _reference(shuffled, qrels, MEASURES, policy))


def test_a_grouped_run_defers_only_the_queries_at_the_tasks_ends(spark, tmp_path):
    """Row groups of 7 rows split 12-row queries: each task defers its first and last query; one scan."""
    from ranklens.spark import evaluate

    run, qrels = _collection()
    run_path = _write(tmp_path / "run.parquet", run, "score", 7)
    qrels_path = _write(tmp_path / "qrels.parquet", qrels, "relevance", 5, pa.int32())
    ev = evaluate(run_path, qrels_path, MEASURES, plan="scan", warn=False)
    assert ev.plan == "scan" and ev.scan_counts is not None
    tasks = ev.scan_counts["tasks"]
    assert ev.scan_counts["scans"] == 1 and 0 < ev.scan_counts["deferred_queries"] <= 2 * tasks < 61
    _same(ev, _reference(run, qrels, MEASURES, EvalPolicy()))


def test_beyond_the_repair_limit_the_shuffle_plan_evaluates(spark, tmp_path, monkeypatch):
    from ranklens.spark import evaluate, scan

    monkeypatch.setattr(scan, "REPAIR_LIMIT", 3)
    run, qrels = _collection()
    shuffled = [run[i] for i in np.random.default_rng(7).permutation(len(run))]
    run_path = _write(tmp_path / "run.parquet", shuffled, "score", 50)
    qrels_path = _write(tmp_path / "qrels.parquet", qrels, "relevance", 40, pa.int32())
    ev = evaluate(run_path, qrels_path, ["nDCG@10", "AP"], warn=False)
    assert ev.plan == "shuffle" and "not grouped by query" in ev.plan_note
    _same(ev, _reference(shuffled, qrels, ["nDCG@10", "AP"], EvalPolicy()))


def test_a_duplicate_split_across_tasks_is_refused_with_its_key(spark, tmp_path):
    """A run's duplicated pair in two row groups, a qrels-only query's duplicated judgement across two qrels
    row groups: the same DuplicateError as the shuffle plan's (its wording)."""
    from ranklens.spark import evaluate

    run, qrels = _collection(queries=20)
    q0 = [r for r in run if r[0] == "q0"]
    twice = q0 + [r for r in run if r[0] != "q0"] + [q0[0]]  # (first and last row: different tasks)
    run_path = _write(tmp_path / "run.parquet", twice, "score", 10)
    qrels_path = _write(tmp_path / "qrels.parquet", qrels, "relevance", 10, pa.int32())
    with pytest.raises(DuplicateError, match=f"document '{q0[0][1]}' appears twice for query 'q0'"):
        evaluate(run_path, qrels_path, ["AP"], plan="scan")
    run_path = _write(tmp_path / "run2.parquet", run, "score", 10)
    judged = [("qx0", "a", 1)] + qrels + [("qx0", "a", 0)]
    qrels_path = _write(tmp_path / "qrels2.parquet", judged, "relevance", 10, pa.int32())
    with pytest.raises(DuplicateError, match="document 'a' is judged twice for query 'qx0'"):
        evaluate(run_path, qrels_path, ["AP"], plan="scan")


def test_a_dataset_directory_and_a_glob_are_scanned(spark, tmp_path):
    from ranklens.spark import evaluate

    run, qrels = _collection(queries=30)
    for i in range(3):
        part = tmp_path / "runs" / f"day={i}"
        part.mkdir(parents=True)
        _write(part / "part-0.parquet", run[i * len(run) // 3:(i + 1) * len(run) // 3], "score", 9)
    (tmp_path / "runs" / "_SUCCESS").write_text("")
    qrels_path = _write(tmp_path / "qrels.parquet", qrels, "relevance", 11, pa.int32())
    ref = _reference(run, qrels, MEASURES, EvalPolicy())
    for dataset in (tmp_path / "runs", tmp_path / "runs" / "day=*" / "*.parquet"):
        ev = evaluate(str(dataset), qrels_path, MEASURES, warn=False)
        assert ev.plan == "scan", ev.plan_note
        _same(ev, ref)
