"""The one SQL formulation: each dialect's text, transpiled back by sqlglot and executed on DuckDB, gives the
reference engine's values (the Evaluator) to 1e-12 per query and for the mean, on generated collections
under every policy the formulation declares; what it cannot express is declined with a reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import sql_cases  # noqa: E402

duckdb = pytest.importorskip("duckdb")
sqlglot = pytest.importorskip("sqlglot")

from ranklens.engine.evaluator import Evaluator  # noqa: E402
from ranklens.engine.policy import EvalPolicy  # noqa: E402
from ranklens.measures import parse_many  # noqa: E402
from ranklens.sql import DIALECTS, measures_declined, policy_declined, to_dialect, values_sql  # noqa: E402


def _connection(qrels: dict, run: dict):
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TABLE run_t (query_id VARCHAR, doc_id VARCHAR, score DOUBLE)")
    con.execute("CREATE TABLE qrels_t (query_id VARCHAR, doc_id VARCHAR, relevance INTEGER)")
    con.executemany("INSERT INTO run_t VALUES (?, ?, ?)", sql_cases.rows(run))
    con.executemany("INSERT INTO qrels_t VALUES (?, ?, ?)", sql_cases.rows(qrels))
    return con


def _check(rows: list, res, ms) -> None:
    expect = {(q, str(m)): res.per_query(m)[q] for m in ms for q in res.query_ids}
    expect.update({("all", str(m)): res[m] for m in ms})
    got = {(q, m): v for q, m, v in rows}
    assert len(rows) == len(got) == len(expect)
    assert got.keys() == expect.keys()
    for key, value in expect.items():
        assert got[key] == pytest.approx(value, abs=1e-12, rel=0), key


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("policy", sql_cases.POLICIES, ids=lambda p: repr(p.options() | {"rel": p.rel_level}))
@pytest.mark.parametrize("top", ["window", "aggregate"])
def test_the_formulation_executed_on_duckdb_equals_the_reference(seed: int, policy: EvalPolicy, top: str) -> None:
    qrels, run = sql_cases.collection(seed)
    ms = sql_cases.measures(policy)
    res = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    con = _connection(qrels, run)
    text = values_sql(ms, policy, run_table="run_t", qrels_table="qrels_t", top=top)
    # (every row ranked: the aggregate form ranks and counts in one window, except under -J)
    assert ("ORDER BY rnk ROWS BETWEEN" in text) is (top == "window" or policy.judged_only)  # (the second sort)
    _check(con.execute(text).fetchall(), res, ms)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "policy", [EvalPolicy(), EvalPolicy(missing="zero", judged_only=True, max_docs=6), EvalPolicy(negative="zero", rel_level=2)],
    ids=["default", "zero-J-M", "negzero-l2"],
)
def test_every_dialect_transpiled_back_and_executed_on_duckdb_equals_the_reference(dialect: str, policy: EvalPolicy) -> None:
    qrels, run = sql_cases.collection(DIALECTS.index(dialect))
    ms = sql_cases.measures(policy)
    res = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    con = _connection(qrels, run)
    written = to_dialect(values_sql(ms, policy, run_table="run_t", qrels_table="qrels_t"), dialect)
    back = sqlglot.transpile(written, read=dialect, write="duckdb")[0]
    _check(con.execute(back).fetchall(), res, ms)


def test_ties_are_broken_by_document_id_descending_bytewise() -> None:
    # d10 > d1 > d09 bytewise; only d09 is relevant: at rank 3 → RR 1/3 (ascending would give 1)
    qrels, run = {"q": {"d09": 1}}, {"q": {"d1": 1.0, "d10": 1.0, "d09": 1.0}}
    con = _connection(qrels, run)
    rows = con.execute(values_sql(parse_many(["RR"]), run_table="run_t", qrels_table="qrels_t")).fetchall()
    assert sorted(rows) == [("all", "RR", 1 / 3), ("q", "RR", 1 / 3)]


def test_a_literal_is_never_a_decimal() -> None:
    text = values_sql(parse_many(["nDCG(gain=exp)@10", "P@5", "AP", "RR"]))
    for dialect in DIALECTS:
        written = to_dialect(text, dialect, pretty=False)
        decimals = [t for t in sqlglot.tokenize(written, read=dialect) if t.token_type.name == "NUMBER" and "." in t.text]
        assert decimals == [], dialect


@pytest.mark.parametrize(
    ("measure", "reason"),
    [
        ("ERR@10", "ERR@10: the SQL formulation expresses nDCG, DCG, P, R, AP, RR, Success, Rprec, Judged only"),
        ("nDCG(ties=average)@10", "nDCG(ties=average)@10: ties=average; the SQL formulation expresses ties=trec"),
        ("nDCG(ideal=local)@10", "nDCG(ideal=local)@10: ideal=local; the SQL formulation expresses ideal=global"),
        ("nDCG(agg=median)@10", "nDCG(agg=median)@10: agg=median; the SQL formulation expresses agg=mean"),
    ],
)
def test_what_it_cannot_express_is_declined_with_a_reason(measure: str, reason: str) -> None:
    assert measures_declined(parse_many([measure])) == reason


def test_a_policy_it_does_not_express_is_declined() -> None:
    assert policy_declined(EvalPolicy(missing="zero", negative="zero", judged_only=True, max_docs=3)) is None
    assert policy_declined(EvalPolicy(empty="skip")) == "policy empty='skip': the SQL formulation takes empty=None"


CUT_MEASURES = ["nDCG@5", "nDCG(gain=exp)@10", "DCG@3", "P@5", "R@10", "AP@5", "RR@3", "Success@3", "Judged@5", "Judged@20"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", sql_cases.POLICIES, ids=lambda p: repr(p.options() | {"rel": p.rel_level}))
@pytest.mark.parametrize("top", ["window", "aggregate"])
def test_only_cutoffs_keep_a_top_k_per_query_with_the_same_values(seed: int, policy: EvalPolicy, top: str) -> None:
    qrels, run = sql_cases.collection(50 + seed)
    ms = parse_many(CUT_MEASURES, rel_level=policy.rel_level)
    text = values_sql(ms, policy, run_table="run_t", qrels_table="qrels_t", top=top)
    depth = 20 if policy.max_docs is None else min(20, policy.max_docs)
    assert (f"WHERE rank0 <= {depth})" in text) is (not policy.judged_only)  # (-J ranks again after dropping: no cut)
    assert (f"MAX(score, {depth})" in text) is (top == "aggregate" and not policy.judged_only)  # (the k-th best score)
    assert ("MAX(label, 10)" in text) is (top == "aggregate")  # (the ideal's best labels: nDCG's largest cutoff)
    res = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    _check(_connection(qrels, run).execute(text).fetchall(), res, ms)


def test_the_aggregate_top_orders_ties_and_signed_zeros_as_the_window() -> None:
    # -0.0 and 0.0 tie (trec_eval compares them equal): ids descending bytewise, d10 > d1 > d09; only d09 relevant
    qrels = {"q": {"d09": 1}}
    run = {"q": {"d1": 0.0, "d10": -0.0, "d09": 0.0, "e": 1.0, "f": float("-inf")}}
    con = _connection(qrels, run)
    for top in ("window", "aggregate"):
        rows = con.execute(values_sql(parse_many(["RR@5", "P@4"]), run_table="run_t", qrels_table="qrels_t", top=top)).fetchall()
        assert sorted(rows) == [("all", "P@4", 0.25), ("all", "RR@5", 0.25), ("q", "P@4", 0.25), ("q", "RR@5", 0.25)], top
