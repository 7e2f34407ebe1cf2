"""``ranklens gate``'s express form (no click) prints what the full command prints, byte for byte, with the
same exit status, declines what it does not take, and evaluates under the full command's default policy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ranklens.cli.express_gate import run

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, DENSE = str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run")

_ENTRY = "import sys; sys.argv = ['ranklens', *sys.argv[1:]]; from ranklens.cli.entry import main; main()"
_FULL = "import sys; sys.argv = ['ranklens', *sys.argv[1:]]; from ranklens.cli.main import main; main()"

LINES = [
    [QRELS, BM25, "--min", "nDCG@10=0.1"],
    [QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.5", "--alpha", "0.05"],
    [QRELS, DENSE, "-b", BM25, "--max-drop", "AP=0.01", "--min", "P@5=0.2", "--max", "RR=0.9"],  # (fails: 1)
    [QRELS, BM25, "--min", "nDCG@10=0.9", "-f", "json"],
    [QRELS, DENSE, "--baseline", BM25, "--max-drop", "nDCG@10=0.01", "--test", "sign", "--quiet"],
    [QRELS, DENSE, "--min", "bogus=0.1"],  # (bad input: the full command says it, status 2)
    [QRELS, BM25, "--max-drop", "nDCG@10=0.1"],  # (no baseline: status 2)
]


def _run(code: str, args: list[str]) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", code, "gate", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env={**__import__("os").environ, "PYTHONIOENCODING": "utf-8"})
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", LINES, ids=[" ".join(a for a in x if "/" not in a) for x in LINES])
def test_the_express_form_prints_what_the_full_command_prints(args: list[str]) -> None:
    assert _run(_ENTRY, args) == _run(_FULL, args)


def test_the_express_form_answers_itself(capsys: pytest.CaptureFixture[str]) -> None:
    if (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        pytest.skip("the express form leaves a non-UTF-8 output to the full interface")
    assert run(["gate", QRELS, BM25, "--min", "nDCG@10=0.99"]) == 1
    assert "FAIL nDCG@10" in capsys.readouterr().out


@pytest.mark.parametrize("args", [
    ["--help"], [QRELS, BM25, "--segments", QRELS, "--min", "AP=0.1"], [QRELS, BM25, "--min"],
    [QRELS, BM25, "--alpha", "1.5", "--min", "AP=0.1"], [QRELS, "-", "--min", "AP=0.1"], [QRELS, BM25, "-c"],
    [QRELS, BM25, "-f", "yaml"], [QRELS, BM25, "-b", BM25, "-b", DENSE], [QRELS, BM25, "--engine", "spark"],
])
def test_what_it_does_not_take_goes_to_the_full_command(args: list[str]) -> None:
    assert run(["gate", *args]) is None


def test_its_policy_is_the_full_commands_default() -> None:
    """The express form evaluates under :func:`default_policy`: every policy option of the full command defaults
    to that policy's field (a changed default of either fails here; without ``labels="int"`` it failed)."""
    from ranklens.cli._common import _POLICY_FIELDS
    from ranklens.cli.express_gate import default_policy
    from ranklens.cli.gate_cmd import command

    ctx = command.make_context("gate", [QRELS, BM25, "--min", "AP=0.1"])
    policy = default_policy()
    for name in _POLICY_FIELDS:
        assert ctx.params[name] == getattr(policy, name), name
    assert ctx.params["label_kind"] == policy.labels and ctx.params["missing_zero"] is False
