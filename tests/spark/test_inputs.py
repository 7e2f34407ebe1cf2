"""Issue 22 items 2 and 10: ``--engine spark`` reads files with the data layer's rules, so every input gives the
same outcome on both engines: the same refusal (exit 2, the same one line naming file and line) or the same
per-query values (exit 0, ``-f tsv`` byte for byte, the same notes).

The corpus: the malformed-input cases of the reliability review (``reviews/reliability-r3/spark/mk.py``: bad
scores, labels and column counts, NUL and Latin-1 bytes, plain bytes named ``.gz``, MS MARCO runs, Parquet nulls
and types) and a fixed sample of the fuzz mutations of ``tests/data/test_fuzz_inputs.py`` (every byte token
inserted into a run and a qrels file, every odd line, the line-end and byte-order-mark mutations, corrupt gzip,
Parquet retyped, nulled and renamed columns) in TREC, CSV, JSON Lines and Parquet. The in-memory engine is the
oracle: the fuzz test checks it against an independent reference parser; this test checks Spark against it.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
import test_fuzz_inputs as fuzz  # noqa: E402

MEASURES = ["-m", "nDCG@10", "AP", "P@1", "-f", "tsv", "--per-query"]

Q = [("q1", "d1", 2), ("q1", "d2", 0), ("q1", "d3", 1), ("q2", "d1", 1), ("q2", "d4", 3), ("q3", "d5", 1)]
R = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q1", "d3", 1.0), ("q1", "d9", 0.5), ("q2", "d4", 2.0), ("q2", "d1", 1.5),
     ("q2", "d7", 1.0), ("q3", "d6", 1.0), ("q3", "d5", 0.5)]
QRELS = "".join(f"{q} 0 {d} {label}\n" for q, d, label in Q)
RUN = "".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(R, 1))


def _table(rows: list[tuple], value: str, **types: pa.DataType) -> pa.Table:  # type: ignore[type-arg]
    return pa.table({"query_id": pa.array([r[0] for r in rows], types.get("query_id")),
                     "doc_id": pa.array([r[1] for r in rows], types.get("doc_id")),
                     value: pa.array([r[2] for r in rows], types.get(value))})


def _parquet(table: pa.Table) -> bytes:
    out = pa.BufferOutputStream()
    pq.write_table(table, out)
    return out.getvalue().to_pybytes()


# (name, qrels file name, qrels bytes, run file name, run bytes): the reliability review's Spark corpus
REVIEW_CASES: list[tuple[str, str, bytes, str, bytes]] = [
    ("baseline", "q.qrels", QRELS.encode(), "r.run", RUN.encode()),
    ("qrels_5_columns", "q.qrels", QRELS.replace("q1 0 d1 2", "q1 0 d1 2 9").encode(), "r.run", RUN.encode()),
    ("score_word", "q.qrels", QRELS.encode(), "r.run", RUN.replace("d2 2 2.0", "d2 2 abc").encode()),
    ("score_nan", "q.qrels", QRELS.encode(), "r.run", RUN.replace("d2 2 2.0", "d2 2 nan").encode()),
    ("run_4_columns", "q.qrels", QRELS.encode(), "r.run", RUN.replace("q1 Q0 d2 2 2.0 sys", "q1 Q0 d2 2").encode()),
    ("run_5_columns", "q.qrels", QRELS.encode(), "r.run", RUN.replace(" sys\n", "\n").encode()),
    ("run_3_columns_msmarco", "q.qrels", QRELS.encode(), "r.run",
     "".join(f"{q}\t{d}\t{i}\n" for i, (q, d, _) in enumerate(R, 1)).encode()),
    ("duplicate_document", "q.qrels", QRELS.encode(), "r.run", (RUN + "q1 Q0 d1 10 0.1 sys\n").encode()),
    ("duplicate_judgement", "q.qrels", (QRELS + "q1 0 d1 0\n").encode(), "r.run", RUN.encode()),
    ("label_fraction", "q.qrels", QRELS.replace("d1 2", "d1 2.5").encode(), "r.run", RUN.encode()),
    ("label_word", "q.qrels", QRELS.replace("d1 2", "d1 high").encode(), "r.run", RUN.encode()),
    ("label_hex", "q.qrels", QRELS.replace("d1 2", "d1 0x10").encode(), "r.run", RUN.encode()),
    ("label_huge", "q.qrels", QRELS.replace("d1 2", "d1 99999999999").encode(), "r.run", RUN.encode()),
    ("qrels_3_columns", "q.qrels", QRELS.replace("q1 0 d1 2", "q1 0 d1").encode(), "r.run", RUN.encode()),
    ("bom", "q.qrels", ("\ufeff" + QRELS).encode(), "r.run", ("\ufeff" + RUN).encode()),
    ("nul_byte", "q.qrels", QRELS.encode(), "r.run", RUN.replace("q2 Q0 d4", "q2 Q0 d\x004").encode()),
    ("latin1", "q.qrels", QRELS.encode(), "r.run", RUN.encode().replace(b"d7", b"d\xe97")),
    ("crlf", "q.qrels", QRELS.replace("\n", "\r\n").encode(), "r.run", RUN.replace("\n", "\r\n").encode()),
    ("qrels_as_run", "q.qrels", QRELS.encode(), "r.run", QRELS.encode()),
    ("empty_run", "q.qrels", QRELS.encode(), "r.run", b""),
    ("no_common_query", "q.qrels", QRELS.encode(), "r.run", RUN.replace("q", "x").encode()),
    ("plain_bytes_named_gz", "q.qrels", QRELS.encode(), "r.run.gz", RUN.encode()),
    ("corrupt_gzip", "q.qrels", QRELS.encode(), "r.run.gz", gzip.compress(RUN.encode(), mtime=0)[:-9]),
    ("gzip", "q.qrels.gz", gzip.compress(QRELS.encode(), mtime=0), "r.run.gz", gzip.compress(RUN.encode(), mtime=0)),
    ("missing_file", "q.qrels", QRELS.encode(), "r.run", b""),
    ("inf_score", "q.qrels", QRELS.encode(), "r.run", RUN.replace("d2 2 2.0", "d2 2 inf").encode()),
    # issue 22 items 3, 9 and 11 (the data readers): the same reading on both engines, whatever it is
    ("cr_only_run", "q.qrels", QRELS.encode(), "r.run", RUN.replace("\n", "\r").encode()),
    ("bom_on_a_later_line", "q.qrels", QRELS.encode(), "r.run", (RUN[:40] + "\ufeff" + RUN[40:]).encode()),
    ("jsonl_stray_key", "q.qrels", QRELS.encode(), "r.jsonl",
     b'{"topic":"q1","doc_id":"d1","score":1,"qid":"x"}\n{"topic":"q1","doc_id":"d2","score":0.5}\n'),
    ("pq_duplicate_column", "q.parquet",
     _parquet(pa.Table.from_arrays([pa.array(["q1"]), pa.array(["d1"]), pa.array([1]), pa.array([2])],
                                   names=["query_id", "doc_id", "relevance", "relevance"])), "r.run", RUN.encode()),
    ("pq_baseline", "q.parquet", _parquet(_table(Q, "relevance")), "r.parquet", _parquet(_table(R, "score"))),
    ("pq_null_query_id", "q.parquet", _parquet(_table(Q, "relevance")), "r.parquet",
     _parquet(_table([(None, "d1", 5.0), *R], "score"))),
    ("pq_null_label", "q.parquet", _parquet(_table([("q1", "d8", None), *Q], "relevance")), "r.parquet",
     _parquet(_table(R, "score"))),
    ("pq_nan_score", "q.parquet", _parquet(_table(Q, "relevance")), "r.parquet",
     _parquet(_table([("q1", "d8", float("nan")), *R], "score"))),
    ("pq_float_label", "q.parquet", _parquet(_table([(q, d, x + 0.5) for q, d, x in Q], "relevance")), "r.parquet",
     _parquet(_table(R, "score"))),
    ("pq_string_score", "q.parquet", _parquet(_table(Q, "relevance")), "r.parquet",
     _parquet(_table([(q, d, "abc" if i == 0 else str(s)) for i, (q, d, s) in enumerate(R)], "score"))),
    ("pq_int_ids", "q.parquet", _parquet(pa.table({"query_id": [1, 1, 2], "doc_id": [10, 9, 10], "relevance": [1, 0, 2]})),
     "r.parquet", _parquet(pa.table({"query_id": [1, 1, 2, 2], "doc_id": [9, 10, 10, 11], "score": [1.0, 1.0, 2.0, 1.0]}))),
    ("pq_missing_score_column", "q.parquet", _parquet(_table(Q, "relevance")), "r.parquet",
     _parquet(pa.table({"query_id": [r[0] for r in R], "doc_id": [r[1] for r in R]}))),
    ("pq_empty", "q.parquet", _parquet(_table(Q, "relevance")), "r.parquet",
     _parquet(_table([], "score", query_id=pa.string(), doc_id=pa.string(), score=pa.float64()))),
]


def _fuzz_cases() -> list[tuple[str, str, bytes, str, bytes]]:
    """A fixed sample of the fuzz test's mutations (no randomness: every token, line and whole-file mutation once)."""
    out = []
    q_trec, r_trec = fuzz.base_file("trec", "qrels"), fuzz.base_file("trec", "run")
    for i, token in enumerate(fuzz.TOKENS):
        out.append((f"run_insert_{i}", "q.qrels", q_trec, "r.run", fuzz.mutate(r_trec, ("insert", 0.37, token))))
        out.append((f"qrels_field_{i}", "q.qrels", fuzz.mutate(q_trec, ("field", 0.3, 0.99, token)), "r.run", r_trec))
    for i, line in enumerate(fuzz.LINES):
        out.append((f"run_line_{i}", "q.qrels", q_trec, "r.run", fuzz.mutate(r_trec, ("line_insert", 0.5, line))))
    for kind in ("crlf", "cr_only", "bom", "no_final_newline"):
        out.append((f"both_{kind}", "q.qrels", fuzz.mutate(q_trec, (kind,)), "r.run", fuzz.mutate(r_trec, (kind,))))
    for fmt in ("csv", "jsonl"):
        qname, rname = fuzz.NAMES[fmt]
        q, r = fuzz.base_file(fmt, "qrels"), fuzz.base_file(fmt, "run")
        out.append((f"{fmt}_valid", qname, q, rname, r))
        out.append((f"{fmt}_nan", qname, q, rname, fuzz.mutate(r, ("insert", 0.6, b"nan"))))
        out.append((f"{fmt}_cr_only", qname, fuzz.mutate(q, ("cr_only",)), rname, r))
    for i, gzmut in enumerate([("truncate", 0.5), ("flip", 0.6), ("garbage", b"garbage after")]):
        out.append((f"gzip_{i}", "q.qrels", q_trec, "r.run.gz", fuzz.mutate_gz(gzip.compress(r_trec, mtime=0), gzmut)))
    parquet = [("retype", 2, "string"), ("retype", 2, "bool"), ("null", 1, 0.5), ("empty_id", 0, 0.2),
               ("value", 0.4, 2**31), ("value", 0.4, 2.5), ("duplicate_row", 0.3), ("rename", 0, "qid"),
               ("drop_column", 2), ("extra_column",), ("bytes", ("truncate", 0.5))]
    for i, m in enumerate(parquet):
        out.append((f"pq_qrels_{i}", "q.parquet", fuzz.parquet_bytes("qrels", [m]), "r.run", r_trec))
        out.append((f"pq_run_{i}", "q.qrels", q_trec, "r.parquet", fuzz.parquet_bytes("run", [m])))
    return out


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


