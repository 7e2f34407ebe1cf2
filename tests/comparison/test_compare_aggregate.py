"""``compare`` of a measure aggregated by a median or a percentile (``--aggregate median``,
``nDCG(agg=median)@10``) compares that aggregate, not the mean (issue 22, the gap left after item 6): the
systems' medians, their difference, a paired randomisation test whose statistic is the difference of the
medians, and the paired bootstrap percentile interval of that difference; the row says so
(``aggregate``, ``test``, ``ci_method``). Oracles: numpy's percentiles of pytrec_eval's per-query values,
scipy's ``permutation_test`` (exact, ``permutation_type="samples"``) and scipy's paired ``bootstrap``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
import scipy.stats
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli

# the toy runs' notes (a query dense never answered, the pairing's dropped query) are warnings; they are
# checked elsewhere (tests/comparison/test_compare.py)
pytestmark = pytest.mark.filterwarnings("ignore::ranklens.errors.RanklensWarning")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE = EXAMPLES / "toy.qrels", EXAMPLES / "toy_bm25.run", EXAMPLES / "toy_dense.run"


def _trec(path: Path, columns: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out.setdefault(f[0], {})[f[2]] = float(f[4] if columns == 6 else f[3])
    return out


def _paired_ndcg10() -> tuple[list[str], np.ndarray, np.ndarray]:
    """pytrec_eval's nDCG@10 of both runs on the queries both answered (files read by a plain split)."""
    qrels = {q: {d: int(v) for d, v in docs.items()} for q, docs in _trec(QRELS, 4).items()}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"})
    a, b = ev.evaluate(_trec(BM25, 6)), ev.evaluate(_trec(DENSE, 6))
    common = sorted(set(a) & set(b))
    return common, np.array([a[q]["ndcg_cut_10"] for q in common]), np.array([b[q]["ndcg_cut_10"] for q in common])


def _q(agg: str, x: np.ndarray, axis: int = -1) -> np.ndarray:
    if agg == "min":
        return np.min(x, axis=axis)
    if agg == "max":
        return np.max(x, axis=axis)
    return np.percentile(x, 50.0 if agg == "median" else float(agg[1:]), axis=axis)


def _scipy_p(agg: str, base: np.ndarray, system: np.ndarray) -> float:
    res = scipy.stats.permutation_test(
        (system, base), lambda x, y, axis: _q(agg, x, axis) - _q(agg, y, axis),
        permutation_type="samples", vectorized=True, n_resamples=np.inf, alternative="two-sided",
    )
    return float(res.pvalue)


@pytest.mark.parametrize("agg", ["median", "p90", "p25", "min", "max"])
def test_compare_tests_the_aggregate_it_shows(agg: str) -> None:
    common, base, system = _paired_ndcg10()
    assert len(common) == 11  # exact enumeration in both ranklens and scipy (2^11)
    cmp = ranklens.compare(str(QRELS), {"bm25": str(BM25), "dense": str(DENSE)}, ["nDCG@10"], aggregate=agg,
                           baseline="bm25", samples=20_000)
    (row,) = cmp.select()
    assert row.aggregate == agg
    assert row.mean_baseline == pytest.approx(float(_q(agg, base)), abs=1e-12)
    assert row.mean_system == pytest.approx(float(_q(agg, system)), abs=1e-12)
    assert row.diff == pytest.approx(float(_q(agg, system) - _q(agg, base)), abs=1e-12)
    assert row.test == "randomisation" and row.ci_method == "bootstrap"
    assert row.p_value == pytest.approx(_scipy_p(agg, base, system), abs=1e-12)
    assert math.isnan(row.effect_size)  # Cohen's d is a statement about means
    summary = {s.system: s for s in cmp.summary if s.segment is None}
    assert summary["bm25"].mean == pytest.approx(float(_q(agg, base)), abs=1e-12)
    assert summary["bm25"].aggregate == agg
    assert any(agg in n and "randomisation" in n for n in cmp.notes), cmp.notes


