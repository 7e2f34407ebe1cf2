"""Plugins: a user-defined measure goes through evaluate, the CLI eval/explain and ranklens.compare."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import InputError, MeasureError
from ranklens.measures import registry
from ranklens.plugins import Family, load_plugins, plugin_specs_in_args, preload_plugins, register_measure

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plugins" / "harm_weighted.py"
QRELS = {"q1": {"a": 4, "b": 0, "c": 2, "d": 1}, "q2": {"x": 3, "y": 0}}
RUN = {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}, "q2": {"x": 2.0, "y": 1.0}}


@pytest.fixture(autouse=True)
def clean_registry():
    """Every test starts and ends with the built-in measures only."""
    from ranklens.engine.kernels import KERNELS

    families, lookup, kernels = dict(registry._FAMILIES), dict(registry._LOOKUP), dict(KERNELS)
    modules = set(sys.modules)
    yield
    registry._FAMILIES.clear()
    registry._FAMILIES.update(families)
    registry._LOOKUP.clear()
    registry._LOOKUP.update(lookup)
    KERNELS.clear()
    KERNELS.update(kernels)
    for name in set(sys.modules) - modules:
        if name.startswith("ranklens_plugin_") or name == "my_plugin":
            del sys.modules[name]


def expected_hwndcg(harm: float = 3.0) -> dict[str, float]:
    # q1: ranking b (harmful: −harm), a (4 → 7), c (2 → 1); ideal 7, 1
    q1 = (-harm + 7 / math.log2(3) + 1 / 2) / (7 + 1 / math.log2(3))
    # q2: x (3 → 3), y (harmful) at rank 2; ideal 3
    q2 = (3 - harm / math.log2(3)) / 3
    return {"q1": q1, "q2": q2}


def test_example_plugin_through_evaluate() -> None:
    load_plugins([str(EXAMPLE)])
    res = ranklens.evaluate(QRELS, RUN, ["HWnDCG@3", "HWnDCG(harm=0)@3"])
    assert res.per_query("HWnDCG@3") == pytest.approx(expected_hwndcg())
    assert res.per_query("HWnDCG(harm=0)@3") == pytest.approx(expected_hwndcg(0.0))
    assert str(ranklens.parse("hwndcg(harm=10)@5")) == "HWnDCG(harm=10)@5"


def test_loading_twice_is_harmless_and_names_are_protected() -> None:
    first = load_plugins([str(EXAMPLE)])[0]
    assert load_plugins([str(EXAMPLE)])[0] is first
    with pytest.raises(MeasureError, match="already registered by another definition"):
        register_measure(Family("HWnDCG", "something else"), lambda lists, m: lists.lengths.astype(float))
    with pytest.raises(MeasureError, match="already registered"):
        register_measure(Family("nDCG", "clash"), lambda lists, m: lists.lengths.astype(float))


def test_register_a_measure_in_python(tmp_path) -> None:
    module = tmp_path / "my_plugin.py"
    module.write_text(
        "from ranklens.plugins import Param, measure\n"
        "@measure('GoodAt', doc='Fraction of the top k with label >= good.', cutoff='required',\n"
        "         params=(Param('good', 'int', 2, 'the good label'),))\n"
        "def good_at(lists, m):\n"
        "    hit = (lists.labels >= m.get('good')) & (lists.rank0 < m.cutoff)\n"
        "    return lists.per_query_sum(hit.astype(float)) / m.cutoff\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        load_plugins(["my_plugin"])
    finally:
        sys.path.remove(str(tmp_path))
    res = ranklens.evaluate(QRELS, RUN, ["GoodAt@2", "GoodAt(good=4)@2"])
    assert res.aggregates == (pytest.approx(0.5), pytest.approx(0.25))


def test_bad_plugins(tmp_path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_plugins([str(tmp_path / "missing.py")])
    with pytest.raises(InputError, match="no module named 'no_such_module_xyz'"):
        load_plugins(["no_such_module_xyz"])
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(InputError, match="failed to load: RuntimeError: boom"):
        load_plugins([str(broken)])


def test_specs_in_args_and_environment(monkeypatch) -> None:
    monkeypatch.setenv("RANKLENS_PLUGINS", "env_mod")
    assert plugin_specs_in_args(["--plugin", "a.py", "-m", "AP", "--plugin=b"]) == ["env_mod", "a.py", "b"]
    monkeypatch.setenv("RANKLENS_PLUGINS", str(EXAMPLE))
    preload_plugins([])
    assert ranklens.parse("HWnDCG@3")


def write_inputs(tmp_path: Path) -> tuple[str, str, str]:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run = tmp_path / "a.run"
    run.write_text("".join(f"{q} Q0 {d} 1 {s} a\n" for q, docs in RUN.items() for d, s in docs.items()))
    other = tmp_path / "b.run"
    other.write_text("".join(f"{q} Q0 {d} 1 {-s} b\n" for q, docs in RUN.items() for d, s in docs.items()))
    return str(qrels), str(run), str(other)


def test_cli_eval_and_explain_with_plugin(tmp_path) -> None:
    qrels, run, _ = write_inputs(tmp_path)
    out = CliRunner().invoke(cli, ["eval", qrels, run, "--plugin", str(EXAMPLE), "-m", "HWnDCG@3", "-m", "AP", "-f", "tsv", "-q"])
    assert out.exit_code == 0, out.output
    values = {line.split("\t")[1]: float(line.split("\t")[2]) for line in out.output.splitlines() if line.startswith("HWnDCG@3")}
    assert values["q1"] == pytest.approx(expected_hwndcg()["q1"])
    out = CliRunner().invoke(cli, ["explain", qrels, run, "--plugin", str(EXAMPLE), "--query", "q1", "-m", "HWnDCG@3"])
    assert out.exit_code == 0, out.output
    assert f"{expected_hwndcg()['q1']:.6f}" in out.output


def test_cli_without_plugin_says_unknown_measure(tmp_path) -> None:
    qrels, run, _ = write_inputs(tmp_path)
    out = CliRunner().invoke(cli, ["eval", qrels, run, "-m", "HWnDCG@3"])
    assert out.exit_code == 2 and "unknown measure 'HWnDCG@3'" in out.output
    out = CliRunner().invoke(cli, ["eval", qrels, run, "--plugin", "no_such_module_xyz", "-m", "AP"])
    assert out.exit_code == 2 and "no module named 'no_such_module_xyz'" in out.output


def test_plugin_measure_in_compare(tmp_path) -> None:
    compare = pytest.importorskip("ranklens.comparison")
    load_plugins([str(EXAMPLE)])
    cmp = compare.compare(QRELS, {"good": RUN, "bad": {q: {d: -s for d, s in docs.items()} for q, docs in RUN.items()}},
                          ["HWnDCG@3"], test="t")
    row = cmp.rows[0]
    assert row.measure == "HWnDCG@3" and row.n == 2
    qrels, run, other = write_inputs(tmp_path)
    out = CliRunner().invoke(cli, ["compare", qrels, run, other, "--plugin", str(EXAMPLE), "-m", "HWnDCG@3"])
    assert out.exit_code == 0, out.output
    assert "HWnDCG@3" in out.output
