"""The monitoring store's tables (SQLAlchemy 2.x declarative models).

::

    projects ─┬─ systems ───────────────┐
              ├─ datasets (qrels versions)│
              ├─ snapshots ──────────────┴─ snapshot_values (measure × segment → value)
              │      └─ snapshot_queries (per-query values, one JSON document per snapshot)
              ├─ rules ── rule_checks (one row per rule × snapshot × segment evaluated)
              ├─ alerts (firing → resolved; at most one open per rule × system × segment)
              ├─ webhooks ── deliveries ── delivery_attempts (the outbox and its log)
              ├─ ingest_impressions, ingest_events (production logs, idempotent by event id)
              ├─ production_settings (label rules, window, measures of the per-window series)
              ├─ window_refreshes ── window_values (every revision of every window's value), window_drift
              └─ window_alerts (the drop and threshold checks of the per-window series)

Times are stored as naive UTC and read back as aware UTC (:class:`UTCDateTime`), so SQLite and
PostgreSQL behave the same. The schema is created and upgraded only by the Alembic migrations in
``monitor/migrations``; a test checks that these models and the migrations agree.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "Alert",
    "Base",
    "Dataset",
    "Delivery",
    "DeliveryAttempt",
    "IngestEvent",
    "IngestImpression",
    "ProductionSettings",
    "Project",
    "Rule",
    "RuleCheck",
    "Snapshot",
    "SnapshotQueries",
    "SnapshotValue",
    "System",
    "UTCDateTime",
    "Webhook",
    "WindowAlert",
    "WindowDrift",
    "WindowRefresh",
    "WindowValue",
    "utcnow",
]

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> dt.datetime:
    """The current time, aware UTC, to the microsecond."""
    return dt.datetime.now(dt.timezone.utc)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timestamp stored as naive UTC, returned as aware UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value
        try:
            return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        except OverflowError:  # before year 1 or after 9999 in UTC (a filter such as since=0001-01-01T00:00+05:00)
            return dt.datetime.min if value.year == 1 else dt.datetime.max

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # pragma: no cover - SQLite returns datetimes through SQLAlchemy
            value = dt.datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc)  # type: ignore[no-any-return]


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: the measure the dashboard pages open on (``None``: nDCG@10 when present, see views.headline_measure)
    headline_measure: Mapped[str | None] = mapped_column(String(200), nullable=True)


class System(Base):
    __tablename__ = "systems"
    __table_args__ = (UniqueConstraint("project_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Dataset(Base):
    """A stored qrels version that uploaded runs are evaluated against."""

    __tablename__ = "datasets"
    __table_args__ = (UniqueConstraint("project_id", "name", "version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[str] = mapped_column(String(100))
    qrels: Mapped[str] = mapped_column(Text)  # JSON {qid: {docid: label}}
    num_queries: Mapped[int] = mapped_column(Integer)
    num_judgements: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Snapshot(Base):
    """One evaluation of one system at one time; ``client_id`` makes ingestion idempotent."""

    __tablename__ = "snapshots"
    __table_args__ = (
        UniqueConstraint("project_id", "client_id"),
        Index("ix_snapshots_project_at", "project_id", "at"),
        Index("ix_snapshots_system_at", "system_id", "at"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"))
    dataset_id: Mapped[int | None] = mapped_column(ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True)
    client_id: Mapped[str] = mapped_column(String(128))
    digest: Mapped[str] = mapped_column(String(64))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    measures: Mapped[str] = mapped_column(Text)  # JSON list of canonical measure names
    tags: Mapped[str] = mapped_column(Text, default="{}")  # JSON {key: value}
    num_queries: Mapped[int | None] = mapped_column(Integer, nullable=True)
    has_per_query: Mapped[bool] = mapped_column(Boolean, default=False)
    source: Mapped[str] = mapped_column(String(20), default="push")
    #: JSON ``{segment: [answered, expected]}`` (``""``: all queries) when the expected query set is known
    coverage: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: how unanswered expected queries count: ``zero`` (scored 0, the gate's rule) or ``skip`` (left out)
    missing: Mapped[str | None] = mapped_column(String(10), nullable=True)


class SnapshotValue(Base):
    """An aggregate value; segment ``""`` is the whole query set."""

    __tablename__ = "snapshot_values"
    __table_args__ = (UniqueConstraint("snapshot_id", "measure", "segment"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"))
    measure: Mapped[str] = mapped_column(String(200))
    segment: Mapped[str] = mapped_column(String(200), default="")
    value: Mapped[float] = mapped_column(Float)


class SnapshotQueries(Base):
    """Per-query values of one snapshot: ``{"queries": [...], "segments": [...]|null, "values": {m: [...]}}``."""

    __tablename__ = "snapshot_queries"
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True)
    data: Mapped[str] = mapped_column(Text)


class Rule(Base):
    __tablename__ = "rules"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))  # threshold | window | significance
    measure: Mapped[str] = mapped_column(String(200))
    segment: Mapped[str] = mapped_column(String(200), default="")
    system_id: Mapped[int | None] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), nullable=True)
    op: Mapped[str | None] = mapped_column(String(2), nullable=True)
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    window_days: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_drop: Mapped[float | None] = mapped_column(Float, nullable=True)
    min_points: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reference_system_id: Mapped[int | None] = mapped_column(
        ForeignKey("systems.id", ondelete="CASCADE"), nullable=True
    )
    alpha: Mapped[float | None] = mapped_column(Float, nullable=True)
    test: Mapped[str | None] = mapped_column(String(20), nullable=True)
    min_queries: Mapped[int | None] = mapped_column(Integer, nullable=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class RuleCheck(Base):
    """The outcome of one rule on one snapshot in one scope: ``ok``, ``breach`` or ``skipped`` (not enough data)."""

    __tablename__ = "rule_checks"
    __table_args__ = (
        UniqueConstraint("snapshot_id", "rule_id", "segment"),
        Index("ix_rule_checks_rule_id", "rule_id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"))
    rule_id: Mapped[int] = mapped_column(ForeignKey("rules.id", ondelete="CASCADE"))
    #: the scope checked: ``""`` all queries, else a segment (a rule without a segment checks both)
    segment: Mapped[str] = mapped_column(String(200), default="")
    status: Mapped[str] = mapped_column(String(10))
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    detail: Mapped[str] = mapped_column(Text, default="")


class Alert(Base):
    """A rule breached by a system; ``open_key`` is set while firing so at most one is open per key (snapshot
    alerts ``RULE:SYSTEM[:SCOPE]``, production alerts ``prod:RULE:SYSTEM:HASH`` of segment, window and measure)."""

    __tablename__ = "alerts"
    __table_args__ = (Index("ix_alerts_project_state", "project_id", "state"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    rule_id: Mapped[int] = mapped_column(ForeignKey("rules.id", ondelete="CASCADE"))
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"))
    segment: Mapped[str] = mapped_column(String(200), default="")
    state: Mapped[str] = mapped_column(String(10))  # firing | resolved
    open_key: Mapped[str | None] = mapped_column(String(100), unique=True, nullable=True)
    started_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    resolved_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # a snapshot check's alert names its snapshots; a production alert (``source``) its window instead
    source: Mapped[str] = mapped_column(String(20), default="snapshot", server_default="snapshot")
    window_start: Mapped[str | None] = mapped_column(String(40), nullable=True)
    first_snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"), nullable=True)
    last_snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"), nullable=True)
    resolved_snapshot_id: Mapped[int | None] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), nullable=True
    )
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Webhook(Base):
    __tablename__ = "webhooks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), nullable=True)
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str | None] = mapped_column(String(200), nullable=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Delivery(Base):
    """One alert event to one webhook: written in the ingest transaction, sent by the background worker."""

    __tablename__ = "deliveries"
    __table_args__ = (Index("ix_deliveries_status_next", "status", "next_attempt_at"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    webhook_id: Mapped[int] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    alert_id: Mapped[int | None] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"), nullable=True)
    event: Mapped[str] = mapped_column(String(40))
    payload: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(10), default="pending")  # pending | delivered | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    locked_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    delivered_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class DeliveryAttempt(Base):
    __tablename__ = "delivery_attempts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("deliveries.id", ondelete="CASCADE"), index=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    duration_ms: Mapped[float] = mapped_column(Float)


# ---------------------------------------------------------------------------------------------------------
# production logs (issue 29): impressions and engagement events, the per-window series and its revisions


class IngestImpression(Base):
    """One item shown in one response; ``event_id`` (the sender's, or derived from the content) is the
    idempotency key within the project. Times are epoch seconds (``ts`` when shown, ``received`` when stored)."""

    __tablename__ = "ingest_impressions"
    __table_args__ = (
        UniqueConstraint("project_id", "event_id"),
        Index("ix_ingest_impressions_project_ts", "project_id", "ts"),
        Index("ix_ingest_impressions_project_request_item", "project_id", "request", "item"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # no foreign key: PostgreSQL would check it one inserted row at a time (half of a batch's cost); the ingest
    # path locks the project's row once per batch and a trigger deletes a project's logs with it (migration 0007)
    project_id: Mapped[int] = mapped_column(Integer)
    event_id: Mapped[str] = mapped_column(String(128))
    request: Mapped[str] = mapped_column(String(200))
    query: Mapped[str] = mapped_column(String(200))
    item: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)
    ts: Mapped[float] = mapped_column(Float)
    segment: Mapped[str] = mapped_column(String(200), default="all")
    system: Mapped[str] = mapped_column(String(200), default="all")
    received: Mapped[float] = mapped_column(Float)


class IngestEvent(Base):
    """One engagement event (click, purchase, watch …) on a shown item, arriving any time after it."""

    __tablename__ = "ingest_events"
    __table_args__ = (
        UniqueConstraint("project_id", "event_id"),
        Index("ix_ingest_events_project_request_item", "project_id", "request", "item"),
        Index("ix_ingest_events_project_ts", "project_id", "ts"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer)  # no foreign key: see IngestImpression
    event_id: Mapped[str] = mapped_column(String(128))
    request: Mapped[str] = mapped_column(String(200))
    item: Mapped[str] = mapped_column(String(200))
    event: Mapped[str] = mapped_column(String(100))
    ts: Mapped[float] = mapped_column(Float)
    value: Mapped[float] = mapped_column(Float, default=1.0)
    received: Mapped[float] = mapped_column(Float)


class ProductionSettings(Base):
    """How a project's per-window series is computed: the label rules (JSON of the TOML's tables), the window
    width, the label delay, the measures (JSON list), the drift reference window and the position-bias refit of
    IPS per window (``em``, ``intervention`` or NULL: the DCG discount)."""

    __tablename__ = "production_settings"
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True)
    rules: Mapped[str] = mapped_column(Text)
    window: Mapped[str] = mapped_column(String(20))
    label_delay: Mapped[str] = mapped_column(String(20))
    measures: Mapped[str] = mapped_column(Text)
    reference_window: Mapped[str | None] = mapped_column(String(40), nullable=True)
    position_bias: Mapped[str | None] = mapped_column(String(20), nullable=True)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class WindowRefresh(Base):
    """One recomputation of the series: when, the data's ``as_of`` and the counts of what was not used (JSON)."""

    __tablename__ = "window_refreshes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    as_of: Mapped[str] = mapped_column(String(40))
    counts: Mapped[str] = mapped_column(Text)
    revised: Mapped[int] = mapped_column(Integer, default=0)


