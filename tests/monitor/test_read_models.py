"""Issue 13: the JSON read routes declare typed response models (:mod:`ranklens.monitor.read_models`), and
serving through them changes no body.

For every page (the parameter variations of test_twins.py, plus an empty project and a significance and a
window rule): the JSON twin's body equals what the page's data function returns in-process (same keys, same
order, same values, an int still an int), and it round-trips through the page's model unchanged; the
OpenAPI document names the model.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import TOKEN
from .test_twins import AUTH, CASES, P, app_client, twin  # noqa: F401 - app_client: the seeded server

EXTRA_CASES: list[tuple[str, dict[str, Any]]] = [
    ("/projects/empty", {}),
    ("/projects/empty/series", {}),
    ("/projects/empty/segments", {}),
    ("/projects/empty/ab", {}),
    ("/projects/empty/snapshots", {}),
    ("/projects/empty/alerts", {}),
    ("/projects/empty/rules", {}),
    (f"/projects/{P}/ab", {"baseline": "alpha", "candidate": "beta", "test": "bootstrap"}),
    (f"/projects/{P}/rules", {}),
    (f"/projects/{P}", {}),
    (f"/projects/{P}/snapshots/beta-5", {"compare": "alpha-5"}),
]
API_CASES = [(twin(p), q) for p, q in CASES + EXTRA_CASES] + [(f"/api/v1/projects/{P}/datasets", {}), ("/api/v1/projects/empty/datasets", {})]


@pytest.fixture(scope="module")
def more(app_client: Any) -> Any:  # noqa: F811
    c = app_client
    assert c.post("/api/v1/projects", json={"name": "empty"}, headers=AUTH).status_code in (200, 201)
    for body in (
        {"kind": "significance", "measure": "nDCG@10", "reference": "beta", "system": "alpha"},
        {"kind": "window", "measure": "AP", "window_days": 3, "max_drop": 0.05, "segment": "short"},
    ):
        r = c.post(f"/api/v1/projects/{P}/rules", json=body, headers=AUTH)
        assert r.status_code == 201, r.text
    return c


def _page(api_path: str) -> Any:
    from ranklens.monitor import routes

    for page in routes.PAGES:
        pattern = "^" + re.sub(r"{\w+}", "([^/]+)", page.api_path) + "$"
        m = re.match(pattern, api_path)
        if m:
            return page, dict(zip(page.path_params, m.groups()))
    raise AssertionError(api_path)


@pytest.mark.parametrize(("path", "params"), API_CASES, ids=[f"{p}?{q}" for p, q in API_CASES])
def test_json_twin_round_trips_through_its_model(more: Any, path: str, params: dict[str, Any]) -> None:
    r = more.get(path, params=params)
    assert r.status_code == 200, r.text
    served = r.json()
    page, path_params = _page(path)
    q = page.query.model_validate(params) if page.query.model_fields else page.query()
    with more.app.state.db.read() as s:
        data = page.data(s, q, **path_params)
    # the body is the data function's dict as it is: nothing dropped, renamed, added, retyped or reordered
    assert r.text == json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    model = page.model.model_validate(served)
    assert model.model_dump(mode="json", exclude_unset=True) == served
    assert json.dumps(model.model_dump(mode="json", exclude_unset=True)) == json.dumps(served)


def test_openapi_declares_the_read_models(more: Any) -> None:
    from ranklens.monitor import routes

    doc = more.get("/api/v1/openapi.json").json()
    for page in routes.PAGES:
        schema = doc["paths"][page.api_path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema == {"$ref": f"#/components/schemas/{page.model.__name__}"}, page.api_path
        assert doc["components"]["schemas"][page.model.__name__]["type"] == "object"
    point = doc["components"]["schemas"]["SeriesPoint"]
    assert set(point["required"]) == {"at", "value", "snapshot"}
    assert point["properties"]["value"] == {"type": "number", "title": "Value"}


def test_token_is_still_needed_for_the_delivery_log(more: Any) -> None:
    r = more.get("/api/v1/webhooks", headers={"Authorization": "Bearer wrong-" + TOKEN})
    assert r.status_code == 401


def test_the_cases_reach_the_optional_fields(more: Any) -> None:
    """The round trip above covers the keys a view sets only sometimes."""
    kinds = {r["kind"] for r in more.get(f"/api/v1/projects/{P}/rules").json()["rules"]}
    assert kinds == {"threshold", "window", "significance"}
    comparison = more.get(f"/api/v1/projects/{P}/ab", params={"test": "bootstrap"}).json()["comparison"]
    assert {"n", "mean_difference", "p_value", "wins", "test_sample"} <= set(comparison)
    points = [pt for line in more.get(f"/api/v1/projects/{P}/series").json()["series"] for pt in line["points"]]
    assert points and all({"ci_low", "ci_high", "n"} <= set(pt) for pt in points)
    assert "ci_low" not in more.get(f"/api/v1/projects/{P}/ab").json()["series"][0]["points"][0]
    assert more.get("/api/v1/projects/empty/ab").json()["comparison"] is None
