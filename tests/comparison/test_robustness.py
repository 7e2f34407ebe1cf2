"""``ranklens robustness`` / :func:`ranklens.comparison.robustness.robustness`: the multiverse of a two-system
comparison. Oracles: every analysis re-evaluated by a direct ``ranklens.evaluate`` call with a measure name
written out here, scipy's paired t-test, and the summary recounted from the list of analyses."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.comparison.robustness import robustness
from ranklens.errors import RanklensWarning

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
BM25 = str(EXAMPLES / "toy_bm25.run")
DENSE = str(EXAMPLES / "toy_dense.run")


@pytest.fixture(scope="module")
def toy():  # type: ignore[no-untyped-def]
    return robustness(QRELS, BM25, DENSE, "nDCG@10", samples=200, seed=1)


def test_count_is_the_product_of_the_choice_sizes(toy) -> None:  # type: ignore[no-untyped-def]
    sizes = {k: len(v) for k, v in toy.choices.items()}
    assert sizes == {"gain": 2, "ideal": 4, "ties": 2, "judged_only": 2, "missing": 2, "test": 3}
    assert len(toy.analyses) == math.prod(sizes.values()) == 192
    seen = {tuple(a.choices[k] for k in toy.choices) for a in toy.analyses}
    assert seen == set(itertools.product(*toy.choices.values()))
    # a measure without gain or ideal varies only ties and judged_only (and missing, test)
    p5 = robustness(QRELS, BM25, DENSE, "P@5", tests=["t", "wilcoxon"])
    assert set(p5.choices) == {"ties", "judged_only", "missing", "test"}
    assert len(p5.analyses) == 2 * 2 * 2 * 2


def _name(c: dict) -> str:  # type: ignore[type-arg]
    """The measure of one analysis, written out by hand in the measure language."""
    depth = ",depth=100" if c["ideal"] == "recall" else ""
    return f"nDCG(gain={c['gain']},ideal={c['ideal']}{depth},ties={c['ties']},judged_only={c['judged_only']})@10"


def test_each_analysis_matches_a_direct_evaluation(toy) -> None:  # type: ignore[no-untyped-def]
    cache: dict[tuple[str, str, str], dict] = {}  # type: ignore[type-arg]

    def per_query(run: str, name: str, missing: str) -> dict:  # type: ignore[type-arg]
        key = (run, name, missing)
        if key not in cache:
            with warnings.catch_warnings():  # (the notes: unjudged rows removed, a query skipped)
                warnings.simplefilter("ignore", RanklensWarning)
                cache[key] = ranklens.evaluate(QRELS, run, name, missing=missing).per_query(name)
        return cache[key]

    for a in toy.analyses:
        name = _name(a.choices)
        qa = per_query(BM25, name, a.choices["missing"])
        qb = per_query(DENSE, name, a.choices["missing"])
        common = sorted(set(qa) & set(qb))
        xa = np.array([qa[q] for q in common])
        xb = np.array([qb[q] for q in common])
        assert a.n == len(common)
        assert a.mean_difference == pytest.approx(float(np.mean(xb - xa)), abs=1e-12)
        assert a.direction == ("better" if xb.mean() > xa.mean() else "worse")
        if a.choices["test"] == "t":
            p = scipy.stats.ttest_rel(xb, xa).pvalue
            assert a.p == pytest.approx(p, rel=1e-9)
            assert a.significant == (p <= 0.05)
    # skipping the query dense never answered vs scoring it 0: 11 and 12 queries
    assert {a.n for a in toy.analyses if a.choices["missing"] == "skip"} == {11}
    assert {a.n for a in toy.analyses if a.choices["missing"] == "zero"} == {12}


def test_summary_is_consistent_with_the_list(toy) -> None:  # type: ignore[no-untyped-def]
    s = toy.summary()
    default = [a for a in toy.analyses if all(a.choices[k] == v[0] for k, v in toy.choices.items())]
    assert len(default) == 1 and s["default"] == default[0].to_dict()
    base = (default[0].direction, default[0].significant)
    agree = [(a.direction, a.significant) == base for a in toy.analyses]
    assert s["analyses"] == len(toy.analyses)
    assert s["agree"] == sum(agree)
    assert s["share_agree"] == sum(agree) / len(agree)
    assert s["significant"] == sum(a.significant for a in toy.analyses)
    assert sum(s["directions"].values()) == len(toy.analyses)
    for dim, values in s["per_choice"].items():
        assert sum(c["analyses"] for c in values.values()) == len(toy.analyses)
        for v, c in values.items():
            group = [ok for a, ok in zip(toy.analyses, agree) if json.dumps(a.choices[dim]) == json.dumps(v)]
            assert c == {"analyses": len(group), "agree": sum(group), "flips": len(group) - sum(group),
                         "significant": sum(a.significant for a in toy.analyses
                                            if json.dumps(a.choices[dim]) == json.dumps(v))}
    flips = {(f["choice"], json.dumps(f["value"])) for f in s["one_change_flips"]}
    expected = set()
    for a in toy.analyses:
        changed = [k for k in toy.choices if a.choices[k] != default[0].choices[k]]
        if len(changed) == 1 and (a.direction, a.significant) != base:
            expected.add((changed[0], json.dumps(a.choices[changed[0]])))
    assert flips == expected


def test_bundled_data_figures(toy) -> None:  # type: ignore[no-untyped-def]
    """The figures docs/compare.md quotes (the issue's 96 analyses are the global/local ideals)."""
    d = toy.default
    assert (d.direction, d.significant) == ("better", True)
    assert d.mean_difference == pytest.approx(0.1794, abs=5e-5)
    sub = [a for a in toy.analyses if a.choices["ideal"] in ("global", "local")]
    assert len(sub) == 96
    assert not any(a.significant for a in sub if a.choices["missing"] == "zero")
    assert sum(a.significant for a in sub) == 18
    assert toy.summary()["agree"] == 37


def test_a_choice_that_flips_the_direction_is_detected() -> None:
    # one grade-2 document found at rank 1 by A; three grade-1 documents at ranks 1-3 by B: B wins with
    # linear gain (1 + 1/log2 3 + 1/2 = 2.13 > 2), A with exponential gain (2.13 < 2^2 - 1 = 3)
    qrels, run_a, run_b = {}, {}, {}
    for i in range(6):
        q = f"q{i}"
        qrels[q] = {"top": 2, "r1": 1, "r2": 1, "r3": 1, **{f"x{j}": 0 for j in range(i)}}
        run_a[q] = {"top": 3.0, **{f"x{j}": 2.0 - j / 10 for j in range(i)}}
        run_b[q] = {"r1": 3.0, "r2": 2.5, "r3": 2.0, **{f"x{j}": 1.0 - j / 10 for j in range(i)}}
    r = robustness(qrels, run_a, run_b, "DCG@5", tests=["t"], missing=["skip"])
    assert r.choices["gain"] == ("linear", "exp")
    for a in r.analyses:
        assert a.direction == ("better" if a.choices["gain"] == "linear" else "worse")
    s = r.summary()
    assert s["per_choice"]["gain"]["exp"]["flips"] == s["per_choice"]["gain"]["exp"]["analyses"] > 0
    assert s["per_choice"]["gain"]["linear"]["flips"] == 0
    assert {"choice": "gain", "value": "exp", "direction": "worse", "significant": True} in s["one_change_flips"]


def test_cli_json_and_bad_input(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["robustness", QRELS, BM25, DENSE, "-m", "P@5", "--tests", "t,randomisation",
                                   "--samples", "50", "--seed", "3", "-f", "json", "--quiet"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["systems"] == {"a": "bm25", "b": "dense"}
    assert len(doc["analyses"]) == 2 * 2 * 2 * 2
    assert set(doc["analyses"][0]) == {"choices", "measure", "n", "mean_difference", "p", "significant", "direction"}
    assert doc["summary"]["analyses"] == len(doc["analyses"])
    table = CliRunner().invoke(cli, ["robustness", QRELS, BM25, DENSE, "-m", "nDCG@10", "--tests", "t", "--quiet"])
    assert table.exit_code == 0 and "agree with the default: " in table.output
    bad = CliRunner().invoke(cli, ["robustness", QRELS, BM25, DENSE, "-m", "nDCG@10", "--tests", "t,nope"])
    assert bad.exit_code == 2 and "--tests" in bad.output and "Traceback" not in bad.output
