"""``--aggregate`` (``aggregate=``) combines the per-query values of every measure averaged over queries,
not only the recommender measures with ``agg=`` (issue 22 item 6); measures defined by another combination
(sums, geometric means) are refused, and system-level measures have no per-query values to combine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, RUN = EXAMPLES / "toy.qrels", EXAMPLES / "toy_bm25.run"


def _independent_per_query() -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values, read from the files by a plain split (no ranklens reader)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in QRELS.read_text().splitlines():
        q, _, d, rel = line.split()
        qrels.setdefault(q, {})[d] = int(rel)
    run: dict[str, dict[str, float]] = {}
    for line in RUN.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    return pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map", "P_5", "recip_rank"}).evaluate(run)


THEIRS = {"nDCG@10": "ndcg_cut_10", "AP": "map", "P@5": "P_5", "RR": "recip_rank"}


@pytest.mark.parametrize(("agg", "numpy"), [("median", np.median), ("p90", lambda v: np.percentile(v, 90)),
                                            ("min", np.min), ("max", np.max)])
def test_cli_aggregate_applies_to_every_measure(agg: str, numpy) -> None:  # type: ignore[no-untyped-def]
    per_query = _independent_per_query()
    out = CliRunner().invoke(cli, ["eval", str(QRELS), str(RUN), "-m", *THEIRS, "--aggregate", agg, "-f", "tsv"])
    assert out.exit_code == 0, out.output
    got = {line.split("\t")[0]: float(line.split("\t")[2]) for line in out.stdout.splitlines()}
    for ours, theirs in THEIRS.items():
        expected = float(numpy([v[theirs] for v in per_query.values()]))
        name = next(n for n in got if n.startswith(ours.split("@")[0]) and f"agg={agg}" in n)
        assert got[name] == pytest.approx(expected, abs=1e-12), (ours, got)
    mean = float(np.mean([v["ndcg_cut_10"] for v in per_query.values()]))
    assert mean != pytest.approx(float(np.median([v["ndcg_cut_10"] for v in per_query.values()])), abs=1e-6)


def test_python_api_aggregate() -> None:
    per_query = _independent_per_query()
    res = ranklens.evaluate(str(QRELS), str(RUN), ["nDCG@10"], aggregate="median")
    assert res.aggregates[0] == pytest.approx(float(np.median([v["ndcg_cut_10"] for v in per_query.values()])), abs=1e-12)
    assert str(res.measures[0]) == "nDCG(agg=median)@10"


def test_the_mean_of_saved_names_is_unchanged() -> None:
    assert str(ranklens.measures.parse("nDCG(agg=mean)@10")) == "nDCG@10"


@pytest.mark.parametrize("measure", ["NumRet", "GMAP", "NumQ"])
def test_measures_combined_otherwise_are_refused(measure: str) -> None:
    out = CliRunner().invoke(cli, ["eval", str(QRELS), str(RUN), "-m", "nDCG@10", measure, "--aggregate", "median"])
    assert out.exit_code == 2
    assert "Traceback" not in out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and measure in lines[0] and "median" in lines[0], out.stderr


def test_gate_checks_the_median() -> None:
    per_query = _independent_per_query()
    median = float(np.median([v["ndcg_cut_10"] for v in per_query.values()]))
    for bound, code in ((median - 1e-9, 0), (median + 1e-9, 1)):
        out = CliRunner().invoke(cli, ["gate", str(QRELS), str(RUN), "--min", f"nDCG@10={bound!r}", "--aggregate", "median"])
        assert out.exit_code == code, out.output
        assert f"{median:.4f}" in out.stdout


def test_compare_takes_the_option() -> None:
    dense = EXAMPLES / "toy_dense.run"
    out = CliRunner().invoke(cli, ["compare", str(QRELS), str(RUN), str(dense), "-m", "nDCG@10", "--aggregate", "median", "-f", "json"])
    assert out.exit_code == 0, out.output
