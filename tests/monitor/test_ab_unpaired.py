"""The monitor's A/B page runs the library's own ``ab`` (issue 25 §4) when the systems served different users:
its numbers equal ``ranklens ab -f json`` on the same per-user values, exposure days and pre-period; Welch
equals scipy, CUPED a hand computation (θ = cov/var on the pooled users), the always-valid interval the mSPRT
formula with one look per UTC day. Unknown pre-period snapshots are a 404, one sharing no user a 400."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.stats as st
from click.testing import CliRunner

from .conftest import TOKEN, backends, eval_json, make_db_url

AUTH = {"Authorization": f"Bearer {TOKEN}"}
P = "abunpaired"
M = "nDCG@4"
#: snapshot times per system; two on 2026-08-02 (one UTC day: one look)
TIMES = ["2026-08-01T06:00:00Z", "2026-08-02T06:00:00Z", "2026-08-02T20:00:00Z", "2026-08-03T06:00:00Z", "2026-08-04T06:00:00Z"]
DAY_OF = {0: "2026-08-01", 1: "2026-08-02", 2: "2026-08-02", 3: "2026-08-03", 4: "2026-08-04"}
SHARED = ["s0", "s1", "s2"]  # served by both systems: a broken split, left out with a note


def _data() -> dict[str, Any]:
    rng = np.random.default_rng(25)
    arms: dict[str, Any] = {}
    pre: dict[str, float] = {}
    for system, prefix, n, a in (("prod", "b", 80, 2.0), ("new", "n", 70, 2.6)):
        users = [f"{prefix}{i:03d}" for i in range(n)] + SHARED
        first = {u: int(rng.integers(0, 5)) for u in users}
        first[users[0]] = first[users[1]] = 0  # every look has 2 users in each arm
        final = {u: float(v) for u, v in zip(users, rng.beta(a, 2.0, len(users)))}
        for u in users:
            pre[u] = float(np.clip(0.8 * final[u] + rng.normal(0, 0.1), 0, 1))
        snaps = []
        for k in range(5):
            held = [u for u in users if first[u] <= k]
            # earlier snapshots hold interim values: the page must use the latest snapshot's
            vals = {u: (final[u] if k == 4 else float(rng.uniform())) for u in held}
            snaps.append(vals)
        arms[system] = {"final": final, "first": {u: DAY_OF[first[u]] for u in users}, "snaps": snaps}
    pre_b = {u: v for u, v in pre.items() if u.startswith("b")}
    pre_n = {u: v for u, v in pre.items() if u.startswith("n")}
    return {"arms": arms, "pre": pre, "pre_b": pre_b, "pre_n": pre_n}


@pytest.fixture(scope="module", params=backends())
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from fastapi.testclient import TestClient

    from ranklens.monitor.app import Settings, create_app

    url, pg = make_db_url(request.param, tmp_path_factory.mktemp("abunpaired"))
    application = create_app(Settings(db_url=url, token=TOKEN, run_worker=False))
    data = _data()
    pushes = [
        (f"{system}-{k}", system, TIMES[k], snap)
        for system in ("prod", "new") for k, snap in enumerate(data["arms"][system]["snaps"])
    ]
    pushes += [
        ("pre-all", "preperiod", "2026-07-25T06:00:00Z", data["pre"]),
        ("pre-b", "preperiod-b", "2026-07-25T06:00:00Z", data["pre_b"]),
        ("pre-n", "preperiod-n", "2026-07-25T06:00:00Z", data["pre_n"]),
        ("pre-elsewhere", "other", "2026-07-25T06:00:00Z", {f"x{i}": 0.5 + i / 100 for i in range(5)}),
    ]
    try:
        with TestClient(application, headers=AUTH) as c:
            for sid, system, at, vals in pushes:
                body = {"id": sid, "system": system, "at": at, "results": eval_json({u: {M: v} for u, v in vals.items()})}
                r = c.post(f"/api/v1/projects/{P}/snapshots", json=body, headers=AUTH)
                assert r.status_code == 201, r.text
            yield c, data, tmp_path_factory.mktemp("abfiles")
    finally:
        if pg is not None:
            pg.drop()


def _ab(c: Any, **params: Any) -> dict[str, Any]:
    r = c.get(f"/api/v1/projects/{P}/ab", params={"baseline": "prod", "candidate": "new", "measure": M, **params})
    assert r.status_code == 200, r.text
    return r.json()["comparison"]  # type: ignore[no-any-return]


def _results_file(path: Path, name: str, values: dict[str, float]) -> str:
    from ranklens.measures.language import parse_many
    from ranklens.results.core import assemble
    from ranklens.results.io import write_results

    users = list(values)
    write_results(assemble(name, parse_many([M]), users, np.array([[values[u]] for u in users])), path)
    return str(path)


def _cli(tmp: Path, data: dict[str, Any], pre: list[str], split: float) -> dict[str, Any]:
    from ranklens.cli.main import cli

    arms = data["arms"]
    control = _results_file(tmp / "prod.json", "prod", arms["prod"]["final"])
    treatment = _results_file(tmp / "new.json", "new", arms["new"]["final"])
    exposure = tmp / "exposure.tsv"
    days = {**arms["prod"]["first"], **arms["new"]["first"]}
    exposure.write_text("".join(f"{u}\t{d}\n" for u, d in days.items()), encoding="utf-8")
    pre_files = {
        "pre-all": _results_file(tmp / "pre_all.json", "pre", data["pre"]),
        "pre-b": _results_file(tmp / "pre_b.json", "pre", data["pre_b"]),
        "pre-n": _results_file(tmp / "pre_n.json", "pre", data["pre_n"]),
    }
    pre_args = ["--pre", pre_files[pre[0]], pre_files[pre[-1]]] if pre else []
    r = CliRunner().invoke(cli, [
        "ab", "-", control, "-", treatment, "-m", M, "--names", "prod", "new", "--sequential", "--exposure", str(exposure),
        "--expected-split", str(split), "--allow-overlap", "drop", *pre_args, "-f", "json", "--quiet", "-B", "50",
    ])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def _same(page: Any, cli: Any, where: str = "") -> None:
    """Equal structures, floats to 1e-9 (the users' order differs: sums in another order)."""
    if isinstance(cli, dict):
        assert isinstance(page, dict) and set(page) == set(cli), (where, sorted(page), sorted(cli))
        for k in cli:
            _same(page[k], cli[k], f"{where}.{k}")
    elif isinstance(cli, list):
        assert isinstance(page, list) and len(page) == len(cli), where
        for i, (a, b) in enumerate(zip(page, cli)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(cli, float):
        assert page == pytest.approx(cli, rel=1e-9, abs=1e-12), where
    else:
        assert page == cli, where


@pytest.mark.parametrize(("pre", "split"), [([], 0.5), (["pre-all"], 0.45), (["pre-b", "pre-n"], 0.5)])
def test_the_page_numbers_are_ranklens_ab_json(app: Any, pre: list[str], split: float) -> None:
    c, data, tmp = app
    comp = _ab(c, pre=pre, expected_split=split)
    cli = _cli(tmp, data, pre, split)
    assert comp["design"] == "unpaired" and "ranklens ab" in comp["design_text"]
    page_row, cli_row = comp["ab"]["measures"][M], cli["measures"][M]
    assert page_row["p"]["bootstrap"] is None  # the monitor never runs the bootstrap
    page_row["p"].pop("bootstrap"), cli_row["p"].pop("bootstrap")
    _same(page_row, cli_row, M)
    assert ("cuped" in page_row) == bool(pre)
    _same(comp["ab"]["srm"], cli["srm"], "srm")
    _same(comp["ab"]["counts"], cli["counts"], "counts")
    assert comp["ab"]["arms"] == cli["arms"] == {"control": "prod", "treatment": "new"}
    assert comp["mean_difference"] == cli_row["difference"] and comp["p_value"] == cli_row["p"]["welch"]
    assert (comp["n_baseline"], comp["n_candidate"]) == (80, 70)
    assert any("3 users in both arms (s0, s1, s2)" in n for n in comp["notes"])


def test_welch_equals_scipy_on_the_latest_values(app: Any) -> None:
    c, data, _ = app
    comp = _ab(c)
    xb = [v for u, v in data["arms"]["prod"]["final"].items() if u not in SHARED]
    xn = [v for u, v in data["arms"]["new"]["final"].items() if u not in SHARED]
    ref = st.ttest_ind(xn, xb, equal_var=False)
    assert comp["p_value"] == pytest.approx(float(ref.pvalue), abs=1e-12)
    assert [comp["ci_low"], comp["ci_high"]] == pytest.approx(list(map(float, ref.confidence_interval())), abs=1e-12)
    assert comp["ab"]["measures"][M]["p"]["mannwhitney"] == pytest.approx(float(st.mannwhitneyu(xn, xb).pvalue), abs=1e-12)


def test_cuped_equals_the_hand_computation(app: Any) -> None:
    c, data, _ = app
    cu = _ab(c, pre=["pre-all"])["ab"]["measures"][M]["cuped"]
    keep = lambda arm: [u for u in data["arms"][arm]["final"] if u not in SHARED]  # noqa: E731
    yb = [data["arms"]["prod"]["final"][u] for u in keep("prod")]
    yn = [data["arms"]["new"]["final"][u] for u in keep("new")]
    xb = [data["pre"][u] for u in keep("prod")]
    xn = [data["pre"][u] for u in keep("new")]
    x, y = xb + xn, yb + yn
    mx, my = sum(x) / len(x), sum(y) / len(y)
    theta = sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)  # cov / var
    adj_b = [b - theta * (a - mx) for a, b in zip(xb, yb)]
    adj_n = [b - theta * (a - mx) for a, b in zip(xn, yn)]
    assert cu["theta"] == pytest.approx([theta], rel=1e-9)
    assert cu["difference"] == pytest.approx(sum(adj_n) / len(adj_n) - sum(adj_b) / len(adj_b), rel=1e-9)
    ref = st.ttest_ind(adj_n, adj_b, equal_var=False)
    assert cu["ci"] == pytest.approx(list(map(float, ref.confidence_interval())), abs=1e-9)
    assert cu["users_without_pre"] == {"control": 0, "treatment": 0}


def test_the_always_valid_interval_is_the_msprt_formula_one_look_per_utc_day(app: Any) -> None:
    c, data, _ = app
    seq = _ab(c)["ab"]["measures"][M]["sequential"]
    days = sorted(set(DAY_OF.values()))
    assert seq["looks"] == 4 and [x["time"] for x in seq["path"]] == days  # two snapshots on 08-02: one look
    arms = {a: {u: v for u, v in data["arms"][a]["final"].items() if u not in SHARED} for a in ("prod", "new")}
    xb, xn = np.array(list(arms["prod"].values())), np.array(list(arms["new"].values()))
    pooled = math.sqrt(((xb.size - 1) * xb.var(ddof=1) + (xn.size - 1) * xn.var(ddof=1)) / (xb.size + xn.size - 2))
    tau = 0.1 * pooled
    assert seq["tau"] == pytest.approx(tau, rel=1e-12)
    p_run, lo_run, hi_run = 1.0, -math.inf, math.inf
    for look, day in zip(seq["path"], days):
        # a user counts from the first snapshot of its system that holds it, with its latest value
        b = np.array([v for u, v in arms["prod"].items() if data["arms"]["prod"]["first"][u] <= day])
        n = np.array([v for u, v in arms["new"].items() if data["arms"]["new"]["first"][u] <= day])
        d = n.mean() - b.mean()
        v = n.var(ddof=1) / n.size + b.var(ddof=1) / b.size
        lam = math.sqrt(v / (v + tau**2)) * math.exp(tau**2 * d**2 / (2 * v * (v + tau**2)))
        half = math.sqrt(v * (v + tau**2) / tau**2 * (2 * math.log(1 / 0.05) + math.log((v + tau**2) / v)))
        p_run, lo_run, hi_run = min(p_run, 1 / lam, 1.0), max(lo_run, d - half), min(hi_run, d + half)
        assert look["difference"] == pytest.approx(d, rel=1e-9)
        assert look["p"] == pytest.approx(p_run, rel=1e-9)
        assert look["ci"] == pytest.approx([lo_run, hi_run], rel=1e-9)
    assert seq["p"] == pytest.approx(p_run, rel=1e-9) and seq["ci"] == pytest.approx([lo_run, hi_run], rel=1e-9)


def test_srm_uses_the_planned_split(app: Any) -> None:
    c, _, _ = app
    even, skewed = _ab(c)["ab"]["srm"], _ab(c, expected_split=0.2)["ab"]["srm"]
    assert even["counts"] == skewed["counts"] == {"prod": 80, "new": 70}
    assert even["p"] == pytest.approx(float(st.chisquare([80, 70], [75, 75]).pvalue), rel=1e-12)
    assert skewed["p"] == pytest.approx(float(st.chisquare([80, 70], [30, 120]).pvalue), rel=1e-12)
    assert skewed["mismatch"] and not even["mismatch"]
    page = c.get(f"/projects/{P}/ab", params={"baseline": "prod", "candidate": "new", "measure": M, "expected_split": 0.2})
    assert page.status_code == 200 and "MISMATCH" in page.text and "Unpaired design" in page.text


def test_unknown_pre_snapshot_is_404_and_one_sharing_no_user_is_400(app: Any) -> None:
    c, _, _ = app
    base = {"baseline": "prod", "candidate": "new", "measure": M}
    r = c.get(f"/api/v1/projects/{P}/ab", params={**base, "pre": "no-such-snapshot"})
    assert r.status_code == 404 and "no-such-snapshot" in r.text
    r = c.get(f"/api/v1/projects/{P}/ab", params={**base, "pre": "pre-elsewhere"})
    assert r.status_code == 400, r.text
    message = r.json()["error"]["message"] if "error" in r.json() else r.json()["detail"]
    assert "shares no user" in message and "pre-elsewhere" in message and "\n" not in message
    r = c.get(f"/api/v1/projects/{P}/ab", params={**base, "pre": ["pre-b", "pre-b"]})  # baseline's fits, candidate's not
    assert r.status_code == 400 and "new arm" in r.text
    r = c.get(f"/api/v1/projects/{P}/ab", params={**base, "pre": ["pre-b", "pre-n", "pre-all"]})
    assert r.status_code == 422
    r = c.get(f"/api/v1/projects/{P}/ab", params={**base, "pre": "prod-4"})  # the latest snapshot is no pre-period
    assert r.status_code == 400 and "latest snapshot compared" in r.text


def test_the_html_page_shows_the_same_numbers(app: Any) -> None:
    c, _, _ = app
    comp = _ab(c, pre=["pre-all"])
    page = c.get(f"/projects/{P}/ab", params={"baseline": "prod", "candidate": "new", "measure": M, "pre": "pre-all"})
    assert page.status_code == 200
    row = comp["ab"]["measures"][M]
    for text in ("CUPED (pre-period pre-all)", "Always-valid", "4 look(s), one per UTC day", "Sample ratio"):
        assert text in page.text, text
    from ranklens.report._format import num

    assert num(row["cuped"]["difference"]) in page.text and num(row["sequential"]["ci"][1]) in page.text


def test_a_repeated_answer_comes_from_the_cache(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ranklens.monitor import ab_unpaired

    calls = []
    real = ab_unpaired.unpaired_stats
    monkeypatch.setattr(ab_unpaired, "unpaired_stats", lambda *a, **k: calls.append(1) or real(*a, **k))
    c, _, _ = app
    first, again = _ab(c, expected_split=0.37), _ab(c, expected_split=0.37)
    assert first == again and len(calls) == 1
    _ab(c, expected_split=0.38)  # another split: another answer
    assert len(calls) == 2


def test_the_same_queries_stay_paired_and_say_the_pre_period_is_not_used(app: Any) -> None:
    c, _, _ = app
    r = c.get(f"/api/v1/projects/{P}/ab", params={"baseline": "prod", "candidate": "prod", "measure": M, "pre": "pre-all"})
    comp = r.json()["comparison"]
    assert r.status_code == 200 and comp["design"] == "paired" and comp["wins"] is not None and "ab" not in comp
    assert any("paired design" in n for n in comp["notes"])


def test_a_pre_period_snapshot_of_a_compared_system_is_no_exposure(app: Any) -> None:
    # prod-1 as the baseline's pre-period: prod-0 and prod-1 no longer give exposure days, so every prod user
    # counts from prod-2 (2026-08-02) at the earliest and the first look with 2 users per arm is that day
    c, data, _ = app
    seq = _ab(c, pre=["prod-1", "pre-n"])["ab"]["measures"][M]["sequential"]
    assert [x["time"] for x in seq["path"]] == ["2026-08-02", "2026-08-03", "2026-08-04"]
    prod = {u: v for u, v in data["arms"]["prod"]["final"].items() if u not in SHARED}
    new = {u: v for u, v in data["arms"]["new"]["final"].items() if u not in SHARED}
    first_b = {u: max(d, "2026-08-02") for u, d in data["arms"]["prod"]["first"].items()}
    b = [v for u, v in prod.items() if first_b[u] <= "2026-08-02"]
    n = [v for u, v in new.items() if data["arms"]["new"]["first"][u] <= "2026-08-02"]
    assert seq["path"][0]["difference"] == pytest.approx(np.mean(n) - np.mean(b), rel=1e-9)