def _write(tmp_path: Path, case: tuple[str, str, bytes, str, bytes]) -> tuple[str, str]:
    name, qname, qdata, rname, rdata = case
    folder = tmp_path / name
    folder.mkdir()
    (folder / qname).write_bytes(qdata)
    (folder / rname).write_bytes(rdata)
    return str(folder / qname), str(folder / rname)


def _same_outcome(qrels: str, run: str, family: str | None = None, evaluated: set[str] | None = None) -> tuple[int, str]:
    """The outcome on both engines, asserted equal. A refusal is always checked on both (it costs no Spark
    job: the data layer refuses on the driver). An input the in-memory engine reads is evaluated on Spark once
    per ``family`` of mutations (``evaluated`` holds the families done): a Spark evaluation takes seconds, and
    what Spark evaluates is the data layer's reading of the file, the same function for every member."""
    memory = _run(["eval", qrels, run, *MEASURES, "--no-stream"])
    if family is None or evaluated is None or memory[0] != 0 or family not in evaluated:
        spark = _run(["eval", qrels, run, *MEASURES, "--engine", "spark"])
        assert spark == memory, f"\nmemory: {memory}\nspark:  {spark}"
        if family is not None and evaluated is not None and memory[0] == 0:
            evaluated.add(family)
    code, out, err = memory
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:  # one line naming the file (and line, where there is one: the in-memory engine's own message)
        assert out == "" and err.count("\n") == 1 and err.startswith(("ranklens: error: " + qrels, "ranklens: error: " + run))
    return code, err


