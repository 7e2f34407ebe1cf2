"""The judge-agreement feature (``ranklens.judges.agreement``) and ``ranklens judge agreement``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

import ranklens
from ranklens.cli.judge_agreement_cmd import agreement as agreement_cmd
from ranklens.errors import InputError
from ranklens.judges.agreement import agreement


def _world(seed: int = 5, queries: int = 30, docs: int = 15) -> tuple[dict, dict, dict]:
    """Human grades 0–3, a judge that is mostly right and sometimes one grade off (more often high), and
    five runs of decreasing quality."""
    g = np.random.default_rng(seed)
    human: dict[str, dict[str, int]] = {}
    judge: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {f"sys{k}": {} for k in range(5)}
    for q in range(queries):
        grades = g.integers(0, 4, docs)
        noise = g.choice([-1, 0, 0, 0, 1, 1], docs)
        human[f"q{q}"] = {f"d{d}": int(grades[d]) for d in range(docs)}
        judge[f"q{q}"] = {f"d{d}": int(np.clip(grades[d] + noise[d], 0, 3)) for d in range(docs)}
        for k, run in enumerate(runs.values()):
            scores = grades + g.normal(0, 0.7 + 0.8 * k, docs)
            run[f"q{q}"] = {f"d{d}": float(scores[d]) for d in range(docs)}
    return human, judge, runs


def test_statistics_match_the_reference_implementations() -> None:
    human, judge, _ = _world()
    res = agreement(human, judge)
    pairs = sorted((q, d) for q in human for d in human[q])
    h = [human[q][d] for q, d in pairs]
    j = [judge[q][d] for q, d in pairs]
    assert res.overlap == len(pairs) == 450 and res.human_only == res.judge_only == res.unjudged == 0
    assert res.kappa == pytest.approx(cohen_kappa_score(h, j))
    assert res.kappa_linear == pytest.approx(cohen_kappa_score(h, j, weights="linear"))
    assert res.kappa_quadratic == pytest.approx(cohen_kappa_score(h, j, weights="quadratic"))
    assert res.kappa_quadratic_interval.low < res.kappa_quadratic < res.kappa_quadratic_interval.high
    assert res.exact == pytest.approx(np.mean(np.array(h) == np.array(j)))
    assert res.confusion.counts.sum() == 450 and res.confusion.scale == (0, 1, 2, 3)
    krippendorff = pytest.importorskip("krippendorff")
    assert res.alpha_ordinal == pytest.approx(krippendorff.alpha(reliability_data=[h, j], level_of_measurement="ordinal"))
    assert res.ordering is None


def test_overlap_counts_and_unjudged_labels() -> None:
    human = {"q1": {"a": 1, "b": 0, "c": -1, "h": 2}, "q2": {"a": 3}}
    judge = {"q1": {"a": 1, "b": 1, "c": 2, "j": 0}, "q2": {"a": 3, "b": 0}}
    res = agreement(human, judge)
    assert (res.overlap, res.human_only, res.judge_only, res.unjudged) == (3, 1, 2, 1)


def test_no_overlap_is_an_error_not_nan() -> None:
    with pytest.raises(InputError, match="no \\(query, document\\) pair"):
        agreement({"q1": {"a": 1}}, {"q2": {"a": 1}})


def test_system_orderings_under_both_label_sets() -> None:
    human, judge, runs = _world()
    res = agreement(human, judge, runs=runs, measure="nDCG@10")
    o = res.ordering
    assert o is not None and o.systems == tuple(runs) and o.queries == 30
    expected_h = [ranklens.evaluate(human, r, "nDCG@10")["nDCG@10"] for r in runs.values()]
    expected_j = [ranklens.evaluate(judge, r, "nDCG@10")["nDCG@10"] for r in runs.values()]
    assert o.human == pytest.approx(expected_h) and o.judge == pytest.approx(expected_j)
    assert o.kendall_tau == pytest.approx(scipy.stats.kendalltau(expected_h, expected_j).statistic)
    assert o.human_top == o.judge_top == "sys0" and o.top_agrees
    assert o.tau_ap is not None and -1 <= o.tau_ap <= 1


def _write(tmp_path: Path, human: dict, judge: dict, runs: dict) -> tuple[str, str, list[str]]:
    def qrels(path: Path, data: dict) -> str:
        path.write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in data.items() for d, v in docs.items()))
        return str(path)

    paths = []
    for name, run in runs.items():
        lines = []
        for q, docs in run.items():
            for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), 1):
                lines.append(f"{q} Q0 {d} {rank} {s:.6f} {name}\n")
        p = tmp_path / f"{name}.run"
        p.write_text("".join(lines))
        paths.append(str(p))
    return qrels(tmp_path / "human.qrels", human), qrels(tmp_path / "judge.qrels", judge), paths


def test_cli_json_and_table(tmp_path: Path) -> None:
    human, judge, runs = _world()
    hq, jq, paths = _write(tmp_path, human, judge, runs)
    args = [hq, jq, *(x for p in paths for x in ("--runs", p)), "-m", "nDCG@10"]
    out = CliRunner().invoke(agreement_cmd, [*args, "-f", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    direct = agreement(human, judge, runs=runs)
    assert data["overlap"] == 450 and data["kappa_quadratic"] == pytest.approx(direct.kappa_quadratic)
    assert [s["name"] for s in data["ordering"]["systems"]] == list(runs)
    assert data["ordering"]["kendall_tau"] == pytest.approx(direct.ordering.kendall_tau)
    table = CliRunner().invoke(agreement_cmd, args)
    assert table.exit_code == 0, table.output
    for text in ("quadratic weights", "Krippendorff's alpha, ordinal", "Confusion", "Kendall's tau-b", "top system agrees"):
        assert text in table.output


def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    hq = tmp_path / "h.qrels"
    jq = tmp_path / "j.qrels"
    hq.write_text("q1 0 a 1\n")
    jq.write_text("q2 0 a 1\n")
    out = CliRunner().invoke(agreement_cmd, [str(hq), str(jq)])
    assert out.exit_code == 2 and out.output.count("\n") == 1 and out.output.startswith("ranklens: error: ")
    missing = CliRunner().invoke(agreement_cmd, [str(hq), str(tmp_path / "nope.qrels")])
    assert missing.exit_code == 2 and "no such file" in missing.output
