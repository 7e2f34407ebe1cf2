"""The response models of the JSON read routes (issue 13): what each data function of :mod:`routes` returns.

One model per page, named ``...Page``, with nested models for the repeated objects. They describe the dicts
built in :mod:`ranklens.monitor.views` field for field and in the same order: the JSON twins are served
through them with ``response_model_exclude_unset=True``, so a key a view leaves out (a point without a
confidence band, the per-kind fields of a rule, the statistics of an A/B comparison without per-query
values) stays out, and a key it sets to ``None`` stays ``null``. Numbers keep their JSON type (an integer
per-query value stays an integer): :data:`Number` is declared as a JSON number.

    >>> SeriesPoint.model_validate({"at": "2026-03-01T00:00:00Z", "value": 1, "snapshot": "s1"}).model_dump(exclude_unset=True)
    {'at': '2026-03-01T00:00:00Z', 'value': 1, 'snapshot': 's1'}
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, WithJsonSchema

__all__ = [
    "AbPage",
    "AlertsPage",
    "DatasetsPage",
    "IngestPage",
    "ProductionPage",
    "OverviewPage",
    "ProjectsPage",
    "RulesPage",
    "SegmentsPage",
    "SeriesPage",
    "SeriesPoint",
    "SnapshotPage",
    "SnapshotsPage",
    "WebhooksPage",
    "WindowsPage",
]

#: A JSON number: an int stays an int and a float a float (``float`` alone would turn ``1`` into ``1.0``).
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]


class _Read(BaseModel):
    """A closed shape: every key its view emits is declared (tests/monitor/test_read_models.py checks that
    every page's JSON round-trips through its model unchanged). Open-ended mappings (per-measure or
    per-system values, tags) are typed ``dict`` fields."""


# ---------------------------------------------------------------------------------------------------------
# shared pieces


class Filters(_Read):
    """The choices a page's filters offer: every measure, segment and system of the project."""

    measures: list[str]
    segments: list[str]
    systems: list[str]


class RuleRow(_Read):
    """A rule as :func:`ranklens.monitor.service.rule_json` shows it; the per-kind fields are present only
    for their kind (threshold: ``op``, ``value``; window: ``window_days``, ``max_drop``, ``min_points``;
    significance: ``reference``, ``alpha``, ``test``, ``min_queries``)."""

    id: int
    name: str | None
    kind: str
    measure: str
    segment: str | None
    system: str | None
    enabled: bool
    op: str | None = None
    value: Number | None = None
    window_days: Number | None = None
    max_drop: Number | None = None
    min_points: int | None = None
    reference: str | None = None
    alpha: Number | None = None
    test: str | None = None
    min_queries: int | None = None
    description: str


class AlertRow(_Read):
    id: int
    state: str
    rule_id: int
    rule: str
    measure: str
    segment: str | None
    system: str
    value: Number | None
    message: str
    started_at: str | None
    resolved_at: str | None
    first_snapshot: str | None
    resolved_snapshot: str | None
    source: str = "snapshot"
    window: str | None = None


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects


class ProjectSummary(_Read):
    name: str
    description: str
    systems: int
    snapshots: int
    firing_alerts: int
    latest_at: str | None


class ProjectsPage(_Read):
    projects: list[ProjectSummary]


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects/{project}


class SegmentStatus(_Read):
    segment: str
    status: str


class OverviewCell(_Read):
    """``on``: ``on 35 of 50 queries`` when the value leaves unanswered queries out (``missing: skip``)."""

    measure: str
    value: Number | None
    status: str | None
    segments: list[SegmentStatus]
    on: str | None


class OverviewSystem(_Read):
    system: str
    latest_snapshot: str | None
    latest_at: str | None
    values: list[OverviewCell]
    firing: int


class OverviewRule(RuleRow):
    """A rule with its status on the latest snapshot of each system (system → ``ok``/``breach``/…)."""

    status: dict[str, str]


class OverviewPage(_Read):
    project: str
    description: str
    headline_measure: str | None
    measures: list[str]
    segments: list[str]
    systems: list[OverviewSystem]
    rules: list[OverviewRule]
    firing_alerts: list[AlertRow]
    snapshots: int


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects/{project}/series


