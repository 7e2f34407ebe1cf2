"""Smoke test of the DuckDB benchmark (issue 30) on tiny data, no timing asserted: the streamed generator
writes the scheme it says (every query's documents unique, about half judged, the same bytes for the same
seed, datasets of the parts asked for), and the benchmark's contenders, each a fresh process, agree (it
exits otherwise) and print their CPU and peak memory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
pq = pytest.importorskip("pyarrow.parquet")
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import duckdb_bench, duckdb_data  # noqa: E402


def test_the_streamed_inputs_follow_the_scheme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(duckdb_data, "CHUNK_ROWS", 1000)  # (several chunks, several parts)
    done = duckdb_data.write_inputs(tmp_path / "a", 5000, docs_per_query=50, parts=3)
    again = duckdb_data.write_inputs(tmp_path / "b", 5000, docs_per_query=50, parts=3)
    run = pq.ParquetDataset(done["run"]).read().to_pylist()
    qrels = pq.ParquetDataset(done["qrels"]).read().to_pylist()
    assert len(run) == done["run_rows"] == 5000
    assert len({(r["query_id"], r["doc_id"]) for r in run}) == 5000  # (no duplicate pair)
    assert len({r["query_id"] for r in run}) == 100
    assert 0.4 < len(qrels) / len(run) < 0.6 and {r["relevance"] for r in qrels} == {0, 1, 2, 3}
    assert {(r["query_id"], r["doc_id"]) for r in qrels} <= {(r["query_id"], r["doc_id"]) for r in run}
    assert sorted(p.name for p in Path(done["run"]).iterdir()) == ["part-000.parquet", "part-001.parquet", "part-002.parquet"]
    assert pq.ParquetDataset(again["run"]).read().equals(pq.ParquetDataset(done["run"]).read())
    assert done["python_bytes"] > 100 * 7500  # (a str alone is 49+ bytes in CPython)


def test_the_contenders_agree_on_a_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    duckdb_bench.main(["--rows", "20000", "--repeat", "1", "--data-dir", str(tmp_path), "--parts", "2",
                       "--only", "DuckDB", "duckdb", "--memory-limit", "256MB"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "contender" not in line]
    assert [r.split("|")[1].strip() for r in rows] == [duckdb_bench.HAND, duckdb_bench.ENGINE]
    assert "(target ≤ 1.2×)" in out
