"""The DuckDB engine equals the reference engine (the Evaluator) to 1e-12 per query, with the same queries,
the same notes and the same options, on generated collections under every policy the SQL formulation
declares, from every kind of input :func:`ranklens.duckdb.evaluate` takes; and what it declines, it declines
with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

duckdb = pytest.importorskip("duckdb")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sql"))
import sql_cases  # noqa: E402

import ranklens.duckdb  # noqa: E402
from ranklens.engine.evaluator import Evaluator  # noqa: E402
from ranklens.engine.policy import EvalPolicy  # noqa: E402
from ranklens.errors import InputError  # noqa: E402

KINDS = ["dict", "arrow", "pandas", "polars", "trec", "parquet", "dataset", "glob", "relation"]


def _tables(qrels: dict, run: dict) -> tuple[pa.Table, pa.Table]:
    r, q = sql_cases.rows(run), sql_cases.rows(qrels)
    return (
        pa.table({"query_id": [x[0] for x in r], "doc_id": [x[1] for x in r], "score": pa.array([x[2] for x in r], pa.float64())}),
        pa.table({"query_id": [x[0] for x in q], "doc_id": [x[1] for x in q], "relevance": pa.array([x[2] for x in q], pa.int32())}),
    )


def _inputs(kind: str, qrels: dict, run: dict, tmp: Path) -> tuple[object, object]:
    run_t, qrels_t = _tables(qrels, run)
    if kind == "dict":
        return run, qrels
    if kind == "arrow":
        return run_t, qrels_t
    if kind == "pandas":
        return run_t.to_pandas(), qrels_t.to_pandas()
    if kind == "polars":
        pl = pytest.importorskip("polars")
        return pl.from_arrow(run_t), pl.from_arrow(qrels_t)
    if kind == "relation":
        con = duckdb.connect()
        return con.from_arrow(run_t), con.from_arrow(qrels_t)
    if kind == "trec":
        (tmp / "r.run").write_text("".join(f"{q} Q0 {d} 0 {s!r} sys\n" for q, d, s in sql_cases.rows(run)))
        (tmp / "q.qrels").write_text("".join(f"{q} 0 {d} {v}\n" for q, d, v in sql_cases.rows(qrels)))
        return str(tmp / "r.run"), str(tmp / "q.qrels")
    pq.write_table(qrels_t, tmp / "q.parquet")
    if kind == "parquet":
        pq.write_table(run_t, tmp / "r.parquet")
        return str(tmp / "r.parquet"), str(tmp / "q.parquet")
    # a hive-partitioned dataset: a part per bucket of queries, the bucket a partition column
    queries = sorted(set(run_t.column("query_id").to_pylist()))
    for i, q in enumerate(queries):
        part = tmp / "runs" / f"bucket={i % 3}"
        part.mkdir(parents=True, exist_ok=True)
        pq.write_table(run_t.filter(pa.compute.equal(run_t.column("query_id"), q)), part / f"part-{i}.parquet")
    return (str(tmp / "runs") if kind == "dataset" else str(tmp / "runs" / "bucket=*" / "*.parquet")), str(tmp / "q.parquet")


def _same(res, ref) -> None:
    assert res.query_ids == ref.query_ids
    assert [str(m) for m in res.measures] == [str(m) for m in ref.measures]
    assert res.notes == ref.notes
    assert res.options == ref.options
    for m in ref.measures:
        got, want = res.per_query(m), ref.per_query(m)
        for q, v in want.items():
            assert got[q] == pytest.approx(v, abs=1e-12, rel=0), (str(m), q)
        assert res[m] == pytest.approx(ref[m], abs=1e-12, rel=0)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("policy", sql_cases.POLICIES, ids=lambda p: repr(p.options() | {"rel": p.rel_level}))
def test_parquet_inputs_equal_the_reference(seed: int, policy: EvalPolicy, tmp_path: Path) -> None:
    qrels, run = sql_cases.collection(seed)
    ms = sql_cases.measures(policy)
    ref = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    r, q = _inputs("parquet", qrels, run, tmp_path)
    _same(ranklens.duckdb.evaluate(r, q, ms, policy=policy, warn=False), ref)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_every_input_kind_equals_the_reference(kind: str, seed: int, tmp_path: Path) -> None:
    policy = sql_cases.POLICIES[seed * 2 % len(sql_cases.POLICIES)]
    qrels, run = sql_cases.collection(100 + seed)
    ms = sql_cases.measures(policy)
    ref = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    r, q = _inputs(kind, qrels, run, tmp_path)
    _same(ranklens.duckdb.evaluate(r, q, ms, policy=policy, warn=False, name="run"), ref)


def test_missing_error_is_the_engines_refusal(tmp_path: Path) -> None:
    qrels, run = {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}
    with pytest.raises(InputError) as ref:
        Evaluator(["AP"], qrels, policy=EvalPolicy(missing="error"))(run, warn=False)
    with pytest.raises(InputError) as got:
        ranklens.duckdb.evaluate(run, qrels, ["AP"], policy=EvalPolicy(missing="error"), warn=False)
    assert str(got.value).split(" not in the run ")[0] == str(ref.value).split(" not in the run ")[0]


def test_negative_error_is_the_engines_refusal() -> None:
    qrels, run = {"q1": {"a": -1, "b": 1}}, {"q1": {"a": 1.0}}
    with pytest.raises(InputError, match=r"negative relevance label -1 \(query 'q1'\); choose a negative-label policy"):
        ranklens.duckdb.evaluate(run, qrels, ["AP"], policy=EvalPolicy(negative="error"), warn=False)


def test_nothing_evaluated_is_an_error_never_nan() -> None:
    with pytest.raises(InputError, match="no query to evaluate"):
        ranklens.duckdb.evaluate({"q9": {"a": 1.0}}, {"q1": {"a": 1}}, ["AP"], warn=False)


@pytest.mark.parametrize(
    ("measures", "policy", "reason"),
    [
        (["ERR@10"], EvalPolicy(), "ERR@10: the SQL formulation expresses nDCG, DCG, P, R, AP, RR, Success, Rprec, Judged only"),
        (["nDCG(ties=average)@5"], EvalPolicy(), "ties=average; the SQL formulation expresses ties=trec"),
        (["AP"], EvalPolicy(aggregate="median"), "AP(agg=median): agg=median; the SQL formulation expresses agg=mean"),
    ],
)
def test_what_it_does_not_express_is_declined_with_the_reason(measures, policy, reason) -> None:
    with pytest.raises(InputError, match="the DuckDB engine declines: .*" + reason.replace("(", r"\(").replace(")", r"\)")):
        ranklens.duckdb.evaluate({"q1": {"a": 1.0}}, {"q1": {"a": 1}}, measures, policy=policy)


CUT_MEASURES = ["nDCG@5", "nDCG(gain=exp)@10", "DCG@3", "P@5", "R@10", "AP@5", "RR@3", "Success@3", "Judged@5", "Judged@20"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", sql_cases.POLICIES, ids=lambda p: repr(p.options() | {"rel": p.rel_level}))
def test_measures_with_cutoffs_only_keep_a_top_k_with_the_same_values_and_notes(seed: int, policy: EvalPolicy, tmp_path: Path) -> None:
    # every measure with a cutoff: the engine ranks only the rows at or above each query's k-th best score (one
    # aggregate), -M's counts from the rows per query; the values, queries and notes (truncated rows included)
    # are the reference's
    from ranklens.measures import parse_many

    qrels, run = sql_cases.collection(200 + seed)
    ms = parse_many(CUT_MEASURES, rel_level=policy.rel_level)
    ref = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    r, q = _inputs("parquet", qrels, run, tmp_path)
    _same(ranklens.duckdb.evaluate(r, q, ms, policy=policy, warn=False), ref)


def test_threads_are_duckdbs_and_change_no_value(monkeypatch: pytest.MonkeyPatch) -> None:
    import ranklens.duckdb.runtime as runtime

    qrels, run = sql_cases.collection(7)
    ms = sql_cases.measures()
    ref = Evaluator(ms, qrels)(run, warn=False)
    seen: list[int] = []
    connect = runtime.connect

    def spy(memory_limit=None, threads=None):
        con = connect(memory_limit, threads)
        seen.append(runtime.run(con, "SELECT current_setting('threads')")[0][0])
        return con

    monkeypatch.setattr("ranklens.duckdb.files.connect", spy)
    _same(ranklens.duckdb.evaluate(run, qrels, ms, threads=1, warn=False, name="run"), ref)
    assert seen == [1]
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InputError, match=f"threads must be a positive whole number; got {bad!r}"):
            ranklens.duckdb.evaluate(run, qrels, ms, threads=bad, warn=False)
