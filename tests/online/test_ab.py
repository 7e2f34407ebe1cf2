"""``ranklens ab`` and :func:`ranklens.online.ab`: the JSON contract, the engine's per-user values, the
sample-ratio warning first in every output, bad input in one line with exit status 2 (issue 25)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as st
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import InputError, RanklensWarning
from ranklens.online import ab

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "streaming"


def _arm(prefix: str, n: int, hit_every: int) -> tuple[dict, dict]:
    qrels = {f"{prefix}{i}": {"good": 1} for i in range(n)}
    run = {f"{prefix}{i}": ({"good": 2.0, "bad": 1.0} if i % hit_every == 0 else {"bad": 2.0, "good": 1.0}) for i in range(n)}
    return qrels, run


def _quiet(func, *args, **kwargs):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        return func(*args, **kwargs)


def test_json_structure_and_values_come_from_the_engine() -> None:
    qc, rc = _arm("c", 30, 3)
    qt, rt = _arm("t", 25, 2)
    r = _quiet(ab, qc, rc, qt, rt, ["P@1", "nDCG@2"], samples=500)
    d = r.to_dict()
    row = d["measures"]["P@1"]
    xc = np.array(list(ranklens.evaluate(qc, rc, "P@1").per_query("P@1").values()))
    xt = np.array(list(ranklens.evaluate(qt, rt, "P@1").per_query("P@1").values()))
    assert row["control"] == {"n": 30, "mean": pytest.approx(xc.mean()), "sd": pytest.approx(xc.std(ddof=1))}
    assert row["treatment"]["n"] == 25
    assert row["difference"] == pytest.approx(xt.mean() - xc.mean())
    assert row["p"]["welch"] == pytest.approx(float(st.ttest_ind(xt, xc, equal_var=False).pvalue), abs=1e-12)
    assert row["p"]["mannwhitney"] == pytest.approx(float(st.mannwhitneyu(xt, xc).pvalue), abs=1e-12)
    assert set(row) >= {"control", "treatment", "difference", "ci", "relative_lift", "p", "p_adjusted"}
    assert {"welch", "mannwhitney", "bootstrap"} <= set(row["p"])
    assert d["srm"]["counts"] == {"control": 30, "treatment": 25} and 0 < d["srm"]["p"] <= 1
    # Holm over the two measures
    ps = sorted(d["measures"][m]["p"]["welch"] for m in ("P@1", "nDCG@2"))
    assert min(d["measures"][m]["p_adjusted"] for m in ("P@1", "nDCG@2")) == pytest.approx(min(1, 2 * ps[0]))
    assert json.loads(r.to_json()) == d


def test_system_level_measures_are_left_out_with_a_note() -> None:
    qc, rc = _arm("c", 10, 3)
    qt, rt = _arm("t", 10, 2)
    r = _quiet(ab, qc, rc, qt, rt, ["P@1", "Coverage@2"], samples=100)
    assert list(r.measures) == ["P@1"] and r.excluded == ("Coverage@2",)
    assert any("system-level" in n for n in r.notes)


def test_unlabelled_users_follow_the_missing_rule_and_are_counted() -> None:
    qc, rc = _arm("c", 10, 3)
    rc["c_silent"] = {"good": 1.0}
    qt, rt = _arm("t", 10, 2)
    skip = _quiet(ab, qc, rc, qt, rt, ["P@1"], samples=100)
    zero = _quiet(ab, qc, rc, qt, rt, ["P@1"], samples=100, missing="zero")
    assert skip["P@1"]["control"]["n"] == 10 and zero["P@1"]["control"]["n"] == 11
    assert skip.counts["control"]["unlabelled"] == zero.counts["control"]["unlabelled"] == 1
    with pytest.raises(InputError, match="without any engagement label"):
        _quiet(ab, qc, rc, qt, rt, ["P@1"], missing="error")


def test_bad_input_is_refused() -> None:
    qc, rc = _arm("c", 10, 3)
    qt, rt = _arm("t", 10, 2)
    with pytest.raises(InputError, match="in both arms"):
        _quiet(ab, qc, rc, qc, rc, ["P@1"])
    kept = _quiet(ab, qc, rc, qc, rc, ["P@1"], allow_overlap="keep", samples=100)
    rt_shared = {**rt, "c0_silent": {"bad": 1.0}}  # served by both arms, engaged in neither: still a broken split
    rc_shared = {**rc, "c0_silent": {"bad": 1.0}}
    with pytest.raises(InputError, match="1 user in both arms"):
        _quiet(ab, qc, rc_shared, qt, rt_shared, ["P@1"])
    dropped = _quiet(ab, qc, rc_shared, qt, rt_shared, ["P@1"], allow_overlap="drop", missing="zero", samples=100)
    assert dropped["P@1"]["control"]["n"] == 10 and dropped["P@1"]["treatment"]["n"] == 10
    assert kept["P@1"]["treatment"]["n"] == 10
    q1, r1 = _arm("x", 1, 1)
    with pytest.raises(InputError, match="at least 2"):
        _quiet(ab, q1, r1, qt, rt, ["P@1"])
    with pytest.raises(InputError, match="not given"):
        _quiet(ab, qc, rc, qt, rt, ["P@1"], assignment={"c1": "control", "t1": "variant-b"})


def test_srm_warning_is_first_in_every_output(tmp_path: Path) -> None:
    qc, rc = _arm("c", 70, 3)
    qt, rt = _arm("t", 30, 2)
    r = _quiet(ab, qc, rc, qt, rt, ["P@1"], samples=100)
    assert r.srm["mismatch"] and r.srm["p"] < 0.001 and r.warnings
    from ranklens.online.report import render_ab

    assert render_ab(r, "table").startswith("!!! SAMPLE RATIO MISMATCH")
    assert render_ab(r, "markdown").startswith("> **Warning: SAMPLE RATIO MISMATCH")
    assert json.loads(render_ab(r, "json"))["warnings"][0].startswith("SAMPLE RATIO MISMATCH")
    assert render_ab(r, "latex").startswith("% WARNING: SAMPLE RATIO MISMATCH")
    page = render_ab(r, "html")
    assert page.index('<p class="warning">SAMPLE RATIO MISMATCH') < page.index("<h1>")


def test_sequential_path_over_exposure_times_is_the_running_mspRT() -> None:
    from ranklens.stats.sequential import msprt_path

    qc, rc = _arm("c", 40, 3)
    qt, rt = _arm("t", 40, 2)
    day = {u: f"2026-05-0{1 + i % 4}" for arm in (qc, qt) for i, u in enumerate(arm)}
    r = _quiet(ab, qc, rc, qt, rt, ["P@1"], samples=100, sequential=True, exposure=day, tau=0.05)
    seq = r["P@1"]["sequential"]
    assert seq["looks"] == 4 and [p["time"] for p in seq["path"]] == [f"2026-05-0{d}" for d in range(1, 5)]
    # by hand: the users exposed up to each day, their difference and Welch variance, then the running mSPRT
    xc, xt = r.values["P@1"]
    tc = np.array([day[u] for u in sorted(qc)])  # the arm's users in the engine's (bytewise) order
    tt = np.array([day[u] for u in sorted(qt)])
    diffs, variances = [], []
    for d in sorted(set(day.values())):
        c, t = xc[tc <= d], xt[tt <= d]
        diffs.append(t.mean() - c.mean())
        variances.append(t.var(ddof=1) / t.size + c.var(ddof=1) / c.size)
    p, low, high = msprt_path(np.array(diffs), np.array(variances), 0.05)
    assert [x["p"] for x in seq["path"]] == pytest.approx(p.tolist())
    assert seq["ci"] == pytest.approx([low[-1], high[-1]])
    assert seq["p"] == pytest.approx(p[-1]) and "always-valid" in seq["kind"]


def test_cli_on_the_streaming_example() -> None:
    runner = CliRunner()
    files = [str(EXAMPLE / f) for f in ("control.qrels", "control.run", "treatment.qrels", "treatment.run")]
    result = runner.invoke(cli, [
        "ab", *files, "-m", "nDCG@4", "--assignment", str(EXAMPLE / "assignment.tsv"), "--missing", "zero",
        "--pre", str(EXAMPLE / "control_pre.json"), str(EXAMPLE / "treatment_pre.json"), "--sequential",
        "-f", "json", "--quiet", "-B", "500",
    ])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    row = d["measures"]["nDCG@4"]
    assert row["control"]["n"] == 307 and row["treatment"]["n"] == 293
    assert row["difference"] > 0 and row["p"]["welch"] < 1e-4
    assert {"difference", "ci", "variance_reduction"} <= set(row["cuped"])
    assert "always-valid" in row["sequential"]["kind"]
    assert d["srm"]["p"] > 0.001 and "assignment" in d["srm"]["source"]


def test_per_user_results_files_stand_in_for_runs() -> None:
    # the pre-period files are per-user results (eval -q -f json): an arm may be given that way, qrels unused
    result = CliRunner().invoke(cli, [
        "ab", "-", str(EXAMPLE / "control_pre.json"), "-", str(EXAMPLE / "treatment_pre.json"), "-m", "nDCG@4",
        "-f", "json", "-B", "100", "--quiet",
    ])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)["measures"]["nDCG@4"]
    pre_c = ranklens.read_results(EXAMPLE / "control_pre.json")[0]
    assert row["control"]["n"] == len(pre_c.query_ids)
    assert row["control"]["mean"] == pytest.approx(float(np.mean(pre_c.column("nDCG@4"))))


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex", "html"])
def test_cli_report_formats(fmt: str, tmp_path: Path) -> None:
    files = [str(EXAMPLE / f) for f in ("control.qrels", "control.run", "treatment.qrels", "treatment.run")]
    result = CliRunner().invoke(cli, ["ab", *files, "-m", "nDCG@4", "P@1", "--missing", "zero", "-f", fmt, "-B", "200",
                                      "--segments", str(EXAMPLE / "segments.tsv"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "nDCG@4" in result.stdout and "P@1" in result.stdout and "mobile" in result.stdout


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--assignment", "ASSIGN"], "not given"),
        (["--pre", "TPRE", "TPRE2"], "shares no user"),
    ],
)
def test_cli_bad_input_one_line_exit_2(tmp_path: Path, extra: list[str], expected: str) -> None:
    files = [str(EXAMPLE / f) for f in ("control.qrels", "control.run", "treatment.qrels", "treatment.run")]
    assign = tmp_path / "assignment.tsv"
    assign.write_text("u0000\tcontrol\nu0001\tvariant-b\n")
    extra = [str(assign) if e == "ASSIGN" else str(EXAMPLE / "treatment_pre.json") if e.startswith("TPRE") else e for e in extra]
    result = CliRunner().invoke(cli, ["ab", *files, "-m", "nDCG@4", "-B", "50", *extra])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and expected in err[0] and "Traceback" not in result.output


def test_the_walk_through_shows_what_the_command_prints() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ab.md").read_text(encoding="utf-8")
    files = [str(EXAMPLE / f) for f in ("control.qrels", "control.run", "treatment.qrels", "treatment.run")]
    result = CliRunner().invoke(cli, [
        "ab", *files, "-m", "nDCG@4", "--missing", "zero", "--assignment", str(EXAMPLE / "assignment.tsv"),
        "--pre", str(EXAMPLE / "control_pre.json"), str(EXAMPLE / "treatment_pre.json"), "--sequential", "--quiet",
    ])
    assert result.exit_code == 0, result.output
    table_row = next(line for line in result.stdout.splitlines() if line.startswith("nDCG@4 "))
    assert table_row in doc
    for line in result.stdout.splitlines():
        if line.startswith(("sample ratio:", "CUPED nDCG@4:", "sequential nDCG@4:")):
            assert line.replace("assignment (" + str(EXAMPLE / "assignment.tsv") + ")", "assignment (assignment.tsv)") in doc, line


def test_per_user_file_is_the_pilot_of_plan(tmp_path: Path) -> None:
    from statsmodels.stats.power import TTestIndPower

    files = [str(EXAMPLE / f) for f in ("control.qrels", "control.run", "treatment.qrels", "treatment.run")]
    out = tmp_path / "per_user.json"
    runner = CliRunner()
    r = runner.invoke(cli, ["ab", *files, "-m", "nDCG@4", "--missing", "zero", "--per-user", str(out), "-B", "50", "--quiet"])
    assert r.exit_code == 0, r.output
    control, treatment = ranklens.read_results(out)
    assert (control.run, len(control.query_ids), treatment.run, len(treatment.query_ids)) == ("control", 307, "treatment", 293)
    xc, xt = control.column("nDCG@4"), treatment.column("nDCG@4")
    assert int((xc == 0).sum()) >= 69  # the users who watched nothing, scored 0 by --missing zero
    pooled = np.sqrt(((xc.size - 1) * xc.var(ddof=1) + (xt.size - 1) * xt.var(ddof=1)) / (xc.size + xt.size - 2))
    p = runner.invoke(cli, ["plan", str(out), "-m", "nDCG@4", "--delta", "0.03", "--design", "unpaired", "-f", "json"])
    assert p.exit_code == 0, p.output
    ref = TTestIndPower().solve_power(effect_size=0.03 / pooled, alpha=0.05, power=0.8)
    assert json.loads(p.stdout)["n"] == int(np.ceil(ref))


def test_a_rows_bootstrap_does_not_depend_on_the_other_measures() -> None:
    qc, rc = _arm("c", 30, 3)
    qt, rt = _arm("t", 25, 2)
    one = _quiet(ab, qc, rc, qt, rt, ["P@1"], samples=300, seed=4, ci="bootstrap")
    two = _quiet(ab, qc, rc, qt, rt, ["nDCG@2", "P@1"], samples=300, seed=4, ci="bootstrap")
    assert one["P@1"]["p"]["bootstrap"] == two["P@1"]["p"]["bootstrap"]
    assert one["P@1"]["ci"] == two["P@1"]["ci"]


def test_a_52_48_assignment_of_20000_users_is_a_loud_mismatch() -> None:
    qc, rc = _arm("c", 10, 3)
    qt, rt = _arm("t", 10, 2)
    assignment = {f"c{i}": "control" for i in range(10_400)} | {f"t{i}": "treatment" for i in range(9_600)}
    r = _quiet(ab, qc, rc, qt, rt, ["P@1"], samples=100, assignment=assignment)
    assert r.srm["counts"] == {"control": 10_400, "treatment": 9_600} and r.srm["mismatch"]
    from ranklens.online.report import render_ab

    assert render_ab(r, "table").splitlines()[0].startswith("!!! SAMPLE RATIO MISMATCH: control 10400, treatment 9600")
