"""The Spark text of ``ranklens sql`` runs on Spark itself and returns the reference engine's values to
1e-12 (Spark reads ``1.0`` as a DECIMAL: the formulation writes every number as a DOUBLE)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sql"))
import sql_cases  # noqa: E402

pytest.importorskip("sqlglot")

from ranklens.engine.evaluator import Evaluator  # noqa: E402
from ranklens.engine.policy import EvalPolicy  # noqa: E402
from ranklens.measures import parse_many  # noqa: E402
from ranklens.sql import to_dialect, values_sql  # noqa: E402

MEASURES = ["nDCG@10", "nDCG(gain=exp)@5", "DCG@3", "AP", "P@5", "R@10", "RR", "Success@3", "Rprec", "Judged@10"]


@pytest.mark.parametrize("policy", [EvalPolicy(missing="zero", judged_only=True), EvalPolicy(max_docs=7, rel_level=2)], ids=["zero-J", "M-l2"])
def test_the_spark_text_runs_on_spark_and_equals_the_reference(spark, policy: EvalPolicy) -> None:
    qrels, run = sql_cases.collection(7)
    spark.createDataFrame(sql_cases.rows(run), "query_id string, doc_id string, score double").createOrReplaceTempView("sql_run")
    spark.createDataFrame(sql_cases.rows(qrels), "query_id string, doc_id string, relevance int").createOrReplaceTempView("sql_qrels")
    ms = parse_many(MEASURES, rel_level=policy.rel_level)
    res = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    text = to_dialect(values_sql(ms, policy, run_table="sql_run", qrels_table="sql_qrels"), "spark")
    got = {(r["query_id"], r["measure"]): r["value"] for r in spark.sql(text).collect()}
    want = {(q, str(m)): res.per_query(m)[q] for m in ms for q in res.query_ids} | {("all", str(m)): res[m] for m in ms}
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert isinstance(got[key], float), key  # (a DECIMAL would come back as decimal.Decimal)
        assert got[key] == pytest.approx(value, abs=1e-12, rel=0), key