class SeriesPoint(_Read):
    """One snapshot's value; ``ci_low``, ``ci_high`` and ``n`` only when the snapshot has per-query values."""

    at: str | None
    value: Number
    snapshot: str
    ci_low: Number | None = None
    ci_high: Number | None = None
    n: int | None = None
    on: str | None = None  # ``on 35 of 50 queries`` when the value leaves unanswered queries out


class SeriesLine(_Read):
    system: str
    points: list[SeriesPoint]


class ThresholdLine(_Read):
    rule_id: int
    value: Number | None
    op: str | None
    system: str | None
    enabled: bool


class SeriesAlert(_Read):
    id: int
    system: str
    state: str
    started_at: str | None
    resolved_at: str | None
    value: Number | None
    rule: str


class SeriesPage(_Read):
    project: str
    measure: str
    segment: str | None
    systems: list[str]
    series: list[SeriesLine]
    thresholds: list[ThresholdLine]
    alerts: list[SeriesAlert]
    filters: Filters


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects/{project}/segments


class Coverage(_Read):
    """Answered / expected queries of one scope."""

    answered: int
    expected: int


class SegmentRow(_Read):
    """One segment (``(all)``: every query) and its latest value per system (system → value), the bounds
    that apply in it (``> 0.85``), each system's status under its rules (``ok``/``breach``), its coverage
    per system, and ``on`` (system → ``on 35 of 50 queries``) where values leave unanswered queries out."""

    segment: str
    values: dict[str, Number]
    thresholds: list[str]
    status: dict[str, str]
    coverage: dict[str, Coverage]
    on: dict[str, str]


class SegmentsPage(_Read):
    project: str
    measure: str
    systems: list[str]
    segments: list[SegmentRow]
    filters: Filters


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects/{project}/ab


class AbComparison(_Read):
    """candidate − baseline on their latest snapshots; ``design`` … ``losses`` only when both have per-query
    values: ``design`` ``paired`` (the same queries: a paired test, wins/ties/losses) or ``unpaired`` (the
    snapshots share fewer than half their queries — users split between the systems: Welch's test on each
    one's values, ``n_candidate``/``n_baseline``, no wins/ties/losses); ``a_*``/``b_*`` are the old names of
    ``candidate_*``/``baseline_*``. The unpaired design adds ``design_text`` (what it computed), ``notes`` and
    ``ab``: the JSON of ``ranklens ab`` for the measure (baseline = control, candidate = treatment; CUPED with
    ``pre``, the daily always-valid path, the sample-ratio check; no bootstrap)."""

    candidate_snapshot: str | None
    baseline_snapshot: str | None
    candidate_value: Number | None
    baseline_value: Number | None
    difference: Number | None
    design: str | None = None
    n: int | None = None
    mean_difference: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    p_value: Number | None = None
    test: str | None = None
    test_sample: int | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    n_candidate: int | None = None
    n_baseline: int | None = None
    design_text: str | None = None
    notes: list[str] | None = None
    ab: dict[str, Any] | None = None
    a_snapshot: str | None
    b_snapshot: str | None
    a_value: Number | None
    b_value: Number | None


class AbQueryRow(_Read):
    query: str
    candidate: Number
    baseline: Number
    a: Number
    b: Number
    difference: Number


class AbPage(_Read):
    project: str
    baseline: str | None
    candidate: str | None
    orientation: str
    a: str | None
    b: str | None
    measure: str
    segment: str | None
    test: str
    pre: list[str] | None
    expected_split: float
    filters: Filters
    comparison: AbComparison | None
    per_query: list[AbQueryRow]
    per_query_total: int  # the paired queries; per_query is one page of them (limit rows from offset)
    limit: int
    offset: int
    series: list[SeriesLine]


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects/{project}/snapshots and /snapshots/{snapshot}


class SnapshotRow(_Read):
    id: str
    system: str
    at: str | None
    created_at: str | None
    measures: list[str]
    tags: dict[str, str]
    has_per_query: bool
    source: str


class SnapshotsPage(_Read):
    project: str
    system: str | None
    total: int
    limit: int
    offset: int
    snapshots: list[SnapshotRow]


class SegmentValues(_Read):
    """One segment (``(all)``: every query), its value per measure (measure → value) and its coverage."""

    segment: str
    values: dict[str, Number]
    coverage: Coverage | None


class SnapshotCoverage(_Read):
    """Answered / expected queries of all queries, ``ratio``, and per segment."""

    answered: int
    expected: int
    ratio: Number | None
    segments: dict[str, dict[str, Number | None]]


