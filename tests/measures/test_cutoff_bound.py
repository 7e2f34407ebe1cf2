"""Issue 22 item 17: a cutoff is bounded, and one beyond the bound is refused by the measure parser, so every
face refuses it with one line: ``eval``, ``eval --no-stream``, ``trec-eval``, ``ranklens.evaluate()`` and the
monitor's server-side evaluation (a 4xx, not a 500).

Before, ``nDCG@99999999999999999999`` parsed and then overflowed numpy (a traceback, exit 1; ``--no-stream``
blamed the input; the monitor answered 500). The bound is 2^31 - 1 (:data:`ranklens.measures.base.MAX_CUTOFF`):
no ranking is longer, and every measure computes at it (the sweep below), so nothing that worked is lost.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import MeasureError
from ranklens.measures import families, parse_many

ROOT = Path(__file__).resolve().parents[2]
QRELS, RUN = str(ROOT / "examples" / "toy.qrels"), str(ROOT / "examples" / "toy_bm25.run")
BOUND = 2**31 - 1
HUGE = [
    "nDCG@99999999999999999999", "P@9223372036854775808", f"AP@{BOUND + 1}", "nDCG@" + "9" * 5000,
    f"P@[5,{BOUND + 1}]", f"RR@5,{10**30}", "ndcg_cut.99999999999999999999", f"P.5,{BOUND + 1}",
    "recall." + "9" * 5000,
]


@pytest.mark.parametrize("name", HUGE, ids=[n[:24] for n in HUGE])
def test_the_parser_refuses_a_cutoff_beyond_the_bound(name: str) -> None:
    with pytest.raises(MeasureError, match=r"cutoff"):
        parse_many([name])
    with pytest.raises(MeasureError, match=r"cutoff"):
        ranklens.evaluate(QRELS, RUN, [name])


@pytest.mark.parametrize(
    "args",
    [
        ["eval", QRELS, RUN, "-m", "nDCG@99999999999999999999"],
        ["eval", QRELS, RUN, "-m", "ndcg_cut.99999999999999999999", "--no-stream"],
        ["eval", QRELS, RUN, "-m", "P@9223372036854775808", "-f", "json"],
        ["trec-eval", "-m", "ndcg_cut.99999999999999999999", QRELS, RUN],
        ["compare", QRELS, RUN, RUN, "-m", f"nDCG@{BOUND + 1}"],
    ],
    ids=["eval", "no-stream", "json", "trec-eval", "compare"],
)
def test_every_command_refuses_it_with_one_line(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and result.stdout == "", (result.exit_code, result.stdout, result.stderr)
    # (trec-eval adds trec_eval's own second line, "Cannot initialize measure", as for every bad measure)
    lines = 2 if args[0] == "trec-eval" else 1
    assert result.stderr.count("\n") == lines and re.search(r"cutoff must be at most 2147483647", result.stderr), result.stderr
    assert "cannot read the input" not in result.stderr  # (the input is fine: the measure is not)


@pytest.mark.filterwarnings("ignore::ranklens.errors.RanklensWarning")
def test_every_measure_with_a_cutoff_computes_at_the_bound() -> None:
    """The bound is no tighter than it needs to be: at it, every measure of document-level qrels and a run
    gives what it gives without a cutoff (the ranking is shorter than the cutoff), except the ones whose
    value depends on the cutoff itself, which must still be a number (P@k divides by k)."""
    qrels = ranklens.read_qrels(QRELS)
    run = ranklens.read_run(RUN)
    checked = 0
    for family in families():
        if family.cutoff == "none" or family.needs:
            continue
        try:
            at_bound = parse_many([f"{family.name}@{BOUND}"])
        except MeasureError:
            continue  # (a family that needs parameters to be complete: not a cutoff question)
        values = ranklens.evaluate(qrels, run, at_bound)
        for m in at_bound:
            value = values[str(m)]
            assert isinstance(value, float) and not math.isinf(value), (str(m), value)
        checked += 1
    assert checked >= 20


def test_the_bound_itself_is_accepted() -> None:
    assert [str(m) for name in (f"nDCG@{BOUND}", f"ndcg_cut.{BOUND}") for m in parse_many([name])] == [f"nDCG@{BOUND}"] * 2
