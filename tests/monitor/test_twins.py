"""Every dashboard page and its ``/api/v1`` JSON twin are built from the same data for the same query.

In-process (FastAPI's TestClient, SQLite). The page's template is wrapped so the test sees the ``page``
dict the HTML was rendered from; it must equal the JSON twin's body for the same parameters, and values
from it must appear in the HTML (review V5: the series page ignored ``since``, the alerts page ``limit``).
"""

from __future__ import annotations

import json
import re
import urllib.parse
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import TOKEN, eval_json

P = "twins"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DAYS = [f"2026-03-0{d}T00:00:00Z" for d in range(1, 7)]


def _seed(c: Any) -> None:
    # never contacted: the app runs without its delivery worker, so deliveries stay pending in the log
    assert c.post("/api/v1/webhooks", json={"url": "http://127.0.0.1:9/hook", "project": P}, headers=AUTH).status_code == 201
    assert c.post(f"/api/v1/projects/{P}/rules", json={"expr": "nDCG@10 >= 0.5"}, headers=AUTH).status_code == 201
    segs = {f"q{i}": "short" if i % 2 else "long" for i in range(6)}
    for day, at in enumerate(DAYS):
        for system, base in (("alpha", 0.3), ("beta", 0.6)):
            low = day % 2 == 0  # alpha goes in and out of breach: one alert per low day
            pq = {f"q{i}": {"nDCG@10": (base if low else 0.7) + 0.01 * i, "AP": 0.2 + 0.02 * i} for i in range(6)}
            body = {"id": f"{system}-{day}", "system": system, "at": at, "results": eval_json(pq), "query_segments": segs}
            r = c.post(f"/api/v1/projects/{P}/snapshots", json=body, headers=AUTH)
            assert r.status_code == 201, r.text


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with warnings.catch_warnings():  # starlette prefers httpx2 now; httpx still works
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from fastapi.testclient import TestClient

    from ranklens.monitor.app import Settings, create_app

    db = tmp_path_factory.mktemp("twins") / "twins.db"
    app = create_app(Settings(db_url=f"sqlite:///{db}", token=TOKEN, run_worker=False, webhook_allow=["127.0.0.1:9"]))
    with TestClient(app, headers=AUTH) as c:  # the token: /webhooks (the delivery log) always needs it
        _seed(c)
        yield c


class Rendered:
    """Records the ``page`` dict of every template render."""

    def __init__(self) -> None:
        self.pages: list[Any] = []


@pytest.fixture
def rendered(app_client: Any, monkeypatch: pytest.MonkeyPatch) -> Rendered:
    env = app_client.app.state.templates
    seen = Rendered()
    real = env.get_template

    def get_template(name: str, *a: Any, **kw: Any) -> Any:
        template = real(name, *a, **kw)
        if a or kw:  # jinja's own look-up of a parent template ({% extends %})
            return template
        render = template.render

        class Spy:
            def render(self, *args: Any, **ctx: Any) -> str:
                seen.pages.append(ctx.get("page"))
                return render(*args, **ctx)

        return Spy()

    monkeypatch.setattr(env, "get_template", get_template)
    return seen


def twin(html_path: str) -> str:
    return "/api/v1/projects" if html_path == "/" else "/api/v1" + html_path


# (HTML path, query parameters): every dashboard page that has a JSON twin, with parameter variations
CASES: list[tuple[str, dict[str, Any]]] = [
    ("/", {}),
    (f"/projects/{P}", {}),
    (f"/projects/{P}/series", {}),
    (f"/projects/{P}/series", {"since": DAYS[3]}),
    (f"/projects/{P}/series", {"measure": "AP", "segment": "short"}),
    (f"/projects/{P}/series", {"measure": "ndcg@10", "system": ["alpha"], "since": DAYS[4]}),
    (f"/projects/{P}/series", {"system": ["alpha", "beta"], "segment": "long"}),
    (f"/projects/{P}/segments", {}),
    (f"/projects/{P}/segments", {"measure": "AP"}),
    (f"/projects/{P}/ab", {}),
    (f"/projects/{P}/ab", {"a": "beta", "b": "alpha", "measure": "AP", "segment": "short", "test": "wilcoxon"}),
    (f"/projects/{P}/snapshots", {}),
    (f"/projects/{P}/snapshots", {"system": "alpha", "limit": 2, "offset": 1}),
    (f"/projects/{P}/snapshots/alpha-0", {}),
    (f"/projects/{P}/snapshots/alpha-0", {"measure": "AP", "compare": "beta-0", "worst": 3}),
    (f"/projects/{P}/rules", {}),
    (f"/projects/{P}/alerts", {}),
    (f"/projects/{P}/alerts", {"limit": 1}),
    (f"/projects/{P}/alerts", {"state": "resolved", "limit": 2}),
    (f"/projects/{P}/alerts", {"state": "firing"}),
    (f"/projects/{P}/production", {}),
    ("/webhooks", {}),
    ("/webhooks", {"limit": 1}),
    ("/webhooks", {"webhook": 1, "limit": 2}),
]


