"""Issue 13 (security): the token is checked before a body is read, bodies are limited while streaming,
webhooks cannot reach internal addresses, the webhook list and delivery log need the token and never show
URL credentials, ``/login`` is throttled and sets a signed session, project names are NFKC."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import TOKEN, ServerProcess

AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _settings(tmp_path: Path, **kw: Any) -> Any:
    from ranklens.monitor.app import Settings

    return Settings(db_url=f"sqlite:///{tmp_path / 'sec.db'}", token=TOKEN, run_worker=False, **kw)


# ---------------------------------------------------------------------------------------------------------
# 1. the token before the body; the body limit while streaming


def _call(app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]], chunks: list[bytes]) -> tuple[int, int, dict[str, str]]:
    """Drive the ASGI app once; returns (status, how many body chunks it pulled, response headers)."""
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        i = pulled - 1
        if i < len(chunks):
            return {"type": "http.request", "body": chunks[i], "more_body": i < len(chunks) - 1}
        await asyncio.sleep(3600)  # a client that never sends more
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
        "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], pulled, {k.decode(): v.decode() for k, v in start["headers"]}


def test_unauthenticated_body_is_never_read(tmp_path: Path) -> None:
    from ranklens.monitor.app import create_app

    app = create_app(_settings(tmp_path))
    chunk = b'{"x":[' + b"{}," * 20000
    for auth in ([], [(b"authorization", b"Bearer wrong")], [(b"authorization", b"Basic " + TOKEN.encode())]):
        status, pulled, headers = _call(
            app, "POST", "/api/v1/projects/x/snapshots",
            [(b"content-type", b"application/json"), (b"content-length", b"62914560"), *auth], [chunk] * 5,
        )
        assert status == 401 and pulled == 0, auth
        assert headers["www-authenticate"] == "Bearer"


def test_chunked_body_over_the_limit_is_413_in_process(tmp_path: Path) -> None:
    from ranklens.monitor.app import create_app

    app = create_app(_settings(tmp_path, max_body=1000))
    auth = [(b"authorization", f"Bearer {TOKEN}".encode()), (b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")]
    status, pulled, _ = _call(app, "POST", "/api/v1/projects/x/snapshots", auth, [b" " * 600] * 10)
    assert status == 413 and pulled == 2  # stopped reading at the chunk that crossed the limit
    status, pulled, _ = _call(app, "POST", "/api/v1/projects/x/snapshots", [*auth[:2], (b"content-length", b"1001")], [b" " * 1001])
    assert status == 413 and pulled == 0


def test_unauthenticated_big_body_costs_no_memory(server: ServerProcess) -> None:
    assert server.proc is not None
    body = b'{"x":[' + b"{}," * (14 * 1024 * 1024) + b"{}]}"  # 42 MiB of tiny objects
    before = _vm_hwm_kib(server.proc.pid)
    try:
        r = httpx.post(server.url + "/api/v1/projects/x/snapshots", content=body, headers={"Content-Type": "application/json"}, timeout=60)
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "unauthorized"
    except httpx.WriteError:  # the server answered and closed before the upload ended: also fine
        pass
    grown_mib = (_vm_hwm_kib(server.proc.pid) - before) / 1024
    assert grown_mib < 100, grown_mib


@pytest.fixture(scope="module")
def small_body_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    db = tmp_path_factory.mktemp("small-body") / "s.db"
    srv = ServerProcess(f"sqlite:///{db}", env={"RANKLENS_MAX_BODY": str(1024 * 1024)}).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_chunked_body_over_the_limit_is_413(small_body_server: ServerProcess) -> None:
    def chunks(n: int) -> Iterator[bytes]:
        yield b'{"system": "s", "values": {"AP": 0.5}, "tags": {"pad": "'
        for _ in range(n):
            yield b"x" * 65536
        yield b'"}}'

    url = small_body_server.url + "/api/v1/projects/chunky/snapshots"
    r = httpx.post(url, content=chunks(32), headers=AUTH, timeout=30)  # 2 MiB, no Content-Length
    assert r.status_code == 413, r.text
    assert r.json()["error"] == {"status": 413, "code": "payload_too_large", "message": r.json()["error"]["message"]}
    ok = httpx.post(url, content=iter([json.dumps({"system": "s", "values": {"AP": 0.5}}).encode()]), headers=AUTH, timeout=30)
    assert ok.status_code == 201, ok.text


# ---------------------------------------------------------------------------------------------------------
# 2. webhooks are not an SSRF primitive

REFUSED = [
    "http://127.0.0.1:9000/hook",
    "http://127.1/hook",
    "http://localhost/hook",
    "http://LocalHost./hook",
    "http://api.localhost/hook",
    "http://[::1]/hook",
    "http://2130706433/hook",
    "http://0x7f000001/hook",
    "http://0177.0.0.1/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/hook",
    "http://10.0.0.1/hook",
    "http://172.16.5.4/hook",
    "http://192.168.0.1/hook",
    "http://[fd00::1]/hook",
    "http://224.0.0.1/hook",
    "http://[ff02::1]/hook",
    "http://0.0.0.0/hook",
    "http://0/hook",
    "http://[::]/hook",
    "http://100.64.0.1/hook",
    "http://user:pw@127.0.0.1/hook",
    "ftp://example.com/hook",
    "http:///hook",
    "http://93.184.215.14:99999/hook",
]


@pytest.mark.parametrize("url", REFUSED)
def test_internal_webhook_targets_are_refused(server: ServerProcess, url: str) -> None:
    r = httpx.post(server.url + "/api/v1/webhooks", json={"url": url, "enabled": False}, headers=AUTH)
    assert 400 <= r.status_code < 500, (url, r.text)
    doc = r.json()
    assert set(doc) == {"error"} and doc["error"]["status"] == r.status_code
    assert "pw" not in r.text


def test_public_webhook_target_is_accepted_and_redacted(server: ServerProcess) -> None:
    url = "https://alice:s3cr3t@93.184.215.14/services/T000/B000?key=hush&x=1#frag"
    r = httpx.post(server.url + "/api/v1/webhooks", json={"url": url, "enabled": False}, headers=AUTH)
    assert r.status_code == 201, r.text
    hook = r.json()["webhook"]
    for secret in ("alice", "s3cr3t", "hush", "frag"):
        assert secret not in r.text
    assert hook["url"].startswith("https://") and "93.184.215.14/services/T000/B000" in hook["url"]
    listed = httpx.get(server.url + "/api/v1/webhooks", headers=AUTH)
    page = httpx.get(server.url + "/webhooks", headers={**AUTH, "Accept": "text/html"})
    assert listed.status_code == 200 and page.status_code == 200
    assert any(h["id"] == hook["id"] and h["url"] == hook["url"] for h in listed.json()["webhooks"])
    for text in (listed.text, page.text):
        for secret in ("s3cr3t", "hush", "alice"):
            assert secret not in text


def test_webhook_list_and_log_need_the_token(server: ServerProcess) -> None:
    for path in ("/api/v1/webhooks", "/webhooks", "/api/v1/webhooks?webhook=1"):
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Accept": "text/html"}):
            r = httpx.get(server.url + path, headers=headers)
            assert r.status_code == 401, (path, headers)


class _Receiver:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.requests.append(dict(self.headers))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _fake_dns(monkeypatch: pytest.MonkeyPatch, mapping: dict[str, str]) -> list[str]:
    """Resolve the names of ``mapping`` to the given address in the webhook code; returns the names looked up."""
    from ranklens.monitor import ssrf

    real = socket.getaddrinfo
    asked: list[str] = []

    def fake(host: Any, port: Any, *args: Any, **kw: Any) -> Any:
        if isinstance(host, str) and host.lower() in mapping:
            asked.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (mapping[host.lower()], port or 0))]
        return real(host, port, *args, **kw)

    monkeypatch.setattr(ssrf.socket, "getaddrinfo", fake)
    return asked


def _worker_with_hook(tmp_path: Path, url: str, allow: list[str]) -> tuple[Any, Any, int]:
    from ranklens.monitor.db import Database
    from ranklens.monitor.models import Delivery, Webhook, utcnow
    from ranklens.monitor.ssrf import TargetPolicy
    from ranklens.monitor.webhooks import DeliveryWorker, WebhookPolicy

    db = Database(f"sqlite:///{tmp_path / 'w.db'}")
    db.migrate()

    def fn(s: Any) -> int:
        hook = Webhook(project_id=None, url=url, secret=None, enabled=True, created_at=utcnow())
        s.add(hook)
        s.flush()
        d = Delivery(webhook_id=hook.id, alert_id=None, event="alert.firing", payload="{}", status="pending",
                     attempts=0, created_at=utcnow(), next_attempt_at=utcnow())
        s.add(d)
        s.flush()
        return int(d.id)

    delivery_id = db.write(fn)
    worker = DeliveryWorker(db, WebhookPolicy(max_attempts=3, timeout=5), targets=TargetPolicy.from_allow(allow))
    return db, worker, delivery_id


def test_send_time_check_refuses_a_name_that_now_resolves_to_loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Registered while it pointed elsewhere (here: written straight to the store), rebound to 127.0.0.1."""
    from ranklens.monitor.models import Delivery

    rec = _Receiver()
    try:
        asked = _fake_dns(monkeypatch, {"rebind.example": "127.0.0.1"})
        db, worker, delivery_id = _worker_with_hook(tmp_path, f"http://rebind.example:{rec.port}/hook", allow=[])
        assert worker.run_once() == 1
        with db.read() as s:
            d = s.get(Delivery, delivery_id)
            assert d is not None and d.status == "failed" and d.attempts == 1
            assert "not allowed" in (d.last_error or "")
        assert asked and rec.requests == []
        db.dispose()
    finally:
        rec.close()


