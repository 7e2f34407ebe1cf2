"""Production logs (issue 29): ingested impressions and engagement events, the per-window series with its
revisions, its drift checks and its alerts, and each project's production settings.

Revision ID: 0004_production
Revises: 0003_coverage
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004_production"
down_revision = "0003_coverage"
branch_labels = None
depends_on = None


def _key(table: str) -> list[Any]:
    return [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=f"fk_{table}_project_id_projects", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=f"pk_{table}"),
    ]


def upgrade() -> None:
    """Create the seven tables of the production-log monitor."""
    op.create_table(
        "ingest_impressions", *_key("ingest_impressions"),
        sa.Column("event_id", sa.String(length=128), nullable=False),
        sa.Column("request", sa.String(length=200), nullable=False),
        sa.Column("query", sa.String(length=200), nullable=False),
        sa.Column("item", sa.String(length=200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("system", sa.String(length=200), nullable=False),
        sa.Column("received", sa.Float(), nullable=False),
        sa.UniqueConstraint("project_id", "event_id", name="uq_ingest_impressions_project_id_event_id"),
    )
    op.create_index("ix_ingest_impressions_project_request_item", "ingest_impressions", ["project_id", "request", "item"])
    op.create_index("ix_ingest_impressions_project_ts", "ingest_impressions", ["project_id", "ts"])
    op.create_table(
        "ingest_events", *_key("ingest_events"),
        sa.Column("event_id", sa.String(length=128), nullable=False),
        sa.Column("request", sa.String(length=200), nullable=False),
        sa.Column("item", sa.String(length=200), nullable=False),
        sa.Column("event", sa.String(length=100), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("received", sa.Float(), nullable=False),
        sa.UniqueConstraint("project_id", "event_id", name="uq_ingest_events_project_id_event_id"),
    )
    op.create_index("ix_ingest_events_project_request_item", "ingest_events", ["project_id", "request", "item"])
    op.create_index("ix_ingest_events_project_ts", "ingest_events", ["project_id", "ts"])
    op.create_table(
        "production_settings",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("window", sa.String(length=20), nullable=False),
        sa.Column("label_delay", sa.String(length=20), nullable=False),
        sa.Column("measures", sa.Text(), nullable=False),
        sa.Column("reference_window", sa.String(length=40), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name="fk_production_settings_project_id_projects", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id", name="pk_production_settings"),
    )
    op.create_table(
        "window_refreshes", *_key("window_refreshes"),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("as_of", sa.String(length=40), nullable=False),
        sa.Column("counts", sa.Text(), nullable=False),
        sa.Column("revised", sa.Integer(), nullable=False),
    )
    op.create_index("ix_window_refreshes_project_id", "window_refreshes", ["project_id"])
    op.create_table(
        "window_values", *_key("window_values"),
        sa.Column("refresh_id", sa.Integer(), nullable=False),
        sa.Column("start", sa.String(length=40), nullable=False),
        sa.Column("end", sa.String(length=40), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("system", sa.String(length=200), nullable=False),
        sa.Column("measure", sa.String(length=200), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("provisional", sa.Boolean(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("current", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["refresh_id"], ["window_refreshes.id"], name="fk_window_values_refresh_id_window_refreshes", ondelete="CASCADE"),
        sa.UniqueConstraint("project_id", "start", "segment", "system", "measure", "revision", name="uq_window_values_key"),
    )
    op.create_index("ix_window_values_project_current", "window_values", ["project_id", "current"])
    op.create_table(
        "window_drift", *_key("window_drift"),
        sa.Column("start", sa.String(length=40), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("system", sa.String(length=200), nullable=False),
        sa.Column("what", sa.String(length=20), nullable=False),
        sa.Column("psi", sa.Float(), nullable=True),
        sa.Column("ks_p", sa.Float(), nullable=True),
        sa.Column("flag", sa.Boolean(), nullable=False),
        sa.UniqueConstraint("project_id", "start", "segment", "system", "what", name="uq_window_drift_key"),
    )
    op.create_table(
        "window_alerts", *_key("window_alerts"),
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("start", sa.String(length=40), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("system", sa.String(length=200), nullable=False),
        sa.Column("measure", sa.String(length=200), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("reference", sa.Float(), nullable=True),
        sa.Column("p", sa.Float(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["rule_id"], ["rules.id"], name="fk_window_alerts_rule_id_rules", ondelete="CASCADE"),
        sa.UniqueConstraint("project_id", "rule_id", "start", "segment", "system", "measure", name="uq_window_alerts_key"),
    )


def downgrade() -> None:
    """Drop the seven tables."""
    for table in ("window_alerts", "window_drift", "window_values", "window_refreshes", "production_settings",
                  "ingest_events", "ingest_impressions"):
        op.drop_table(table)
