"""``ranklens.judges.ppi.ppi_evaluate`` and ``ranklens judge ppi`` on a biased judge."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ranklens
from ranklens import stats
from ranklens.cli.judge_ppi_cmd import ppi as ppi_cmd
from ranklens.errors import InputError
from ranklens.judges.ppi import ppi_evaluate


def _world(seed: int = 3, queries: int = 200, labelled: int = 40, docs: int = 10) -> tuple[dict, dict, dict, dict]:
    """Human qrels on the first ``labelled`` queries; judge qrels on all, over-grading by one at random."""
    g = np.random.default_rng(seed)
    human, judge, a, b = {}, {}, {}, {}
    for q in range(queries):
        grades = g.integers(0, 4, docs)
        bumped = np.clip(grades + (g.random(docs) < 0.4), 0, 3)
        if q < labelled:
            human[f"q{q}"] = {f"d{d}": int(grades[d]) for d in range(docs)}
        judge[f"q{q}"] = {f"d{d}": int(bumped[d]) for d in range(docs)}
        a[f"q{q}"] = {f"d{d}": float(grades[d] + g.normal(0, 1.0)) for d in range(docs)}
        b[f"q{q}"] = {f"d{d}": float(grades[d] + g.normal(0, 2.5)) for d in range(docs)}
    return human, judge, a, b


def test_ppi_evaluate_is_the_rectified_judge_mean() -> None:
    human, judge, a, _ = _world()
    r = ppi_evaluate(human, judge, a, measure="nDCG@10", tune=False)
    y = ranklens.Evaluator("nDCG@10", human)(a, warn=False).per_query("nDCG@10")
    f = ranklens.Evaluator("nDCG@10", judge)(a, warn=False).per_query("nDCG@10")
    lab = sorted(y)
    rest = sorted(set(f) - set(y))
    expected = stats.ppi_mean([y[q] for q in lab], [f[q] for q in lab], [f[q] for q in rest], tune=False)
    assert r.ppi == expected and (r.ppi.n, r.ppi.n_unlabelled) == (40, 160)
    assert r.human_only.estimate == pytest.approx(np.mean(list(y.values())))
    assert r.judge_only.estimate == pytest.approx(np.mean(list(f.values())))


def test_paired_difference() -> None:
    human, judge, a, b = _world()
    r = ppi_evaluate(human, judge, a, vs=b, names=("A", "B"))
    assert r.system == "A - B" and r.ppi.method == "ppi++" and r.ppi.estimate > 0


def test_too_few_judge_only_queries_is_an_error() -> None:
    human, judge, a, _ = _world(queries=41, labelled=40)
    with pytest.raises(InputError, match="judge-only"):
        ppi_evaluate(human, judge, a)


def test_cli(tmp_path: Path) -> None:
    human, judge, a, b = _world()

    def write(path: Path, data: dict, run: bool = False) -> str:
        if run:
            path.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, ds in data.items() for d, s in ds.items()))
        else:
            path.write_text("".join(f"{q} 0 {d} {v}\n" for q, ds in data.items() for d, v in ds.items()))
        return str(path)

    hq, jq = write(tmp_path / "h.qrels", human), write(tmp_path / "j.qrels", judge)
    ra, rb = write(tmp_path / "a.run", a, run=True), write(tmp_path / "b.run", b, run=True)
    out = CliRunner().invoke(ppi_cmd, [hq, jq, f"dense={ra}", "--vs", f"bm25={rb}", "-m", "nDCG@10", "-f", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["system"] == "dense - bm25" and data["ppi"]["n"] == 40 and data["ppi"]["n_unlabelled"] == 160
    table = CliRunner().invoke(ppi_cmd, [hq, jq, ra, "--no-tune"])
    assert table.exit_code == 0, table.output
    assert "PPI" in table.output and "judge labels only (naive)" in table.output
    bad = CliRunner().invoke(ppi_cmd, [hq, hq, ra])
    assert bad.exit_code == 2 and bad.output.startswith("ranklens: error: ") and bad.output.count("\n") == 1