def test_allowed_host_is_sent_to_the_pinned_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ranklens.monitor.models import Delivery

    rec = _Receiver()
    try:
        asked = _fake_dns(monkeypatch, {"hooks.internal": "127.0.0.1"})
        db, worker, delivery_id = _worker_with_hook(tmp_path, f"http://hooks.internal:{rec.port}/hook?k=v", allow=[f"hooks.internal:{rec.port}"])
        assert worker.run_once() == 1
        with db.read() as s:
            d = s.get(Delivery, delivery_id)
            assert d is not None and d.status == "delivered", d.last_error
        assert len(asked) == 1  # resolved once, by the check; the connection used that address
        assert rec.requests[0]["Host"] == f"hooks.internal:{rec.port}"
        db.dispose()
    finally:
        rec.close()


def test_target_policy_unit() -> None:
    from ranklens.monitor.ssrf import TargetPolicy, TargetRefused

    policy = TargetPolicy.from_allow(["127.0.0.1:9000", "[::1]:9001", "hooks.lan:*"])
    assert policy.check_url("http://127.0.0.1:9000/x") is not None
    assert policy.check_url("http://[::1]:9001/x") is not None
    with pytest.raises(TargetRefused):
        policy.check_url("http://127.0.0.1:9001/x")  # another port
    with pytest.raises(TargetRefused):
        policy.check_url("http://localhost:9000/x")  # another spelling of the host
    with pytest.raises(ValueError):
        TargetPolicy.from_allow(["nocolon"])
    with pytest.raises(ValueError):
        TargetPolicy.from_allow(["h:0"])
    assert policy.check_url("http://HOOKS.lan:1234/x") is not None
    open_policy = TargetPolicy.from_allow([])
    assert open_policy.check_url("https://93.184.215.14/x") is not None
    assert open_policy.check_url("https://hooks.example.com/x") is not None  # a name: checked when resolved


