"""Production alerts in the monitor's alert table: an alert comes from a snapshot check or from the per-window
series of the production logs (``source``), the latter naming its window and having no snapshot.

Revision ID: 0005_production_alerts
Revises: 0004_production
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_production_alerts"
down_revision = "0004_production"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``alerts.source`` (snapshot | production) and ``alerts.window_start``; snapshot ids become optional."""
    with op.batch_alter_table("alerts") as batch:
        batch.add_column(sa.Column("source", sa.String(length=20), nullable=False, server_default="snapshot"))
        batch.add_column(sa.Column("window_start", sa.String(length=40), nullable=True))
        batch.alter_column("first_snapshot_id", existing_type=sa.Integer(), nullable=True)
        batch.alter_column("last_snapshot_id", existing_type=sa.Integer(), nullable=True)


def downgrade() -> None:
    """Drop the production alerts and the columns."""
    op.execute("DELETE FROM alerts WHERE source <> 'snapshot'")
    with op.batch_alter_table("alerts") as batch:
        batch.alter_column("last_snapshot_id", existing_type=sa.Integer(), nullable=False)
        batch.alter_column("first_snapshot_id", existing_type=sa.Integer(), nullable=False)
        batch.drop_column("window_start")
        batch.drop_column("source")
