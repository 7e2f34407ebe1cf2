"""``ranklens fuse``: bad input is one line and exit 2; a fused run over the union of the queries, noted."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.data.io import read_run

EX = Path(__file__).resolve().parents[2] / "examples"
BM25, DENSE, QRELS = str(EX / "toy_bm25.run"), str(EX / "toy_dense.run"), str(EX / "toy.qrels")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--method", "nope"], "unknown fusion method 'nope'"),
        (["--method", "rrf", "--norm", "bogus"], "unknown normalisation 'bogus'"),
        (["--method", "wsum", "--weights", "1,2,3"], "3 weights for 2 runs"),
        (["--method", "wsum", "--optimise"], "--optimise needs --qrels"),
        (["--method", "gmnz"], "gmnz needs the parameter gamma"),
        (["--method", "rrf", "--param", "q=1"], "rrf takes no parameter 'q'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    result = CliRunner().invoke(cli, ["fuse", BM25, DENSE, *args, "-o", str(tmp_path / "f.trec")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.output


def test_runs_over_different_queries_are_fused_over_the_union_with_a_note(tmp_path: Path) -> None:
    out = tmp_path / "f.trec"
    result = CliRunner().invoke(cli, ["fuse", BM25, DENSE, "--method", "rrf", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "run 'dense' has no results for 1 of the 12 queries" in result.output
    fused = read_run(out)
    assert set(fused.query_ids.to_pylist()) == set(read_run(BM25).query_ids.to_pylist()) | set(read_run(DENSE).query_ids.to_pylist())
