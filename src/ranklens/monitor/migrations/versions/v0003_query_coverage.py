"""Snapshots carry their query coverage; a rule is checked per scope (all queries and every segment).

Revision ID: 0003_coverage
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_coverage"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``snapshots.coverage`` and ``snapshots.missing``; ``rule_checks.segment`` joins the unique key."""
    op.add_column("snapshots", sa.Column("coverage", sa.Text(), nullable=True))
    op.add_column("snapshots", sa.Column("missing", sa.String(length=10), nullable=True))
    with op.batch_alter_table("rule_checks") as batch:
        batch.add_column(sa.Column("segment", sa.String(length=200), nullable=False, server_default=""))
        batch.drop_constraint("uq_rule_checks_snapshot_id_rule_id", type_="unique")
        batch.create_unique_constraint("uq_rule_checks_snapshot_id_rule_id_segment", ["snapshot_id", "rule_id", "segment"])
    with op.batch_alter_table("rule_checks") as batch:
        batch.alter_column("segment", server_default=None)


def downgrade() -> None:
    """Drop the columns (and keep one check per rule and snapshot: the all-queries one)."""
    op.execute("DELETE FROM rule_checks WHERE segment <> ''")
    with op.batch_alter_table("rule_checks") as batch:
        batch.drop_constraint("uq_rule_checks_snapshot_id_rule_id_segment", type_="unique")
        batch.create_unique_constraint("uq_rule_checks_snapshot_id_rule_id", ["snapshot_id", "rule_id"])
        batch.drop_column("segment")
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_column("missing")
        batch.drop_column("coverage")
