"""Per-window quality from production logs: impressions + late engagement → labels (the rules of
``labels from-events``) → nDCG@k / DCG@k per request (the engine) and IPS-DCG@k (:func:`ranklens.unbiased.ips_dcg`)
per window × segment × system, with intervals, provisional windows and drift.

Engagement counts for an impression only inside its label window ``[shown, shown + label_delay]``: an event
before its impression is clock skew (counted, not used), one after the label window is late (counted, not
used), one for a (request, item) that was never shown is an orphan (counted), one after ``as_of`` has not
arrived yet (counted, not used). A window is *provisional*
while its label window is open: ``window end + label_delay > as_of`` (default ``as_of``: the latest event).
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from statistics import NormalDist
from typing import Any

import numpy as np

from ranklens.errors import InputError, MeasureError
from ranklens.labels import LabelRules, load_rules
from ranklens.production.aggregate import engine_values, ips_values, normal_interval
from ranklens.production.drift import DriftRow, drift_rows
from ranklens.production.logs import (
    EngagementColumns,
    ImpressionColumns,
    parse_duration,
    read_engagement,
    read_impressions,
    timestamps,
)

__all__ = ["WindowReport", "WindowRow", "compute_windows"]

#: rows of the log computed together (whole window groups): bounds the memory of a day of logs
CHUNK_ROWS = 1_000_000

#: the measure spellings computed by :func:`ranklens.unbiased.ips_dcg` rather than the engine
IPS_MEASURE = re.compile(r"^(IPS|SNIPS)-DCG@(\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class WindowRow:
    """One measure of one window × segment × system: the mean over its requests, an interval, ``n`` requests."""

    start: str
    end: str
    segment: str
    system: str
    measure: str
    value: float
    ci: tuple[float, float]
    n: int
    provisional: bool

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "segment": self.segment, "system": self.system,
                "measure": self.measure, "value": _num(self.value), "ci": [_num(self.ci[0]), _num(self.ci[1])],
                "n": self.n, "provisional": self.provisional}


@dataclass(frozen=True)
class WindowReport:
    """What :func:`compute_windows` found: the rows, the drift checks and the counts of what was not used."""

    windows: list[WindowRow]
    drift: list[DriftRow]
    counts: dict[str, int]
    as_of: str
    reference_window: str
    intervals: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"windows": [w.to_dict() for w in self.windows],
                "drift": [{k: (_num(v) if isinstance(v, float) else v) for k, v in d.to_dict().items()} for d in self.drift],
                "counts": dict(self.counts), "as_of": self.as_of, "reference_window": self.reference_window,
                "intervals": dict(self.intervals)}

    def notes(self) -> list[str]:
        """What was counted and not used, as sentences."""
        c = self.counts
        out = []
        if c.get("orphan_events"):
            out.append(f"{c['orphan_events']} engagement events for impressions not in the log (orphans): not used")
        if c.get("clock_skew_events"):
            out.append(f"{c['clock_skew_events']} engagement events before their impression (clock skew): not used")
        if c.get("late_events"):
            out.append(f"{c['late_events']} engagement events after their label window closed: not used")
        if c.get("unlabelled_requests"):
            out.append(f"{c['unlabelled_requests']} request-windows with no labelled item: not in nDCG/DCG")
        return out


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _time(text: str) -> float:
    import polars as pl

    from ranklens.labels.events import EventLog

    return float(timestamps(EventLog(pl.DataFrame({"time": [text]}), "<option>"), "time")[0])


def compute_windows(
    impressions: Any,
    events: Any,
    labels: Any,
    *,
    window: str = "1d",
    measures: tuple[str, ...] | list[str] = ("nDCG@10", "DCG@10", "IPS-DCG@10"),
    segment_col: str | None = None,
    system_col: str | None = None,
    label_delay: str = "24h",
    reference_window: str | None = None,
    as_of: str | None = None,
    impression_columns: ImpressionColumns | None = None,
    engagement_columns: EngagementColumns | None = None,
    click_signal: str = "click",
    n_boot: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
    position_bias: str | None = None,
) -> WindowReport:
    """Per window × segment × system quality and drift from an impressions log and an engagement log.

    Labels: the engagement in each impression's label window becomes its signal columns (an ``event``
    signal is 1 when an event of that type happened; ``fraction``/``mean`` signals take the largest value),
    then the rules of ``labels from-events`` grade each (rules' ``[columns] query``, item) pair over the
    window's impressions of that segment and system. Each request is evaluated against the labels of its
    (query) by the engine, ranked by score. ``IPS-DCG@k`` (or ``SNIPS-DCG@k``) is ``ips_dcg`` of the
    system's score ranking from the shown positions and the ``click_signal`` events, each request a page.

    ``position_bias`` (``"em"`` or ``"intervention"``): the examination θ of IPS is refitted on every window
    from that window's impressions and clicks by :func:`ranklens.unbiased.estimate_position_bias` (instead of the
    DCG discount), and the fit is in the series as rows ``theta@p`` (θ_p/θ_1, segment and system ``all``).

    Intervals: normal over requests (mean ± z·sd/√n) for engine measures and IPS (a mean of per-request
    rewards), the delta method for SNIPS (a ratio); with ``n_boot`` > 0 a percentile bootstrap over
    requests for IPS/SNIPS instead (``ips_dcg``'s, one group at a time: slow on a day of logs).

    >>> imp = {"request": ["r1", "r1"], "query": ["q", "q"], "item": ["a", "b"], "position": [1, 2],
    ...        "score": [2.0, 1.0], "timestamp": ["2026-01-05T10:00:00Z"] * 2}
    >>> ev = {"request": ["r1"], "item": ["b"], "event": ["click"], "timestamp": ["2026-01-05T10:05:00Z"]}
    >>> rules = {"signals": {"click": "event"}, "grade": [{"grade": 1, "when": {"click": 0.5}}], "default_grade": 0}
    >>> rep = compute_windows(imp, ev, rules, measures=["nDCG@10"])
    >>> row = rep.windows[0]
    >>> row.start, round(row.value, 6), row.n, row.provisional
    ('2026-01-05T00:00:00Z', 0.63093, 1, True)
    """
    import polars as pl

    width = parse_duration(window)
    delay = parse_duration(label_delay)
    if width <= 0:
        raise InputError(f"--window must be longer than 0; got {window!r}")
    rules: LabelRules = load_rules(labels)
    engine_measures, ips_measures = _split_measures(measures)
    base = impression_columns or ImpressionColumns()
    # the labels' group: the rules' [columns] query names an impressions column (e.g. "request" for labels per
    # impression); left at its default, it is the impressions' query column
    icols = replace(base, segment=segment_col or base.segment, system=system_col or base.system,
                    query=rules.query if rules.query != "query" else base.query)
    imp = read_impressions(impressions, icols)
    group_col = "query"
    if ips_measures and click_signal not in {s.name for s in rules.signals if s.kind == "event"}:
        raise InputError(f"IPS-DCG needs an event signal named {click_signal!r} in the rules' [signals]")
    needs_value = any(s.kind != "event" for s in rules.signals)
    ev = read_engagement(events, engagement_columns or EngagementColumns(), need_value=needs_value)

    # engagement → the impression it belongs to
    keyed = imp.select("request", "item", pl.col("ts").alias("shown")).with_row_index("imp")
    joined = ev.join(keyed, on=["request", "item"], how="left")
    orphan = joined["imp"].is_null().to_numpy()
    now = _time(as_of) if as_of else (float(ev["ts"].max()) if ev.height else float(imp["ts"].max()) if imp.height else 0.0)
    future = (joined["ts"] > now).to_numpy()  # with --as-of: not yet arrived then
    orphan &= ~future
    matched = joined.filter(pl.col("imp").is_not_null() & (pl.col("ts") <= now))
    skew = (matched["ts"] < matched["shown"]).to_numpy()
    late = (matched["ts"] > matched["shown"] + delay).to_numpy()
    used = matched.filter(pl.Series(~skew & ~late))
    counts = {"impressions": imp.height, "requests": int(imp["request"].n_unique()), "events": ev.height,
              "orphan_events": int(orphan.sum()), "clock_skew_events": int(skew.sum()), "late_events": int(late.sum()),
              "events_after_as_of": int(future.sum()),
              "unlabelled_requests": 0}

    # signal columns per impression
    frame = imp
    for s in rules.signals:
        of_type = used.filter(pl.col("event") == s.source_column)
        agg = of_type.group_by("imp").agg((pl.len() > 0).cast(pl.Float64).alias("v") if s.kind == "event" else pl.col("value").max().alias("v"))
        col = np.zeros(imp.height)
        col[agg["imp"].to_numpy()] = agg["v"].to_numpy()
        frame = frame.with_columns(pl.Series(f"__signal_{s.name}", col))
    signal_rules = replace(rules, query=group_col, item="item", position="position",
                           signals=tuple(replace(s, column=f"__signal_{s.name}") for s in rules.signals))

    # windows
    win = np.floor(frame["ts"].to_numpy() / width).astype(np.int64)
    first = int(win.min()) if win.size else 0
    index = win - first
    n_windows = int(index.max()) + 1 if index.size else 0
    starts = [_iso((first + i) * width) for i in range(n_windows)]
    ref = 0
    if reference_window:
        t = _time(reference_window)
        ref = int(math.floor(t / width)) - first
        if not 0 <= ref < n_windows or (first + ref) * width != t and reference_window not in starts:
            raise InputError(f"--reference-window {reference_window!r} is not the start of a window in the log; "
                             f"the windows start at {starts[0]} … {starts[-1]}" if starts else "the log is empty")
    frame = frame.with_columns(pl.Series("__w", index))

    rows: list[WindowRow] = []
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    # the groups (window, segment, system) as integer codes: no join, no copy of the log's columns
    seg_sys = frame.select(pl.col("segment").cast(pl.Categorical).to_physical().cast(pl.Int64).alias("s"),
                           pl.col("system").cast(pl.Categorical).to_physical().cast(pl.Int64).alias("y"))
    n_y = int(seg_sys["y"].max() or 0) + 1
    n_sy = (int(seg_sys["s"].max() or 0) + 1) * n_y
    combined = index * n_sy + seg_sys["s"].to_numpy() * n_y + seg_sys["y"].to_numpy()
    del seg_sys
    first_row = np.full(n_windows * n_sy, -1, dtype=np.int64)
    first_row[combined[::-1]] = np.arange(combined.size - 1, -1, -1)  # (the last write wins: each key's first row)
    key_codes = np.flatnonzero(first_row >= 0)
    at = first_row[key_codes]
    keyed_names = zip(index[at].tolist(), frame["segment"].gather(at).to_list(), frame["system"].gather(at).to_list(), key_codes.tolist())
    ordered = sorted(keyed_names, key=lambda kv: tuple(map(str, kv[:3])))
    order = [kv[:3] for kv in ordered]
    lut = np.full(n_windows * n_sy, -1, dtype=np.int64)
    lut[[kv[3] for kv in ordered]] = np.arange(len(ordered))
    frame = frame.with_columns(pl.Series("__g", lut[combined]),
                               pl.col("request").cast(pl.Categorical).to_physical().cast(pl.Int64).alias("__r"))
    del combined, first_row
    # one order serves every pass: by group, request (integer codes), then the engine's rank order (score desc,
    # item id desc). The engine then finds each request's rows in rank order (no sort of its own) and IPS
    # reads ranks and pages off it. Only the order is held; each slice of groups is gathered when computed
    perm = frame.select(pl.arg_sort_by(["__g", "__r", "score", "item"], descending=[False, False, True, True])).to_series().to_numpy()
    n_groups = len(order)
    thetas = _refit_position_bias(frame, group_col, f"__signal_{click_signal}", position_bias) if position_bias and ips_measures else None
    table = None if thetas is None else np.vstack([thetas[w] for w, _, _ in order])
    # groups are independent (labels are graded within a group): consecutive groups are computed together in
    # slices of about CHUNK_ROWS rows, so the engine's and IPS's temporaries and the sorted copy stay a slice's
    engine_vals: dict[str, list[np.ndarray]] = {m: [np.zeros(0)] * n_groups for m in engine_measures}
    nan4 = (float("nan"), float("nan"), float("nan"), 0)
    ips_vals: list[list[tuple[float, float, float, int]]] = [[nan4] * n_groups for _ in ips_measures]
    # the drift checks need none of the values below: they run beside them on a second thread (their numpy
    # sorts and searches and polars' work release the GIL), the same function on the same rows
    with ThreadPoolExecutor(1, thread_name_prefix="ranklens-drift") as pool:
        drift_job = pool.submit(drift_rows, frame, frame["__w"].to_numpy(), starts, ref)
        _slices(frame, perm, n_groups, engine_measures, ips_measures, signal_rules, group_col, click_signal, z, table,
                counts, engine_vals, ips_vals)
        drift = drift_job.result()

    for g, (w, segment, system) in enumerate(order):
        start, end = (first + w) * width, (first + w + 1) * width
        provisional = bool(end + delay > now)
        meta = (_iso(start), _iso(end), str(segment), str(system))
        for m in engine_measures:
            vals = engine_vals[m][g]
            mean, lo, hi = normal_interval(vals, z)
            rows.append(WindowRow(*meta, m, mean, (lo, hi), int(vals.size), provisional))
        for (name, k, snips), est in zip(ips_measures, ips_vals):
            value, lo, hi, pages = est[g]
            if n_boot:
                lo, hi = _bootstrap(frame.filter(pl.col("__g") == g), click_signal, k, snips, n_boot, confidence, seed)
            rows.append(WindowRow(*meta, name, value, (lo, hi), pages, provisional))
    if thetas is not None:
        counts_at = frame.group_by(["__w", "position"]).len()
        shown = {(int(w), int(p)): int(n) for w, p, n in counts_at.iter_rows()}
        for w in sorted(thetas):
            start, end = (first + w) * width, (first + w + 1) * width
            for p, t in enumerate(thetas[w][1:], start=2):
                rows.append(WindowRow(_iso(start), _iso(end), "all", "all", f"theta@{p}", float(t), (float("nan"), float("nan")),
                                      shown.get((w, p), 0), bool(end + delay > now)))
    intervals = {m: f"normal over requests ({confidence:.0%})" for m in engine_measures}
    intervals.update({name: f"percentile bootstrap over requests ({confidence:.0%}, {n_boot} replicates)" if n_boot else
                      f"{'delta method' if snips else 'normal'} over requests ({confidence:.0%})" for name, _, snips in ips_measures})
    return WindowReport(rows, drift, counts, _iso(now), starts[ref] if starts else "", intervals)


def _slices(frame: Any, perm: np.ndarray, n_groups: int, engine_measures: list[str], ips_measures: list[tuple[str, int, bool]],
            signal_rules: LabelRules, group_col: str, click_signal: str, z: float, table: np.ndarray | None,
            counts: dict[str, int], engine_vals: dict[str, list[np.ndarray]],
            ips_vals: list[list[tuple[float, float, float, int]]]) -> None:
    """The engine's and IPS's values of every group, slice by slice (see :data:`CHUNK_ROWS`), into
    ``engine_vals`` and ``ips_vals``; unlabelled requests added to ``counts``."""
    for g_lo, g_hi, start_row, n_rows in _chunks(frame["__g"].to_numpy()[perm], n_groups, CHUNK_ROWS):
        part = frame[perm[start_row : start_row + n_rows]]
        if engine_measures:
            got, unlabelled = engine_values(part, n_groups, signal_rules, group_col, engine_measures)
            counts["unlabelled_requests"] += int(unlabelled.sum())
            for m in engine_measures:
                engine_vals[m][g_lo:g_hi] = got[m][g_lo:g_hi]
        for j, (_, k, snips) in enumerate(ips_measures):
            ips_vals[j][g_lo:g_hi] = ips_values(part, n_groups, f"__signal_{click_signal}", k, snips, z, theta=table)[g_lo:g_hi]


def _chunks(group_of_row: np.ndarray, n_groups: int, rows: int) -> list[tuple[int, int, int, int]]:
    """Runs of consecutive groups of at most ``rows`` rows (a bigger group alone) over rows sorted by group:
    ``(first group, last group + 1, first row, number of rows)``.

    >>> _chunks(np.array([0, 0, 1, 2, 2, 2]), 3, 3)
    [(0, 2, 0, 3), (2, 3, 3, 3)]
    """
    bounds = np.searchsorted(group_of_row, np.arange(n_groups + 1))
    out = []
    lo = 0
    while lo < n_groups:
        hi = lo + 1
        while hi < n_groups and bounds[hi + 1] - bounds[lo] <= rows:
            hi += 1
        out.append((lo, hi, int(bounds[lo]), int(bounds[hi] - bounds[lo])))
        lo = hi
    return out


def _split_measures(measures: Any) -> tuple[list[str], list[tuple[str, int, bool]]]:
    from ranklens.measures import parse_many

    engine: list[str] = []
    ips: list[tuple[str, int, bool]] = []
    for m in measures:
        hit = IPS_MEASURE.match(str(m).strip())
        if hit:
            ips.append((str(m).strip(), int(hit.group(2)), hit.group(1).upper() == "SNIPS"))
        else:
            engine.append(str(m))
    if engine:
        try:
            parse_many(engine)
        except MeasureError as exc:
            raise MeasureError(f"{exc}; besides the engine's measures, windows takes IPS-DCG@k and SNIPS-DCG@k") from None
    if not engine and not ips:
        raise InputError("no measure given (-m nDCG@10 DCG@10 IPS-DCG@10)")
    return engine, ips


def _bootstrap(sub: Any, click: str, k: int, snips: bool, n_boot: int, confidence: float, seed: int) -> tuple[float, float]:
    """The percentile bootstrap interval of :func:`ranklens.unbiased.ips_dcg` for one group's requests."""
    import polars as pl

    from ranklens.data.run import Run
    from ranklens.unbiased import ips_dcg

    log = sub.select("request", "item", "position", pl.col(f"__signal_{click}").alias("click"))
    target = Run.from_arrays(sub["request"].to_arrow(), sub["item"].to_arrow(), sub["score"].to_numpy(), name="target")
    est = ips_dcg(log, target, k=k, self_normalize=snips, n_boot=n_boot, confidence=confidence, seed=seed,
                  query="request", impression="request")
    return est.ci_low, est.ci_high


def _refit_position_bias(frame: Any, group_col: str, click_col: str, method: str) -> dict[int, np.ndarray]:
    """θ_p/θ_1 for p = 1…max position, fitted on each window's impressions (all segments and systems)."""
    import polars as pl

    from ranklens.unbiased import estimate_position_bias

    if method not in ("em", "intervention"):
        raise InputError(f"position_bias must be 'em' or 'intervention'; got {method!r}")
    depth = int(frame["position"].max())
    out: dict[int, np.ndarray] = {}
    for (w,), sub in frame.group_by(["__w"]):
        cols = [pl.col(group_col).alias("query"), "item", "position", pl.col(click_col).alias("click")]
        if "intervention" in sub.columns:
            cols.append("intervention")
        pb = estimate_position_bias(sub.select(cols), method=method, n_boot=0)
        theta = np.full(depth, np.nan)
        theta[: pb.theta.shape[0]] = pb.theta
        out[int(w)] = theta
    return out
