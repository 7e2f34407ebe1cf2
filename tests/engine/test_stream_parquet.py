"""Parquet runs stream by row-group batches (issue 12): the streamed result is the whole read's and the TREC
text's, query by query, bit for bit; a run whose queries are not grouped is read whole (or refused with
--stream); errors name the file and the row of the whole file."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.engine import EvalPolicy
from ranklens.engine.stream import evaluate_stream
from ranklens.errors import DuplicateError, FormatError, InputError, NotGroupedError
from ranklens.evaluation import evaluate_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
MEASURES = ["nDCG@10", "nDCG(ties=average)@5", "AP", "RR", "P@5", "R@100", "ERR@10", "Bpref", "NumRet", "NumQ"]


def _rows(run: str) -> tuple[list[str], list[str], list[float]]:
    q, d, s = [], [], []
    for line in (EXAMPLES / run).read_text().splitlines():
        f = line.split()
        q.append(f[0])
        d.append(f[2])
        s.append(float(f[4]))
    return q, d, s


def _write(path: Path, columns: dict[str, list[object]], row_group_size: int = 37) -> str:
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return str(path)


def _toy_parquet(tmp_path: Path, run: str = "toy_dense.run", name: str | None = None, **names: str) -> str:
    q, d, s = _rows(run)
    cols = {names.get("query", "query_id"): q, names.get("doc", "doc_id"): d, names.get("score", "score"): s}
    return _write(tmp_path / (name or run.replace(".run", ".parquet")), cols)  # type: ignore[arg-type]


def _assert_same(a: ranklens.Results, b: ranklens.Results) -> None:
    assert a.query_ids == b.query_ids
    np.testing.assert_array_equal(a.values, b.values)  # bit for bit
    assert a.aggregates == b.aggregates
    assert a.notes == b.notes


def test_row_groups_split_queries() -> None:
    """The fixture's premise: 37-row groups cut the 30-row queries, so a query spans row groups."""
    q, _, _ = _rows("toy_dense.run")
    cuts = range(37, len(q), 37)
    assert any(q[i - 1] == q[i] for i in cuts)


@pytest.mark.parametrize("batch_rows", [1, 7, 37, 50, 1 << 18])
@pytest.mark.parametrize("policy", [{}, {"missing": "zero"}, {"judged_only": True, "max_docs": 7}])
@pytest.mark.parametrize("run", ["toy_bm25.run", "toy_dense.run"])
def test_streamed_parquet_equals_whole_read_and_trec_text(
    tmp_path: Path, run: str, batch_rows: int, policy: dict[str, object]
) -> None:
    path = _toy_parquet(tmp_path, run)
    assert pq.ParquetFile(path).metadata.num_row_groups > 5
    ev = ranklens.Evaluator(MEASURES, QRELS, **policy)  # type: ignore[arg-type]
    streamed = evaluate_stream(ev, path, format="parquet", batch_rows=batch_rows)
    whole = ev(ranklens.read_run(path), warn=False)
    text = ev(str(EXAMPLES / run), warn=False)
    _assert_same(streamed, whole)
    _assert_same(streamed, text)
    assert streamed.run == whole.run == Path(path).stem
    assert streamed.options.get("streamed") is True


def test_evaluate_files_streams_parquet_by_default(tmp_path: Path) -> None:
    path = _toy_parquet(tmp_path)
    auto = evaluate_files(QRELS, [path], MEASURES)
    whole = evaluate_files(QRELS, [path], MEASURES, stream=False)
    forced = evaluate_files(QRELS, [path], MEASURES, stream=True)
    assert auto.read_whole == [] and auto.results[0].options.get("streamed") is True
    assert whole.results[0].options.get("streamed") is not True
    for other in (whole, forced):
        _assert_same(auto.results[0], other.results[0])
        assert auto.notes == other.notes


def test_column_mapping_and_aliases_as_the_parquet_reader(tmp_path: Path) -> None:
    plain = evaluate_files(QRELS, [_toy_parquet(tmp_path)], MEASURES).results[0]
    aliased = _toy_parquet(tmp_path, name="aliased.parquet", query="qid", doc="docno", score="sim")
    _assert_same(evaluate_files(QRELS, [aliased], MEASURES, stream=True).results[0], plain)
    mapped = _toy_parquet(tmp_path, name="mapped.parquet", query="member", doc="sku", score="pred")
    policy = EvalPolicy(run_columns={"member": "query_id", "sku": "doc_id", "pred": "score"})
    _assert_same(evaluate_files(QRELS, [mapped], MEASURES, policy, stream=True).results[0], plain)
    with pytest.raises(FormatError, match=r"mapped.parquet: missing column"):
        evaluate_files(QRELS, [mapped], MEASURES, stream=True)


def test_integer_and_dictionary_ids_stream_as_strings(tmp_path: Path) -> None:
    q = ["1"] * 3 + ["2"] * 3
    d = ["a", "b", "c", "a", "d", "e"]
    s = [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]
    (tmp_path / "q.qrels").write_text("1 0 a 1\n2 0 d 2\n2 0 e 1\n")
    qrels = str(tmp_path / "q.qrels")
    ints = _write(tmp_path / "ints.parquet", {"qid": [int(x) for x in q], "docno": d, "score": s}, 2)
    table = pa.table({"qid": pa.array(q).dictionary_encode(), "docno": pa.array(d).dictionary_encode(), "score": s})
    pq.write_table(table, tmp_path / "dict.parquet", row_group_size=2)
    ev = ranklens.Evaluator(["nDCG@10", "AP"], qrels)
    for path in (ints, str(tmp_path / "dict.parquet")):
        streamed = evaluate_stream(ev, path, format="parquet", batch_rows=2)
        _assert_same(streamed, ev(ranklens.read_run(path), warn=False))
        assert streamed.query_ids == ("1", "2")


