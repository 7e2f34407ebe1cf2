"""trec_eval names mean trec_eval's measures (issue 22 item 7): every trec_eval spelling, in any letter
case, read by the measure language (``ranklens eval -m``) is the measure ``ranklens trec-eval`` computes;
Moffat & Zobel's RBP keeps its own name (MZRBP), and ``ranklens measures`` lists both."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.measures import parse, parse_many
from ranklens.measures.trec_names import TREC_MEASURES, parse_trec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
NOT_MEASURES = ("relstring", "runid")  # text, not numbers: only `ranklens trec-eval` prints them


def _spellings() -> list[str]:
    names = []
    for key, spec in sorted(TREC_MEASURES.items()):
        if key in NOT_MEASURES:
            continue
        names += sorted({spec.name, spec.name.lower(), spec.name.upper()})
    return names


@pytest.mark.parametrize("name", _spellings())
def test_every_trec_spelling_is_trec_evals_measure(name: str) -> None:
    try:
        theirs = [m for _, m in parse_trec(name)]
    except Exception:  # noqa: BLE001  (a name trec_eval needs parameters for: both must refuse)
        theirs = None
    if theirs is None:
        with pytest.raises(Exception):  # noqa: B017
            parse_many([name])
        return
    assert parse_many([name]) == theirs


@pytest.mark.parametrize("name", ["rbp", "RBP", "Rbp", "rbp.p=0.8", "rbp_resid", "RBP_RESID"])
def test_rbp_spellings(name: str) -> None:
    family = "TrecRBPResidual" if "resid" in name.lower() else "TrecRBP"
    assert {m.name for m in parse_many([name])} == {family}


def _cli(*args: str) -> str:
    out = CliRunner().invoke(cli, list(args))
    assert out.exit_code == 0, out.output
    return out.stdout


def test_eval_rbp_is_trec_evals_rbp_on_the_toy_run() -> None:
    qrels, run = str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_bm25.run")
    theirs = _cli("trec-eval", "-m", "rbp", qrels, run).split()
    assert theirs[:2] == ["rbp", "all"]
    assert theirs[2] == "0.2867"
    for spelling in ("rbp", "RBP", "TrecRBP"):
        value = float(_cli("eval", qrels, run, "-m", spelling, "-f", "tsv").split()[-1])
        assert f"{value:.4f}" == theirs[2], spelling
    # Moffat & Zobel's binary RBP: its own name, its own value (0.4100 on this run)
    mz = float(_cli("eval", qrels, run, "-m", "MZRBP", "-f", "tsv").split()[-1])
    assert f"{mz:.4f}" == "0.4100"


def test_eval_matches_the_golden_rbp_resid_lines() -> None:
    """specA.all_q.out: trec_eval 10.0's per-query rbp and rbp_resid lines; `eval -m rbp rbp_resid -q`
    prints the same values (rounded as trec_eval prints them)."""
    golden = {}
    for line in (GOLDEN / "specA.all_q.out").read_text().splitlines():
        name, qid, value = (c.strip() for c in line.split("\t"))
        if name in ("rbp", "rbp_resid"):
            golden[(name, qid)] = value
    out = _cli("eval", str(GOLDEN / "specA.qrels"), str(GOLDEN / "specA.run"), "-m", "rbp", "rbp_resid",
               "-f", "tsv", "--per-query")
    ours = {}
    for line in out.splitlines():
        name, qid, value = line.split("\t")
        ours[({"TrecRBP": "rbp", "TrecRBPResidual": "rbp_resid"}[name], qid)] = f"{float(value):.4f}"
    assert ours == golden


def test_measures_lists_both_definitions() -> None:
    out = _cli("measures", "--markdown")
    assert "| `TrecRBP` |" in out and "| `MZRBP` |" in out
    assert "| `TrecRBPResidual` |" in out and "| `MZRBPResidual` |" in out
    assert parse("MZRBP(p=0.8,rel=2)@20").name == "MZRBP"
