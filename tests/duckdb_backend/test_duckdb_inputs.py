"""``--engine duckdb`` refuses and accepts exactly what the in-memory engine does: the reliability review's
corpus and the fixed fuzz sample of ``tests/spark/test_inputs.py`` (TREC, CSV, JSON Lines, gzip and Parquet;
Parquet is read by DuckDB itself, and a file it refuses is re-read by the data layer for the exact message)
give the same exit status, the same output byte for byte and the same one-line message on both engines."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("duckdb")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spark"))
import test_inputs as corpus  # noqa: E402


def _same_outcome(qrels: str, run: str) -> tuple[int, str]:
    memory = corpus._run(["eval", qrels, run, *corpus.MEASURES, "--no-stream"])
    duck = corpus._run(["eval", qrels, run, *corpus.MEASURES, "--engine", "duckdb"])
    assert duck == memory, f"\nmemory: {memory}\nduckdb: {duck}"
    code, out, err = memory
    assert code in (0, 2) and "Traceback" not in err
    return code, err


def test_the_review_corpus_gives_the_same_outcome_on_both_engines(tmp_path: Path) -> None:
    outcomes: dict[str, tuple[int, str]] = {}
    for case in corpus.REVIEW_CASES:
        qrels, run = corpus._write(tmp_path, case)
        if case[0] == "missing_file":
            Path(run).unlink()
        outcomes[case[0]] = _same_outcome(qrels, run)
    assert outcomes["pq_null_query_id"][0] == 2 and "r.parquet:1:" in outcomes["pq_null_query_id"][1]
    assert outcomes["label_huge"][0] == 2 and "q.qrels:1:" in outcomes["label_huge"][1]


def test_the_fuzz_sample_gives_the_same_outcome_on_both_engines(tmp_path: Path) -> None:
    codes = [_same_outcome(*corpus._write(tmp_path, case))[0] for case in corpus._fuzz_cases()]
    assert codes.count(2) > 40 and codes.count(0) > 10  # (both outcomes are exercised)


@pytest.mark.parametrize(
    ("column", "values", "pattern"),
    [
        ("score", pa.array([1.0, float("nan"), 2.0]), r"r\.parquet:2: "),
        ("query_id", pa.array(["q1", None, "q1"]), r"r\.parquet:2: "),
        ("doc_id", pa.array(["a", "b", "a"]), r"r\.parquet:3: document 'a' appears twice for query 'q1'"),
    ],
)
def test_a_parquet_run_duckdb_refuses_is_said_with_the_data_layers_message(tmp_path: Path, column: str, values: pa.Array, pattern: str) -> None:
    import re

    table = {"query_id": pa.array(["q1", "q1", "q1"]), "doc_id": pa.array(["a", "b", "c"]), "score": pa.array([3.0, 2.0, 1.0])}
    table[column] = values
    pq.write_table(pa.table(table), tmp_path / "r.parquet")
    (tmp_path / "q.qrels").write_text("q1 0 a 1\n")
    code, err = _same_outcome(str(tmp_path / "q.qrels"), str(tmp_path / "r.parquet"))
    assert code == 2 and re.search(pattern, err), err


def test_nan_is_found_even_where_parquet_statistics_leave_it_out(tmp_path: Path) -> None:
    # a row group whose min/max statistics say [1, 3]: DuckDB prunes isnan() with them; the check does not
    import duckdb

    from ranklens.duckdb.engine import check_inputs
    from ranklens.duckdb.inputs import read_input
    from ranklens.duckdb.runtime import connect
    from ranklens.engine.policy import EvalPolicy
    from ranklens.errors import FormatError

    pq.write_table(pa.table({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0, float("nan"), 3.0]}), tmp_path / "r.parquet")
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]}), tmp_path / "q.parquet")
    con = connect()
    run = read_input(con, str(tmp_path / "r.parquet"), "run", EvalPolicy(), "run_0")
    qrels = read_input(con, str(tmp_path / "q.parquet"), "qrels", EvalPolicy(), "qrels_0")
    run.reread = None  # (DuckDB's own finding, not the data layer's)
    with pytest.raises(FormatError, match="score is NaN"):
        check_inputs(con, run, qrels, EvalPolicy())
    assert isinstance(con, duckdb.DuckDBPyConnection)


def test_a_duplicate_below_every_cutoff_is_refused_as_in_memory(tmp_path: Path) -> None:
    # the measures look 2 deep; the duplicate is at ranks 5 and 6 of 6: the checks see the whole run
    docs = ["a", "b", "c", "d", "e", "e"]
    pq.write_table(pa.table({"query_id": ["q1"] * 6, "doc_id": docs, "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}), tmp_path / "r.parquet")
    (tmp_path / "q.qrels").write_text("q1 0 a 1\n")
    args = [str(tmp_path / "q.qrels"), str(tmp_path / "r.parquet"), "-m", "nDCG@2", "P@1"]
    memory = corpus._run(["eval", *args, "--no-stream"])
    duck = corpus._run(["eval", *args, "--engine", "duckdb"])
    assert duck == memory and memory[0] == 2
    assert "r.parquet:6: document 'e' appears twice for query 'q1'" in memory[2]


def test_two_pairs_of_one_hash_are_told_apart_from_a_duplicate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the checks count distinct hashes; a key under which every pair of a query collides makes them suspect
    # duplicates everywhere: the exact query finds none and the evaluation goes on, with the reference's values
    import ranklens.duckdb
    import ranklens.duckdb.engine
    from ranklens.engine.evaluator import Evaluator

    monkeypatch.setattr(ranklens.duckdb.engine, "PAIR_KEY", "hash(query_id)")
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 1.0]}), tmp_path / "r.parquet")
    pq.write_table(pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": pa.array([1, 2], pa.int32())}), tmp_path / "q.parquet")
    res = ranklens.duckdb.evaluate(str(tmp_path / "r.parquet"), str(tmp_path / "q.parquet"), ["nDCG@2"], warn=False)
    ref = Evaluator(["nDCG@2"], {"q1": {"a": 1, "b": 2}})({"q1": {"a": 1.0, "b": 2.0}, "q2": {"a": 1.0}}, warn=False)
    assert res.per_query("nDCG@2") == pytest.approx(ref.per_query("nDCG@2"), abs=1e-12)
    pq.write_table(pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "a"], "score": [1.0, 2.0]}), tmp_path / "r.parquet")
    with pytest.raises(ranklens.errors.DuplicateError, match="document 'a' appears twice for query 'q1'"):
        ranklens.duckdb.evaluate(str(tmp_path / "r.parquet"), str(tmp_path / "q.parquet"), ["nDCG@2"], warn=False)
