"""IPS DCG: the spec §5 worked example (exact expectation and a 4-page sample) and a simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from click.testing import CliRunner

from ranklens.cli.main import COMMANDS, cli
from ranklens.errors import FormatError, InputError
from ranklens.unbiased import PositionBias, ips_dcg

THETA = [1.0, 1 / math.log2(3)]
RHO = {"u": 0.8, "v": 0.2}
TARGET = {"x": {"u": 2.0, "v": 1.0}}
SAMPLE = [(("u", "v"), (1, 0)), (("v", "u"), (0, 1)), (("u", "v"), (1, 1)), (("v", "u"), (0, 0))]


def log_of(pages, exposure: float | None = None) -> dict[str, list]:
    log: dict[str, list] = {"impression": [], "query": [], "item": [], "position": [], "click": []}
    for n, (order, clicks) in enumerate(pages):
        for k, (item, c) in enumerate(zip(order, clicks), start=1):
            log["impression"].append(n)
            log["query"].append("x")
            log["item"].append(item)
            log["position"].append(k)
            log["click"].append(c)
    if exposure is not None:
        log["e0"] = [exposure] * len(log["item"])
    return log


def test_spec_sample_of_four_pages() -> None:
    log = log_of(SAMPLE)
    assert round(ips_dcg(log, TARGET, n_boot=0).value, 6) == 1.113147
    assert round(ips_dcg(log, TARGET, clip=1.1, n_boot=0).value, 6) == 1.018426
    est = ips_dcg(log, TARGET, self_normalize=True, n_boot=0)
    assert round(est.value, 6) == 1.113147 and est.mean_weight == pytest.approx(1.0)
    assert ips_dcg(log, TARGET, clip=1.1, n_boot=0).clipped_rows == 4  # every row of u


def test_spec_exact_expectation_by_enumeration() -> None:
    """E[IPS] over every single-page outcome of the logging policy (uniform over the two orders, clicks
    from the position-based model) equals the target's true value 0.926186; the naive click average
    equals the logging value 0.815465."""
    e0 = (THETA[0] + THETA[1]) / 2  # 0.815465: the known logging exposure of both items
    expected_ips = expected_naive = 0.0
    for order in (("u", "v"), ("v", "u")):
        p_click = [THETA[k] * RHO[item] for k, item in enumerate(order)]
        for clicks in itertools.product((0, 1), repeat=2):
            prob = 0.5 * math.prod(p if c else 1 - p for p, c in zip(p_click, clicks))
            est = ips_dcg(log_of([(order, clicks)], e0), TARGET, logging_exposure="e0", n_boot=0)
            expected_ips += prob * est.value
            expected_naive += prob * est.naive
    true_value = RHO["u"] * THETA[0] + RHO["v"] * THETA[1]
    assert round(true_value, 6) == 0.926186
    assert round(expected_ips, 6) == 0.926186
    assert round(expected_naive, 6) == 0.815465


def simulate(rng: np.random.Generator, n_pages: int) -> tuple[dict[str, list], dict[str, dict[str, float]], float]:
    """Contexts with 6 items and 4 slots; logging = a noisy ranking; clicks from the PBM with θ = DCG
    discount; target = a fixed ranking. Returns the log, the target and its true value."""
    queries = {f"q{i}": rng.uniform(0.05, 0.9, 6) for i in range(5)}
    target = {q: {f"{q}i{j}": float(s) for j, s in enumerate(rng.permutation(6))} for q in queries}
    theta = 1 / np.log2(np.arange(1, 5) + 1)
    true = 0.0
    for q, rho in queries.items():
        order = sorted(target[q], key=lambda d: -target[q][d])[:4]
        true += sum(theta[k] * rho[int(d.split("i")[1])] for k, d in enumerate(order)) / len(queries)
    log: dict[str, list] = {"impression": [], "query": [], "item": [], "position": [], "click": []}
    names = list(queries)
    for page in range(n_pages):
        q = names[page % len(names)]
        rho = queries[q]
        order = np.argsort(-(np.log(rho) + rng.gumbel(0, 1.0, 6)))[:4]
        clicks = rng.random(4) < theta * rho[order]
        log["impression"] += [page] * 4
        log["query"] += [q] * 4
        log["item"] += [f"{q}i{j}" for j in order]
        log["position"] += [1, 2, 3, 4]
        log["click"] += clicks.astype(int).tolist()
    return log, target, true


def test_simulation_unbiased_within_ci() -> None:
    rng = np.random.default_rng(2024)
    log, target, true = simulate(rng, 6000)
    est = ips_dcg(log, target, n_boot=300, seed=1)
    assert est.ci_low <= true <= est.ci_high, (est, true)
    assert abs(est.naive - true) > abs(est.value - true)  # the naive click average is biased
    sn = ips_dcg(log, target, self_normalize=True, n_boot=0)
    assert sn.value == pytest.approx(true, rel=0.05)


def test_simulation_mean_over_replications_converges() -> None:
    """Across independent logs the estimates centre on the true value (bias ≪ spread)."""
    errors = []
    for seed in range(12):
        log, target, true = simulate(np.random.default_rng(seed + 100), 800)
        errors.append(ips_dcg(log, target, n_boot=0).value - true)
    assert abs(np.mean(errors)) < 3 * np.std(errors) / math.sqrt(len(errors)) + 1e-9


def test_examination_choices() -> None:
    log = log_of(SAMPLE)
    by_list = ips_dcg(log, TARGET, examination=THETA, n_boot=0).value
    by_pb = ips_dcg(log, TARGET, examination=PositionBias.from_values(THETA), n_boot=0).value
    by_fn = ips_dcg(log, TARGET, examination=lambda k: 1 / np.log2(k + 1), n_boot=0).value
    assert by_list == pytest.approx(1.113147, abs=1e-6) and by_pb == pytest.approx(by_list) and by_fn == pytest.approx(by_list)
    only_top = ips_dcg(log, TARGET, k=1, n_boot=0)  # the target shows u alone
    assert only_top.value == pytest.approx(3 * (1 / 0.815465) / 4, abs=1e-6)


def test_target_missing_a_query_is_noted() -> None:
    log = log_of(SAMPLE)
    log["query"][-2:] = ["y", "y"]
    est = ips_dcg(log, TARGET, n_boot=0)
    assert any("not ranked by the target" in n for n in est.notes)


@pytest.mark.parametrize(
    ("change", "error", "pattern"),
    [
        (lambda log: log.pop("impression"), FormatError, r"missing column 'impression' \(the id of the page"),
        (lambda log: log["position"].__setitem__(2, 0), FormatError, r"<columns>: row 3: position must be an integer ≥ 1"),
        (lambda log: log["click"].__setitem__(1, 2), FormatError, r"row 2: column 'click' is an event indicator and must be 0 or 1, got 2"),
    ],
)
def test_bad_logs(change, error: type, pattern: str) -> None:
    log = log_of(SAMPLE)
    change(log)
    with pytest.raises(error, match=pattern):
        ips_dcg(log, TARGET, n_boot=0)


def test_bad_options() -> None:
    with pytest.raises(InputError, match="clip must be > 0"):
        ips_dcg(log_of(SAMPLE), TARGET, clip=0)
    with pytest.raises(InputError, match="outside the estimated positions"):
        ips_dcg(log_of(SAMPLE), TARGET, examination=[1.0], n_boot=0)


def test_cli(tmp_path, monkeypatch) -> None:
    import polars as pl

    monkeypatch.setitem(COMMANDS, "ips", ("ranklens.cli.ips_cmd", "command", "IPS."))
    path = tmp_path / "clicks.csv"
    pl.DataFrame(log_of(SAMPLE)).write_csv(path)
    target = tmp_path / "target.run"
    target.write_text("x Q0 u 1 2.0 t\nx Q0 v 2 1.0 t\n")
    out = CliRunner().invoke(cli, ["ips", "dcg", str(path), str(target), "--boot", "0"])
    assert out.exit_code == 0, out.output
    assert "IPS DCG = 1.113147" in out.output
    out = CliRunner().invoke(cli, ["ips", "dcg", str(path), str(target), "--clip", "1.1", "--json", "--boot", "50"])
    assert out.exit_code == 0 and '"value": 1.0184' in out.output
    bad = tmp_path / "bad.csv"
    bad.write_text("impression,query,item,position,click\n1,x,u,0,1\n")
    out = CliRunner().invoke(cli, ["ips", "dcg", str(bad), str(target)])
    assert out.exit_code == 2 and "bad.csv:2: position must be an integer ≥ 1" in out.output
