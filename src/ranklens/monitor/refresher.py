"""The background refresh of the per-window series: every ``RANKLENS_REFRESH_INTERVAL`` (``5m``, ``1h``, or
seconds; off when unset) a thread refreshes each project that has production settings and received
impressions or engagement since its last background refresh (the same :func:`ranklens.monitor.production.
refresh` as ``POST …/windows/refresh``: one engine). Without new data a refresh would store nothing
(the as-of time is the latest event), so it is skipped. A failing project is logged and counted; the others go on.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from sqlalchemy import func, select

from ranklens.monitor.db import Database
from ranklens.monitor.models import IngestEvent, IngestImpression, ProductionSettings, Project

__all__ = ["Refresher"]

log = logging.getLogger("ranklens.monitor")


class Refresher:
    """A daemon thread refreshing the production series every ``interval`` seconds.

    Counters (read by tests and ``/healthz``-style probes): ``passes`` (wake-ups that looked at the
    projects), ``refreshed`` (project refreshes done), ``skipped`` (projects without new data), ``failures``.

    >>> Refresher(Database("sqlite://"), 60.0).refreshed
    0
    """

    def __init__(self, db: Database, interval: float, *, on_delivery: Any = None) -> None:
        self.db = db
        self.interval = interval
        self.on_delivery = on_delivery
        self.passes = self.refreshed = self.skipped = self.failures = 0
        self._seen: dict[int, tuple[int, int]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="ranklens-refresh", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.run_once()

    def run_once(self) -> None:
        """One pass over the projects (also callable directly)."""
        from ranklens.monitor.production import refresh

        with self.db.read() as s:
            rows = s.execute(select(Project.id, Project.name).join(ProductionSettings, ProductionSettings.project_id == Project.id)).all()
            marks = {pid: (int(s.scalar(select(func.coalesce(func.max(IngestImpression.id), 0)).where(IngestImpression.project_id == pid)) or 0),
                           int(s.scalar(select(func.coalesce(func.max(IngestEvent.id), 0)).where(IngestEvent.project_id == pid)) or 0))
                     for pid, _ in rows}
        for pid, name in rows:
            if self._stop.is_set():
                return
            if self._seen.get(pid) == marks[pid]:
                self.skipped += 1
                continue
            try:
                result = refresh(self.db, name)
            except Exception as exc:  # a project's bad data must not stop the others
                self.failures += 1
                log.warning("background refresh of project %r failed: %s", name, exc)
                continue
            self._seen[pid] = marks[pid]
            self.refreshed += 1
            if result.get("alerts") and self.on_delivery is not None:
                self.on_delivery()
        self.passes += 1
