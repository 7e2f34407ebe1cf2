"""Issue 25's "Done when" items for ``ranklens ab`` not held elsewhere: the HTML report's per-arm
distributions, lift interval and cumulative sequential interval carry the analysed numbers; the command
refuses users in both arms and a 1-user arm in one line (exit 2); users without any engagement label are
counted and said; ``ab_values`` (the monitor's entry) equals ``ab`` on the same per-user values."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import RanklensWarning
from ranklens.online import ab, ab_values

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "streaming"
FILES = [str(EXAMPLE / f) for f in ("control.qrels", "control.run", "treatment.qrels", "treatment.run")]


def _arm(prefix: str, n: int, hit_every: int) -> tuple[dict[str, Any], dict[str, Any]]:
    qrels = {f"{prefix}{i}": {"good": 1} for i in range(n)}
    run = {f"{prefix}{i}": ({"good": 2.0, "bad": 1.0} if i % hit_every == 0 else {"bad": 2.0, "good": 1.0}) for i in range(n)}
    return qrels, run


def _figures(page: str) -> list[dict[str, Any]]:
    payload = re.search(r'<script type="application/json" id="ranklens-figures">(.*?)</script>', page, re.S)
    assert payload is not None
    return list(json.loads(payload.group(1).replace("<\\/", "</")).values())


def test_html_report_draws_the_analysed_numbers() -> None:
    from ranklens.online.report import render_ab

    qc, rc = _arm("c", 40, 3)
    qt, rt = _arm("t", 36, 2)
    day = {u: f"2026-05-0{1 + i % 3}" for arm in (qc, qt) for i, u in enumerate(arm)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        r = ab(qc, rc, qt, rt, ["P@1"], samples=200, sequential=True, exposure=day)
    figs = _figures(render_ab(r, "html"))
    violins = next(f for f in figs if f["data"][0]["type"] == "violin")
    engine_c = ranklens.evaluate(qc, rc, "P@1").per_query("P@1")
    engine_t = ranklens.evaluate(qt, rt, "P@1").per_query("P@1")
    assert sorted(violins["data"][0]["y"]) == sorted(engine_c.values())  # every control user's value
    assert sorted(violins["data"][1]["y"]) == sorted(engine_t.values())
    lift = next(f for f in figs if f["data"][0]["y"] == ["relative lift"])["data"][0]
    mc, mt = np.mean(list(engine_c.values())), np.mean(list(engine_t.values()))
    assert lift["x"][0] == pytest.approx(100 * (mt / mc - 1), rel=1e-12)  # by hand
    low, high = r["P@1"]["relative_lift_ci"]
    assert lift["x"][0] + lift["error_x"]["array"][0] == pytest.approx(100 * high)
    assert lift["x"][0] - lift["error_x"]["arrayminus"][0] == pytest.approx(100 * low)
    path = next(f for f in figs if "always-valid" in f["layout"]["title"]["text"])
    assert path["data"][0]["x"] == ["2026-05-01", "2026-05-02", "2026-05-03"]
    assert path["data"][2]["y"] == pytest.approx([p["difference"] for p in r["P@1"]["sequential"]["path"]])


def test_cli_refuses_users_in_both_arms_in_one_line(tmp_path: Path) -> None:
    # the control arm given as both arms: every user in both
    result = CliRunner().invoke(cli, ["ab", FILES[0], FILES[1], FILES[0], FILES[1], "-m", "nDCG@4", "-B", "50"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and "in both arms" in err[0] and "--allow-overlap" in err[0] and "Traceback" not in result.output


def test_cli_refuses_a_one_user_arm_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "one.qrels").write_text("u9999 0 m1 1\n", encoding="utf-8")
    (tmp_path / "one.run").write_text("u9999 Q0 m1 1 2.0 x\nu9999 Q0 m2 2 1.0 x\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["ab", FILES[0], FILES[1], str(tmp_path / "one.qrels"), str(tmp_path / "one.run"), "-m", "nDCG@4", "-B", "50"]
    )
    assert result.exit_code == 2, result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and "treatment: 1 user to analyse; an arm needs at least 2" in err[0]


def test_cli_counts_and_says_the_unlabelled_users() -> None:
    # users served a list without any engagement label: counted from the files themselves
    served = {line.split()[0] for line in (EXAMPLE / "control.run").read_text().splitlines() if line.strip()}
    labelled = {line.split()[0] for line in (EXAMPLE / "control.qrels").read_text().splitlines() if line.strip()}
    silent = len(served - labelled)
    assert silent > 0
    for missing, n in (("skip", len(served) - silent), ("zero", len(served))):
        result = CliRunner().invoke(cli, ["ab", *FILES, "-m", "nDCG@4", "--missing", missing, "-f", "json", "-B", "50"])
        assert result.exit_code == 0, result.output
        d = json.loads(result.stdout)
        assert d["counts"]["control"]["unlabelled"] == silent and d["measures"]["nDCG@4"]["control"]["n"] == n
        assert f"control: {silent} users shown a list but without any engagement label" in result.stderr


def test_ab_values_equals_ab_on_the_same_per_user_values() -> None:
    qc, rc = _arm("c", 30, 3)
    qt, rt = _arm("t", 25, 2)
    pre = {u: float(i % 5) / 5 for i, u in enumerate([*qc, *qt])}
    pre_res = ranklens.evaluate(qc, rc, "P@1")  # only to build a Results holding P@1 for the pre-period
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        from ranklens.results.core import assemble

        pre_file = assemble("pre", pre_res.measures, list(pre), np.array([[v] for v in pre.values()]))
        ref = ab(qc, rc, qt, rt, ["P@1"], samples=300, pre=(pre_file, pre_file), sequential=True, expected_split=0.6)
        got = ab_values(
            {"P@1": ranklens.evaluate(qc, rc, "P@1").per_query("P@1")}, {"P@1": ranklens.evaluate(qt, rt, "P@1").per_query("P@1")},
            samples=300, pre=({"P@1": pre}, {"P@1": pre}), sequential=True, expected_split=0.6,
        )
    a, b = ref.to_dict(), got.to_dict()
    assert a["measures"] == b["measures"] and a["srm"] == b["srm"] and a["counts"] == b["counts"]
