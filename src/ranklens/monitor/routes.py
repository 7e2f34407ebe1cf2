"""The read routes in one table: each dashboard page is one data function with one query model.

A :class:`Page` row names the HTML path, its ``/api/v1`` JSON twin, the pydantic model of the page's query
parameters, the data function and the template. :func:`add_pages` registers both routes of every row
from that one row: the JSON route returns what the data function returns, and the HTML route renders the
same dict (plus the charts drawn from it). So the page and its twin cannot take different parameters.

The data functions are plain functions of a session, a query object and the path parameters, so they
can be called in-process::

    >>> SeriesQuery(measure="ndcg@10", since="2026-03-01T00:00:00Z").since.year
    2026
    >>> [p.api_path for p in PAGES if p.template is None]  # JSON only
    ['/api/v1/projects/{project}/datasets', '/api/v1/projects/{project}/ingest', '/api/v1/projects/{project}/windows']
"""

from __future__ import annotations

import datetime as dt
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.params import Depends
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from sqlalchemy.orm import Session

from ranklens.monitor import charts, read_models, views
from ranklens.monitor.db import Database
from ranklens.monitor.errors import MonitorError
from ranklens.monitor.schemas import (  # bounded: out of range is a 422, never a 500
    DbId,
    Offset,
    PageLimit,
)

__all__ = [
    "PAGES",
    "AbQuery",
    "AlertsQuery",
    "NoQuery",
    "Page",
    "ProjectPatch",
    "SegmentsQuery",
    "SeriesQuery",
    "SnapshotQuery",
    "SnapshotsQuery",
    "WebhooksQuery",
    "WindowsQuery",
    "add_pages",
    "series_data",
    "set_project_settings",
]

Data = dict[str, Any]
Render = Callable[[Request, str, Data, dict[str, Any]], HTMLResponse]


# ---------------------------------------------------------------------------------------------------------
# one query model per page


class NoQuery(BaseModel):
    """A page without query parameters."""


#: Query-string values are bounded like the names they look up (a longer one cannot match anything).
QName = Annotated[str, StringConstraints(max_length=200)]


class SeriesQuery(BaseModel):
    measure: QName | None = None
    system: Annotated[list[QName], Field(max_length=100)] | None = None
    segment: QName = ""
    since: dt.datetime | None = None


class SegmentsQuery(BaseModel):
    measure: QName | None = None


class AbQuery(BaseModel):
    """``baseline`` and ``candidate``: the page shows candidate − baseline (positive: the candidate is better).
    ``a``/``b`` are the old names: ``a`` = candidate, ``b`` = baseline (the page used to show A − B)."""

    baseline: QName | None = None
    candidate: QName | None = None
    a: QName | None = None
    b: QName | None = None
    measure: QName | None = None
    segment: QName = ""
    test: Annotated[str, StringConstraints(max_length=40)] = "t"
    limit: PageLimit = views.AB_PAGE  # per-query rows: one page, in ascending order of the difference
    offset: Offset = 0
    #: the unpaired design's pre-period snapshot(s): one for both arms, or the baseline's then the candidate's
    pre: Annotated[list[QName], Field(max_length=2)] | None = None
    #: the baseline's planned share of the users (the sample-ratio check)
    expected_split: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.5


class ProjectPatch(BaseModel):
    """The body of ``PATCH /api/v1/projects/{project}``: the project's settings. ``headline_measure`` is the
    measure its pages open on (``null``: nDCG@10 when present, see :func:`views.headline_measure`)."""

    model_config = ConfigDict(extra="forbid")

    headline_measure: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None


def set_project_settings(s: Session, project: str, body: ProjectPatch) -> Data:
    return views.set_headline_measure(s, project, body.headline_measure)


class SnapshotsQuery(BaseModel):
    system: QName | None = None
    limit: PageLimit = 100
    offset: Offset = 0


class SnapshotQuery(BaseModel):
    measure: QName | None = None
    compare: QName | None = None
    worst: PageLimit = 20


class AlertsQuery(BaseModel):
    state: QName | None = None
    limit: PageLimit = 200


class WebhooksQuery(BaseModel):
    webhook: DbId | None = None
    limit: PageLimit = 200


# ---------------------------------------------------------------------------------------------------------
# one data function per page: (session, query, **path parameters) -> the JSON-ready dict


def projects_data(s: Session, q: NoQuery) -> Data:
    return views.projects_view(s)


def overview_data(s: Session, q: NoQuery, *, project: str) -> Data:
    return views.overview_view(s, project)


