"""``ranklens trec-eval``'s express form (no click) prints what the full command prints, byte for byte, with the
same exit status, and declines what it does not take (the full command then runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ranklens.cli.express_trec_eval import run

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, DENSE = str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run")

_ENTRY = "import sys; sys.argv = ['ranklens', *sys.argv[1:]]; from ranklens.cli.entry import main; main()"
_FULL = "import sys; sys.argv = ['ranklens', *sys.argv[1:]]; from ranklens.cli.main import main; main()"

LINES = [
    ["-m", "ndcg_cut.10", "-m", "map", "-m", "P.5", QRELS, BM25],
    ["-q", "-c", "-m", "ndcg_cut.10", "-m", "recip_rank", QRELS, DENSE],
    ["-q", "-m", "map", QRELS, DENSE],  # (no -c: a qrels query the run lacks stops it, status 4)
    [QRELS, BM25],  # (trec_eval's default set: compiled and reference measures)
    ["-n", "-q", "-c", "-m", "all_trec", QRELS, DENSE],
    ["-m", "no_such_measure", QRELS, BM25],  # (status 1)
]


def _run(code: str, args: list[str]) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", code, "trec-eval", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", LINES, ids=[" ".join(a for a in x if "/" not in a) for x in LINES])
def test_the_express_form_prints_what_the_full_command_prints(args: list[str]) -> None:
    assert _run(_ENTRY, args) == _run(_FULL, args)


def test_the_express_form_takes_these_lines_itself(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["trec-eval", "-m", "P.5", QRELS, BM25]) == 0
    assert "P_5" in capsys.readouterr().out


@pytest.mark.parametrize("args", [
    ["--help"], ["-qc", QRELS, BM25], ["-mP.5", QRELS, BM25], ["-l2", QRELS, BM25], [QRELS, "-"], [QRELS],
    [QRELS, BM25, DENSE], ["-m", QRELS, BM25], [QRELS, str(EX)],
])
def test_what_it_does_not_take_goes_to_the_full_command(args: list[str]) -> None:
    assert run(["trec-eval", *args]) is None
