"""Issue 22 item 12: Spark's own failures on ``--engine spark`` are one line saying what is missing and how to
provide it (exit 2), never a Py4J/Java stack trace; and what only Spark reads (a directory of Parquet parts, a
URI) is checked by the data layer's rules with messages naming the path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 3\n"
RUN = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q1", "d3", 1.0), ("q2", "d4", 2.0), ("q2", "d1", 1.5), ("q2", "d7", 1.0)]
ENTRY = "import sys; from ranklens.cli.entry import main; sys.argv[0] = 'ranklens'; main()"


def _files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "q.qrels").write_text(QRELS)
    (tmp_path / "r.run").write_text("".join(f"{q} Q0 {d} {i} {s} t\n" for i, (q, d, s) in enumerate(RUN, 1)))
    return str(tmp_path / "q.qrels"), str(tmp_path / "r.run")


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", ENTRY, *args], env=env, capture_output=True, text=True, timeout=300)


def _one_line(err: str) -> str:
    assert err.startswith("ranklens: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_yarn_without_the_hadoop_configuration_is_one_line(tmp_path):
    pytest.importorskip("pyspark")
    env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")}
    done = _cli(env, "eval", *_files(tmp_path), "-m", "AP", "--engine", "spark", "--spark-master", "yarn")
    assert done.returncode == 2 and done.stdout == "", done.stderr[-3000:]
    assert "set HADOOP_CONF_DIR (or YARN_CONF_DIR)" in _one_line(done.stderr)


def test_no_java_runtime_is_one_line(tmp_path):
    pytest.importorskip("pyspark")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PATH")}
    env["PATH"] = str(tmp_path / "nothing-here")
    done = _cli(env, "eval", *_files(tmp_path), "-m", "AP", "--engine", "spark")
    assert done.returncode == 2 and done.stdout == "", done.stderr[-3000:]
    assert "needs a Java runtime" in _one_line(done.stderr) and "JAVA_HOME" in done.stderr


def test_an_s3a_path_without_the_connector_is_one_line(spark, tmp_path):
    qrels, _ = _files(tmp_path)
    result = CliRunner().invoke(cli, ["eval", qrels, "s3a://ranklens-test-bucket/runs/r.parquet", "-m", "AP", "--engine", "spark"])
    assert result.exit_code == 2 and result.stdout == "", result.output
    err = _one_line(result.stderr)
    assert err.startswith("ranklens: error: s3a://ranklens-test-bucket/runs/r.parquet: Spark has no S3 connector")
    version = spark.sparkContext._jvm.org.apache.hadoop.util.VersionInfo.getVersion()
    assert f"--packages org.apache.hadoop:hadoop-aws:{version}" in err


def test_a_missing_uri_is_one_line(spark, tmp_path):
    qrels, _ = _files(tmp_path)
    uri = (tmp_path / "absent.parquet").as_uri()
    result = CliRunner().invoke(cli, ["eval", qrels, uri, "-m", "AP", "--engine", "spark"])
    assert result.exit_code == 2, result.output
    assert _one_line(result.stderr) == f"ranklens: error: {uri}: no such file or directory\n"


def _parts(folder: Path, rows: list[tuple[str, str, float]]) -> str:
    folder.mkdir()
    half = len(rows) // 2
    for i, part in enumerate((rows[:half], rows[half:])):
        pq.write_table(pa.table({"query_id": [r[0] for r in part], "doc_id": [r[1] for r in part],
                                 "score": [r[2] for r in part]}), folder / f"part-{i:05d}.parquet")
    return str(folder)


def test_a_parquet_directory_gives_the_numbers_of_the_same_rows_in_memory(spark, tmp_path):
    import ranklens
    from ranklens.spark.files import evaluate_files

    qrels, run = _files(tmp_path)
    measures = ["nDCG@10", "AP", "RR"]
    memory = ranklens.evaluate(qrels, run, measures)
    found = evaluate_files(qrels, [(None, _parts(tmp_path / "t", RUN))], measures).results[0]
    assert found.query_ids == memory.query_ids and found.values.tolist() == memory.values.tolist()


@pytest.mark.parametrize("path", ["arrow", "sql"])
def test_bad_rows_in_a_parquet_directory_are_refused_naming_it(spark, tmp_path, path):
    from ranklens.errors import DuplicateError, FormatError
    from ranklens.spark.files import evaluate_files

    qrels, _ = _files(tmp_path)
    nan = _parts(tmp_path / "nan", [*RUN, ("q2", "d9", float("nan"))])
    with pytest.raises(FormatError) as info:
        evaluate_files(qrels, [(None, nan)], ["AP"], path=path)
    assert str(info.value) == f"{nan}: score is NaN (1 row(s) in all); give every document a number"
    twice = _parts(tmp_path / "twice", [*RUN, ("q1", "d1", 0.5)])
    with pytest.raises(DuplicateError, match=rf"^{twice}: document 'd1' appears twice for query 'q1'"):
        evaluate_files(qrels, [(None, twice)], ["AP"], path=path)
