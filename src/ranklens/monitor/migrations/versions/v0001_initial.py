"""The first schema of the monitoring store: projects, systems, datasets, snapshots, rules, alerts, webhooks.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create every table of the first schema."""
    op.create_table('projects',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_projects')),
    sa.UniqueConstraint('name', name=op.f('uq_projects_name'))
    )
    op.create_table('datasets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('version', sa.String(length=100), nullable=False),
    sa.Column('qrels', sa.Text(), nullable=False),
    sa.Column('num_queries', sa.Integer(), nullable=False),
    sa.Column('num_judgements', sa.Integer(), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_datasets_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_datasets')),
    sa.UniqueConstraint('project_id', 'name', 'version', name=op.f('uq_datasets_project_id_name_version'))
    )
    op.create_table('systems',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_systems_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_systems')),
    sa.UniqueConstraint('project_id', 'name', name=op.f('uq_systems_project_id_name'))
    )
    op.create_table('webhooks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=True),
    sa.Column('url', sa.String(length=2000), nullable=False),
    sa.Column('secret', sa.String(length=200), nullable=True),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_webhooks_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_webhooks'))
    )
    op.create_table('rules',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('measure', sa.String(length=200), nullable=False),
    sa.Column('segment', sa.String(length=200), nullable=False),
    sa.Column('system_id', sa.Integer(), nullable=True),
    sa.Column('op', sa.String(length=2), nullable=True),
    sa.Column('threshold', sa.Float(), nullable=True),
    sa.Column('window_days', sa.Float(), nullable=True),
    sa.Column('max_drop', sa.Float(), nullable=True),
    sa.Column('min_points', sa.Integer(), nullable=True),
    sa.Column('reference_system_id', sa.Integer(), nullable=True),
    sa.Column('alpha', sa.Float(), nullable=True),
    sa.Column('test', sa.String(length=20), nullable=True),
    sa.Column('min_queries', sa.Integer(), nullable=True),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_rules_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['reference_system_id'], ['systems.id'], name=op.f('fk_rules_reference_system_id_systems'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['system_id'], ['systems.id'], name=op.f('fk_rules_system_id_systems'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rules'))
    )
    op.create_table('snapshots',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('system_id', sa.Integer(), nullable=False),
    sa.Column('dataset_id', sa.Integer(), nullable=True),
    sa.Column('client_id', sa.String(length=128), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('at', sa.DateTime(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('measures', sa.Text(), nullable=False),
    sa.Column('tags', sa.Text(), nullable=False),
    sa.Column('num_queries', sa.Integer(), nullable=True),
    sa.Column('has_per_query', sa.Boolean(), nullable=False),
    sa.Column('source', sa.String(length=20), nullable=False),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_snapshots_dataset_id_datasets'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_snapshots_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['system_id'], ['systems.id'], name=op.f('fk_snapshots_system_id_systems'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshots')),
    sa.UniqueConstraint('project_id', 'client_id', name=op.f('uq_snapshots_project_id_client_id'))
    )
    op.create_index('ix_snapshots_project_at', 'snapshots', ['project_id', 'at'], unique=False)
    op.create_index('ix_snapshots_system_at', 'snapshots', ['system_id', 'at'], unique=False)
    op.create_table('alerts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('rule_id', sa.Integer(), nullable=False),
    sa.Column('system_id', sa.Integer(), nullable=False),
    sa.Column('segment', sa.String(length=200), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('open_key', sa.String(length=100), nullable=True),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('resolved_at', sa.DateTime(), nullable=True),
    sa.Column('first_snapshot_id', sa.Integer(), nullable=False),
    sa.Column('last_snapshot_id', sa.Integer(), nullable=False),
    sa.Column('resolved_snapshot_id', sa.Integer(), nullable=True),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['first_snapshot_id'], ['snapshots.id'], name=op.f('fk_alerts_first_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['last_snapshot_id'], ['snapshots.id'], name=op.f('fk_alerts_last_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_alerts_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['resolved_snapshot_id'], ['snapshots.id'], name=op.f('fk_alerts_resolved_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['rule_id'], ['rules.id'], name=op.f('fk_alerts_rule_id_rules'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['system_id'], ['systems.id'], name=op.f('fk_alerts_system_id_systems'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_alerts')),
    sa.UniqueConstraint('open_key', name=op.f('uq_alerts_open_key'))
    )
    op.create_index('ix_alerts_project_state', 'alerts', ['project_id', 'state'], unique=False)
    op.create_table('rule_checks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('snapshot_id', sa.Integer(), nullable=False),
    sa.Column('rule_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['rule_id'], ['rules.id'], name=op.f('fk_rule_checks_rule_id_rules'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_rule_checks_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rule_checks')),
    sa.UniqueConstraint('snapshot_id', 'rule_id', name=op.f('uq_rule_checks_snapshot_id_rule_id'))
    )
    op.create_index('ix_rule_checks_rule_id', 'rule_checks', ['rule_id'], unique=False)
    op.create_table('snapshot_queries',
    sa.Column('snapshot_id', sa.Integer(), nullable=False),
    sa.Column('data', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_snapshot_queries_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('snapshot_id', name=op.f('pk_snapshot_queries'))
    )
    op.create_table('snapshot_values',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('snapshot_id', sa.Integer(), nullable=False),
    sa.Column('measure', sa.String(length=200), nullable=False),
    sa.Column('segment', sa.String(length=200), nullable=False),
    sa.Column('value', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_snapshot_values_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshot_values')),
    sa.UniqueConstraint('snapshot_id', 'measure', 'segment', name=op.f('uq_snapshot_values_snapshot_id_measure_segment'))
    )
    op.create_table('deliveries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('webhook_id', sa.Integer(), nullable=False),
    sa.Column('alert_id', sa.Integer(), nullable=True),
    sa.Column('event', sa.String(length=40), nullable=False),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(), nullable=False),
    sa.Column('locked_until', sa.DateTime(), nullable=True),
    sa.Column('last_status_code', sa.Integer(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('delivered_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['alert_id'], ['alerts.id'], name=op.f('fk_deliveries_alert_id_alerts'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['webhook_id'], ['webhooks.id'], name=op.f('fk_deliveries_webhook_id_webhooks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_deliveries'))
    )
    op.create_index('ix_deliveries_status_next', 'deliveries', ['status', 'next_attempt_at'], unique=False)
    op.create_table('delivery_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('delivery_id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(), nullable=False),
    sa.Column('status_code', sa.Integer(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('duration_ms', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['delivery_id'], ['deliveries.id'], name=op.f('fk_delivery_attempts_delivery_id_deliveries'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_delivery_attempts'))
    )
    op.create_index(op.f('ix_delivery_attempts_delivery_id'), 'delivery_attempts', ['delivery_id'], unique=False)


def downgrade() -> None:
    """Drop every table."""
    op.drop_index(op.f('ix_delivery_attempts_delivery_id'), table_name='delivery_attempts')
    op.drop_table('delivery_attempts')
    op.drop_index('ix_deliveries_status_next', table_name='deliveries')
    op.drop_table('deliveries')
    op.drop_table('snapshot_values')
    op.drop_table('snapshot_queries')
    op.drop_index('ix_rule_checks_rule_id', table_name='rule_checks')
    op.drop_table('rule_checks')
    op.drop_index('ix_alerts_project_state', table_name='alerts')
    op.drop_table('alerts')
    op.drop_index('ix_snapshots_system_at', table_name='snapshots')
    op.drop_index('ix_snapshots_project_at', table_name='snapshots')
    op.drop_table('snapshots')
    op.drop_table('rules')
    op.drop_table('webhooks')
    op.drop_table('systems')
    op.drop_table('datasets')
    op.drop_table('projects')
