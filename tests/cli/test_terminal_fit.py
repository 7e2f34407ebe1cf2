"""Terminal tables fit the terminal (80 and 120 columns): compare and eval tables are split or lose
low-priority columns (with a note), ``measures`` wraps its definitions; machine formats are unaffected.
compare --worst lists the queries that dropped most; compare and gate show progress as eval does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.measures import families

QRELS = "".join(f"q{i} 0 d{i} 1\nq{i} 0 e{i} 2\nq{i} 0 f{i} 0\n" for i in range(1, 9))


def _run(tag: str, good: set[int]) -> str:
    lines = []
    for i in range(1, 9):
        docs = [f"d{i}", f"e{i}", f"f{i}"] if i in good else [f"f{i}", f"x{i}", f"d{i}"]
        lines += [f"q{i} Q0 {d} {r} {10 - r} {tag}" for r, d in enumerate(docs, 1)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "q.qrels").write_text(QRELS)
    out = {"qrels": str(tmp_path / "q.qrels")}
    for name, good in (
        ("baseline_system_with_a_long_name", {1, 2, 3, 4}),
        ("candidate_system_with_a_longer_name", {1, 2, 3, 5, 6, 7}),
    ):
        (tmp_path / f"{name}.run").write_text(_run(name, good))
        out[name] = str(tmp_path / f"{name}.run")
    return out


def invoke(width: int, *args: str) -> str:
    result = CliRunner(env={"COLUMNS": str(width)}).invoke(cli, list(args))
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def assert_fits(text: str, width: int) -> None:
    too_long = [line for line in text.splitlines() if len(line) > width]
    assert not too_long, f"{len(too_long)} lines wider than {width}:\n" + "\n".join(too_long[:5])


@pytest.mark.parametrize("width", [80, 120])
def test_compare_fits(files: dict[str, str], width: int) -> None:
    a, b = files["baseline_system_with_a_long_name"], files["candidate_system_with_a_longer_name"]
    out = invoke(width, "compare", files["qrels"], a, b, "-m", "nDCG@10", "AP")
    assert_fits(out, width)
    assert "95% CI" in out and "p (holm)" in out and "Δ" in out
    if width == 80:
        assert "left out to fit 80 columns" in out


def test_compare_keeps_every_column_when_there_is_room(files: dict[str, str]) -> None:
    a, b = files["baseline_system_with_a_long_name"], files["candidate_system_with_a_longer_name"]
    out = invoke(250, "compare", files["qrels"], a, b, "-m", "nDCG@10")
    assert "left out" not in out
    for column in ("mean base", "mean sys", "Δ%", "W/T/L"):
        assert column in out


@pytest.mark.parametrize("width", [80, 120])
def test_measures_fits(width: int) -> None:
    out = invoke(width, "measures")
    assert_fits(out, width)
    for f in families():
        assert f"│ {f.name} " in out


@pytest.mark.parametrize("width", [80, 120])
def test_eval_many_runs_fits_and_keeps_every_value(files: dict[str, str], tmp_path: Path, width: int) -> None:
    runs = []
    for i in range(9):
        path = tmp_path / f"system_number_{i}.run"
        path.write_text(_run(f"system_number_{i}", set(range(1, i + 1))))
        runs.append(str(path))
    out = invoke(width, "eval", files["qrels"], *runs, "-m", "nDCG@10", "AP")
    assert_fits(out, width)
    for i in range(9):
        assert f"system_number_{i}" in out


def test_eval_per_query_many_measures_fits(files: dict[str, str]) -> None:
    run = files["baseline_system_with_a_long_name"]
    measures = ["nDCG@1", "nDCG@2", "nDCG@3", "AP", "P@1", "P@2", "P@3", "RR", "R@1", "R@2", "R@3", "Success@1"]
    out = invoke(80, "eval", files["qrels"], run, "-m", *measures, "--per-query")
    assert_fits(out, 80)
    for m in measures:
        assert m in out


def test_machine_formats_do_not_depend_on_the_width(files: dict[str, str]) -> None:
    a, b = files["baseline_system_with_a_long_name"], files["candidate_system_with_a_longer_name"]
    for fmt in ("markdown", "json", "latex"):
        narrow = invoke(80, "compare", files["qrels"], a, b, "-m", "nDCG@10", "-f", fmt)
        wide = invoke(300, "compare", files["qrels"], a, b, "-m", "nDCG@10", "-f", fmt)
        assert narrow == wide, fmt
    narrow = invoke(80, "eval", files["qrels"], a, b, "-f", "csv")
    assert narrow == invoke(300, "eval", files["qrels"], a, b, "-f", "csv")


def test_compare_worst(files: dict[str, str]) -> None:
    a, b = files["baseline_system_with_a_long_name"], files["candidate_system_with_a_longer_name"]
    out = invoke(120, "compare", files["qrels"], f"old={a}", f"new={b}", "-m", "P@1", "--worst", "3")
    assert "P@1 — largest drops of new against old" in out
    section = out[out.index("largest drops") :]
    assert "q4" in section  # good in old, poor in new
    assert "q5" not in section.split("significant after")[0]  # q5 improved
    assert_fits(out, 120)


def test_compare_json_has_per_query_deltas(files: dict[str, str]) -> None:
    a, b = files["baseline_system_with_a_long_name"], files["candidate_system_with_a_longer_name"]
    doc = json.loads(invoke(120, "compare", files["qrels"], f"old={a}", f"new={b}", "-m", "P@1", "-f", "json"))
    deltas = {d["query_id"]: d["delta"] for d in doc["per_query"] if d["measure"] == "P@1"}
    assert len(deltas) == 8
    assert deltas["q4"] == -1.0 and deltas["q5"] == 1.0 and deltas["q1"] == 0.0
    assert set(doc["per_query"][0]) == {
        "baseline", "system", "measure", "query_id", "value_baseline", "value_system", "delta"
    }


def test_compare_and_gate_show_progress(files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    import ranklens.cli._progress as progress

    shown: list[str] = []
    real_status, real_bytes = progress.status, progress.byte_progress

    def status(message: str, *, enabled: bool):  # type: ignore[no-untyped-def]
        if enabled:
            shown.append(message)
        return real_status(message, enabled=False)

    def byte_progress(label: str, total: int, *, enabled: bool):  # type: ignore[no-untyped-def]
        if enabled:
            shown.append(label)
        return real_bytes(label, total, enabled=False)

    monkeypatch.setattr(progress, "wanted", lambda quiet: not quiet)
    monkeypatch.setattr(progress, "status", status)
    monkeypatch.setattr(progress, "byte_progress", byte_progress)
    a, b = files["baseline_system_with_a_long_name"], files["candidate_system_with_a_longer_name"]
    invoke(120, "compare", files["qrels"], a, b, "-m", "P@1")
    assert any(s.startswith("evaluating baseline_system_with_a_long_name") for s in shown), shown
    assert any(s.startswith("evaluating candidate_system_with_a_longer_name") for s in shown), shown
    shown.clear()
    invoke(120, "gate", files["qrels"], b, "--baseline", a, "--max-drop", "P@1=1")
    assert any(s.startswith("evaluating") for s in shown), shown
    shown.clear()
    invoke(120, "compare", files["qrels"], a, b, "-m", "P@1", "--quiet")
    assert shown == []
