"""The monitor's unpaired A/B answer (issue 25 §4): first and cached answer time for N users × D days.

Two systems each serve half of ``--users`` users; every UTC day each pushes a snapshot holding the users
exposed so far (exposure spread evenly over ``--days`` days), and one pre-period snapshot holds every user.
The A/B data function (what ``GET /api/v1/projects/{p}/ab`` runs) is timed in-process on SQLite: the first
answer (cache cleared: every snapshot of both systems parsed for the exposure days, then ``ranklens ab``'s
analysis) and the cached answer, without and with the pre-period (CUPED).

    python -m bench.monitor_ab --users 20000 --days 30

The database goes to ``bench/data/`` (git-ignored); seeding is not timed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
PROJECT = "bench-ab"


def seed(url: str, users: int, days: int) -> None:
    from ranklens.monitor.db import Database
    from ranklens.monitor.schemas import SnapshotIn
    from ranklens.monitor.service import Monitor

    db = Database(url)
    db.migrate()
    mon = Monitor(db)
    rng = np.random.default_rng(25)
    start = dt.datetime(2026, 8, 1, 6, tzinfo=dt.timezone.utc)
    pre: dict[str, dict[str, float]] = {}

    def push(sid: str, system: str, at: dt.datetime, per_user: dict[str, dict[str, float]]) -> None:
        doc = {
            "runs": [{"run": system, "measures": ["nDCG@4"], "aggregate": {"nDCG@4": float(np.mean([v["nDCG@4"] for v in per_user.values()]))},
                      "num_queries": len(per_user), "per_query": per_user, "notes": [], "options": {}}],
        }
        mon.ingest(PROJECT, SnapshotIn.model_validate({"id": sid, "system": system, "at": at.isoformat(), "results": doc}))

    for system, prefix, a in (("production", "p", 2.0), ("candidate", "c", 2.3)):
        ids = [f"{prefix}{i:07d}" for i in range(users // 2)]
        first = rng.integers(0, days, len(ids))
        final = rng.beta(a, 2.0, len(ids))
        for u, v in zip(ids, final):
            pre[u] = {"nDCG@4": float(np.clip(0.8 * v + rng.normal(0, 0.1), 0, 1))}
        for d in range(days):
            held = np.flatnonzero(first <= d)
            push(f"{system}-{d}", system, start + dt.timedelta(days=d), {ids[i]: {"nDCG@4": float(final[i])} for i in held})
    push("pre", "pre-period", start - dt.timedelta(days=7), pre)
    db.dispose()


def answer(db: Any, pre: list[str], candidate: str = "candidate") -> dict[str, Any]:
    from ranklens.monitor.views import ab_view

    with db.read() as s:
        return ab_view(s, PROJECT, baseline="production", candidate=candidate, measure="nDCG@4", pre=pre)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3, help="cached answers timed (median)")
    args = ap.parse_args(argv)
    from ranklens.monitor import views

    path = ROOT / "data" / f"monitor_ab_{args.users}x{args.days}.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{path}"
    if not path.exists():
        t0 = time.perf_counter()
        seed(url, args.users, args.days)
        print(f"seeded {path} in {time.perf_counter() - t0:.1f} s (not timed below)")
    print(f"{args.users} users × {args.days} days on SQLite ({2 * args.days + 1} snapshots)")
    from ranklens.monitor.db import Database

    db = Database(url)
    t0 = time.perf_counter()
    import scipy.stats  # noqa: F401  (Mann–Whitney's; a server imports it once, on its first unpaired answer)

    import ranklens.monitor.ab_unpaired
    import ranklens.online  # noqa: F401

    answer(db, [], candidate="production")  # imports and connections warm (a paired answer), not timed
    print(f"warm-up (imports, scipy.stats included; once per server process): {time.perf_counter() - t0:.2f} s")
    for label, pre in (("no pre-period", []), ("pre-period (CUPED)", ["pre"])):
        views._AB_CACHE.clear()
        t0 = time.perf_counter()
        out = answer(db, pre)
        first = time.perf_counter() - t0
        cached = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            again = answer(db, pre)
            cached.append(time.perf_counter() - t0)
        assert again["comparison"] == out["comparison"]
        c = out["comparison"]
        seq = c["ab"]["measures"]["nDCG@4"]["sequential"]
        print(
            f"{label:20s} first answer {first:6.2f} s, cached {statistics.median(cached):6.3f} s "
            f"({first / statistics.median(cached):.0f}× faster); design {c['design']}, Δ {c['mean_difference']:+.4f}, "
            f"p {c['p_value']:.2g}, {seq['looks']} looks, always-valid p {seq['p']:.2g}"
            + (f", CUPED variance −{100 * c['ab']['measures']['nDCG@4']['cuped']['variance_reduction']:.0f}%" if pre else "")
        )
    db.dispose()


if __name__ == "__main__":
    main()