# ---------------------------------------------------------------------------------------------------------
# 4. /login: throttled, and the cookie is a signed session


def test_login_cookie_is_a_signed_session_not_the_token(protected_server: ServerProcess) -> None:
    srv = protected_server
    with httpx.Client(base_url=srv.url) as browser:
        good = browser.post("/login", content=f"token={srv.token}".encode(), headers=FORM)
        assert good.status_code == 303
        (cookie,) = [c for c in browser.cookies.jar]
        assert srv.token not in cookie.value and cookie.value != srv.token
        assert "httponly" in good.headers["set-cookie"].lower()
        assert browser.get("/api/v1/projects").status_code == 200
        assert browser.get("/webhooks", headers={"Accept": "text/html"}).status_code == 200
        value = cookie.value
    # the session is accepted as a cookie only, and tampering breaks it
    assert httpx.get(srv.url + "/api/v1/projects", cookies={cookie.name: value}).status_code == 200
    assert httpx.get(srv.url + "/api/v1/projects", headers={"Authorization": f"Bearer {value}"}).status_code == 401
    forged = value[:-2] + ("AA" if not value.endswith("AA") else "BB")
    assert httpx.get(srv.url + "/api/v1/projects", cookies={cookie.name: forged}).status_code == 401
    # the old kind of cookie, the token itself, is no longer a login
    assert httpx.get(srv.url + "/api/v1/projects", cookies={"ranklens_token": srv.token}).status_code == 401
    assert httpx.get(srv.url + "/api/v1/projects", cookies={cookie.name: srv.token}).status_code == 401
    # a session cookie is not a write token
    r = httpx.post(srv.url + "/api/v1/projects", json={"name": "cookie-write"}, cookies={cookie.name: value})
    assert r.status_code == 401