class SegmentChange(_Read):
    """A scope's value in this snapshot and the compared one: ``change`` = value − other."""

    segment: str
    value: Number
    other: Number
    change: Number
    coverage: Coverage | None
    other_coverage: Coverage | None


class RuleCheckRow(_Read):
    rule_id: int
    rule: str
    segment: str | None
    status: str
    value: Number | None
    detail: str | None


class WorstQuery(_Read):
    query: str
    value: Number
    segment: str | None


class ComparedSnapshot(_Read):
    id: str
    system: str
    at: str | None


class QueryChange(_Read):
    query: str
    value: Number
    other: Number
    change: Number


class SnapshotChoice(_Read):
    id: str
    system: str | None
    at: str | None
    has_per_query: bool


class SnapshotPage(_Read):
    project: str
    id: str
    system: str
    at: str | None
    created_at: str | None
    tags: dict[str, str]
    num_queries: int | None
    measures: list[str]
    measure: str
    values: list[SegmentValues]
    coverage: SnapshotCoverage | None
    missing: str | None
    rules: list[RuleCheckRow]
    worst_queries: list[WorstQuery]
    compare: ComparedSnapshot | None
    changes: list[QueryChange]
    segment_changes: list[SegmentChange]
    previous: str | None
    choices: list[SnapshotChoice]


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects/{project}/alerts, /rules, /datasets


class AlertsPage(_Read):
    project: str
    state: str | None
    alerts: list[AlertRow]


class RulesPage(_Read):
    project: str
    rules: list[RuleRow]


class DatasetRow(_Read):
    name: str
    version: str
    num_queries: int
    num_judgements: int
    created_at: str | None


class DatasetsPage(_Read):
    project: str
    datasets: list[DatasetRow]


# ---------------------------------------------------------------------------------------------------------
# /api/v1/projects/{project}/ingest (production logs)


class ThroughputRow(_Read):
    minute: str
    impressions: int
    events: int


class IngestPage(_Read):
    project: str
    impressions: int
    requests: int
    events: int
    pending_events: int
    orphan_events: int
    clock_skew_events: int
    first: str | None
    as_of: str | None
    label_delay: str
    throughput: list[ThroughputRow]


class WindowPoint(_Read):
    """One revision of one window × segment × system × measure (``current`` and ``refresh`` with history)."""

    start: str
    end: str
    segment: str
    system: str
    measure: str
    value: Number | None
    ci: list[Number | None]
    n: int
    provisional: bool
    revision: int
    current: bool | None = None
    refresh: int | None = None


class WindowsPage(_Read):
    project: str
    history: bool
    windows: list[WindowPoint]


class DriftPoint(_Read):
    start: str
    segment: str
    system: str
    what: str
    psi: Number | None
    ks_p: Number | None
    flag: bool


class WindowAlertRow(_Read):
    rule: int
    start: str
    segment: str
    system: str
    measure: str
    state: str
    value: Number | None
    reference: Number | None
    p: Number | None
    message: str


class ProductionSettingsRow(_Read):
    labels: dict[str, Any]
    window: str
    label_delay: str
    measures: list[str]
    reference_window: str | None
    position_bias: str | None = None


class RefreshRow(_Read):
    id: int
    at: str
    as_of: str
    counts: dict[str, int]
    revised: int


class ProductionPage(_Read):
    project: str
    settings: ProductionSettingsRow | None
    refreshed: RefreshRow | None
    windows: list[WindowPoint]
    drift: list[DriftPoint]
    alerts: list[WindowAlertRow]
    ingest: IngestPage


# ---------------------------------------------------------------------------------------------------------
# /api/v1/webhooks


class WebhookRow(_Read):
    id: int
    url: str
    project: str | None
    enabled: bool
    has_secret: bool


class DeliveryAttemptRow(_Read):
    at: str | None
    status_code: int | None
    error: str | None
    duration_ms: Number


class DeliveryRow(_Read):
    id: int
    webhook_id: int
    alert_id: int | None
    event: str
    status: str
    attempts: int
    last_status_code: int | None
    last_error: str | None
    created_at: str | None
    delivered_at: str | None
    next_attempt_at: str | None
    log: list[DeliveryAttemptRow]


class WebhooksPage(_Read):
    webhooks: list[WebhookRow]
    deliveries: list[DeliveryRow]