def series_data(s: Session, q: SeriesQuery, *, project: str) -> Data:
    return views.series_view(s, project, measure=_measure(q.measure), systems=q.system, segment=q.segment, since=q.since)


def segments_data(s: Session, q: SegmentsQuery, *, project: str) -> Data:
    return views.segments_view(s, project, measure=_measure(q.measure))


def ab_data(s: Session, q: AbQuery, *, project: str) -> Data:
    return views.ab_view(
        s, project, baseline=q.baseline or q.b, candidate=q.candidate or q.a, measure=_measure(q.measure),
        segment=q.segment, test=_test(q.test), limit=q.limit, offset=q.offset, pre=[x for x in q.pre or () if x],
        expected_split=q.expected_split,
    )


def snapshots_data(s: Session, q: SnapshotsQuery, *, project: str) -> Data:
    return views.snapshots_view(s, project, system=q.system, limit=q.limit, offset=q.offset)


def snapshot_data(s: Session, q: SnapshotQuery, *, project: str, snapshot: str) -> Data:
    return views.snapshot_view(s, project, snapshot, measure=_measure(q.measure), compare=q.compare, worst=q.worst)


def alerts_data(s: Session, q: AlertsQuery, *, project: str) -> Data:
    return views.alerts_view(s, project, state=q.state or None, limit=_clamp(q.limit))


def rules_data(s: Session, q: NoQuery, *, project: str) -> Data:
    return views.rules_view(s, project)


def datasets_data(s: Session, q: NoQuery, *, project: str) -> Data:
    return views.datasets_view(s, project)


def ingest_data(s: Session, q: NoQuery, *, project: str) -> Data:
    from ranklens.monitor.ingest import ingest_status

    return ingest_status(s, project)


class WindowsQuery(BaseModel):
    """``history``: every revision of every window (oldest first), not only the current ones."""

    history: bool = False
    measure: QName | None = None
    segment: QName | None = None
    system: QName | None = None


def windows_data(s: Session, q: WindowsQuery, *, project: str) -> Data:
    from ranklens.monitor.production import windows_view

    return windows_view(s, project, history=q.history, measure=q.measure, segment=q.segment, system=q.system)


def production_data(s: Session, q: NoQuery, *, project: str) -> Data:
    from ranklens.monitor.production import production_view

    return production_view(s, project)


def webhooks_data(s: Session, q: WebhooksQuery) -> Data:
    from ranklens.monitor.ssrf import redact_url

    data = views.deliveries_view(s, webhook=q.webhook, limit=_clamp(q.limit))
    for hook in data["webhooks"]:  # webhook URLs often are secrets: never show credentials or query strings
        hook["url"] = redact_url(hook["url"])
    return data


# ---------------------------------------------------------------------------------------------------------
# the table


@dataclass(frozen=True)
class Page:
    """One read route: its JSON path, its HTML path and template (``None`` for JSON only), its query model,
    its data function, its response model (:mod:`read_models`: the JSON twin is served and documented
    through it) and the charts drawn from the data. A ``private`` page always needs the token (or a
    login session), whether reads are protected or not."""

    api_path: str
    html_path: str | None
    template: str | None
    query: type[BaseModel]
    data: Callable[..., Data]
    model: type[BaseModel]
    figures: Callable[[Data], dict[str, Any]] = lambda data: {}
    private: bool = False

    @property
    def path_params(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.api_path)


