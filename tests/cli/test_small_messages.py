"""Newcomer review §2/§3 nits: messages that said something untrue or unhelpful."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.report._format import legend

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Q, BM25, DENSE = (str(EXAMPLES / n) for n in ("toy.qrels", "toy_bm25.run", "toy_dense.run"))


def test_output_into_a_missing_directory_says_directory(tmp_path: Path) -> None:
    out = tmp_path / "nope" / "out.csv"
    result = CliRunner().invoke(cli, ["eval", Q, BM25, "-m", "AP", "-o", str(out)])
    assert result.exit_code == 2
    assert "no such directory" in result.stderr and "no such file" not in result.stderr


def test_an_unknown_command_suggests_the_nearest() -> None:
    result = CliRunner().invoke(cli, ["evaluate"])
    assert result.exit_code == 2
    assert "did you mean 'eval'" in result.stderr


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
def test_tukey_legend_names_no_extra_correction() -> None:
    """Tukey HSD p-values already cover every pair of the family: the legend must not claim Holm."""
    cmp = ranklens.compare(Q, [BM25, DENSE], ["nDCG@10"], test="tukey", missing="zero")
    text = legend(cmp)
    assert "Holm" not in text and "Tukey" in text
    t = ranklens.compare(Q, [BM25, DENSE], ["nDCG@10"], missing="zero")
    assert "Holm correction" in legend(t)


def test_explain_on_a_query_the_run_lacks_says_so() -> None:
    """q12 is judged, and toy_dense never answers it: no 'did you mean q2'."""
    result = CliRunner().invoke(cli, ["explain", Q, DENSE, "--query", "q12", "-m", "nDCG@5"])
    assert result.exit_code == 2
    assert "the run has no results for query 'q12'" in result.stderr and "q2'" not in result.stderr
