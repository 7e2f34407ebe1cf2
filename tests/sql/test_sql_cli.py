"""``ranklens sql``: the text it prints for each dialect, transpiled back by sqlglot and executed on DuckDB,
returns the reference engine's values (``query_id, measure, value`` and the mean as ``'all'``) to 1e-12;
an unknown dialect, a measure the formulation cannot express or a bad table name: one line, exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.engine.evaluator import Evaluator
from ranklens.engine.policy import EvalPolicy
from ranklens.measures import parse_many

sys.path.insert(0, str(Path(__file__).parent))
import sql_cases  # noqa: E402

duckdb = pytest.importorskip("duckdb")
sqlglot = pytest.importorskip("sqlglot")

MEASURES = ["nDCG@10", "nDCG(gain=exp)@5", "DCG@3", "AP", "P@5", "R@10", "RR", "Success@3", "Rprec", "Judged@10"]


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


def _tables(con, qrels: dict, run: dict) -> None:
    con.execute("CREATE SCHEMA ev")
    con.execute("CREATE TABLE ev.run (query_id VARCHAR, doc_id VARCHAR, score DOUBLE)")
    con.execute("CREATE TABLE ev.qrels (query_id VARCHAR, doc_id VARCHAR, relevance INTEGER)")
    con.executemany("INSERT INTO ev.run VALUES (?, ?, ?)", sql_cases.rows(run))
    con.executemany("INSERT INTO ev.qrels VALUES (?, ?, ?)", sql_cases.rows(qrels))


@pytest.mark.parametrize("dialect", ["duckdb", "spark", "databricks", "bigquery", "snowflake", "postgres", "trino"])
def test_the_printed_query_of_every_dialect_equals_the_reference(dialect: str) -> None:
    qrels, run = sql_cases.collection(20 + len(dialect))
    flags = ["--missing", "zero", "-J"] if len(dialect) % 2 else ["-M", "7", "--rel-level", "2"]
    policy = EvalPolicy(missing="zero", judged_only=True) if len(dialect) % 2 else EvalPolicy(max_docs=7, rel_level=2)
    code, out, err = _run("sql", "-m", *MEASURES, "--dialect", dialect, "--run-table", "ev.run", "--qrels-table", "ev.qrels", *flags)
    assert (code, err) == (0, "") and out.endswith(";\n")
    ms = parse_many(MEASURES, rel_level=policy.rel_level)
    res = Evaluator(ms, qrels, policy=policy)(run, warn=False)
    con = duckdb.connect()
    _tables(con, qrels, run)
    back = sqlglot.transpile(out.rstrip().rstrip(";"), read=dialect, write="duckdb")[0]
    got = {(q, m): v for q, m, v in con.execute(back).fetchall()}
    want = {(q, str(m)): res.per_query(m)[q] for m in ms for q in res.query_ids} | {("all", str(m)): res[m] for m in ms}
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-12, rel=0), key


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "AP", "--dialect", "mysql"], "unknown SQL dialect 'mysql'; choose one of duckdb, spark, databricks, bigquery, snowflake, postgres, trino"),
        (["-m", "ERR@10"], "ERR@10: the SQL formulation expresses nDCG, DCG, P, R, AP, RR, Success, Rprec, Judged only"),
        (["-m", "nDCG(ideal=local)@10"], "nDCG(ideal=local)@10: ideal=local; the SQL formulation expresses ideal=global"),
    ],
)
def test_what_it_cannot_write_is_one_line_naming_what_it_can(args: list[str], message: str) -> None:
    assert _run("sql", *args, "--run-table", "r", "--qrels-table", "q") == (2, "", f"ranklens: error: {message}\n")


def test_a_table_name_is_a_name_not_sql() -> None:
    code, out, err = _run("sql", "-m", "AP", "--run-table", "r; DROP TABLE q", "--qrels-table", "q")
    assert (code, out) == (2, "") and err.startswith("ranklens: error: --run-table must be a table name")


def test_without_sqlglot_one_line_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlglot", None)  # (import sqlglot raises ImportError)
    assert _run("sql", "-m", "AP", "--dialect", "spark", "--run-table", "r", "--qrels-table", "q") == (
        2, "", "ranklens: error: writing SQL for a dialect needs the 'sqlglot' package: pip install 'ranklens[duckdb]'\n"
    )
