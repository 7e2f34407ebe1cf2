"""``robustness --only DIM=V1,V2`` and the issue's "16 of 96" figure.

The issue says the dense win on the bundled data is significant in 16 of the 96 analyses with the global and
local ideals; the engine gives 18. The recount here is independent of ranklens's statistics layer: the
per-query values come from ``ranklens.evaluate`` (one call per measure variant written out by hand), the
p-values from scipy (``ttest_rel``, ``wilcoxon``, and an exact sign-flip enumeration for the randomisation
test, 2^n vectors).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE = (str(EXAMPLES / n) for n in ("toy.qrels", "toy_bm25.run", "toy_dense.run"))


def _name(gain: str, ideal: str, ties: str, judged: bool) -> str:
    params = [f"gain={gain}"] * (gain != "linear") + [f"ties={ties}"] * (ties != "trec")
    params += [f"ideal={ideal}"] * (ideal != "global") + ["judged_only=true"] * judged
    return f"nDCG({','.join(params)})@10" if params else "nDCG@10"


def _per_query(run: str, measure: str, missing: str) -> dict[str, float]:
    return dict(ranklens.evaluate(QRELS, run, measure, missing=missing).per_query(measure))


def _exact_randomisation(d: np.ndarray) -> float:
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
    means = np.abs(signs @ d) / d.size
    return float(np.mean(means >= abs(d.mean()) - 1e-12))


@pytest.mark.filterwarnings("ignore")
def test_the_issue_figure_is_18_of_96_by_an_independent_recount() -> None:
    significant = {"t": 0, "randomisation": 0, "wilcoxon": 0}
    zero_significant = 0
    total = 0
    for gain, ideal, ties, judged, missing in itertools.product(
        ("linear", "exp"), ("global", "local"), ("trec", "average"), (False, True), ("skip", "zero")
    ):
        m = _name(gain, ideal, ties, judged)
        a, b = _per_query(BM25, m, missing), _per_query(DENSE, m, missing)
        common = sorted(set(a) & set(b))
        d = np.array([b[q] - a[q] for q in common])
        ps = {
            "t": float(scipy.stats.ttest_rel([b[q] for q in common], [a[q] for q in common]).pvalue),
            "randomisation": _exact_randomisation(d),
            "wilcoxon": float(scipy.stats.wilcoxon(d[np.abs(d) > 1e-12]).pvalue),
        }
        for test, p in ps.items():
            total += 1
            if p <= 0.05:
                significant[test] += 1
                zero_significant += missing == "zero"
    assert total == 96
    assert sum(significant.values()) == 18  # (the issue said 16)
    assert significant == {"t": 5, "randomisation": 7, "wilcoxon": 6}
    assert zero_significant == 0


@pytest.mark.filterwarnings("ignore")
def test_only_restricts_dimensions_and_the_json_says_so(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(cli, [
        "robustness", QRELS, BM25, DENSE, "-m", "nDCG@10", "--only", "ideal=local,global", "--only", "test=t",
        "--only", "judged_only=false", "-f", "json", "-o", str(out), "--quiet",
    ])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["choices"]["ideal"] == ["global", "local"]  # (in the analysis's order: the default first)
    assert data["choices"]["test"] == ["t"] and data["choices"]["judged_only"] == [False]
    assert len(data["analyses"]) == 2 * 2 * 2 * 1 * 2 * 1 == data["summary"]["analyses"]
    assert {a["choices"]["ideal"] for a in data["analyses"]} == {"global", "local"}
    assert all(a["choices"]["test"] == "t" and a["choices"]["judged_only"] is False for a in data["analyses"])
    # each analysis's p-value is scipy's paired t-test on the engine's per-query values
    for a in data["analyses"]:
        c = a["choices"]
        m = _name(c["gain"], c["ideal"], c["ties"], c["judged_only"])
        x, y = _per_query(BM25, m, c["missing"]), _per_query(DENSE, m, c["missing"])
        common = sorted(set(x) & set(y))
        assert a["p"] == pytest.approx(scipy.stats.ttest_rel([y[q] for q in common], [x[q] for q in common]).pvalue, rel=1e-9)


@pytest.mark.parametrize(
    ("only", "says"),
    [
        ("colour=red", "--only colour: not a choice of this analysis"),
        ("ideal=best", "--only ideal: expected values among global, local, recall, max; found best"),
        ("ideal", "--only: expected DIM=V1,V2"),
        ("test=sign", "--only test: expected values among t, randomisation, wilcoxon; found sign"),
    ],
)
def test_only_bad_input_is_one_line_exit_2(only: str, says: str) -> None:
    result = CliRunner().invoke(cli, ["robustness", QRELS, BM25, DENSE, "-m", "nDCG@10", "--only", only])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.output
