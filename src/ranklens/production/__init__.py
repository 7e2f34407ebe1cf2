"""Production monitoring from logs: impressions and late engagement → per-window quality and drift.

* :func:`read_impressions` / :func:`read_engagement` — read and validate the two logs;
* :func:`compute_windows` — per window × segment × system: nDCG@k, DCG@k (the engine) and IPS-DCG@k
  (:func:`ranklens.unbiased.ips_dcg`) with intervals, provisional windows, orphans and clock skew;
* :func:`drift_rows` / :func:`psi` — PSI and KS of the score and shown-item popularity distributions
  against a reference window.

* :func:`validate_impression` / :func:`validate_event` — one event as a service sends it, checked on its own
  (the monitor's ingest route and ``ranklens ingest``); :func:`content_id` for logs without ids;
  :func:`read_chunks` reads a log file a chunk at a time.

Command line: ``ranklens windows IMPRESSIONS EVENTS --labels RULES.toml --window 1d -m nDCG@10 -f json``;
``ranklens ingest IMPRESSIONS [EVENTS] --project P`` sends logs to the monitor, which stores the series.
"""

from ranklens.production.drift import DriftRow, drift_rows, psi
from ranklens.production.events import Rejection, content_id, read_chunks, validate_event, validate_impression
from ranklens.production.logs import (
    EngagementColumns,
    ImpressionColumns,
    parse_duration,
    read_engagement,
    read_impressions,
)
from ranklens.production.windows import WindowReport, WindowRow, compute_windows

__all__ = [
    "DriftRow",
    "EngagementColumns",
    "ImpressionColumns",
    "Rejection",
    "WindowReport",
    "WindowRow",
    "compute_windows",
    "content_id",
    "drift_rows",
    "parse_duration",
    "psi",
    "read_chunks",
    "read_engagement",
    "read_impressions",
    "validate_event",
    "validate_impression",
]
