"""The production-log tables without a foreign key to ``projects`` (issue 29, ingestion speed).

PostgreSQL checks a foreign key one row at a time (a trigger per inserted row running a query that locks the
project's row): half of the database's CPU for a batch of 1,000 impressions (``bench.ingest_bench``). The two
things the key did are kept another way: the ingest path locks the project's row once per batch (``FOR KEY
SHARE``, what each per-row check took), so a project deleted at the same time either waits for the batch or is
gone before it (the batch then makes the project anew); and deleting a project deletes its logs by a trigger on
``projects`` (the ``ON DELETE CASCADE``). SQLite rebuilds the two tables (``batch_alter_table``) once.

Revision ID: 0007_ingest_project_key
Revises: 0006_position_bias_setting
"""

from __future__ import annotations

from alembic import op

revision = "0007_ingest_project_key"
down_revision = "0006_position_bias_setting"
branch_labels = None
depends_on = None

TABLES = ("ingest_impressions", "ingest_events")
_DELETE = "".join(f"DELETE FROM {t} WHERE project_id = OLD.id; " for t in TABLES)


def upgrade() -> None:
    """Drop the two foreign keys; delete a project's logs with the project by a trigger."""
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"fk_{table}_project_id_projects", type_="foreignkey")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"CREATE FUNCTION delete_project_logs() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {_DELETE}RETURN OLD; END $$")
        op.execute("CREATE TRIGGER delete_project_logs AFTER DELETE ON projects FOR EACH ROW EXECUTE FUNCTION delete_project_logs()")
    else:
        op.execute(f"CREATE TRIGGER delete_project_logs AFTER DELETE ON projects FOR EACH ROW BEGIN {_DELETE}END")


def downgrade() -> None:
    """Drop the trigger, the logs of projects no longer there, and put the foreign keys back."""
    op.execute("DROP TRIGGER delete_project_logs" + (" ON projects" if op.get_bind().dialect.name == "postgresql" else ""))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION delete_project_logs()")
    for table in TABLES:
        op.execute(f"DELETE FROM {table} WHERE project_id NOT IN (SELECT id FROM projects)")
        with op.batch_alter_table(table) as batch:
            batch.create_foreign_key(f"fk_{table}_project_id_projects", "projects", ["project_id"], ["id"], ondelete="CASCADE")