def _interleaved(tmp_path: Path) -> str:
    q, d, s = _rows("toy_dense.run")
    order = list(range(5)) + list(range(40, 45)) + list(range(5, 40)) + list(range(45, len(q)))
    cols = {"query_id": [q[i] for i in order], "doc_id": [d[i] for i in order], "score": [s[i] for i in order]}
    return _write(tmp_path / "interleaved.parquet", cols)  # type: ignore[arg-type]


def test_not_grouped_parquet_is_read_whole_by_default_and_refused_with_stream(tmp_path: Path) -> None:
    path = _interleaved(tmp_path)
    auto = evaluate_files(QRELS, [path], MEASURES)
    assert auto.read_whole == [path]
    whole = evaluate_files(QRELS, [path], MEASURES, stream=False)
    _assert_same(auto.results[0], whole.results[0])
    assert auto.notes == whole.notes
    with pytest.raises(NotGroupedError, match=r"interleaved.parquet:11: query 'q1' appears again after other queries"):
        evaluate_files(QRELS, [path], MEASURES, stream=True)
    with pytest.raises(NotGroupedError, match=r"Sort the rows by query .* or load it whole with --no-stream"):
        evaluate_stream(ranklens.Evaluator(["AP"], QRELS), path, format="parquet", batch_rows=3)


def test_cli_streams_parquet_and_falls_back_when_not_grouped(tmp_path: Path) -> None:
    runner = CliRunner()
    for path in (_toy_parquet(tmp_path), _interleaved(tmp_path)):
        args = ["eval", QRELS, path, "-m", "AP", "nDCG@10", "-f", "tsv", "--per-query"]
        auto = runner.invoke(cli, args)
        whole = runner.invoke(cli, [*args, "--no-stream"])
        assert auto.exit_code == whole.exit_code == 0, auto.output
        assert auto.stdout == whole.stdout
        assert auto.stderr == whole.stderr
    forced = runner.invoke(cli, ["eval", QRELS, _interleaved(tmp_path), "-m", "AP", "--stream"])
    assert forced.exit_code == 2 and "interleaved.parquet:11: query 'q1' appears again" in forced.stderr


def test_gzipped_parquet_is_read_whole_and_refused_with_stream(tmp_path: Path) -> None:
    path = Path(_toy_parquet(tmp_path))
    gz = tmp_path / "dense.parquet.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    auto = evaluate_files(QRELS, [str(gz)], MEASURES)
    _assert_same(auto.results[0], evaluate_files(QRELS, [str(path)], MEASURES).results[0])
    with pytest.raises(InputError, match=r"dense.parquet.gz: streaming reads uncompressed Parquet files"):
        evaluate_files(QRELS, [str(gz)], MEASURES, stream=True)


def _with(tmp_path: Path, name: str, row: int, **change: object) -> str:
    q, d, s = _rows("toy_bm25.run")
    cols: dict[str, list[object]] = {"query_id": list(q), "doc_id": list(d), "score": list(s)}
    for column, value in change.items():
        cols[column][row - 1] = value
    return _write(tmp_path / name, cols)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"score": float("nan")}, FormatError, r"bad.parquet:301: score is NaN"),
        ({"doc_id": None}, FormatError, r"bad.parquet:301: expected a document id in column 'doc_id', got null"),
        ({"query_id": ""}, FormatError, r"bad.parquet:301: expected a query id in column 'query_id', got an empty value"),
    ],
)
def test_bad_row_in_a_late_batch_names_the_file_and_row(
    tmp_path: Path, change: dict[str, object], error: type[Exception], message: str
) -> None:
    path = _with(tmp_path, "bad.parquet", 301, **change)
    ev = ranklens.Evaluator(["AP"], QRELS)
    with pytest.raises(error, match=message):
        evaluate_stream(ev, path, format="parquet", batch_rows=50)
    with pytest.raises(error, match=message):  # the whole read says the same
        ev(ranklens.read_run(path))


def test_duplicate_in_a_late_batch_names_its_row(tmp_path: Path) -> None:
    q, d, _ = _rows("toy_bm25.run")
    assert q[300] == q[301]
    path = _with(tmp_path, "dup.parquet", 302, doc_id=d[300])
    with pytest.raises(DuplicateError, match=r"dup.parquet:302: document"):
        evaluate_stream(ranklens.Evaluator(["AP"], QRELS), path, format="parquet", batch_rows=50)


def test_empty_and_broken_parquet_files_are_format_errors(tmp_path: Path) -> None:
    empty = _write(tmp_path / "empty.parquet", {"query_id": [], "doc_id": [], "score": []})
    ev = ranklens.Evaluator(["AP"], QRELS)
    with pytest.raises(FormatError, match=r"empty.parquet: expected at least one row, got none"):
        evaluate_stream(ev, empty, format="parquet")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(FormatError, match=r"broken.parquet: expected a Parquet file"):
        evaluate_stream(ev, str(broken), format="parquet")
    with pytest.raises(FormatError, match=r"broken.parquet: expected a Parquet file"):
        evaluate_files(QRELS, [str(broken)], MEASURES, stream=True)
