"""The vectorised per-window aggregation (:mod:`ranklens.production.aggregate`) against one group at a time.

Oracles: :func:`ranklens.unbiased.ips_dcg` (its own string-keyed estimator and percentile bootstrap) on each
window × segment × system of a generated log, and the engine run on each group's own labels from
:func:`ranklens.labels.labels_from_events` (the per-group path the vectorised one replaced).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ranklens import evaluate
from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.labels import labels_from_events
from ranklens.production import compute_windows
from ranklens.unbiased import ips_dcg

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.refresh_bench import DAY, RULES, generate  # noqa: E402  (the benchmark's generator: one log shape)


@pytest.fixture(scope="module")
def logs() -> tuple[pl.DataFrame, pl.DataFrame]:
    return generate(6000, seed=3, hours=3.0)


@pytest.fixture(scope="module")
def rows(logs) -> dict:
    imp, ev = logs
    rep = compute_windows(imp, ev, RULES, window="1h", label_delay="1h", segment_col="segment", system_col="system",
                          measures=["nDCG@10", "DCG@10", "IPS-DCG@10", "SNIPS-DCG@10", "IPS-DCG@5", "SNIPS-DCG@5"])
    return {(w.start, w.segment, w.system, w.measure): w for w in rep.windows}


def _groups(logs):
    imp, ev = logs
    clicks = set(zip(ev["request"].to_list(), ev["item"].to_list()))
    imp = imp.with_columns(pl.Series("click", [float((r, i) in clicks) for r, i in zip(imp["request"], imp["item"])]),
                           ((pl.col("timestamp") - DAY) // 3600).cast(pl.Int64).alias("hour"))
    for (hour, seg, system), sub in imp.group_by(["hour", "segment", "system"]):
        start = f"2026-01-05T{hour:02d}:00:00Z"
        yield (start, seg, system), sub


def test_ips_and_snips_equal_ips_dcg_per_group_and_the_intervals_agree(logs, rows) -> None:
    n = 0
    for key, sub in _groups(logs):
        log = sub.select("request", "item", "position", "click")
        target = Run.from_arrays(sub["request"].to_arrow(), sub["item"].to_arrow(), sub["score"].to_numpy(), name="t")
        # k = 5 of 10 shown too; each request its own page, SNIPS is IPS rescaled by a constant normaliser
        for name, k, snips in (("IPS-DCG@10", 10, False), ("SNIPS-DCG@10", 10, True), ("IPS-DCG@5", 5, False), ("SNIPS-DCG@5", 5, True)):
            est = ips_dcg(log, target, k=k, self_normalize=snips, n_boot=2000, query="request", impression="request")
            row = rows[(*key, name)]
            assert row.value == pytest.approx(est.value, rel=1e-12, abs=1e-12)
            assert row.n == est.impressions
            width, boot_width = row.ci[1] - row.ci[0], est.ci_high - est.ci_low
            assert width == pytest.approx(boot_width, rel=0.15)  # analytic vs bootstrap at ~150 pages
            n += 1
    assert n == 4 * 3 * 2 * 2


def test_ndcg_and_dcg_equal_the_engine_on_each_groups_own_labels(logs, rows) -> None:
    n = 0
    for key, sub in _groups(logs):
        labels = labels_from_events(sub.select("query", "item", "position", "click"), RULES)
        judged = {q: d for q, d in labels.qrels.to_dict().items()}
        req = sub.select("request", "query").unique()
        qr = {r: judged[q] for r, q in req.iter_rows() if q in judged}
        res = evaluate(Qrels.from_dict(qr), Run.from_arrays(sub["request"].to_arrow(), sub["item"].to_arrow(),
                                                             sub["score"].to_numpy(), name="w"), ["nDCG@10", "DCG@10"])
        for m in ("nDCG@10", "DCG@10"):
            vals = np.asarray(res.column(m))
            assert rows[(*key, m)].value == pytest.approx(vals.mean(), abs=1e-12)
            assert rows[(*key, m)].n == vals.size
            n += 1
    assert n == 2 * 12
