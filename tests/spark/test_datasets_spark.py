"""Parquet datasets on ``--engine spark``: a directory of hive-partitioned parts (read by Spark's own reader)
and a glob (read by the data layer's dataset reader, ``ranklens.data.datasets``) print the in-memory engine's
per-query values byte for byte."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from ranklens.cli.main import cli

RUN = [("q1", "a", 3.0), ("q1", "b", 2.0), ("q1", "c", 2.0), ("q2", "a", 1.0), ("q2", "d", 0.5), ("q3", "e", 1.0)]
QRELS = [("q1", "b", 1), ("q1", "c", 2), ("q2", "d", 1), ("q3", "x", 1)]


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


def test_a_dataset_on_spark_prints_the_in_memory_values(spark, tmp_path: Path) -> None:
    pq.write_table(pa.table({"query_id": [r[0] for r in QRELS], "doc_id": [r[1] for r in QRELS],
                             "relevance": pa.array([r[2] for r in QRELS], pa.int32())}), tmp_path / "q.parquet")
    for i, q in enumerate(["q1", "q2", "q3"]):
        rows = [r for r in RUN if r[0] == q]
        part = tmp_path / "runs" / f"bucket={i % 2}"
        part.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                                 "score": [r[2] for r in rows]}), part / f"part-{i}.parquet")
    qrels = str(tmp_path / "q.parquet")
    args = ["-m", "nDCG@10", "AP", "P@2", "--per-query", "-f", "tsv"]
    for dataset in (str(tmp_path / "runs"), str(tmp_path / "runs" / "bucket=*" / "*.parquet")):
        memory = _run("eval", qrels, f"r={dataset}", *args)
        assert memory[0] == 0 and "AP\tq1\t" in memory[1]
        assert _run("eval", qrels, f"r={dataset}", *args, "--engine", "spark") == memory
