"""The DCG-vs-nDCG ordering check on the spec §5 inversion example."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import COMMANDS, cli
from ranklens.errors import MeasureError
from ranklens.unbiased import ordering_consistency, unnormalised_of

QRELS = {"x1": {"r": 1, "n1": 0, "n2": 0}, "x2": {"a": 1, "b": 1, "c": 1, "m1": 0, "m2": 0}}
RUNS = {
    "A": {"x1": {"r": 3.0, "n1": 2.0, "n2": 1.0}, "x2": {"m1": 3.0, "m2": 2.0, "a": 1.0}},
    "B": {"x1": {"n1": 3.0, "n2": 2.0}, "x2": {"a": 3.0, "b": 2.0, "c": 1.0}},
}


def results(runs=RUNS, measures=("nDCG@3", "DCG@3")):
    return {name: ranklens.evaluate(QRELS, run, list(measures)) for name, run in runs.items()}


def test_spec_5_inversion() -> None:
    rep = ordering_consistency(results(), "nDCG@3")
    assert round(rep.means_primary["A"], 6) == 0.617320 and round(rep.means_primary["B"], 6) == 0.5
    assert round(rep.means_unnormalised["A"], 6) == 0.75 and round(rep.means_unnormalised["B"], 6) == 1.065465
    assert rep.inversions == (("A", "B"),) and not rep.consistent
    assert rep.order_primary == ("A", "B") and rep.order_unnormalised == ("B", "A")
    text = "\n".join(rep.messages())
    assert "nDCG@3 ranks A above B" in text and "consider DCG@3 as the primary measure" in text
    assert rep.to_dict()["inversions"] == [["A", "B"]]


def test_consistent_when_orderings_agree() -> None:
    runs = {"A": RUNS["A"], "C": {"x1": {"n1": 3.0, "r": 2.0}, "x2": {"m1": 3.0, "a": 2.0}}}
    rep = ordering_consistency(results(runs), "nDCG@3")
    assert rep.consistent and rep.messages() == []


def test_unnormalised_counterpart_and_errors() -> None:
    assert str(unnormalised_of("nDCG(gain=exp,discount=jk,base=3)@5")) == "DCG(gain=exp,discount=jk,base=3)@5"
    with pytest.raises(MeasureError, match="no unnormalised counterpart"):
        unnormalised_of("AP")
    with pytest.raises(MeasureError, match="was not evaluated with DCG@3"):
        ordering_consistency(results(measures=("nDCG@3",)), "nDCG@3")


def test_only_common_queries_count() -> None:
    runs = {**RUNS, "B": {**RUNS["B"], "x3": {"z": 1.0}}}
    qrels = {**QRELS, "x3": {"z": 1}}
    with pytest.warns(ranklens.RanklensWarning, match="1 qrels query with no retrieved document: skipped"):  # A lacks x3
        res = {n: ranklens.evaluate(qrels, r, ["nDCG@3", "DCG@3"]) for n, r in runs.items()}
    assert ordering_consistency(res, "nDCG@3").num_queries == 2


def test_cli(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(COMMANDS, "ips", ("ranklens.cli.ips_cmd", "command", "IPS."))
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    paths = []
    for name, run in RUNS.items():
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{q} Q0 {d} 1 {s} {name}\n" for q, docs in run.items() for d, s in docs.items()))
        paths.append(str(p))
    out = CliRunner().invoke(cli, ["ips", "consistency", str(qrels), *paths, "-m", "nDCG@3"])
    assert out.exit_code == 0, out.output
    assert "inversion: nDCG@3 ranks A above B" in out.output
