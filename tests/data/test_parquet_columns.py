"""Issue 22 item 11: a Parquet file with two columns of the same name is one line naming the file and the
column, exit status 2, for qrels and runs, on the general and the express paths (it was a traceback:
``KeyError: 'Field "relevance" exists 2 times in schema'``)."""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.data.io import read_qrels, read_run
from ranklens.errors import FormatError
from ranklens.express import evaluate_express
from ranklens.measures import parse_many


def _parquet(names: list[str], columns: list[list[object]]) -> bytes:
    table = pa.Table.from_arrays([pa.array(c) for c in columns], names=names)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


GOOD_QRELS = _parquet(["query_id", "doc_id", "relevance"], [["q1", "q1"], ["d1", "d2"], [1, 0]])
GOOD_RUN = _parquet(["query_id", "doc_id", "score"], [["q1", "q1"], ["d1", "d2"], [2.0, 1.0]])
CASES = {
    "qrels: relevance twice": ("qrels", _parquet(["query_id", "doc_id", "relevance", "relevance"], [["q1"], ["d1"], [1], [0]]), "relevance"),
    "qrels: query_id twice": ("qrels", _parquet(["query_id", "doc_id", "query_id", "relevance"], [["q1"], ["d1"], ["q2"], [1]]), "query_id"),
    "run: score twice": ("run", _parquet(["query_id", "doc_id", "score", "score"], [["q1"], ["d1"], [1.0], [2.0]]), "score"),
    "run: doc_id twice": ("run", _parquet(["query_id", "doc_id", "doc_id", "score"], [["q1"], ["d1"], ["d2"], [1.0]]), "doc_id"),
}


@pytest.mark.parametrize("gz", [False, True], ids=["parquet", "parquet.gz"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_column_name_twice_is_one_line_naming_the_file_and_the_column(tmp_path: Path, case: str, gz: bool) -> None:
    kind, data, column = CASES[case]
    suffix = ".parquet.gz" if gz else ".parquet"
    bad = tmp_path / f"bad{suffix}"
    bad.write_bytes(gzip.compress(data) if gz else data)
    q, r = tmp_path / "q.parquet", tmp_path / "r.parquet"
    q.write_bytes(GOOD_QRELS)
    r.write_bytes(GOOD_RUN)
    if kind == "qrels":
        q = bad
    else:
        r = bad
    pattern = rf"{re.escape(str(bad))}: column '{column}' appears 2 times"
    with pytest.raises(FormatError, match=pattern):
        (read_qrels if kind == "qrels" else read_run)(bad)
    with pytest.raises(FormatError, match=pattern):
        ranklens.evaluate(str(q), str(r), ["nDCG@10"])
    assert evaluate_express(str(q), [str(r)], parse_many(["nDCG@10"])) is None
    for extra in ([], ["--no-stream"]):
        result = CliRunner().invoke(cli, ["eval", str(q), str(r), "-m", "nDCG@10", *extra])
        assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
        assert re.search(pattern, result.stderr), result.stderr


def test_a_repeated_column_that_is_not_read_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "q.parquet"
    path.write_bytes(_parquet(["query_id", "doc_id", "relevance", "note", "note"], [["q1"], ["d1"], [1], ["a"], ["b"]]))
    assert read_qrels(path).to_dict() == {"q1": {"d1": 1}}
