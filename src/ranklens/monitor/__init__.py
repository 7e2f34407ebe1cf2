"""ranklens monitor: keep ranking quality over time, check rules, raise alerts, show a dashboard.

Parts (each importable on its own; the web parts need ``pip install 'ranklens[monitor]'``):

* :mod:`ranklens.monitor.models`, :mod:`~ranklens.monitor.db` — the SQL store (SQLite file or PostgreSQL)
  and its Alembic migrations (``monitor/migrations``), run on every start;
* :mod:`~ranklens.monitor.service` — ingest (idempotent, transactional), server-side evaluation, rules;
* :mod:`~ranklens.monitor.rules` — threshold, trailing-window and significant-regression rules, alerts;
* :mod:`~ranklens.monitor.webhooks` — the background webhook sender (retries with backoff, delivery log);
* :mod:`~ranklens.monitor.app` — the FastAPI application: ``/api/v1`` and the dashboard;
* :mod:`~ranklens.monitor.views`, :mod:`~ranklens.monitor.routes` — the read side: one data function per
  dashboard page, and the one route table that serves it as the HTML page and as its ``/api/v1`` JSON twin;
* :mod:`~ranklens.monitor.client` — :class:`~ranklens.monitor.client.MonitorClient`, the Python client;
* :mod:`~ranklens.monitor.demo` — 90 days of synthetic history for the dashboard.

Start it with ``ranklens serve`` (``make dashboard`` seeds the demo first); push with ``ranklens push``.
"""

from __future__ import annotations

from ranklens._lazy import lazy_names

__all__ = ["MonitorClient"]  # the web app is the face: ranklens.monitor.app.create_app


__getattr__, __dir__ = lazy_names(__name__, {"MonitorClient": "ranklens.monitor.client"}, globals())  # stays cheap
