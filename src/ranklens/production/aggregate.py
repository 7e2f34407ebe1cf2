"""Every window × segment × system of a log at once: integer group codes and column operations instead of a
loop over groups (a day of 10M impressions is ~100 groups of 100k rows each; the per-group loop spent its
time converting ids to Python strings).

* :func:`engine_values` — the rules of ``labels from-events`` grade each (group, query, item) pair
  (:func:`ranklens.labels.grade_pairs`, the one grading code), and the engine evaluates every request of every
  group in one call, each request judged by the labels of its group and query.
* :func:`ips_values` — IPS/SNIPS-DCG@k per group, each request its own context and page (the estimator of
  :func:`ranklens.unbiased.ips_dcg` with ``query = impression = request``, checked equal to it in
  ``tests/production/test_aggregate.py``), with an analytic interval: normal over pages for IPS (a mean of
  per-page rewards), the delta method for SNIPS (a ratio of three page means). The estimator and its standard
  error are :func:`ranklens.engine.ips.ips_by_group`'s, every group in one call — the function ``ips_dcg`` calls
  with one group: one formulation.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ranklens.engine.ips import ips_by_group
from ranklens.errors import InputError

__all__ = ["engine_values", "ips_values", "normal_interval"]

_SEP = "\x1f"


def normal_interval(values: np.ndarray, z: float) -> tuple[float, float, float]:
    """Mean ± z·sd/√n (NaN bounds below 2 values).

    >>> normal_interval(np.array([1.0, 3.0]), 1.0)
    (2.0, 1.0, 3.0)
    """
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(values.mean())
    if values.size < 2:
        return mean, float("nan"), float("nan")
    half = z * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half, mean + half


def _split(gid: np.ndarray, values: np.ndarray, n_groups: int) -> list[np.ndarray]:
    order = np.argsort(gid, kind="stable")
    bounds = np.searchsorted(gid[order], np.arange(n_groups + 1))
    v = values[order]
    return [v[bounds[g] : bounds[g + 1]] for g in range(n_groups)]


def engine_values(frame: Any, n_groups: int, rules: Any, group_col: str, measures: list[str]) -> tuple[dict[str, list[np.ndarray]], np.ndarray]:
    """Per-request values of the engine ``measures`` split by group (``frame["__g"]``, 0…n_groups−1), and the
    number of requests of each group with no labelled item.

    ``frame``: impressions with ``request, item, score, __g``, the ``group_col`` and one column
    ``__signal_NAME`` per signal of ``rules`` (a :class:`~ranklens.labels.LabelRules`).
    """
    import polars as pl
    import pyarrow.compute as pc

    from ranklens.data.qrels import Qrels
    from ranklens.data.run import Run
    from ranklens.engine import Evaluator
    from ranklens.labels.engagement import LABELLED, grade_pairs, pair_aggregations

    for s in rules.signals:
        col = frame[f"__signal_{s.name}"]
        if s.kind == "fraction" and ((col < 0) | (col > 1)).any():
            raise InputError(f"signal '{s.name}' is a fraction: engagement values must be in [0, 1], got {col.filter((col < 0) | (col > 1))[0]!r}")
        if s.kind == "mean" and (col < 0).any():
            raise InputError(f"signal '{s.name}' must be ≥ 0, got {col.filter(col < 0)[0]!r}")
    signals = [pl.col(f"__signal_{s.name}").alias(s.name) for s in rules.signals]
    base = frame.select("__g", pl.col(group_col).alias("__q"), "item", *signals)
    pairs = grade_pairs(base.group_by(["__g", "__q", "item"]).agg(pair_aggregations(rules)), rules)
    # (sorted: the qrels' queries come in runs, which the engine interns by their first rows)
    labelled = pairs.filter(pl.col("status") == LABELLED).select("__g", "__q", "item", "grade").sort(["__g", "__q"])
    requests = frame.select("__g", "request", pl.col(group_col).alias("__q")).unique(["__g", "request"])
    total = np.bincount(requests["__g"].to_numpy(), minlength=n_groups)
    if labelled.height == 0:
        return {m: [np.zeros(0)] * n_groups for m in measures}, total
    # the labels are held once per (group, query) — not repeated under every request of it — and each request
    # is judged by its (group, query)'s (the engine's shared judgements, ``judged_by``)
    key = pl.concat_str([pl.col("__g").cast(pl.Utf8), pl.col("__q")], separator=_SEP)
    q = Qrels.from_arrays(labelled.select(key)[:, 0].to_arrow(), labelled["item"].to_arrow(), labelled["grade"].to_numpy(),
                          source="<window labels>")
    qid = pl.concat_str([pl.col("__g").cast(pl.Utf8), pl.col("request")], separator=_SEP).alias("qid")
    runf = frame.select(qid, "item", "score")
    run = Run.from_arrays(runf["qid"].to_arrow(), runf["item"].to_arrow(), runf["score"].to_numpy(), name="window")
    del runf
    # the (group, query) of each of the run's queries, by the run's query code (its vocabulary is sorted)
    req = requests.select(qid, key.alias("key"))
    at = pc.index_in(run.query_ids, value_set=req["qid"].to_arrow())
    judge = pc.index_in(pc.take(req["key"].to_arrow(), at), value_set=q.query_ids)
    judged_by = np.asarray(judge.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = Evaluator(measures, q).results(run, judged_by=judged_by)
    gid = pl.Series(list(res.ids), dtype=pl.Utf8).str.split_exact(_SEP, 1).struct.field("field_0").cast(pl.Int64).to_numpy()
    out = {m: _split(gid, np.asarray(res.column(m), dtype=np.float64), n_groups) for m in measures}
    return out, total - np.bincount(gid, minlength=n_groups)


def ips_values(frame: Any, n_groups: int, click_col: str, k: int, snips: bool, z: float,
               theta: np.ndarray | None = None) -> list[tuple[float, float, float, int]]:
    """IPS (or SNIPS) DCG@k of each group's score ranking from its shown positions and ``click_col``:
    ``(value, low, high, pages)`` per group; θ is the DCG discount 1/log2(k+1), or ``theta[group, p − 1]``
    (a position-bias fit per group; a position it does not cover is an error).

    With each request its own context and page, the logging exposure of a shown item is θ(position) and
    the target's θ(rank by score, ties by item id desc) up to ``k``: a page's reward is Σ click·θ(rank)/θ(position).
    ``frame`` is sorted by ``__g``, ``__r`` (the request's integer code), score desc and item desc (as
    :func:`ranklens.production.compute_windows` sorts it): the ranks are the row order within a request.
    """
    import polars as pl

    ranked = (frame.select("__g", "__r", "item", "score", "position", pl.col(click_col).alias("click"))
              .with_columns(pl.int_range(1, pl.len() + 1).over(["__g", "__r"]).alias("rank")))
    rank = ranked["rank"].to_numpy().astype(np.float64)
    pos = ranked["position"].to_numpy().astype(np.float64)
    if theta is None:
        theta_pos = 1.0 / np.log2(pos + 1.0)
        theta_rank = 1.0 / np.log2(np.minimum(rank, k) + 1.0)
    else:
        g = ranked["__g"].to_numpy()
        theta_pos = theta[g, pos.astype(np.int64) - 1]
        theta_rank = theta[g, np.minimum(rank, k).astype(np.int64) - 1]
        if not (np.all(theta_pos > 0) and np.all(np.isfinite(theta_rank[rank <= k]))):
            raise InputError("the fitted position bias leaves a shown position or one of the top k without a positive θ; "
                             "use a smaller k or more data per window")
    w = np.where(rank <= k, theta_rank, 0.0) / theta_pos
    pages = ranked.select((pl.col("__r") != pl.col("__r").shift(1)).fill_null(True)
                          | (pl.col("__g") != pl.col("__g").shift(1)).fill_null(True)).to_series()
    page = np.cumsum(pages.to_numpy()) - 1
    n_pages = int(page[-1]) + 1 if page.size else 0
    page_group = np.zeros(n_pages, dtype=np.int64)
    page_group[page] = ranked["__g"].to_numpy()
    # the logging exposure of a shown item is θ(position): each request is its own context and page
    est = ips_by_group(page, ranked["click"].to_numpy(), w, theta_pos, page_group=page_group, n_groups=n_groups,
                       self_normalize=snips)
    low, high = est.interval(z)
    return [(float(v), float(lo), float(hi), int(n)) for v, lo, hi, n in zip(est.value, low, high, est.pages)]
