"""Projects get a headline measure: the measure the dashboard pages open on.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``projects.headline_measure`` (nullable: no setting means nDCG@10 when present)."""
    op.add_column("projects", sa.Column("headline_measure", sa.String(length=200), nullable=True))


def downgrade() -> None:
    """Drop ``projects.headline_measure``."""
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("headline_measure")