@pytest.fixture
def one_bucket(spark):
    """Small inputs: one query bucket per evaluation (one Python task, not four); restored afterwards."""
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    yield spark
    spark.conf.set("spark.sql.shuffle.partitions", before)


def test_the_review_corpus_gives_the_same_outcome_on_both_engines(one_bucket, tmp_path):
    outcomes: dict[str, tuple[int, str]] = {}
    for case in REVIEW_CASES:
        qrels, run = _write(tmp_path, case)
        if case[0] == "missing_file":
            Path(run).unlink()
        outcomes[case[0]] = _same_outcome(qrels, run)
    # the review's findings, each named: refused with file and line where the in-memory engine refuses
    assert outcomes["qrels_5_columns"][0] == 2 and "q.qrels:1:" in outcomes["qrels_5_columns"][1]
    assert outcomes["nul_byte"][0] == 2 and "r.run:5:" in outcomes["nul_byte"][1]
    assert outcomes["latin1"][0] == 2 and "r.run:7:" in outcomes["latin1"][1]
    assert outcomes["label_huge"][0] == 2 and "q.qrels:1:" in outcomes["label_huge"][1]
    assert outcomes["score_word"][0] == 2 and "r.run:2:" in outcomes["score_word"][1]
    assert outcomes["plain_bytes_named_gz"][0] == 2 and "r.run.gz" in outcomes["plain_bytes_named_gz"][1]
    assert outcomes["run_3_columns_msmarco"][0] == 0 and outcomes["run_5_columns"][0] == 0
    assert outcomes["pq_null_query_id"][0] == 2 and "r.parquet:1:" in outcomes["pq_null_query_id"][1]