def test_the_median_rows_are_not_the_mean_rows() -> None:
    """The bundled toy data separates them: the mean difference and the difference of medians differ."""
    _, base, system = _paired_ndcg10()
    assert abs((system - base).mean() - (np.median(system) - np.median(base))) > 1e-3
    mean_row = ranklens.compare(str(QRELS), [str(BM25), str(DENSE)], ["nDCG@10"]).rows[0]
    median_row = ranklens.compare(str(QRELS), [str(BM25), str(DENSE)], ["nDCG@10"], aggregate="median").rows[0]
    assert mean_row.aggregate == "mean" and mean_row.test == "t"
    assert median_row.diff != pytest.approx(mean_row.diff, abs=1e-6)


def test_interval_is_scipys_paired_bootstrap_of_the_difference_of_medians() -> None:
    _, base, system = _paired_ndcg10()
    cmp = ranklens.compare(str(QRELS), {"bm25": str(BM25), "dense": str(DENSE)}, ["nDCG@10"], aggregate="median",
                           baseline="bm25", samples=40_000, seed=3)
    (row,) = cmp.select()
    theirs = scipy.stats.bootstrap(
        (system, base), lambda x, y, axis: np.median(x, axis=axis) - np.median(y, axis=axis), paired=True,
        vectorized=True, method="percentile", n_resamples=40_000, confidence_level=0.95,
        random_state=np.random.default_rng(5),
    ).confidence_interval
    # two Monte Carlo estimates of the same quantiles of a discrete distribution: Monte Carlo tolerance
    assert row.ci_low == pytest.approx(theirs.low, abs=0.02)
    assert row.ci_high == pytest.approx(theirs.high, abs=0.02)
    assert row.ci_low <= row.diff <= row.ci_high


def test_cli_json_and_table_say_what_was_tested() -> None:
    _, base, system = _paired_ndcg10()
    args = ["compare", str(QRELS), str(BM25), str(DENSE), "-m", "nDCG@10", "--aggregate", "median"]
    out = CliRunner().invoke(cli, [*args, "-f", "json"])
    assert out.exit_code == 0, out.output
    row = json.loads(out.stdout)["rows"][0]
    assert row["aggregate"] == "median" and row["test"] == "randomisation" and row["ci_method"] == "bootstrap"
    assert row["diff"] == pytest.approx(float(np.median(system) - np.median(base)), abs=1e-12)
    assert row["p_value"] == pytest.approx(_scipy_p("median", base, system), abs=1e-12)
    assert row["effect_size"] is None
    table = CliRunner().invoke(cli, [*args, "-f", "table"])
    assert table.exit_code == 0, table.output
    assert "median base" in table.stdout and "median sys" in table.stdout and "mean base" not in table.stdout
    assert "difference of medians" in table.stdout


def test_randomisation_beyond_the_exact_range_is_scipys_within_monte_carlo_error() -> None:
    from ranklens import stats

    gen = np.random.default_rng(1)
    base = np.round(gen.uniform(0, 1, 40), 2)
    system = np.clip(base + np.round(gen.normal(0.05, 0.2, 40), 2), 0, 1)
    ours = stats.aggregate_randomisation_test(system, base, "median", samples=20_000, seed=0)
    theirs = scipy.stats.permutation_test(
        (system, base), lambda x, y, axis: np.median(x, axis=axis) - np.median(y, axis=axis),
        permutation_type="samples", vectorized=True, n_resamples=20_000, random_state=np.random.default_rng(9),
    ).pvalue
    assert ours.samples == 20_000
    assert ours.p_value == pytest.approx(theirs, abs=0.015)
    assert ours.statistic == pytest.approx(float(np.median(system) - np.median(base)), abs=1e-12)


def test_no_difference_is_p_one() -> None:
    from ranklens import stats

    x = [0.1, 0.5, 0.9, 0.3]
    assert stats.aggregate_randomisation_test(x, x, "median").p_value == 1.0
    ci = stats.aggregate_bootstrap_interval(x, x, "median")
    assert (ci.low, ci.high) == (0.0, 0.0)
