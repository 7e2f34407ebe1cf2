"""Production monitoring from logs: impressions and late engagement → per-window quality and drift.

* :func:`read_impressions` / :func:`read_engagement` — read and validate the two logs;
* :func:`compute_windows` — per window × segment × system: nDCG@k, DCG@k (the engine) and IPS-DCG@k
  (:func:`ranklens.unbiased.ips_dcg`) with intervals, provisional windows, orphans and clock skew;
* :func:`drift_rows` / :func:`psi` — PSI and KS of the score and shown-item popularity distributions
  against a reference window.

Command line: ``ranklens windows IMPRESSIONS EVENTS --labels RULES.toml --window 1d -m nDCG@10 -f json``.
"""

from ranklens.production.drift import DriftRow, drift_rows, psi
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
    "WindowReport",
    "WindowRow",
    "compute_windows",
    "drift_rows",
    "parse_duration",
    "psi",
    "read_engagement",
    "read_impressions",
]
