"""Parquet datasets (a directory of parts with hive partitions, or a glob) as inputs of eval, compare and
gate on every engine: listed once (:mod:`ranklens.data.datasets`), read as the concatenation of their parts
in sorted order, a partition key usable as a column; the same values as the same rows in one file."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.data.datasets import dataset_files, dataset_name, is_dataset
from ranklens.data.io import read_qrels, read_run
from ranklens.errors import FormatError

RUN = [("q1", "a", 3.0), ("q1", "b", 2.0), ("q1", "c", 2.0), ("q2", "a", 1.0), ("q2", "d", 0.5), ("q3", "e", 1.0), ("q10", "f", 1.0)]
QRELS = [("q1", "b", 1), ("q1", "c", 2), ("q2", "d", 1), ("q3", "x", 1), ("q10", "f", 3)]


def _table(rows: list[tuple], value: str) -> pa.Table:
    return pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], value: [r[2] for r in rows]})


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """The same rows as one file, as a hive dataset partitioned by a bucket, and as one partitioned by query."""
    run = _table(RUN, "score")
    pq.write_table(run, tmp_path / "run.parquet")
    pq.write_table(_table(QRELS, "relevance"), tmp_path / "qrels.parquet")
    for i, q in enumerate(["q1", "q2", "q3", "q10"]):
        rows = [r for r in RUN if r[0] == q]
        bucket = tmp_path / "bybucket" / f"bucket={i % 2}"
        bucket.mkdir(parents=True, exist_ok=True)
        pq.write_table(_table(rows, "score"), bucket / f"part-{i}.parquet")
        byq = tmp_path / "byquery" / f"query_id={q}"
        byq.mkdir(parents=True)
        pq.write_table(pa.table({"doc_id": [r[1] for r in rows], "score": [r[2] for r in rows]}), byq / "part.parquet")
    (tmp_path / "bybucket" / "_SUCCESS").write_bytes(b"")
    (tmp_path / "bybucket" / ".crc").write_bytes(b"x")
    return {
        "file": str(tmp_path / "run.parquet"), "qrels": str(tmp_path / "qrels.parquet"),
        "dir": str(tmp_path / "bybucket"), "glob": str(tmp_path / "bybucket" / "bucket=*" / "*.parquet"),
        "byquery": str(tmp_path / "byquery"),
    }


def test_a_dataset_lists_its_parts_once_sorted_without_markers(files: dict[str, str]) -> None:
    parts = [os.path.relpath(f, files["dir"]) for f in dataset_files(files["dir"])]
    assert parts == ["bucket=0/part-0.parquet", "bucket=0/part-2.parquet", "bucket=1/part-1.parquet", "bucket=1/part-3.parquet"]
    assert dataset_files(files["glob"]) == dataset_files(files["dir"])
    assert is_dataset(files["dir"]) and is_dataset(files["glob"]) and not is_dataset(files["file"])
    assert dataset_name(files["dir"]) == dataset_name(files["glob"]) == "bybucket"


def test_an_empty_directory_and_a_glob_matching_nothing_are_errors_naming_them(tmp_path: Path) -> None:
    (tmp_path / "empty" / "_temporary").mkdir(parents=True)
    (tmp_path / "empty" / "_SUCCESS").write_bytes(b"")
    assert not is_dataset(str(tmp_path / "empty"))
    with pytest.raises(FormatError, match="empty: expected a file, got a directory"):
        read_run(str(tmp_path / "empty"))
    with pytest.raises(FormatError, match="empty: is a directory with no data file"):
        dataset_files(str(tmp_path / "empty"))
    with pytest.raises(FormatError, match=r"nothing-\*\.parquet: no file matches this pattern"):
        dataset_files(str(tmp_path / "nothing-*.parquet"))


@pytest.mark.parametrize("kind", ["dir", "glob", "byquery"])
def test_the_data_layer_reads_a_dataset_as_its_rows(files: dict[str, str], kind: str) -> None:
    want = read_run(files["file"]).to_dict()
    assert read_run(files[kind]).to_dict() == want
    assert read_run(files[kind]).name == ("byquery" if kind == "byquery" else "bybucket")


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("kind", ["dir", "glob", "byquery"])
def test_eval_compare_and_gate_read_a_dataset_as_the_same_rows_in_one_file(files: dict[str, str], kind: str, engine: str) -> None:
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    measures = ["-m", "nDCG@10", "AP", "P@2", "--per-query", "-f", "tsv"]
    one = _run("eval", files["qrels"], f"r={files['file']}", *measures)
    assert one[0] == 0
    assert _run("eval", files["qrels"], f"r={files[kind]}", *measures, "--engine", engine) == one
    assert _run("eval", files["qrels"], f"r={files[kind]}", *measures) == one  # (and the in-memory engine)
    compare = ["compare", files["qrels"], f"a={files[kind]}", f"b={files['file']}", "-m", "AP", "-f", "json"]
    code, out, _ = _run(*compare, "--engine", engine)
    assert code == 0 and '"delta": 0.0' in out
    gate = _run("gate", files["qrels"], files[kind], "--min", "AP=0.5", "--engine", engine)
    assert gate[0] == _run("gate", files["qrels"], files["file"], "--min", "AP=0.5")[0]


def test_a_qrels_dataset_is_an_input_too(files: dict[str, str], tmp_path: Path) -> None:
    for i, row in enumerate(QRELS):
        part = tmp_path / "qrels_ds" / f"p={i % 2}"
        part.mkdir(parents=True, exist_ok=True)
        pq.write_table(_table([row], "relevance"), part / f"{i}.parquet")
    assert read_qrels(str(tmp_path / "qrels_ds")).to_dict() == read_qrels(files["qrels"]).to_dict()
