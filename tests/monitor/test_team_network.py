"""Issue 23 (items 1–6): the monitor under hostile clients — reads behind the token unless opened, paged and
bounded; bearer guessing throttled; forwarded headers believed only from configured proxies; weak tokens
refused or announced; sessions bound to the token and ended by /logout; ids and rule edits bounded by the
schema (422, never 500, on both backends); header size and header-read time limited; webhook deliveries
carry an idempotency key."""

from __future__ import annotations

import json
import socket
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import TOKEN, ServerProcess, eval_json

AUTH = {"Authorization": f"Bearer {TOKEN}"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _test_client(app: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():  # starlette prefers httpx2 now; httpx still works
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from fastapi.testclient import TestClient
    return TestClient(app, **kw)


def _app(tmp_path: Path, **kw: Any) -> Any:
    from ranklens.monitor.app import Settings, create_app

    kw.setdefault("token", TOKEN)
    return create_app(Settings(db_url=f"sqlite:///{tmp_path / 'team.db'}", run_worker=False, **kw))


def _error(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text[:500])
    body = r.json()
    assert set(body) == {"error"} and body["error"]["status"] == status, body
    return dict(body["error"])


# ---------------------------------------------------------------------------------------------------------
# item 1: reads behind the token by default; every read paged, bounded and rate-limited


def test_reads_need_the_token_unless_public(tmp_path: Path) -> None:
    with _test_client(_app(tmp_path / "closed")) as c:
        _error(c.get("/api/v1/projects"), 401)
        _error(c.get("/api/v1/projects/x/ab"), 401)
        assert c.get("/api/v1/projects", headers=AUTH).status_code == 200
        assert c.get("/api/v1/health").status_code == 200  # the probe stays open
    with _test_client(_app(tmp_path / "open", public_read=True)) as c:
        assert c.get("/api/v1/projects").status_code == 200
        _error(c.get("/api/v1/webhooks"), 401)  # the delivery log needs the token whatever


def test_serve_has_public_read_and_reads_are_closed_by_default(tmp_path: Path) -> None:
    srv = ServerProcess(f"sqlite:///{tmp_path / 'c.db'}", public_read=False).start()
    try:
        _error(httpx.get(srv.url + "/api/v1/projects"), 401)
        assert httpx.get(srv.url + "/api/v1/projects", headers=AUTH).status_code == 200
    finally:
        srv.stop()
    srv = ServerProcess(f"sqlite:///{tmp_path / 'o.db'}", public_read=False, args=["--public-read"]).start()
    try:
        assert httpx.get(srv.url + "/api/v1/projects").status_code == 200
        assert any("reads are public" in line for line in srv.log)
    finally:
        srv.stop()


N_QUERIES = 1500


def _per_query(seed: int) -> dict[str, dict[str, float]]:
    # values on a grid of 1/997 so that every difference is distinct and easy to recompute here
    return {f"q{i:05d}": {"AP": ((i * 7919 + seed * 104729) % 997) / 997} for i in range(N_QUERIES)}


@pytest.fixture(scope="module")
def ab_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    app = _app(tmp_path_factory.mktemp("ab"), public_read=True, read_rate="off")
    with _test_client(app) as c:
        for system, seed in (("base", 1), ("cand", 2)):
            body = {"id": f"s-{system}", "system": system, "results": eval_json(_per_query(seed))}
            r = c.post("/api/v1/projects/p/snapshots", json=body, headers=AUTH)
            assert r.status_code == 201, r.text
        yield c


def test_ab_per_query_rows_are_paged(ab_client: Any) -> None:
    cand, base = _per_query(2), _per_query(1)
    # the oracle: every difference, sorted ascending (ties by query id cannot happen here: all distinct?)
    diffs = sorted((cand[q]["AP"] - base[q]["AP"], q) for q in cand)
    url = "/api/v1/projects/p/ab?baseline=base&candidate=cand&measure=AP"
    first = ab_client.get(url).json()
    assert first["per_query_total"] == N_QUERIES
    assert len(first["per_query"]) == 1000 and first["limit"] == 1000 and first["offset"] == 0
    rest = ab_client.get(url + "&offset=1000").json()
    assert len(rest["per_query"]) == N_QUERIES - 1000
    rows = first["per_query"] + rest["per_query"]
    assert [r["difference"] for r in rows] == pytest.approx([d for d, _ in diffs], abs=1e-12)
    assert {r["query"] for r in rows} == set(cand)
    for r in rows[:50]:
        assert r["candidate"] == cand[r["query"]]["AP"] and r["baseline"] == base[r["query"]]["AP"]
    small = ab_client.get(url + "&limit=10&offset=5").json()
    assert [r["query"] for r in small["per_query"]] == [r["query"] for r in rows[5:15]]
    _error(ab_client.get(url + "&limit=1001"), 422)
    _error(ab_client.get(url + "&offset=-1"), 422)
    # the statistics are over every query, not the page
    assert first["comparison"]["n"] == N_QUERIES


def test_ab_cache_is_bounded_in_bytes(ab_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ranklens.monitor import views

    computed = []
    real = views._paired

    def counting(*a: Any, **kw: Any) -> Any:
        computed.append(a[1:])
        return real(*a, **kw)

    monkeypatch.setattr(views, "_paired", counting)
    cache = views._AB_CACHE
    cache.clear()
    url = "/api/v1/projects/p/ab?baseline=base&candidate=cand&measure=AP&test={}"
    ab_client.get(url.format("t"))
    one = cache.bytes
    assert one > N_QUERIES * 16  # two float64 per query at least
    monkeypatch.setattr(cache, "max_bytes", int(one * 2.5))  # room for two comparisons
    for test in ("t", "sign", "wilcoxon", "bootstrap", "t"):
        ab_client.get(url.format(test))
        assert cache.bytes <= cache.max_bytes
    assert len(cache.keys()) == 2
    # t computed once, then served from the cache; sign, wilcoxon, bootstrap computed (each evicting the
    # oldest); t again had been evicted by then and was computed again
    assert [c[-1] for c in computed] == ["t", "sign", "wilcoxon", "bootstrap", "t"]


def test_bounded_cache_unit() -> None:
    from ranklens.monitor.readcache import BoundedCache

    c = BoundedCache(max_bytes=100, max_entries=3)
    for k in "abcd":
        c.get(k, lambda k=k: k, size=lambda v: 30)
    assert c.keys() == ["b", "c", "d"] and c.bytes == 90
    c.get("e", lambda: "e", size=lambda v: 70)
    assert c.keys() == ["d", "e"] and c.bytes == 100
    assert c.get("big", lambda: "B", size=lambda v: 101) == "B" and "big" not in set(c.keys())


def test_every_read_is_rate_limited(tmp_path: Path) -> None:
    with _test_client(_app(tmp_path, public_read=True, read_rate="2/60")) as c:
        assert [c.get("/api/v1/projects/x/ab").status_code for _ in range(2)] == [404, 404]
        for path in ("/api/v1/projects/x/ab", "/api/v1/projects/x/segments", "/api/v1/projects/x", "/projects/x/ab", "/"):
            r = c.get(path)
            assert _error(r, 429)["code"] == "too_many_requests", path
            assert 1 <= int(r.headers["retry-after"]) <= 60
        assert c.get("/api/v1/health").status_code == 200  # never limited
        assert c.get("/api/v1/projects/x/ab", headers=AUTH).status_code == 404  # the token is not limited


def test_unknown_measure_is_refused_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ranklens.measures import language
    from ranklens.monitor import views

    calls = {"distance": 0, "view": 0}
    real_distance, real_view = language._distance, views.segments_view

    def distance(a: str, b: str) -> int:
        calls["distance"] += 1
        return real_distance(a, b)

    def view(*a: Any, **kw: Any) -> Any:
        calls["view"] += 1
        return real_view(*a, **kw)

    monkeypatch.setattr(language, "_distance", distance)
    monkeypatch.setattr(views, "segments_view", view)
    with _test_client(_app(tmp_path, public_read=True)) as c:
        for name in ("x" * 200, "y" * 120 + "@10", "z" * 60):
            err = _error(c.get("/api/v1/projects/x/segments", params={"measure": name}), 400)
            assert "measure" in err["message"]
        _error(c.get("/api/v1/projects/x/segments", params={"measure": "x" * 201}), 422)
    assert calls == {"distance": 0, "view": 0}  # no suggestion search, no database work
    assert "did you mean 'nDCG@10'" in language.suggest("ndgc@10")  # short names still get one


def test_series_bands_are_bounded_work_per_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every snapshot's band parses its per-query document once; one read parses at most BAND_BUDGET values
    from ranklens.monitor import views

    loads: list[int] = []
    real = views._load_queries

    def counting(s: Any, snapshot_id: int) -> Any:
        loads.append(snapshot_id)
        return real(s, snapshot_id)

    with _test_client(_app(tmp_path, public_read=True, read_rate="off")) as c:
        for day in range(6):
            pq = {f"q{i}": {"AP": (i * (day + 3)) % 7 / 7} for i in range(10)}
            body = {"id": f"d{day}", "system": "a", "at": f"2026-01-0{day + 1}T00:00:00Z", "results": eval_json(pq)}
            assert c.post("/api/v1/projects/p/snapshots", json=body, headers=AUTH).status_code == 201
        views._BANDS.clear()
        monkeypatch.setattr(views, "_load_queries", counting)
        monkeypatch.setattr(views, "BAND_BUDGET", 25)  # three 10-query snapshots per read
        banded = []
        for _ in range(3):
            points = c.get("/api/v1/projects/p/series?measure=AP").json()["series"][0]["points"]
            banded.append([p["snapshot"] for p in points if "ci_low" in p])
        assert len(loads) == 6 and len(set(loads)) == 6  # each document parsed once over the three reads
        assert banded[0] == ["d3", "d4", "d5"]  # the newest first
        assert banded[1] == banded[2] == [f"d{d}" for d in range(6)]


# ---------------------------------------------------------------------------------------------------------
# item 2: bearer guessing throttled; forwarded headers from configured proxies only; weak tokens


def test_bearer_guessing_is_throttled_per_client(tmp_path: Path) -> None:
    app = _app(tmp_path)
    with _test_client(app, client=("198.51.100.7", 4000)) as guesser, _test_client(app, client=("198.51.100.8", 4000)) as other:
        codes = [guesser.get("/api/v1/projects", headers={"Authorization": f"Bearer guess{i}"}).status_code for i in range(30)]
        codes += [guesser.post("/api/v1/projects", headers={"Authorization": f"Bearer g{i}"}, json={"name": "x"}).status_code for i in range(10)]
        assert codes.count(401) == 5 and codes.count(429) == 35, codes  # 5 failures per 5 minutes, then locked
        locked = guesser.get("/api/v1/projects", headers=AUTH)  # while locked, not even the right token is tried
        err = _error(locked, 429)
        assert err["code"] == "too_many_requests" and 1 <= int(locked.headers["retry-after"]) <= 300
        assert guesser.post("/login", content=f"token={TOKEN}".encode(), headers=FORM).status_code == 429  # one budget
        assert other.get("/api/v1/projects", headers=AUTH).status_code == 200  # another client is not affected
        assert guesser.get("/api/v1/health", headers={"Authorization": "Bearer x"}).status_code == 200


def test_forwarded_for_is_believed_from_configured_proxies_only(tmp_path: Path) -> None:
    from ranklens.monitor.clients import TrustedProxies, parse_proxies

    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((scope["client"][0], scope["scheme"]))

    def run(mw: Any, peer: str, headers: list[tuple[bytes, bytes]]) -> Any:
        import asyncio

        scope = {"type": "http", "client": (peer, 1), "scheme": "http", "headers": headers, "path": "/"}
        asyncio.run(mw(scope, None, None))
        return seen.pop()

    xff = [(b"x-forwarded-for", b"203.0.113.9, 10.0.0.3"), (b"x-forwarded-proto", b"https")]
    none = TrustedProxies(app, proxies=[])
    assert run(none, "127.0.0.1", xff) == ("127.0.0.1", "http")  # loopback is not a proxy unless configured
    proxied = TrustedProxies(app, proxies=parse_proxies(["10.0.0.0/24"]))
    assert run(proxied, "10.0.0.2", xff) == ("203.0.113.9", "https")  # skips the trusted hop 10.0.0.3
    assert run(proxied, "192.0.2.1", xff) == ("192.0.2.1", "http")  # not from a proxy: ignored
    assert run(proxied, "10.0.0.2", [(b"x-forwarded-for", b"nonsense")]) == ("10.0.0.2", "http")


def test_forwarded_for_does_not_reset_the_throttle_on_a_real_server(tmp_path: Path) -> None:
    srv = ServerProcess(f"sqlite:///{tmp_path / 'x.db'}", env={"RANKLENS_READ_RATE": "3/60"}).start()
    try:
        with httpx.Client(base_url=srv.url) as c:
            for i in range(5):
                assert c.post("/login", content=f"token=wrong{i}".encode(), headers=FORM).status_code == 401
            for i in range(5):
                r = c.post("/login", content=f"token={srv.token}".encode(), headers={**FORM, "X-Forwarded-For": f"198.51.100.{i}"})
                assert r.status_code == 429, r.text
            codes = [c.get("/api/v1/projects/nope/series", headers={"X-Forwarded-For": f"192.0.2.{i}"}).status_code for i in range(6)]
            assert codes.count(429) >= 3, codes
    finally:
        srv.stop()


def test_token_weakness_unit() -> None:
    import secrets

    from ranklens.monitor.security import token_weakness

    for weak in ("s3cret", "secret", "x" * 40, "abab" * 10, "hunter2hunter2"):
        assert token_weakness(weak), weak
    for strong in (secrets.token_urlsafe(24), TOKEN, secrets.token_hex(16)):
        assert token_weakness(strong) is None, strong


def test_weak_token_refused_beyond_loopback(tmp_path: Path) -> None:
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "ranklens.monitor", "--db", f"sqlite:///{tmp_path / 'w.db'}", "--port", "0", "--host", "0.0.0.0"]
    out = subprocess.run([*cmd, "--token", "s3cret"], check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "too weak" in lines[0] and "--allow-weak-token" in lines[0], lines


def test_weak_token_on_loopback_is_announced(tmp_path: Path) -> None:
    srv = ServerProcess(f"sqlite:///{tmp_path / 'l.db'}", token="s3cret").start()
    try:
        assert any(line.startswith("WARNING: the token is weak") for line in srv.log), srv.log
    finally:
        srv.stop()


# ---------------------------------------------------------------------------------------------------------
# item 3: sessions bound to the token in force; /logout


def _login(c: Any, token: str) -> str:
    r = c.post("/login", content=f"token={token}".encode(), headers=FORM, follow_redirects=False)
    assert r.status_code == 303, r.text
    return str(r.cookies["ranklens_session"])


def _with_cookie(c: Any, cookie: str) -> Any:
    c.cookies.clear()
    c.cookies.set("ranklens_session", cookie)
    return c


def test_sessions_end_when_the_token_changes(tmp_path: Path) -> None:
    key = "k" * 40
    old_token, new_token = TOKEN, TOKEN + "-rotated"
    with _test_client(_app(tmp_path, token=old_token, session_secret=key)) as c:
        cookie = _login(c, old_token)
        assert _with_cookie(c, cookie).get("/api/v1/webhooks").status_code == 200
    with _test_client(_app(tmp_path, token=new_token, session_secret=key)) as c:
        _error(_with_cookie(c, cookie).get("/api/v1/webhooks"), 401)
        assert _with_cookie(c, _login(c, new_token)).get("/api/v1/webhooks").status_code == 200
    with _test_client(_app(tmp_path, token=old_token, session_secret=key)) as c:  # the same token: still valid
        assert _with_cookie(c, cookie).get("/api/v1/webhooks").status_code == 200


def test_logout_ends_the_session(tmp_path: Path) -> None:
    with _test_client(_app(tmp_path)) as c:
        cookie = _login(c, TOKEN)
        page = _with_cookie(c, cookie).get("/projects/x/ab", headers={"Accept": "text/html"})
        assert 'action="/logout"' in page.text
        r = c.post("/logout", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login"
        assert "ranklens_session=" in r.headers["set-cookie"] and "max-age=0" in r.headers["set-cookie"].lower()
        _error(_with_cookie(c, cookie).get("/api/v1/projects"), 401)  # revoked, not only forgotten


# ---------------------------------------------------------------------------------------------------------
# item 4: every input bounded by the schema: 422, never a 500, on both backends


def _post(server: ServerProcess, path: str, body: Any) -> httpx.Response:
    return httpx.post(server.url + path, headers=AUTH, json=body)


@pytest.mark.parametrize("rule_id", ["2147483648", "4294967296", "9223372036854775807"])
def test_ids_beyond_32_bits_are_422(server: ServerProcess, project: str, rule_id: str) -> None:
    assert _post(server, f"/api/v1/projects/{project}/snapshots", {"system": "a", "values": {"AP": 0.5}}).status_code == 201
    base = f"{server.url}/api/v1/projects/{project}/rules/{rule_id}"
    _error(httpx.get(f"{server.url}/api/v1/webhooks", params={"webhook": rule_id}, headers=AUTH), 422)
    _error(httpx.delete(base, headers=AUTH), 422)
    _error(httpx.patch(base, headers=AUTH, json={"enabled": True}), 422)
    assert httpx.get(f"{server.url}/api/v1/webhooks", params={"webhook": "2147483647"}, headers=AUTH).status_code == 200
    _error(httpx.delete(f"{server.url}/api/v1/projects/{project}/rules/2147483647", headers=AUTH), 404)


@pytest.mark.parametrize(
    "patch", [{"min_points": 20000}, {"alpha": 5}, {"kind": "bogus"}, {"window_days": 0}, {"op": "=="}, {"measure": "nope@@"}]
)
def test_rule_patch_out_of_range_is_422(server: ServerProcess, project: str, patch: dict[str, Any]) -> None:
    r = _post(server, f"/api/v1/projects/{project}/rules", {"expr": "AP drop <= 0.05 window=7"})
    assert r.status_code == 201, r.text
    rid = r.json()["rule"]["id"]
    url = f"{server.url}/api/v1/projects/{project}/rules/{rid}"
    _error(httpx.patch(url, headers=AUTH, json=patch), 422)
    assert httpx.patch(url, headers=AUTH, json={"min_points": 10000}).status_code == 200


def test_a_rule_invalid_after_merging_is_422_not_500(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a stored rule that no longer passes its model (e.g. older, looser limits): the merge check is a 422
    from ranklens.monitor import rules

    with _test_client(_app(tmp_path)) as c:
        rid = c.post("/api/v1/projects/p/rules", json={"expr": "AP >= 0.5"}, headers=AUTH).json()["rule"]["id"]
        real = rules.rule_fields
        monkeypatch.setattr(rules, "rule_fields", lambda *a: {**real(*a), "min_points": 10**6})
        err = _error(c.patch(f"/api/v1/projects/p/rules/{rid}", json={"name": "n"}, headers=AUTH), 422)
        assert "min_points" in err["message"]


@pytest.mark.parametrize(
    "path",
    ["/api/v1/projects/%00", "/api/v1/projects/{p}%00/series", "/api/v1/projects/{p}/snapshots/x%00",
     "/api/v1/projects/{p}/ab?segment=%00", "/api/v1/projects/{p}/snapshots/s1?compare=%00"],
)
def test_nul_in_the_url_is_400(server: ServerProcess, project: str, path: str) -> None:
    # found by schemathesis on PostgreSQL: a NUL in a query parameter is a database error there
    _post(server, f"/api/v1/projects/{project}/snapshots", {"id": "s1", "system": "a", "values": {"AP": 0.5}})
    _error(httpx.get(server.url + path.format(p=project), headers=AUTH), 400)


@pytest.mark.parametrize(
    "path,body",
    [
        ("/api/v1/projects/{p}/datasets", '{"name": "d", "version": "v\\u0000", "qrels": {"q": {"d": 1}}}'),
        ("/api/v1/projects", '{"name": "p\\ud800"}'),
        ("/api/v1/projects", '{"name": "pp-nul", "description": "x\\u0000"}'),
        ("/api/v1/projects/{p}/rules", '{"expr": "AP >= 0.5", "name": "n\\ud800"}'),
        ("/api/v1/webhooks", '{"url": "http://93.184.215.14/x", "secret": "s\\u0000", "enabled": false}'),
        ("/api/v1/projects/{p}/datasets", '{"name": "d", "version": "v", "qrels": {"q": {"d": 2147483648}}}'),
    ],
)
def test_unstorable_text_and_numbers_are_422(server: ServerProcess, project: str, path: str, body: str) -> None:
    r = httpx.post(server.url + path.format(p=project), headers={**AUTH, "Content-Type": "application/json"}, content=body.encode())
    _error(r, 422)


# ---------------------------------------------------------------------------------------------------------
# item 5: request-header size limit and header-read deadline (the server configuration ranklens serve ships)


@pytest.fixture(scope="module")
def limits_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    db = tmp_path_factory.mktemp("limits") / "l.db"
    srv = ServerProcess(f"sqlite:///{db}", env={"RANKLENS_HEADER_TIMEOUT": "1", "RANKLENS_MAX_HEADER": "32768"}).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_oversized_headers_are_refused(limits_server: ServerProcess) -> None:
    url = limits_server.url + "/api/v1/health"
    assert httpx.get(url, headers={"X-Ok": "a" * 8000}).status_code == 200
    r = httpx.get(url, headers={"X-Big": "a" * (4 << 20)}, timeout=30)
    assert r.status_code == 431, r.text[:200]
    assert r.json()["error"]["code"] == "request_header_fields_too_large"
    # a large body is not a large header
    assert httpx.post(limits_server.url + "/api/v1/projects", headers=AUTH, json={"name": "big-body", "description": "d" * 4000}).status_code in (200, 201)


def test_slow_headers_are_cut_off(limits_server: ServerProcess) -> None:
    host, port = limits_server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.settimeout(0.5)
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n")
        answer = b""
        for _ in range(40):  # one header line every 0.5 s, for up to 20 s: the server must end it first
            try:
                chunk = s.recv(4096)
            except TimeoutError:
                chunk = None
            if chunk == b"":
                break
            if chunk:
                answer += chunk
                continue
            try:
                s.sendall(b"X-Slow: 1\r\n")
            except OSError:
                break
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    # the server still serves others
    assert httpx.get(limits_server.url + "/api/v1/health").status_code == 200


# ---------------------------------------------------------------------------------------------------------
# item 6: at-least-once webhook deliveries carry an idempotency key


def test_delivery_carries_an_event_id(tmp_path: Path) -> None:
    from ranklens.monitor.db import Database
    from ranklens.monitor.models import Delivery, Webhook
    from ranklens.monitor.webhooks import DeliveryWorker

    from .test_webhooks import Receiver

    with Receiver(fail_first=2) as rec:
        db = Database(f"sqlite:///{tmp_path / 'd.db'}")
        db.migrate()

        def seed(s: Any) -> None:
            s.add(Webhook(id=1, url=rec.url, secret="k"))
            s.flush()
            payload = json.dumps({"event": "alert.firing", "project": "p", "alert": {"id": 7}})
            s.add(Delivery(id=1, webhook_id=1, alert_id=None, event="alert.firing", payload=payload))

        db.write(seed)
        from ranklens.monitor.ssrf import TargetPolicy
        from ranklens.monitor.webhooks import WebhookPolicy

        policy = WebhookPolicy(backoff_base=0.0, max_attempts=5)
        worker = DeliveryWorker(db, policy, targets=TargetPolicy.from_allow(["127.0.0.1:*"]))
        for _ in range(3):
            worker.run_once()
        assert len(rec.requests) == 3
        keys = {r["headers"]["X-Ranklens-Event-Id"] for r in rec.requests}
        assert len(keys) == 1  # every attempt of one event: one key
        (key,) = keys
        for r in rec.requests:
            body = json.loads(r["body"])
            assert body["event_id"] == key and body["event"] == "alert.firing"
        db.dispose()


def test_event_ids_are_distinct_per_alert_change() -> None:
    from ranklens.monitor.models import Delivery
    from ranklens.monitor.webhooks import event_id

    ids = {event_id(Delivery(id=i, event=e, alert_id=a)) for i, (e, a) in enumerate(
        [("alert.firing", 1), ("alert.resolved", 1), ("alert.firing", 2), ("alert.resolved", 2)])}
    assert len(ids) == 4
    # two deliveries (to two webhooks) of one alert change share the key
    assert event_id(Delivery(id=1, event="alert.firing", alert_id=9)) == event_id(Delivery(id=2, event="alert.firing", alert_id=9))


@pytest.mark.parametrize("impl", ["httptools", "h11"])
def test_both_protocols_bound_the_headers(impl: str) -> None:
    # uvicorn picks httptools when it is installed, else h11: both shipped classes enforce both limits
    import threading
    import time

    import uvicorn

    from ranklens.monitor import protocol

    if impl == "httptools":
        pytest.importorskip("httptools")
    cls = protocol._httptools(4096, 1.0) if impl == "httptools" else protocol._h11(4096, 1.0)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, http=cls, h11_max_incomplete_event_size=4096, log_level="critical", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/"
        assert httpx.get(url, headers={"X-Small": "a" * 1000}).status_code == 200
        if impl == "httptools":
            big = httpx.get(url, headers={"X-Big": "a" * (1 << 20)})
            assert big.status_code == 431 and big.json()["error"]["code"] == "request_header_fields_too_large"
        else:  # h11's own limit: a 400, and the connection closed (often reset while the client still sends)
            try:
                assert httpx.get(url, headers={"X-Big": "a" * (1 << 20)}).status_code == 400
            except httpx.TransportError:
                pass
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.settimeout(10)
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            answer = s.recv(200)  # nothing more is sent: the deadline must answer and close
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert httpx.get(url).status_code == 200  # keep-alive requests after a complete one still work
    finally:
        server.should_exit = True
        thread.join(10)