@pytest.mark.parametrize(("path", "params"), CASES, ids=[f"{p}?{urllib.parse.urlencode(q, doseq=True)}" for p, q in CASES])
def test_page_and_json_twin_share_their_data(app_client: Any, rendered: Rendered, path: str, params: dict[str, Any]) -> None:
    api = app_client.get(twin(path), params=params)
    assert api.status_code == 200, api.text
    page = app_client.get(path, params=params, headers={"Accept": "text/html"})
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert len(rendered.pages) == 1
    assert json.loads(json.dumps(rendered.pages[0])) == api.json()
    # the page links its twin with the same query
    link = re.search(r'<a class="json" href="([^"]+)"', page.text)
    assert link is not None
    href = urllib.parse.unquote(link.group(1).replace("&amp;", "&"))
    assert href.startswith(twin(path))
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(href).query) == {
        k: [str(x) for x in (v if isinstance(v, list) else [v])] for k, v in params.items()
    }


def _figure(html: str, name: str) -> dict[str, Any]:
    m = re.search(rf'<script type="application/json" id="figure-{name}">(.*?)</script>', html, flags=re.DOTALL)
    assert m is not None, name
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def test_series_page_honours_since(app_client: Any) -> None:
    """V5: the HTML series page drew every point although ``since`` was given."""
    params = {"since": DAYS[3]}
    body = app_client.get(f"/api/v1/projects/{P}/series", params=params).json()
    xs = sorted({p["at"] for ser in body["series"] for p in ser["points"]})
    assert xs and min(xs) >= "2026-03-04"
    html = app_client.get(f"/projects/{P}/series", params=params).text
    drawn = sorted({x for trace in _figure(html, "series")["data"] if trace["mode"] == "lines+markers" for x in trace["x"]})
    assert drawn == xs


def test_alerts_page_honours_limit(app_client: Any) -> None:
    """V5: the HTML alerts page showed up to 200 alerts whatever ``limit`` said."""
    everything = app_client.get(f"/api/v1/projects/{P}/alerts").json()["alerts"]
    assert len(everything) >= 3
    body = app_client.get(f"/api/v1/projects/{P}/alerts", params={"limit": 2}).json()
    assert len(body["alerts"]) == 2
    html = app_client.get(f"/projects/{P}/alerts", params={"limit": 2}).text
    assert html.count('<td class="n">') == 2
    for a in body["alerts"]:
        assert f'<td class="n">{a["id"]}</td>' in html


def test_webhooks_page_honours_limit(app_client: Any) -> None:
    everything = app_client.get("/api/v1/webhooks").json()["deliveries"]
    assert len(everything) > 1
    html = app_client.get("/webhooks", params={"limit": 1}).text
    rows = [f'<tr><td class="n">{d["id"]}</td><td class="n">{d["webhook_id"]}</td>' for d in everything]
    assert [row in html for row in rows] == [True] + [False] * (len(rows) - 1)


def test_one_route_table(app_client: Any) -> None:
    """Each page's data function is importable and answers in-process what both routes serve."""
    from ranklens.monitor import routes

    app = app_client.app
    q = routes.SeriesQuery(since=DAYS[3], system=["alpha"])
    with app.state.db.read() as s:
        data = routes.series_data(s, q, project=P)
    assert data == app_client.get(f"/api/v1/projects/{P}/series", params={"since": DAYS[3], "system": "alpha"}).json()
    html_paths = {r.path for r in app.routes if getattr(r, "include_in_schema", True) is False}
    for page in routes.PAGES:
        if page.template is not None:
            assert page.html_path in html_paths, page.html_path


def test_twin_cases_cover_every_page() -> None:
    from ranklens.monitor import routes

    shapes = {re.sub(r"/projects/[^/]+", "/projects/{project}", p) for p, _ in CASES}
    shapes = {re.sub(r"/snapshots/[^/]+$", "/snapshots/{snapshot}", s) for s in shapes}
    assert shapes == {page.html_path for page in routes.PAGES if page.template is not None}

