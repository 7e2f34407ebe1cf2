"""Position-bias estimation: EM and interventions recover a known θ in simulation; errors; the plot."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from click.testing import CliRunner

from ranklens.cli.main import COMMANDS, cli
from ranklens.errors import FormatError, InputError, MissingDependencyError
from ranklens.unbiased import PositionBias, estimate_position_bias

TRUE_THETA = np.arange(1, 7) ** -0.8


def simulated_log(seed: int = 5, queries: int = 20, pages: int = 120, intervention_every: int = 0) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    slots, items = 6, 10
    log: dict[str, list] = {"query": [], "item": [], "position": [], "click": [], "intervention": []}
    for q in range(queries):
        rho = rng.beta(1.2, 2.5, items)
        base = np.log(rho) + rng.normal(0, 0.8, items)
        for p in range(pages):
            shuffled = bool(intervention_every) and p % intervention_every == 0
            order = rng.permutation(items)[:slots] if shuffled else np.argsort(-(base + rng.gumbel(0, 0.7, items)))[:slots]
            clicks = rng.random(slots) < TRUE_THETA * rho[order]
            log["query"] += [f"q{q}"] * slots
            log["item"] += [f"q{q}-{j}" for j in order]
            log["position"] += list(range(1, slots + 1))
            log["click"] += clicks.astype(int).tolist()
            log["intervention"] += [int(shuffled)] * slots
    return log


def test_em_recovers_theta_within_ci() -> None:
    pb = estimate_position_bias(simulated_log(), n_boot=60)
    assert pb.converged and pb.theta[0] == 1.0
    truth = TRUE_THETA / TRUE_THETA[0]
    inside = (pb.ci_low - 0.02 <= truth) & (truth <= pb.ci_high + 0.02)
    assert inside.all(), (pb.theta, pb.ci_low, pb.ci_high)
    np.testing.assert_allclose(pb.theta, truth, atol=0.08)


def test_intervention_recovers_theta() -> None:
    pb = estimate_position_bias(simulated_log(seed=9, intervention_every=1), method="intervention", n_boot=100, confidence=0.99)
    truth = TRUE_THETA / TRUE_THETA[0]
    assert ((pb.ci_low <= truth) & (truth <= pb.ci_high)).all(), (pb.theta, pb.ci_low, pb.ci_high)
    assert pb.impressions.sum() == 20 * 120 * 6


def test_em_not_identified_is_noted() -> None:
    log = {"query": ["q"] * 4, "item": ["a", "b", "a", "b"], "position": [1, 2, 1, 2], "click": [1, 0, 0, 1]}
    pb = estimate_position_bias(log, n_boot=0)
    assert any("single position" in n for n in pb.notes)


@pytest.mark.parametrize(
    ("log", "kwargs", "error", "pattern"),
    [
        ({"query": ["q"], "item": ["a"], "click": [1]}, {}, FormatError, r"missing column 'position'"),
        ({"query": ["q"], "item": ["a"], "position": [1.5], "click": [1]}, {}, FormatError, r"row 1: position must be an integer ≥ 1 .* got 1.5"),
        ({"query": ["q", "q"], "item": ["a", "b"], "position": [1, 2], "click": [1, 0]}, {"method": "intervention"}, FormatError, r"missing column 'intervention'"),
        ({"query": ["q"], "item": ["a"], "position": [2], "click": [1]}, {}, InputError, r"no click at position 1"),
        ({"query": ["q"], "item": ["a"], "position": [1], "click": [1]}, {"method": "magic"}, InputError, r"method must be"),
    ],
)
def test_errors(log, kwargs, error: type, pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        estimate_position_bias(log, n_boot=0, **kwargs)


def test_plot_and_table(tmp_path) -> None:
    pb = estimate_position_bias(simulated_log(queries=4, pages=40), n_boot=10)
    fig = pb.plot(str(tmp_path / "bias.html"))
    page = (tmp_path / "bias.html").read_text(encoding="utf-8")
    import re

    assert re.search(r"<script[^>]*\bsrc=", page) is None  # offline: no external script, plotly.js is inlined
    assert len(page) > 1_000_000
    assert (tmp_path / "bias.html").exists() and len(fig.data) == 2
    assert "1/log2(k+1)" in pb.table() and pb.to_dict()["positions"][0]["theta"] == 1.0


def test_plot_without_plotly_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ranklens\[plot\]'"):
        PositionBias.from_values([1.0, 0.5]).plot()


def test_cli(tmp_path, monkeypatch) -> None:
    import polars as pl

    monkeypatch.setitem(COMMANDS, "ips", ("ranklens.cli.ips_cmd", "command", "IPS."))
    path = tmp_path / "clicks.parquet"
    pl.DataFrame(simulated_log(queries=5, pages=40, intervention_every=2)).write_parquet(path)
    out = CliRunner().invoke(cli, ["ips", "position-bias", str(path), "--boot", "20", "--plot", str(tmp_path / "p.html")])
    assert out.exit_code == 0, out.output
    assert "position bias (em)" in out.output and (tmp_path / "p.html").exists()
    out = CliRunner().invoke(cli, ["ips", "position-bias", str(path), "--method", "intervention", "--json", "--boot", "0"])
    assert out.exit_code == 0 and '"method": "intervention"' in out.output
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    out = CliRunner().invoke(cli, ["ips", "position-bias", str(path), "--boot", "0", "--plot", str(tmp_path / "q.html")])
    assert out.exit_code == 0 and "plot skipped" in out.output
