"""Demo data: 90 days of synthetic history so the dashboard is alive on first start.

Project ``demo-search``: two systems, ``bm25-v1`` (control) and ``neural-v2`` (treatment), 60 queries in four
categories (segments: books, electronics, fashion, home), measures nDCG@10, AP and RR with per-query values,
and three rules: ``nDCG@10 >= 0.55`` on the fashion segment, a 7-day drop rule and a significant-regression
rule of neural-v2 against bm25-v1. Around day 70 neural-v2's fashion results dip below 0.55 for four days:
the one threshold breach, which fires an alert and resolves when the dip ends (the drop and significance
rules, which have no segment, are checked in every segment too, and fire in fashion over the same days). Everything is seeded through
the same ingest path as the API (rules checked on every snapshot); the random generator is seeded, so two
seedings give the same values.
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
from sqlalchemy import delete, func, select

from ranklens.monitor.db import Database
from ranklens.monitor.models import Project
from ranklens.monitor.rules import SnapshotData
from ranklens.monitor.schemas import RuleIn
from ranklens.monitor.service import Monitor

__all__ = ["DEMO_PROJECT", "seed", "seed_if_empty"]

DEMO_PROJECT = "demo-search"
SYSTEMS = ("bm25-v1", "neural-v2")
SEGMENTS = ("books", "electronics", "fashion", "home")
MEASURES = ("nDCG@10", "AP", "RR")
QUERIES_PER_SEGMENT = 15
DIP_DAYS = range(70, 74)  # neural-v2's fashion regression (days since the start)


def seed(url: str | None = None, *, days: int = 90, reset: bool = False, project: str = DEMO_PROJECT, seed: int = 7) -> int:
    """Seed ``project`` with ``days`` days of history; returns the number of snapshots stored.

    An existing project of that name is left alone unless ``reset``.
    """
    db = Database(url)
    try:
        db.migrate()
        with db.read() as s:
            exists = s.scalar(select(Project.id).where(Project.name == project))
        if exists is not None:
            if not reset:
                return 0
            db.write(lambda s: s.execute(delete(Project).where(Project.id == exists)))
        monitor = Monitor(db)
        from ranklens.monitor.schemas import ProjectIn

        monitor.create_project(
            ProjectIn(name=project, description="Synthetic demo: two rankers over 90 days, four categories, one regression.")
        )
        monitor.add_rule(project, RuleIn(expr="nDCG@10 >= 0.55", segment="fashion", name="fashion nDCG@10 floor"))
        monitor.add_rule(project, RuleIn(kind="window", measure="nDCG@10", window_days=7, max_drop=0.05, name="weekly drop"))
        monitor.add_rule(
            project,
            RuleIn(kind="significance", measure="nDCG@10", reference="bm25-v1", system="neural-v2", alpha=0.01,
                   name="neural-v2 not worse than bm25-v1"),
        )
        n = 0
        for data in generate(days=days, seed=seed):
            monitor.ingest_data(project, data, source="demo")
            n += 1
        return n
    finally:
        db.dispose()


def seed_if_empty(url: str | None = None) -> bool:
    """Seed the demo when the database has no project at all; True if it did."""
    db = Database(url)
    try:
        db.migrate()
        with db.read() as s:
            count = s.scalar(select(func.count()).select_from(Project)) or 0
    finally:
        db.dispose()
    if count:
        return False
    seed(url)
    return True


def generate(*, days: int = 90, seed: int = 7, end: dt.datetime | None = None) -> list[SnapshotData]:
    """The demo snapshots, oldest first (one per system per day at 06:00 UTC, ending today)."""
    rng = np.random.default_rng(seed)
    if end is None:
        now = dt.datetime.now(dt.timezone.utc)
        end = now.replace(hour=6, minute=0, second=0, microsecond=0)
        if end > now:
            end -= dt.timedelta(days=1)
    queries = [f"{seg[:4]}-{i:02d}" for seg in SEGMENTS for i in range(1, QUERIES_PER_SEGMENT + 1)]
    segment_of = [seg for seg in SEGMENTS for _ in range(QUERIES_PER_SEGMENT)]
    seg_level = {"books": 0.70, "electronics": 0.62, "fashion": 0.66, "home": 0.60}
    base = np.array([seg_level[s] for s in segment_of]) + rng.normal(0, 0.12, len(queries))
    lift = rng.normal(0.04, 0.05, len(queries))  # neural-v2's per-query gain over bm25-v1
    out: list[SnapshotData] = []
    for d in range(days):
        at = end - dt.timedelta(days=days - 1 - d)
        weekly = 0.008 * math.sin(2 * math.pi * d / 7)
        for system in SYSTEMS:
            trend = 0.0 if system == "bm25-v1" else 0.02 * d / max(days - 1, 1)
            level = base + weekly + (lift + trend if system == "neural-v2" else 0.0)
            if system == "neural-v2" and d in DIP_DAYS:
                level = level - np.array([0.16 if s == "fashion" else 0.0 for s in segment_of])
            ndcg = np.clip(level + rng.normal(0, 0.015, len(queries)), 0.0, 1.0)
            ap = np.clip(ndcg * 0.85 + rng.normal(0, 0.02, len(queries)), 0.0, 1.0)
            rr = np.clip(np.round((ndcg + rng.normal(0.1, 0.05, len(queries))) * 4) / 4, 0.0, 1.0)
            per_query = {"nDCG@10": ndcg.tolist(), "AP": ap.tolist(), "RR": rr.tolist()}
            aggregates = {m: float(np.mean(v)) for m, v in per_query.items()}
            seg_values = {
                seg: {m: float(np.mean([v[i] for i, s in enumerate(segment_of) if s == seg])) for m, v in per_query.items()}
                for seg in SEGMENTS
            }
            out.append(
                SnapshotData(
                    client_id=f"demo-{system}-{at:%Y%m%d}",
                    system=system,
                    at=at,
                    tags={"arm": "A" if system == "bm25-v1" else "B", "build": f"{2000 + d}"},
                    measures=list(MEASURES),
                    aggregates=aggregates,
                    segment_values=seg_values,
                    num_queries=len(queries),
                    queries=list(queries),
                    per_query={m: list(v) for m, v in per_query.items()},
                    query_segments=list(segment_of),
                    digest=f"demo-{seed}-{system}-{d}",
                )
            )
    return out