def test_the_fuzz_sample_gives_the_same_outcome_on_both_engines(one_bucket, tmp_path):
    codes: list[int] = []
    evaluated: set[str] = set()
    for case in _fuzz_cases():
        codes.append(_same_outcome(*_write(tmp_path, case), case[0].rsplit("_", 1)[0], evaluated)[0])
    assert codes.count(2) > 40 and codes.count(0) > 10  # (both outcomes are exercised)


def test_the_python_api_sql_path_refuses_what_the_files_refuse(spark, tmp_path):
    from ranklens.errors import FormatError
    from ranklens.spark.files import evaluate_files

    qrels, run = _write(tmp_path, REVIEW_CASES[12])  # label_huge
    assert REVIEW_CASES[12][0] == "label_huge"
    for path in ("arrow", "sql"):
        with pytest.raises(FormatError, match=r"q\.qrels:1: .*99999999999"):
            evaluate_files(qrels, [(None, run)], ["nDCG@10"], path=path)


@pytest.mark.parametrize("path", ["arrow", "sql"])
def test_a_dataframe_label_outside_32_bits_is_refused_on_both_paths(spark, path):
    from ranklens.errors import FormatError
    from ranklens.spark import evaluate

    rdf = spark.createDataFrame([("q1", "d1", 1.0)], "query_id string, doc_id string, score double")
    qdf = spark.createDataFrame([("q1", "d1", 99999999999)], "query_id string, doc_id string, relevance long")
    with pytest.raises(FormatError, match="99999999999"):
        evaluate(rdf, qdf, ["nDCG@10"], path=path)
