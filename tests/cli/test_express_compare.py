"""``ranklens compare``'s express form (no click) prints what the full command prints, byte for byte, with the
same exit status, declines what it does not take, and runs with the full command's default options and policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ranklens.cli.express_compare import default_options, default_policy, run

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, DENSE = str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run")

_ENTRY = "import sys; sys.argv = ['ranklens', *sys.argv[1:]]; from ranklens.cli.entry import main; main()"
_FULL = "import sys; sys.argv = ['ranklens', *sys.argv[1:]]; from ranklens.cli.main import main; main()"

LINES = [
    [QRELS, BM25, DENSE, "-m", "nDCG@10", "AP"],
    [QRELS, BM25, DENSE],  # (the default measures)
    [QRELS, BM25, DENSE, "-m", "nDCG@10", "P@5", "-f", "json"],
    [QRELS, DENSE, BM25, "-m", "RR", "--test", "sign", "-f", "markdown", "--alpha", "0.1"],
    [QRELS, BM25, DENSE, "-m", "AP", "-b", "dense", "--quiet", "-f", "latex"],
    [QRELS, BM25, DENSE, "-m", "nDCG@10", "--test", "randomisation"],
    [QRELS, BM25, DENSE, "-m", "ncdg@10"],  # (a misspelt measure: the full command says it, status 2)
    [QRELS, BM25, DENSE, "-m", "AP", "-b", "nosuch"],  # (an unknown baseline: status 2)
]


def _run(code: str, args: list[str]) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "RANKLENS_PLUGINS")}
    done = subprocess.run([sys.executable, "-c", code, "compare", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env={**env, "PYTHONIOENCODING": "utf-8"})
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", LINES, ids=[" ".join(a for a in x if "/" not in a) for x in LINES])
def test_the_express_form_prints_what_the_full_command_prints(args: list[str]) -> None:
    assert _run(_ENTRY, args) == _run(_FULL, args)


def test_the_express_form_answers_itself(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    if (sys.stdout.encoding or "").lower().replace("-", "") != "utf8" or sys.stdout.isatty():
        pytest.skip("the express form leaves a terminal or a non-UTF-8 output to the full interface")
    assert run(["compare", QRELS, BM25, DENSE, "-m", "AP", "-f", "json"]) == 0
    assert '"measures": [' in capsys.readouterr().out


@pytest.mark.parametrize("args", [
    ["--help"], [QRELS, BM25], [QRELS, BM25, DENSE, "--segments", QRELS], [QRELS, BM25, DENSE, "-m"],
    [QRELS, BM25, DENSE, "--alpha", "2"], [QRELS, BM25, "-", DENSE], [QRELS, BM25, DENSE, "-c", "holm"],
    [QRELS, BM25, DENSE, "-f", "html"], [QRELS, BM25, DENSE, "-o", "x.md"], [QRELS, BM25, f"b={DENSE}"],
])
def test_what_it_does_not_take_goes_to_the_full_command(args: list[str]) -> None:
    assert run(["compare", *args]) is None


def test_its_options_and_policy_are_the_full_commands_defaults() -> None:
    """Every option the express form leaves at its default has that default in the full command (a changed
    default of either fails here)."""
    from ranklens.cli._common import _POLICY_FIELDS
    from ranklens.cli.compare_cmd import command

    ctx = command.make_context("compare", [QRELS, BM25, DENSE])
    for name, value in default_options().items():
        assert ctx.params[name] == value, name
    policy = default_policy()
    for name in _POLICY_FIELDS:
        assert ctx.params[name] == getattr(policy, name), name
    assert ctx.params["label_kind"] == policy.labels and ctx.params["missing_zero"] is False
