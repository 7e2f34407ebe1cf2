"""The production settings' position-bias refit: ``em`` or ``intervention`` refits the examination θ of IPS on
every window (``compute_windows(position_bias=…)``); NULL keeps the DCG discount.

Revision ID: 0006_position_bias_setting
Revises: 0005_production_alerts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_position_bias_setting"
down_revision = "0005_production_alerts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``production_settings.position_bias`` (NULL, ``em`` or ``intervention``)."""
    with op.batch_alter_table("production_settings") as batch:
        batch.add_column(sa.Column("position_bias", sa.String(length=20), nullable=True))


def downgrade() -> None:
    """Drop the column."""
    with op.batch_alter_table("production_settings") as batch:
        batch.drop_column("position_bias")
