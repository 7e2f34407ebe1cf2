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
    memory = _out(*pargs)
    for plan in ("auto", "scan", "shuffle"):  # (auto: these columns are the roles' names, so the scan plan)
        assert _out(*pargs, "--engine", "spark", "--spark-plan", plan) == memory
    wrong = CliRunner().invoke(cli, ["eval", *pargs, "--spark-plan", "scan"])
    assert wrong.exit_code == 2 and "use it with --engine spark" in wrong.stderr


def test_the_command_line_scans_plain_parquet_and_says_so(spark, tmp_path, monkeypatch):
    """``--spark-plan auto`` reads a Parquet file with the role columns by the scan plan (``RANKLENS_DEBUG``
    says it), ``shuffle`` never; the per-query output is the in-memory engine's either way."""
    rows = [line.split() for line in RUN.splitlines()]
    pq.write_table(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                             "score": [float(r[4]) for r in rows]}), tmp_path / "run.parquet", row_group_size=2)
    judged = [line.split() for line in QRELS.splitlines()]
    pq.write_table(pa.table({"query_id": [r[0] for r in judged], "doc_id": [r[2] for r in judged],
                             "relevance": [int(r[3]) for r in judged]}), tmp_path / "qrels.parquet", row_group_size=2)
    pargs = [str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"), *ARGS]
    monkeypatch.setenv("RANKLENS_DEBUG", "1")
    memory = CliRunner().invoke(cli, ["eval", *pargs])
    for plan, scanned in (("auto", True), ("shuffle", False)):
        got = CliRunner().invoke(cli, ["eval", *pargs, "--engine", "spark", "--spark-plan", plan])
        assert got.exit_code == 0 and got.stdout == memory.stdout
        assert ("spark scan plan:" in got.stderr) is scanned, got.stderr


def test_without_pyspark_one_line_hint(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real(name, *a))
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "q"), str(tmp_path / "r"), "--engine", "spark"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "--engine spark needs pyspark: pip install 'ranklens[spark]'"


# compare and gate (issue 15): `--engine spark` evaluates the run files on Spark and the report is the in-memory
# engine's byte for byte; the engine is not part of the report (it names no engine: the numbers are the same),
# so the whole `-f json` output is compared, not only its rows. The per-query output `eval --engine spark -q -o
# FILE.json` is a saved results file for both (it differs from the in-memory engine's file only in the Results
# option "streamed", which says how the in-memory engine read the run: compare and gate do not report it).
OTHER = ("q1 Q0 c 1 3.0 dense\nq1 Q0 a 2 2.0 dense\nq2 Q0 x 1 0.5 dense\nq2 Q0 y 2 0.4 dense\nq3 Q0 w 1 1 dense\n"
         "q4 Q0 k 1 1 dense\n")
JUDGED = QRELS + "q4 0 k 1\n"


def _invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.stdout


def _files(tmp_path):
    (tmp_path / "qrels.txt").write_text(JUDGED)
    (tmp_path / "a.txt").write_text(RUN)
    (tmp_path / "b.txt").write_text(OTHER)
    return [str(tmp_path / n) for n in ("qrels.txt", "a.txt", "b.txt")]


def test_compare_on_spark_is_the_memory_report(spark, tmp_path):
    qrels, a, b = _files(tmp_path)
    args = ["compare", qrels, a, b, "-m", "nDCG@2", "AP", "RR", "-f", "json", "--test", "randomisation", "-B", "200"]
    memory = _invoke(*args)
    assert '"rows"' in memory
    assert _invoke(*args, "--engine", "spark", "--spark-master", "local[2]") == memory
    zero = [*args, "--missing", "zero", "--baseline", b]
    assert _invoke(*zero, "--engine", "spark") == _invoke(*zero)


def test_gate_on_spark_is_the_memory_report(spark, tmp_path):
    qrels, a, b = _files(tmp_path)
    args = ["gate", qrels, b, "--baseline", a, "--min", "nDCG@2=0.3", "--max-drop", "AP=0.1", "-f", "json"]
    memory = _invoke(*args)
    assert '"checks"' in memory
    assert _invoke(*args, "--engine", "spark") == memory
    failing = ["gate", qrels, b, "--min", "AP=0.99", "-f", "json"]
    assert _invoke(*failing, "--engine", "spark", code=1) == _invoke(*failing, code=1)
    (tmp_path / "elsewhere.txt").write_text("q7 Q0 a 1 1.0 x\n")
    lost = CliRunner().invoke(cli, ["gate", qrels, str(tmp_path / "elsewhere.txt"), "--min", "AP=0.1", "--engine", "spark"])
    assert lost.exit_code == 2 and "shares no query with the qrels" in lost.output


def test_spark_per_query_output_is_saved_results_for_compare_and_gate(spark, tmp_path):
    qrels, a, b = _files(tmp_path)
    saved = []
    for run in (a, b):
        out = str(tmp_path / (run.rsplit("/", 1)[-1] + ".json"))
        _invoke("eval", qrels, run, "-m", "nDCG@2", "AP", "-q", "-o", out, "--engine", "spark")
        saved.append(out)
    compared = ["-m", "nDCG@2", "AP", "-f", "json"]
    assert _invoke("compare", qrels, *saved, *compared) == _invoke("compare", qrels, a, b, *compared)
    gated = ["--min", "nDCG@2=0.3", "--max-drop", "AP=0.5", "-f", "json"]
    assert (_invoke("gate", qrels, saved[1], "--baseline", saved[0], *gated)
            == _invoke("gate", qrels, b, "--baseline", a, *gated))


def test_compare_and_gate_without_pyspark_one_line_hint(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real(name, *a))
    qrels, a, b = _files(tmp_path)
    for args in (["compare", qrels, a, b], ["gate", qrels, a, "--min", "AP=0.1"]):
        result = CliRunner().invoke(cli, [*args, "--engine", "spark"])
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == "--engine spark needs pyspark: pip install 'ranklens[spark]'"