def test_login_failures_are_throttled(tmp_path: Path) -> None:
    srv = ServerProcess(f"sqlite:///{tmp_path / 't.db'}").start()
    try:
        with httpx.Client(base_url=srv.url) as browser:
            for _ in range(5):
                assert browser.post("/login", content=b"token=nope", headers=FORM).status_code == 401
            locked = browser.post("/login", content=b"token=nope", headers=FORM)
            assert locked.status_code == 429
            assert 1 <= int(locked.headers["retry-after"]) <= 3600
            # while locked out, even the right token is not tried
            right = browser.post("/login", content=f"token={srv.token}".encode(), headers=FORM)
            assert right.status_code == 429
            assert not browser.cookies
            # one budget for every door (issue 23): the bearer token is not tried from this client either
            api = httpx.get(srv.url + "/api/v1/webhooks", headers={"Authorization": f"Bearer {srv.token}"})
            assert api.status_code == 429 and int(api.headers["retry-after"]) >= 1
    finally:
        srv.stop()


def test_login_throttle_unit() -> None:
    from ranklens.monitor.sessions import LoginThrottle

    now = [1000.0]
    t = LoginThrottle(max_failures=3, window=60.0, clock=lambda: now[0])
    for _ in range(3):
        assert t.retry_after("a") is None
        t.failed("a")
    assert t.retry_after("a") == 60
    assert t.retry_after("b") is None  # per client address
    now[0] += 30
    assert t.retry_after("a") == 30
    now[0] += 31
    assert t.retry_after("a") is None
    t.failed("a")
    t.succeeded("a")
    assert t.retry_after("a") is None


def test_session_signer_unit() -> None:
    from ranklens.monitor.sessions import SessionSigner

    now = [1000.0]
    signer = SessionSigner(b"k" * 32, max_age=100, clock=lambda: now[0])
    value = signer.issue()
    assert signer.valid(value)
    assert not SessionSigner(b"j" * 32, max_age=100).valid(value)
    assert not signer.valid("") and not signer.valid("a.b.c") and not signer.valid(value + "x")
    now[0] += 101
    assert not signer.valid(value)


# ---------------------------------------------------------------------------------------------------------
# 5. project names are NFKC


@pytest.mark.parametrize("name", ["\uff44\uff45\uff4d\uff4f", "caf\u0065\u0301", "\ufb01le", "x\u00b2"])
def test_non_nfkc_project_names_are_refused(server: ServerProcess, name: str) -> None:
    import unicodedata

    r = httpx.post(server.url + "/api/v1/projects", json={"name": name}, headers=AUTH)
    assert r.status_code == 422, r.text
    assert "NFKC" in r.text and unicodedata.normalize("NFKC", name) in r.json()["error"]["message"]
    r = httpx.post(server.url + f"/api/v1/projects/{name}/snapshots", json={"system": "s", "values": {"AP": 0.5}}, headers=AUTH)
    assert r.status_code == 400 and "NFKC" in r.text, r.text
    r = httpx.post(server.url + "/api/v1/projects/ok-project/rules", json={"expr": "AP >= 0.1"}, headers=AUTH)
    assert r.status_code == 201
    r = httpx.post(server.url + "/api/v1/webhooks", json={"url": "https://93.184.215.14/h", "project": name, "enabled": False}, headers=AUTH)
    assert r.status_code == 422 and "NFKC" in r.text


def test_nfkc_project_name_is_accepted(server: ServerProcess) -> None:
    name = "caf\u00e9-\u30c7\u30e2"  # precomposed é and katakana: already NFKC
    r = httpx.post(server.url + "/api/v1/projects", json={"name": name}, headers=AUTH)
    assert r.status_code in (200, 201), r.text
    assert r.json()["project"]["name"] == name
