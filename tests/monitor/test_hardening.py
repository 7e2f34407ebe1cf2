"""Issue 13, resource limits and 5xx: linear ingest, 4xx (never 500) on out-of-range input, the OpenAPI
document's declarations, per-client limits on expensive reads and page-size caps. API checks run against a
real server process (SQLite; PostgreSQL with RANKLENS_TEST_PG_URL), as the rest of tests/monitor."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from ranklens.monitor.schemas import SnapshotIn
from ranklens.monitor.service import normalise_snapshot

from .conftest import TOKEN, ServerProcess, eval_json

AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def _post(server: ServerProcess, path: str, body: Any) -> httpx.Response:
    return httpx.post(server.url + path, content=json.dumps(body).encode(), headers=AUTH, timeout=60)


def _is_error_shape(r: httpx.Response, status: int | tuple[int, ...]) -> dict[str, Any]:
    wanted = status if isinstance(status, tuple) else (status,)
    assert r.status_code in wanted, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/json"
    doc = r.json()
    assert set(doc) == {"error"}
    assert doc["error"]["status"] == r.status_code
    assert doc["error"]["code"] and doc["error"]["message"]
    return doc["error"]


def _segmented(n: int, segments: int | None = None) -> dict[str, Any]:
    qs = [f"q{i:06d}" for i in range(n)]
    per_query = {q: {"AP": (i % 10) / 10} for i, q in enumerate(qs)}
    k = segments or n
    return {
        "system": "seg",
        "results": eval_json(per_query),
        "query_segments": {q: f"s{i % k}" for i, q in enumerate(qs)},
    }


# ---------------------------------------------------------------------------------------------------------
# 1. ingest with query_segments is linear


def _lines_run(fn: Any) -> int:
    """How many lines of ranklens.monitor.service run while ``fn()`` runs (a count of work, not a time)."""
    from ranklens.monitor import service

    target = service.__file__
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == target else None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(old)
    return count


@pytest.mark.parametrize("per_segment", [1, 4])
def test_segment_means_are_linear_work(per_segment: int) -> None:
    def run(n: int) -> int:
        body = SnapshotIn.model_validate(_segmented(n, max(1, n // per_segment)))
        return _lines_run(lambda: normalise_snapshot(body) if n // per_segment <= 1000 else _refused(body))

    small, large = run(1000), run(4000)
    assert large < 6 * small, (small, large)  # quadratic work would be ~16×


def _refused(body: SnapshotIn) -> None:
    from ranklens.errors import InputError

    with pytest.raises(InputError, match="at most 1000 segments"):
        normalise_snapshot(body)


def test_too_many_segments_is_refused_before_the_means() -> None:
    from ranklens.monitor import service

    body = SnapshotIn.model_validate(_segmented(4000))
    calls = 0
    real = service.math.fsum

    def counting(xs: Any) -> float:
        nonlocal calls
        calls += 1
        return real(xs)

    service.math.fsum = counting  # type: ignore[assignment]
    try:
        _refused(body)
    finally:
        service.math.fsum = real  # type: ignore[assignment]
    assert calls == 0


def test_segment_means_are_right() -> None:
    per_query = {"a": {"AP": 0.2, "RR": 1.0}, "b": {"AP": 0.4}, "c": {"AP": 0.9, "RR": 0.5}, "d": {"AP": 0.0}}
    body = SnapshotIn.model_validate(
        {
            "system": "s",
            "results": {"runs": [{"run": "r", "aggregate": {"AP": 0.375, "RR": 0.75}, "per_query": per_query}]},
            "query_segments": {"a": "x", "b": "x", "c": "y"},
        }
    )
    data = normalise_snapshot(body)
    assert data.segment_values == {"x": {"AP": pytest.approx(0.3), "RR": 1.0}, "y": {"AP": 0.9, "RR": 0.5}}
    assert data.query_segments == ["x", "x", "y", None]


def test_segmented_ingest_over_http(server: ServerProcess, project: str) -> None:
    r = _post(server, f"/api/v1/projects/{project}/snapshots", _segmented(1000, 10))
    assert r.status_code == 201, r.text
    segs = r.json()["snapshot"]["segments"]
    assert len(segs) == 10
    assert segs["s3"]["AP"] == pytest.approx(0.3)
    _is_error_shape(_post(server, f"/api/v1/projects/{project}/snapshots", _segmented(1001)), 400)


# ---------------------------------------------------------------------------------------------------------
# 2. 4xx, never 500


@pytest.fixture
def seeded(server: ServerProcess, project: str) -> str:
    r = _post(server, f"/api/v1/projects/{project}/snapshots", {"system": "a", "values": {"AP": 0.5}})
    assert r.status_code == 201, r.text
    return project


@pytest.mark.parametrize("rule_id", ["9223372036854775808", "-9223372036854775809", "99999999999999999999999"])
@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_huge_rule_ids(server: ServerProcess, seeded: str, method: str, rule_id: str) -> None:
    r = httpx.request(
        method, f"{server.url}/api/v1/projects/{seeded}/rules/{rule_id}", headers=AUTH,
        content=b'{"enabled": false}' if method == "PATCH" else None,
    )
    _is_error_shape(r, (404, 422))


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/webhooks?webhook=99999999999999999999",
        "/api/v1/webhooks?webhook=-99999999999999999999",
        "/api/v1/projects/{p}/snapshots?offset=99999999999999999999",
        "/api/v1/projects/{p}/snapshots?offset=-1",
        "/api/v1/projects/{p}/snapshots?limit=99999999999999999999",
        "/api/v1/projects/{p}/alerts?limit=99999999999999999999",
        "/api/v1/projects/{p}/snapshots/x?worst=99999999999999999999",
    ],
)
def test_out_of_range_query_parameters(server: ServerProcess, seeded: str, path: str) -> None:
    r = httpx.get(server.url + path.format(p=seeded), headers={"Authorization": f"Bearer {TOKEN}"})
    _is_error_shape(r, (400, 404, 422))


@pytest.mark.parametrize("expr", ["nDCG@10 >= .", "nDCG@10 >= 1e", "nDCG@10 >= --1", "nDCG@10 >= 1e999", "nDCG@10 >= nan"])
def test_malformed_rule_numbers(server: ServerProcess, project: str, expr: str) -> None:
    _is_error_shape(_post(server, f"/api/v1/projects/{project}/rules", {"expr": expr}), (400, 422))


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00Z"])
def test_times_near_the_limits(server: ServerProcess, seeded: str, at: str) -> None:
    body = {"system": "a", "values": {"AP": 0.5}, "at": at}
    _is_error_shape(_post(server, f"/api/v1/projects/{seeded}/snapshots", body), 422)
    r = httpx.get(f"{server.url}/api/v1/projects/{seeded}/series", params={"since": at, "measure": "AP"})
    assert r.status_code == 200, r.text
    points = r.json()["series"][0]["points"]
    assert len(points) == (1 if at.startswith("0001") else 0)


def test_per_segment_means_that_overflow(server: ServerProcess, project: str) -> None:
    body = {
        "system": "a",
        "results": {"runs": [{"run": "a", "aggregate": {"AP": 1.0}, "per_query": {"q1": {"AP": 1.7e308}, "q2": {"AP": 1.7e308}, "q3": {"AP": -1e308}}}]},
        "query_segments": {"q1": "s", "q2": "s", "q3": "t"},
    }
    r = _post(server, f"/api/v1/projects/{project}/snapshots", body)
    assert r.status_code == 201, r.text
    segs = r.json()["snapshot"]["segments"]
    assert segs["s"]["AP"] == pytest.approx(1.7e308)
    assert segs["t"]["AP"] == -1e308


@pytest.mark.parametrize("url", ["https://m0W\U000e45c3+\x91", "https://'\x84x\U000f51ee", "http://" + "x" * 64 + ".example/", "http://a:99999/"])
def test_unusable_webhook_urls(server: ServerProcess, url: str) -> None:
    # found by the schema fuzz: a host that is not a valid IDNA name made the address check raise (500)
    _is_error_shape(_post(server, "/api/v1/webhooks", {"url": url, "enabled": False}), 422)


# ---------------------------------------------------------------------------------------------------------
# 3. the OpenAPI document


def test_openapi_declares_security_statuses_and_models(server: ServerProcess) -> None:
    doc = httpx.get(server.url + "/api/v1/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer"}
    assert "Error" in doc["components"]["schemas"]
    ops = {(m.upper(), p): op for p, item in doc["paths"].items() for m, op in item.items()}
    for (method, path), op in ops.items():
        codes = set(op["responses"])
        if method != "GET":
            assert op["security"] == [{"bearer": []}], (method, path)
            assert {"401", "413", "422"} <= codes, (method, path, codes)
        if "{project}" in path and method == "GET":
            assert "404" in codes, (method, path)
        if "{rule_id}" in path:
            assert {"404", "422"} <= codes
        for code, resp in op["responses"].items():
            if code.startswith(("4", "5")):
                assert resp["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (path, code)
    for path in ("/api/v1/projects/{project}/series", "/api/v1/projects/{project}/snapshots/{snapshot}"):
        assert "429" in ops[("GET", path)]["responses"]
    write = ops[("POST", "/api/v1/projects/{project}/snapshots")]["responses"]
    assert {"200", "201", "409"} <= set(write)
    assert write["201"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/SnapshotCreated"}
    assert ops[("GET", "/api/v1/webhooks")]["security"] == [{"bearer": []}]
    assert ops[("GET", "/api/v1/health")]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Health"
    }


# ---------------------------------------------------------------------------------------------------------
# 4. bounded work for unauthenticated expensive reads


def test_page_size_caps(server: ServerProcess, seeded: str) -> None:
    base = f"{server.url}/api/v1/projects/{seeded}"
    assert httpx.get(base + "/snapshots?limit=1000").status_code == 200
    _is_error_shape(httpx.get(base + "/snapshots?limit=1001"), 422)
    _is_error_shape(httpx.get(base + "/alerts?limit=1001"), 422)
    _is_error_shape(httpx.get(server.url + "/api/v1/webhooks?limit=1001", headers={"Authorization": f"Bearer {TOKEN}"}), 422)
    _is_error_shape(httpx.get(base + "/snapshots/x?worst=1001"), 422)


def test_expensive_reads_are_rate_limited_per_client(tmp_path: Path) -> None:
    srv = ServerProcess(f"sqlite:///{tmp_path / 'r.db'}", env={"RANKLENS_READ_RATE": "3/60"}).start()
    try:
        p = "rl"
        r = httpx.post(srv.url + f"/api/v1/projects/{p}/snapshots", headers=AUTH, content=json.dumps({"id": "s1", "system": "a", "values": {"AP": 0.5}}))
        assert r.status_code == 201
        series = f"{srv.url}/api/v1/projects/{p}/series?measure=AP"
        snap = f"{srv.url}/api/v1/projects/{p}/snapshots/s1"
        assert [httpx.get(u).status_code for u in (series, snap, series)] == [200, 200, 200]
        for url in (series, snap, f"{srv.url}/projects/{p}/series"):
            r = httpx.get(url)
            err = _is_error_shape(r, 429)
            assert err["code"] == "too_many_requests"
            assert 1 <= int(r.headers["Retry-After"]) <= 60
        # every read is limited (issue 23: the overview and A/B pages too), but not a client with the token
        for url in (f"{srv.url}/api/v1/projects/{p}", f"{srv.url}/api/v1/projects/{p}/ab", f"{srv.url}/projects/{p}/segments"):
            assert _is_error_shape(httpx.get(url), 429)["code"] == "too_many_requests"
        assert httpx.get(series, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert httpx.get(f"{srv.url}/api/v1/health").status_code == 200
    finally:
        srv.stop()
