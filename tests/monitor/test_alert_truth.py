"""Alerts that stay true (issue 24): a trailing-window rule keeps firing while a regression lasts and
resolves when the value is back; changes are signed value − reference with the word; every webhook event
carries its own value and message; a resolved alert still shows its period on the series page.

The numbers, by hand: 0.880 for 14 days, then 0.869 for 7 days (a fall of 0.011 against the allowed 0.01),
then 0.880 again. Had the window slid over the regression, day 16's mean would be (6 × 0.880 + 0.869) / 7 =
0.87843 and the fall 0.00943 ≤ 0.01: the alert would resolve after one day while the regression went on.
The reference stays the 7 days before the alert started (0.880), so the fall stays 0.011 for all 7 days.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from .conftest import backends, in_process_monitor

DAY0 = dt.datetime(2026, 8, 1, 6, tzinfo=dt.timezone.utc)
GOOD, BAD = 0.880, 0.869
FIRST_BAD, LAST_BAD = 15, 21


@pytest.fixture(params=backends())
def monitor(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    with in_process_monitor(request.param, tmp_path) as m:
        yield m


def _value(day: int) -> float:
    return BAD if FIRST_BAD <= day <= LAST_BAD else GOOD


def test_window_rule_fires_for_the_whole_regression_and_resolves_on_recovery(monitor: Any) -> None:
    from ranklens.monitor import charts, views
    from ranklens.monitor.models import Delivery
    from ranklens.monitor.schemas import RuleIn, SnapshotIn, WebhookIn

    project = "window"
    monitor.add_rule(project, RuleIn(expr="nDCG@10 drop <= 0.01 window=7"))
    monitor.add_webhook(WebhookIn(url="http://127.0.0.1:9/hook", project=project))
    changes = {}
    for day in range(1, 24):
        body = SnapshotIn.model_validate({"id": f"d{day}", "system": "prod", "at": DAY0 + dt.timedelta(days=day),
                                          "values": {"nDCG@10": _value(day)}})
        out, _ = monitor.ingest(project, body)
        (check,) = out["rules"]
        changes[day] = (check["status"], (check["alert"] or {}).get("change"), check["detail"])
    assert [changes[d][0] for d in range(FIRST_BAD, LAST_BAD + 1)] == ["breach"] * 7
    assert changes[FIRST_BAD][1] == "fired"
    assert [changes[d][1] for d in range(FIRST_BAD + 1, LAST_BAD + 1)] == ["still firing"] * 6
    assert changes[LAST_BAD + 1][:2] == ("ok", "resolved")
    assert changes[LAST_BAD + 2][:2] == ("ok", None)
    # signed: value − reference, with the word
    assert "change −0.0110 (fell)" in changes[FIRST_BAD][2]
    assert "change −0.0110 (fell)" in changes[LAST_BAD][2]  # the reference stayed the pre-alert week
    assert "before the alert started" in changes[LAST_BAD][2]
    assert "change +0.0000 (unchanged)" in changes[LAST_BAD + 1][2]

    with monitor.db.read() as s:
        events = [(e, json.loads(p)) for e, p in s.execute(select(Delivery.event, Delivery.payload).order_by(Delivery.id))]
    assert [e for e, _ in events] == ["alert.firing", "alert.resolved"]
    fired, resolved = events[0][1]["alert"], events[1][1]["alert"]
    assert fired["value"] == pytest.approx(BAD) and "nDCG@10 = 0.8690" in fired["message"]
    # the resolved event carries the value and message of the snapshot that resolved it
    assert resolved["value"] == pytest.approx(GOOD) and "nDCG@10 = 0.8800" in resolved["message"]
    assert "0.8690" not in resolved["message"]

    # the series page still shows the period the alert covered: a band from its start to its resolution
    with monitor.db.read() as s:
        page = views.series_view(s, project, measure="nDCG@10")
    (a,) = page["alerts"]
    assert a["state"] == "resolved"
    start, end = (DAY0 + dt.timedelta(days=d) for d in (FIRST_BAD, LAST_BAD + 1))
    assert (a["started_at"], a["resolved_at"]) == (start.strftime("%Y-%m-%dT%H:%M:%SZ"), end.strftime("%Y-%m-%dT%H:%M:%SZ"))
    (band,) = charts.series_figure(page)["layout"]["shapes"]
    assert (band["x0"], band["x1"]) == (a["started_at"], a["resolved_at"])


def test_signed_change_words() -> None:
    from ranklens.monitor.rules import signed_change

    assert signed_change(0.8611, 0.8779) == "change −0.0168 (fell)"
    assert signed_change(0.9, 0.8) == "change +0.1000 (rose)"


def test_ab_defaults_production_to_the_baseline(monitor: Any) -> None:
    """Without roles given, the longest-running system is the baseline and the newest the candidate (by
    name, "production" would sort after "experiment" and be painted as the candidate)."""
    from ranklens.monitor import views
    from ranklens.monitor.schemas import SnapshotIn

    for system, day in (("production", 1), ("production", 2), ("experiment", 2)):
        body = SnapshotIn.model_validate({"id": f"{system}-{day}", "system": system, "at": DAY0 + dt.timedelta(days=day),
                                          "values": {"nDCG@10": 0.8}})
        monitor.ingest("ab-default", body)
    with monitor.db.read() as s:
        page = views.ab_view(s, "ab-default")
        assert (page["baseline"], page["candidate"]) == ("production", "experiment")
        given = views.ab_view(s, "ab-default", baseline="experiment")
        assert (given["baseline"], given["candidate"]) == ("experiment", "production")