class WindowValue(Base):
    """One revision of one window × segment × system × measure; ``current`` marks the latest revision (a
    refresh that finds a different value, interval, n or provisional flag adds a revision)."""

    __tablename__ = "window_values"
    __table_args__ = (
        UniqueConstraint("project_id", "start", "segment", "system", "measure", "revision", name="uq_window_values_key"),
        Index("ix_window_values_project_current", "project_id", "current"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    refresh_id: Mapped[int] = mapped_column(ForeignKey("window_refreshes.id", ondelete="CASCADE"))
    start: Mapped[str] = mapped_column(String(40))
    end: Mapped[str] = mapped_column(String(40))
    segment: Mapped[str] = mapped_column(String(200))
    system: Mapped[str] = mapped_column(String(200))
    measure: Mapped[str] = mapped_column(String(200))
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    n: Mapped[int] = mapped_column(Integer)
    provisional: Mapped[bool] = mapped_column(Boolean)
    revision: Mapped[int] = mapped_column(Integer)
    current: Mapped[bool] = mapped_column(Boolean, default=True)


class WindowDrift(Base):
    """The drift checks of the latest refresh (PSI, KS of scores and shown-item popularity)."""

    __tablename__ = "window_drift"
    __table_args__ = (UniqueConstraint("project_id", "start", "segment", "system", "what", name="uq_window_drift_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    start: Mapped[str] = mapped_column(String(40))
    segment: Mapped[str] = mapped_column(String(200))
    system: Mapped[str] = mapped_column(String(200))
    what: Mapped[str] = mapped_column(String(20))
    psi: Mapped[float | None] = mapped_column(Float, nullable=True)
    ks_p: Mapped[float | None] = mapped_column(Float, nullable=True)
    flag: Mapped[bool] = mapped_column(Boolean)


class WindowAlert(Base):
    """A rule of the project breached by one window of the series (``firing`` until a later refresh finds the
    window ok again: ``resolved``); one row per rule × window × segment × system × measure."""

    __tablename__ = "window_alerts"
    __table_args__ = (UniqueConstraint("project_id", "rule_id", "start", "segment", "system", "measure", name="uq_window_alerts_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    rule_id: Mapped[int] = mapped_column(ForeignKey("rules.id", ondelete="CASCADE"))
    start: Mapped[str] = mapped_column(String(40))
    segment: Mapped[str] = mapped_column(String(200))
    system: Mapped[str] = mapped_column(String(200))
    measure: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(10))
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    reference: Mapped[float | None] = mapped_column(Float, nullable=True)
    p: Mapped[float | None] = mapped_column(Float, nullable=True)
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