PAGES: tuple[Page, ...] = (
    Page("/api/v1/projects", "/", "projects.html", NoQuery, projects_data, read_models.ProjectsPage),
    Page(
        "/api/v1/projects/{project}", "/projects/{project}", "overview.html", NoQuery, overview_data, read_models.OverviewPage,
        lambda d: {"overview": charts.overview_figure(d)} if d["systems"] else {},
    ),
    Page(
        "/api/v1/projects/{project}/series", "/projects/{project}/series", "series.html", SeriesQuery, series_data, read_models.SeriesPage,
        lambda d: {"series": charts.series_figure(d)},
    ),
    Page(
        "/api/v1/projects/{project}/segments", "/projects/{project}/segments", "segments.html", SegmentsQuery, segments_data,
        read_models.SegmentsPage,
        lambda d: {"segments": charts.segments_figure(d)},
    ),
    Page("/api/v1/projects/{project}/ab", "/projects/{project}/ab", "ab.html", AbQuery, ab_data, read_models.AbPage, charts.ab_figures),
    Page(
        "/api/v1/projects/{project}/snapshots", "/projects/{project}/snapshots", "snapshots.html", SnapshotsQuery, snapshots_data,
        read_models.SnapshotsPage,
    ),
    Page(
        "/api/v1/projects/{project}/snapshots/{snapshot}", "/projects/{project}/snapshots/{snapshot}", "snapshot.html",
        SnapshotQuery, snapshot_data, read_models.SnapshotPage,
    ),
    Page("/api/v1/projects/{project}/datasets", None, None, NoQuery, datasets_data, read_models.DatasetsPage),
    # the rules page lists the rules; its static script (rules.js) adds, edits and disables them through the
    # JSON write routes with the bearer token the user typed (kept in sessionStorage, never in a cookie)
    Page("/api/v1/projects/{project}/rules", "/projects/{project}/rules", "rules.html", NoQuery, rules_data, read_models.RulesPage),
    Page("/api/v1/projects/{project}/alerts", "/projects/{project}/alerts", "alerts.html", AlertsQuery, alerts_data, read_models.AlertsPage),
    Page("/api/v1/projects/{project}/ingest", None, None, NoQuery, ingest_data, read_models.IngestPage),
    Page("/api/v1/projects/{project}/windows", None, None, WindowsQuery, windows_data, read_models.WindowsPage),
    # the live page: the per-window series of the production logs, drift and throughput
    Page(
        "/api/v1/projects/{project}/production", "/projects/{project}/production", "production.html", NoQuery, production_data,
        read_models.ProductionPage, charts.production_figures,
    ),
    Page("/api/v1/webhooks", "/webhooks", "webhooks.html", WebhooksQuery, webhooks_data, read_models.WebhooksPage, private=True),
)


def add_pages(app: FastAPI, db: Database, read: Depends, render: Render, *, private: Depends | None = None) -> None:
    """Register the JSON route and (when it has a template) the HTML route of every row of :data:`PAGES`;
    ``private`` guards the private pages (default: ``read``)."""
    for page in PAGES:
        guard = private if page.private and private is not None else read
        # served through the page's model: keys a view leaves out stay out (exclude_unset), so the body is
        # the data function's dict as it is, and the OpenAPI document declares its shape
        app.add_api_route(
            page.api_path, _json_endpoint(page, db), methods=["GET"], dependencies=[guard],
            response_model=page.model, response_model_exclude_unset=True,
        )
        if page.html_path is not None:
            app.add_api_route(
                page.html_path, _html_endpoint(page, db, render), methods=["GET"], dependencies=[guard],
                response_class=HTMLResponse, include_in_schema=False,
            )


def _load(page: Page, db: Database, q: BaseModel, path: dict[str, str]) -> Data:
    with db.read() as s:
        return page.data(s, q, **path)


def _json_endpoint(page: Page, db: Database) -> Callable[..., Data]:
    def endpoint(**kw: Any) -> Data:
        q = kw.pop("q", None) or page.query()
        return _load(page, db, q, kw)

    return _signed(endpoint, page, request=False, returns=dict[str, Any])


def _html_endpoint(page: Page, db: Database, render: Render) -> Callable[..., HTMLResponse]:
    assert page.template is not None
    template = page.template

    def endpoint(request: Request, **kw: Any) -> HTMLResponse:
        q = kw.pop("q", None) or page.query()
        data = _load(page, db, q, kw)
        return render(request, template, data, page.figures(data))

    return _signed(endpoint, page, request=True, returns=HTMLResponse)


def _signed(fn: Callable[..., Any], page: Page, *, request: bool, returns: Any) -> Callable[..., Any]:
    """Give ``fn`` the signature FastAPI reads: the path parameters and the page's query model."""
    params = [inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request)] if request else []
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=str) for name in page.path_params]
    if page.query.model_fields:
        params.append(inspect.Parameter("q", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[page.query, Query()]))
    fn.__signature__ = inspect.Signature(params, return_annotation=returns)  # type: ignore[attr-defined]
    fn.__name__ = ("page_" if request else "api_") + page.data.__name__.removesuffix("_data")
    return fn


# ---------------------------------------------------------------------------------------------------------
# parameter normalisation shared by the routes


def _clamp(limit: int) -> int:
    return max(1, min(limit, 5000))


def _measure(measure: str | None) -> str | None:
    if measure is None or measure == "":
        return None
    from ranklens.monitor.schemas import canonical_measure

    return canonical_measure(measure)


def _test(test: str) -> str:
    from ranklens.stats import canonical_test

    name = canonical_test(test)
    if name not in ("t", "randomisation", "bootstrap", "wilcoxon", "sign"):
        raise MonitorError(f"test must be one of t, randomisation, bootstrap, wilcoxon, sign; got {test!r}")
    return name
