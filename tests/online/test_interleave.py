"""Team-draft interleaving (issue 25): the credit of a hand-worked log, the command, and a simulated log where
ranker B is better, detected with far fewer impressions than the A/B test needs on the same simulated users."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.errors import FormatError
from ranklens.online.interleaving import credit, interleave, read_log, team_draft
from ranklens.stats.power import sample_size
from ranklens.stats.unpaired import welch_test

HAND_LOG = """impression,position,item,team,click,segment
i1,1,d1,A,1,tv
i1,2,d7,B,0,tv
i1,3,d2,A,1,tv
i2,1,d4,B,1,tv
i2,2,d1,A,0,tv
i3,1,d3,A,0,mobile
i3,2,d9,B,0,mobile
i4,1,d5,B,1,mobile
i4,2,d2,A,1,mobile
i5,1,d8,B,1,mobile
"""


def test_hand_worked_log(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(HAND_LOG)
    # by hand: i1 A 2 clicks vs B 0 → A; i2 B 1 vs A 0 → B; i3 no click → tie; i4 1–1 → tie; i5 B 1 → B
    got = [(c.impression, c.clicks_a, c.clicks_b, c.winner) for c in credit(read_log(path))]
    assert got == [("i1", 2, 0, "A"), ("i2", 0, 1, "B"), ("i3", 0, 0, "tie"), ("i4", 1, 1, "tie"), ("i5", 0, 1, "B")]
    overall, mobile, tv = interleave(path, samples=500)
    # Δ_AB = (wins_A + ties/2)/N − 1/2 = (1 + 1)/5 − 0.5 = −0.1; sign test: 1 of 3 decided → p = 1
    assert (overall.wins_a, overall.wins_b, overall.ties) == (1, 2, 2)
    assert overall.delta == pytest.approx(-0.1) and overall.p == pytest.approx(1.0)
    assert (mobile.segment, mobile.impressions, mobile.delta) == ("mobile", 3, pytest.approx((0 + 1) / 3 - 0.5))
    assert (tv.segment, tv.wins_a, tv.wins_b) == ("tv", 1, 1)
    result = CliRunner().invoke(cli, ["interleave", str(path), "-f", "json", "-B", "200"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert d["results"][0]["delta_ab"] == pytest.approx(-0.1)
    assert [(i["impression"], i["clicks_a"], i["clicks_b"], i["winner"]) for i in d["impressions"]] == got


def test_bad_log_line_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("impression,team,click\ni1,A,1\ni2,C,0\n")
    with pytest.raises(FormatError, match=r"log.csv:3: expected team A or B"):
        read_log(path)
    result = CliRunner().invoke(cli, ["interleave", str(path)])
    assert result.exit_code == 2 and "expected team A or B" in result.stderr and len(result.stderr.splitlines()) == 1


def test_team_draft_alternates_fairly() -> None:
    merged = team_draft(["a", "b", "c", "d"], ["b", "a", "e", "f"], k=4, seed=3)
    teams = [t for _, t in merged]
    assert len({i for i, _ in merged}) == 4 and teams.count("A") == teams.count("B") == 2


def _clicks(order: np.ndarray, rel: np.ndarray, activity: np.ndarray, u: np.random.Generator, k: int = 4) -> np.ndarray:
    """Clicks (users × k) on the top-k of ``order``: examined with prob. 1/rank, clicked when relevant, times
    the user's activity."""
    top = np.take_along_axis(rel, order[:, :k], axis=1)
    examine = u.random(top.shape) < 1.0 / np.arange(1, k + 1)
    return (examine & (u.random(top.shape) < activity[:, None]) & (top > 0)).astype(int)


def test_interleaving_detects_the_better_ranker_with_far_fewer_impressions() -> None:
    rng = np.random.default_rng(25)
    users, items = 400, 20
    rel = (rng.random((users, items)) < 0.25).astype(float)
    activity = rng.beta(0.6, 0.6, users)  # users differ a lot: the A/B test's noise, cancelled within a user
    order_a = np.argsort(-(rel + rng.normal(0, 1.2, rel.shape)), axis=1)  # A: noisier ranker
    order_b = np.argsort(-(rel + rng.normal(0, 0.8, rel.shape)), axis=1)  # B: better ranker
    # interleaving: each user sees one team-draft merge; clicks by the same model
    rows = []
    for i in range(users):
        merged = team_draft([str(j) for j in order_a[i]], [str(j) for j in order_b[i]], k=4, seed=rng)
        shown = np.array([[int(d) for d, _ in merged]])
        clicks = _clicks(np.arange(4)[None, :], rel[i : i + 1, shown[0]], activity[i : i + 1], rng)[0]
        rows += [{"impression": f"i{i}", "team": t, "click": int(c)} for (_, t), c in zip(merged, clicks)]
    inter = interleave(rows, samples=1000)[0]
    # the A/B test on the same users: half see A, half see B; per-user clicks in the top 4
    arm_b = rng.permutation(users) < users // 2
    ca = _clicks(order_a[~arm_b], rel[~arm_b], activity[~arm_b], rng).sum(axis=1)
    cb = _clicks(order_b[arm_b], rel[arm_b], activity[arm_b], rng).sum(axis=1)
    ab_p = welch_test(cb, ca).p_value
    # users per arm the A/B test needs for the true difference (every user under both rankers, many draws)
    big = np.repeat(np.arange(users), 50)
    true_a = _clicks(order_a[big], rel[big], activity[big], rng).sum(axis=1)
    true_b = _clicks(order_b[big], rel[big], activity[big], rng).sum(axis=1)
    sd = float(np.sqrt((true_a.var(ddof=1) + true_b.var(ddof=1)) / 2))
    need, _ = sample_size(float(true_b.mean() - true_a.mean()), sd, design="unpaired")
    print(
        f"interleaving: {users} impressions, Δ_AB {inter.delta:+.3f}, p {inter.p:.2g}; A/B on the same {users} users: "
        f"p {ab_p:.2g}; the A/B test needs {need} users per arm ({2 * need} users) for 80% power"
    )
    assert inter.delta < 0 and inter.p < 0.001  # B preferred, clearly
    assert ab_p > 0.05  # the A/B test on the same users does not see it
    assert 2 * need > 3 * users  # and would need over three times as many users
    # docs/ab.md prints these figures: they are this simulation's
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "ab.md").read_text(encoding="utf-8").split())
    sentence = (
        f"interleaving finds B better on {users} impressions (Δ_AB {inter.delta:+.3f}, p = {inter.p:.2g}) while the A/B "
        f"test on the same {users} users does not (p = {ab_p:.2g}), and the A/B test would need {need} users per arm — "
        f"{2 * need:,} users, {2 * need / users:.1f} times as many — for 80% power"
    ).replace("-", "−")
    assert sentence in doc, sentence
