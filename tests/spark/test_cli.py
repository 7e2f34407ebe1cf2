"""``ranklens eval --engine spark``: the in-memory engine's output, byte for byte (-f tsv), on TREC and Parquet."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from ranklens.cli.main import cli

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq2 0 y 3\nq3 0 z 1\n"
RUN = "q1 Q0 a 1 3.0 bm25\nq1 Q0 b 2 2.0 bm25\nq1 Q0 c 3 2.0 bm25\nq1 Q0 d 4 1.0 bm25\nq2 Q0 y 1 0.5 bm25\nq9 Q0 a 1 1 bm25\n"
ARGS = ["-m", "nDCG@2", "AP", "P@5", "RR", "ERR@10", "-f", "tsv", "-q"]


def _out(*args: str) -> str:
    result = CliRunner().invoke(cli, ["eval", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_tsv_byte_for_byte_on_trec_and_parquet(spark, tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    memory = _out(str(qrels), str(run), *ARGS)
    assert memory.count("\n") > 10
    assert _out(str(qrels), str(run), *ARGS, "--engine", "spark", "--spark-master", "local[2]") == memory
    rows = [line.split() for line in RUN.splitlines()]
    pq.write_table(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                             "score": [float(r[4]) for r in rows]}), tmp_path / "run.parquet")
    judged = [line.split() for line in QRELS.splitlines()]
    pq.write_table(pa.table({"query_id": [r[0] for r in judged], "doc_id": [r[2] for r in judged],
                             "relevance": [int(r[3]) for r in judged]}), tmp_path / "qrels.parquet")
    pargs = [str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"), *ARGS]
    assert _out(*pargs, "--engine", "spark") == _out(*pargs)


def test_without_pyspark_one_line_hint(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real(name, *a))
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "q"), str(tmp_path / "r"), "--engine", "spark"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "--engine spark needs pyspark: pip install 'ranklens[spark]'"
