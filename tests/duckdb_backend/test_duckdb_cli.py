"""``--engine duckdb`` in ``eval``, ``compare`` and ``gate``: the in-memory engine's output byte for byte
(values, notes, exit status), through the one dispatcher; what it declines, without the extra, or with a bad
``--memory-limit``: one line, exit 2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli

pytest.importorskip("duckdb")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE = (str(EXAMPLES / n) for n in ("toy.qrels", "toy_bm25.run", "toy_dense.run"))


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "policy", [[], ["--missing", "zero"], ["-J", "-M", "5"], ["--rel-level", "2"], ["--negative", "zero"]], ids=str
)
def test_eval_prints_the_same_bytes_on_both_engines(policy: list[str]) -> None:
    args = ["eval", QRELS, BM25, DENSE, "-m", "nDCG@10", "nDCG(gain=exp)", "AP", "P@5", "R@100", "RR", "Success@1",
            "Rprec", "Judged@10", "DCG@3", "-f", "tsv", "--per-query", *policy]
    memory = _run(*args)
    assert memory[0] == 0
    assert _run(*args, "--engine", "duckdb", "--memory-limit", "256MB") == memory


def test_compare_and_gate_give_the_same_answer_on_both_engines() -> None:
    compare = ["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP", "-f", "json"]
    assert _run(*compare, "--engine", "duckdb") == _run(*compare)
    for rule in ("nDCG@10=0.3", "nDCG@10=0.9"):
        gate = ["gate", QRELS, BM25, "--min", rule]
        memory = _run(*gate)
        assert memory[0] == (0 if rule.endswith("0.3") else 1)
        assert _run(*gate, "--engine", "duckdb") == memory


def test_a_measure_it_cannot_express_is_one_line_exit_2() -> None:
    code, out, err = _run("eval", QRELS, BM25, "-m", "ERR@10", "--engine", "duckdb")
    assert (code, out) == (2, "")
    assert err == (
        "ranklens: error: --engine duckdb declines: ERR@10: the SQL formulation expresses nDCG, DCG, P, R, AP, RR, "
        "Success, Rprec, Judged only\n"
    )


def test_without_the_extra_one_line_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "duckdb" else real(name, *a))
    for command in (["eval", QRELS, BM25], ["compare", QRELS, BM25, DENSE], ["gate", QRELS, BM25, "--min", "AP=0"]):
        assert _run(*command, "--engine", "duckdb") == (2, "", "--engine duckdb needs duckdb: pip install 'ranklens[duckdb]'\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "duckdb", "--memory-limit", "lots"], "--memory-limit must be a size such as 512MB or 4GB; got 'lots'"),
        (["--memory-limit", "1GB"], "--memory-limit bounds DuckDB's memory: use it with --engine duckdb"),
    ],
)
def test_a_bad_memory_limit_is_one_line_exit_2(args: list[str], message: str) -> None:
    assert _run("eval", QRELS, BM25, *args) == (2, "", f"ranklens: error: {message}\n")


def test_the_progress_bar_is_off_and_the_memory_limit_set() -> None:
    # (DuckDB draws its progress bar on standard output, where eval prints its values)
    from ranklens.duckdb.runtime import connect

    con = connect("256MB")
    assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
    assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] in ("244.1 MiB", "256.0 MiB", "256.0 MB")
