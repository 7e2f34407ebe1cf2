"""Production-log ingestion into the monitor (issue 29): impressions per second and the latency of a batch.

    python -m bench.ingest_bench --impressions 200000 --batch 1000 --senders 2          # SQLite
    python -m bench.ingest_bench --backend postgresql --pg-url postgresql://u@host/db   # a PostgreSQL server

A real server (``python -m ranklens.monitor``, one process, its own database under ``bench/out``) receives
``--impressions`` impressions from ``--senders`` concurrent clients in batches of ``--batch`` events over HTTP
on loopback, with one engagement event per ten impressions in the same batches (the events count in the batch
size, not in the impressions). Reported: impressions stored per second over the whole load, the latency of a
batch (p50, p99, max) under that load, then ``--latency-batches`` batches sent one at a time (the latency of
a batch on an idle server), and the server's resident memory before and after. The targets: ≥ 20,000
impressions/s, p99 ≤ 250 ms for a 1,000-event batch. Every batch is checked to have been stored in full.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

TARGET_RATE = 20_000.0
TARGET_P99_MS = 250.0


def _batch(sender: int, i: int, size: int) -> tuple[dict[str, Any], int]:
    """``size`` events: impressions of requests of 10 items, and one click per request."""
    n_imp = size - size // 11
    t = 1767607200 + i
    imps = [{"id": f"s{sender}-b{i}-i{k}", "request": f"s{sender}-b{i}-r{k // 10}", "query": f"q{(k * 7) % 997}",
             "item": f"d{(k * 13) % 5003}", "position": 1 + k % 10, "score": 1.0 / (1 + k % 10), "timestamp": t,
             "segment": "books" if k % 3 else "toys", "system": "A" if i % 2 else "B"} for k in range(n_imp)]
    evs = [{"id": f"s{sender}-b{i}-e{r}", "request": f"s{sender}-b{i}-r{r}", "item": f"d{(r * 10 * 13) % 5003}",
            "event": "click", "timestamp": t + 30} for r in range(size - n_imp)]
    return {"impressions": imps, "events": evs}, n_imp


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _start(db_url: str, token: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "RANKLENS_TOKEN": token, "RANKLENS_READ_RATE": "off", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "ranklens.monitor", "--db", db_url, "--port", "0", "--host", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
            return proc, m.group(1)
    proc.kill()
    raise SystemExit("the server did not start")


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pg_backends_cpu(pg_url: str | None) -> dict[int, float]:
    """CPU seconds of every backend of the PostgreSQL database ``pg_url`` (when it runs on this machine)."""
    if not pg_url:
        return {}
    import psycopg

    out: dict[int, float] = {}
    with psycopg.connect(pg_url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        pids = [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                           "AND pid <> pg_backend_pid()").fetchall()]
    for pid in pids:
        try:
            out[pid] = _cpu_s(pid)
        except OSError:  # not on this machine, or gone
            pass
    return out


def _pct(sorted_ms: list[float], q: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    ap.add_argument("--pg-url", default=os.environ.get("RANKLENS_TEST_PG_URL"), help="PostgreSQL database (emptied of this project first)")
    ap.add_argument("--impressions", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=1000, help="events per request (impressions + engagement)")
    ap.add_argument("--senders", type=int, default=2)
    ap.add_argument("--latency-batches", type=int, default=100)
    ap.add_argument("--refresh", action="store_true",
                    help="then time one refresh of the per-window series over everything stored (1 h windows; nDCG@10, DCG@10, IPS-DCG@10)")
    ap.add_argument("--out", default="bench/out/ingest")
    args = ap.parse_args(argv)
    import httpx

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.backend == "sqlite":
        db = out / "ingest-bench.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        db_url = f"sqlite:///{db}"
    else:
        if not args.pg_url:
            raise SystemExit("--backend postgresql needs --pg-url or RANKLENS_TEST_PG_URL")
        db_url = args.pg_url
    project = f"bench-{secrets.token_hex(4)}"
    token = secrets.token_urlsafe(24)
    proc, url = _start(db_url, token)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        per_batch = args.batch - args.batch // 11
        n_batches = max(1, args.impressions // per_batch)
        bodies = [_batch(s, i, args.batch) for s in range(args.senders) for i in range(n_batches // args.senders)]
        encoded = [(json.dumps(b).encode(), n) for b, n in bodies]
        with httpx.Client(base_url=url, headers=headers, timeout=60) as c:  # warm up: project, tables, connections
            c.post(f"/api/v1/projects/{project}/ingest", json=_batch(99, 0, 10)[0]).raise_for_status()
        rss_before = _rss_mb(proc.pid)
        latencies: list[float] = []
        stored = [0]
        lock = threading.Lock()

        def sender(k: int) -> None:
            with httpx.Client(base_url=url, headers={**headers, "content-type": "application/json"}, timeout=60) as c:
                for body, n in encoded[k :: args.senders]:
                    t = time.perf_counter()
                    r = c.post(f"/api/v1/projects/{project}/ingest", content=body)
                    ms = 1000 * (time.perf_counter() - t)
                    r.raise_for_status()
                    got = r.json()["impressions"]["stored"]
                    if got != n:
                        raise SystemExit(f"a batch stored {got} of {n} impressions")
                    with lock:
                        latencies.append(ms)
                        stored[0] += got

        threads = [threading.Thread(target=sender, args=(k,)) for k in range(args.senders)]
        pg_url = db_url if args.backend == "postgresql" else None
        pg_before = _pg_backends_cpu(pg_url)
        start, cpu_start = time.perf_counter(), _cpu_s(proc.pid)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
        server_cpu = _cpu_s(proc.pid) - cpu_start
        pg_cpu = sum(v - pg_before.get(pid, 0.0) for pid, v in _pg_backends_cpu(pg_url).items())
        rss_after = _rss_mb(proc.pid)
        idle: list[float] = []
        with httpx.Client(base_url=url, headers={**headers, "content-type": "application/json"}, timeout=60) as c:
            for i in range(args.latency_batches):
                body = json.dumps(_batch(1000 + i, i, args.batch)[0]).encode()
                t0 = time.perf_counter()
                c.post(f"/api/v1/projects/{project}/ingest", content=body).raise_for_status()
                idle.append(1000 * (time.perf_counter() - t0))
        refresh_s = None
        if args.refresh:
            settings = {"labels": {"signals": {"click": "event"}, "grade": [{"grade": 1, "when": {"click": 0.5}}], "default_grade": 0},
                        "window": "1h", "label_delay": "1h", "measures": ["nDCG@10", "DCG@10", "IPS-DCG@10"]}
            with httpx.Client(base_url=url, headers=headers, timeout=3600) as c:
                t0 = time.perf_counter()
                c.post(f"/api/v1/projects/{project}/windows/refresh", json=settings).raise_for_status()
                refresh_s = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(30)
    lat, idle = sorted(latencies), sorted(idle)
    rate = stored[0] / elapsed
    report = {
        "backend": args.backend, "impressions": stored[0], "batch": args.batch, "senders": args.senders,
        "seconds": round(elapsed, 2), "impressions_per_s": round(rate), "rate_vs_target": round(rate / TARGET_RATE, 2),
        "load_p50_ms": round(_pct(lat, 0.5), 1), "load_p99_ms": round(_pct(lat, 0.99), 1), "load_max_ms": round(lat[-1], 1),
        "idle_batches": len(idle), "idle_p50_ms": round(_pct(idle, 0.5), 1) if idle else None,
        "idle_p99_ms": round(_pct(idle, 0.99), 1) if idle else None,
        "p99_vs_target": round(_pct(lat, 0.99) / TARGET_P99_MS, 2),
        "server_rss_mb": [round(rss_before), round(rss_after)],
        # the server's own CPU per batch under load (steadier than wall time on a shared machine; the database
        # server's CPU is not in it for PostgreSQL), and the load average the run saw
        "server_cpu_ms_per_batch": round(1000 * server_cpu / max(1, len(lat)), 1),
        "database_cpu_ms_per_batch": round(1000 * pg_cpu / max(1, len(lat)), 1) if pg_url else None,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if refresh_s is not None:
        total = stored[0] + len(idle) * _batch(0, 0, args.batch)[1] + _batch(99, 0, 10)[1]  # + the idle and warm-up batches
        report.update({"refresh_impressions": total, "refresh_s": round(refresh_s, 2),
                       "refresh_impressions_per_s": round(total / refresh_s), "refresh_10M_extrapolated_s": round(1e7 * refresh_s / total)})
    print(json.dumps(report, indent=2))
    (out / f"ingest-{args.backend}.json").write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
