"""Re-aggregating a day of production logs (issue 29): the per-window series of ``--impressions`` impressions.

    python -m bench.refresh_bench --impressions 1000000                  # compute_windows in process
    python -m bench.refresh_bench --impressions 1000000 --store sqlite   # a full refresh through the store

The log is generated directly (no HTTP): one day, requests of 10 items, 2 segments × 2 systems, queries drawn
from 5,000, one click per request on average drawn from a position-biased model; the series is hourly
(24 windows × 2 segments × 2 systems) with ``nDCG@10, DCG@10, IPS-DCG@10`` — the settings of
``bench.ingest_bench --refresh``. Reported: seconds for the whole computation (``compute_windows`` alone, or
with ``--store`` a ``POST …/windows/refresh`` equivalent: read the stored rows, compute, store the revisions),
then (unless ``--once``) a second computation after one more hour of impressions arrives, and the 10M
extrapolation. Wall and CPU seconds are both printed: on a shared machine the CPU time is the steadier figure. The target: a day of 10M impressions in ≤ 60 s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

TARGET_10M_S = 60.0
DAY = 1767571200.0  # 2026-01-05T00:00:00Z
RULES = {"signals": {"click": "event"}, "grade": [{"grade": 1, "when": {"click": 0.5}}], "default_grade": 0}
MEASURES = ["nDCG@10", "DCG@10", "IPS-DCG@10"]


def generate(n_impressions: int, *, seed: int = 0, start: float = DAY, hours: float = 24.0, prefix: str = "") -> tuple[Any, Any]:
    """An impressions frame and an engagement frame (polars) of ``n_impressions`` rows over ``hours``."""
    import polars as pl

    rng = np.random.default_rng(seed)
    n_req = max(1, n_impressions // 10)
    n_impressions = n_req * 10
    pos = np.tile(np.arange(1, 11), n_req)[:n_impressions]
    req = np.repeat(np.arange(n_req), 10)[:n_impressions]
    q = rng.integers(0, 5000, size=n_req)
    items = (q[req] * 31 + rng.integers(0, 30, size=n_req)[req] + pos) % 200_000  # distinct within a request
    t_req = start + np.sort(rng.uniform(0, hours * 3600, size=n_req))
    seg = np.where(q % 3 == 0, "toys", "books")
    sysname = np.where(rng.random(n_req) < 0.5, "A", "B")
    score = rng.random(n_impressions)
    # ids built by Polars from the integers (NumPy's fixed-width unicode arrays took ~1 GB more at 10M rows)
    imp = pl.DataFrame({"r": req, "q": q[req], "i": items, "position": pos, "score": score, "timestamp": t_req[req],
                        "segment": seg[req], "system": sysname[req]})
    imp = imp.select((pl.lit(prefix + "r") + pl.col("r").cast(pl.Utf8)).alias("request"),
                     (pl.lit("q") + pl.col("q").cast(pl.Utf8)).alias("query"), (pl.lit("d") + pl.col("i").cast(pl.Utf8)).alias("item"),
                     "position", "score", "timestamp", "segment", "system")
    clicked = rng.random(n_impressions) < 0.25 / np.log2(pos + 1)
    ev = (imp.filter(pl.Series(clicked)).select("request", "item", pl.lit("click").alias("event"), (pl.col("timestamp") + 60.0).alias("timestamp")))
    return imp, ev


def _windows(imp: Any, ev: Any) -> Any:
    from ranklens.production import compute_windows

    return compute_windows(imp, ev, RULES, window="1h", label_delay="1h", measures=MEASURES,
                           segment_col="segment", system_col="system")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--impressions", type=int, default=1_000_000)
    ap.add_argument("--store", choices=["none", "sqlite"], default="none",
                    help="also time refreshes through the monitor's store (rows inserted directly)")
    ap.add_argument("--once", action="store_true", help="only the full computation (no second, incremental one)")
    ap.add_argument("--out", default="bench/out/refresh")
    args = ap.parse_args(argv)
    import polars as pl

    imp, ev = generate(args.impressions)
    report: dict[str, Any] = {"impressions": imp.height, "events": ev.height}
    t0, c0 = time.perf_counter(), time.process_time()
    rep = _windows(imp, ev)
    report["compute_windows_s"] = round(time.perf_counter() - t0, 2)
    report["compute_windows_cpu_s"] = round(time.process_time() - c0, 2)  # all threads: the machine may be shared
    report["rows"] = len(rep.windows)
    if args.store == "sqlite":
        report.update(_store_bench(imp, ev, Path(args.out)))
    elif not args.once:
        more_imp, more_ev = generate(args.impressions // 24, seed=1, start=DAY + 24 * 3600, hours=1.0, prefix="x")
        t0 = time.perf_counter()
        _windows(pl.concat([imp, more_imp]), pl.concat([ev, more_ev]))
        report["compute_windows_after_one_more_hour_s"] = round(time.perf_counter() - t0, 2)
    main_s = report.get("refresh_s", report["compute_windows_s"])
    report["extrapolated_10M_s"] = round(1e7 * main_s / imp.height, 1)
    report["vs_target"] = round(report["extrapolated_10M_s"] / TARGET_10M_S, 2)
    print(json.dumps(report, indent=2))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"refresh-{args.impressions}-{args.store}.json").write_text(json.dumps(report, indent=2))
    return report


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _store_bench(imp: Any, ev: Any, out: Path) -> dict[str, Any]:
    """Insert the log straight into a fresh SQLite store, then time a full refresh and one after an hour more of logs."""
    import polars as pl

    from ranklens.monitor.db import Database
    from ranklens.monitor.models import Project
    from ranklens.monitor.production import refresh

    out.mkdir(parents=True, exist_ok=True)
    path = out / "refresh.db"
    path.unlink(missing_ok=True)
    db = Database(f"sqlite:///{path}")
    db.migrate()

    def insert(s: Any, pid: int, imp: Any, ev: Any, offset: int) -> None:
        conn = s.connection().connection.dbapi_connection
        rows = imp.with_row_index("i").select(
            (pl.lit("i") + (pl.col("i") + offset).cast(pl.Utf8)).alias("event_id"), pl.lit(pid).alias("p"), "request", "query",
            "item", "position", "score", "timestamp", "segment", "system", pl.col("timestamp").alias("received")).rows()
        conn.executemany("INSERT INTO ingest_impressions (event_id, project_id, request, query, item, position, score, ts, "
                         "segment, system, received) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
        rows = ev.with_row_index("i").select(
            (pl.lit("e") + (pl.col("i") + offset).cast(pl.Utf8)).alias("event_id"), pl.lit(pid).alias("p"), "request", "item",
            "event", "timestamp", pl.lit(1.0).alias("value"), pl.col("timestamp").alias("received")).rows()
        conn.executemany("INSERT INTO ingest_events (event_id, project_id, request, item, event, ts, value, received) "
                         "VALUES (?,?,?,?,?,?,?,?)", rows)

    def setup(s: Any) -> int:
        project = Project(name="bench")
        s.add(project)
        s.flush()
        insert(s, project.id, imp, ev, 0)
        return project.id

    pid = db.write(setup)
    settings = {"labels": RULES, "window": "1h", "label_delay": "1h", "measures": MEASURES}
    res: dict[str, Any] = {}
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    refresh(db, "bench", settings)
    res["refresh_s"], res["refresh_cpu_s"] = round(time.perf_counter() - t0, 2), round(time.process_time() - c0, 2)
    res["refresh_reader_cpu_s"] = round(_children_cpu() - k0, 2)  # the child process reading the store (ADBC)
    more_imp, more_ev = generate(imp.height // 24, seed=1, start=DAY + 24 * 3600, hours=1.0, prefix="x")
    db.write(lambda s: insert(s, pid, more_imp, more_ev, imp.height))
    t0 = time.perf_counter()
    refresh(db, "bench")
    res["refresh_after_one_more_hour_s"] = round(time.perf_counter() - t0, 2)
    return res


if __name__ == "__main__":
    main()
