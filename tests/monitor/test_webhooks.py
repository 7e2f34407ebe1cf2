"""Alerts reach a webhook: a real HTTP receiver on loopback that fails at first, then accepts."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from .conftest import ServerProcess, make_db_url

# webhooks to loopback are refused unless the operator allows them (issue 13): these receivers listen on
# 127.0.0.1 with a free port, so the servers here allow 127.0.0.1 on any port
ALLOW_LOOPBACK = ["--webhook-allow", "127.0.0.1:*"]


@pytest.fixture(scope="module")
def server(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    url, pg = make_db_url(backend, tmp_path_factory.mktemp(f"webhook-server-{backend}"))
    srv = ServerProcess(url, args=ALLOW_LOOPBACK).start()
    try:
        yield srv
    finally:
        srv.stop()
        if pg is not None:
            pg.drop()


class Receiver:
    """A webhook endpoint: answers 500 to the first ``fail_first`` requests, then 200; with ``gate``, every
    answer waits until the gate is opened."""

    def __init__(self, fail_first: int = 0, gate: threading.Event | None = None) -> None:
        self.fail_first = fail_first
        self.gate = gate
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.requests.append({"headers": dict(self.headers), "body": body})
                    n = len(receiver.requests)
                if receiver.gate is not None:
                    receiver.gate.wait(30)
                code = 500 if n <= receiver.fail_first else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:  # noqa: PYI034
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def wait_for(self, n: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= n:
                    return list(self.requests)
            time.sleep(0.05)
        raise AssertionError(f"expected {n} webhook requests, got {len(self.requests)}")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver(fail_first=2) as r:
        yield r


def _wait_delivered(client: Any, hook_id: int, n: int, timeout: float = 20.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = [d for d in client.webhooks()["deliveries"] if d["webhook_id"] == hook_id]
        if len(rows) >= n and all(d["status"] == "delivered" for d in rows):
            return rows
        time.sleep(0.1)
    raise AssertionError(f"deliveries not done: {rows}")


def test_breaking_a_rule_reaches_the_webhook_with_retries(client: Any, project: str, receiver: Receiver) -> None:
    hook = client.add_webhook(receiver.url, project=project, secret="shh")
    client.add_rule(project, "nDCG@10 >= 0.85")
    client.push_values({"nDCG@10": 0.9}, project=project, system="bm25", at="2026-04-01T00:00:00Z")
    fired = client.push_values({"nDCG@10": 0.8}, project=project, system="bm25", at="2026-04-02T00:00:00Z")
    assert fired["rules"][0]["alert"]["change"] == "fired"
    reqs = receiver.wait_for(3)  # two 500s, then accepted
    bodies = [json.loads(r["body"]) for r in reqs]
    assert all(b == bodies[0] for b in bodies)  # a retry sends the same payload
    body = bodies[0]
    assert body["event"] == "alert.firing" and body["project"] == project
    assert body["alert"]["system"] == "bm25" and body["alert"]["value"] == 0.8
    assert body["snapshot"]["id"] == fired["id"]
    headers = {k.lower(): v for k, v in reqs[-1]["headers"].items()}
    expected = "sha256=" + hmac.new(b"shh", reqs[-1]["body"], hashlib.sha256).hexdigest()
    assert headers["x-ranklens-signature"] == expected
    assert headers["x-ranklens-event"] == "alert.firing"
    (delivery,) = _wait_delivered(client, hook["id"], 1)
    assert delivery["attempts"] == 3 and delivery["last_status_code"] == 200
    assert [a["status_code"] for a in delivery["log"]] == [500, 500, 200]
    # resolving sends alert.resolved
    client.push_values({"nDCG@10": 0.95}, project=project, system="bm25", at="2026-04-03T00:00:00Z")
    reqs = receiver.wait_for(4)
    assert json.loads(reqs[-1]["body"])["event"] == "alert.resolved"
    assert len(_wait_delivered(client, hook["id"], 2)) == 2


def test_a_stuck_webhook_does_not_block_ingestion(client: Any, project: str) -> None:
    gate = threading.Event()
    with Receiver(gate=gate) as stuck:
        try:
            client.add_webhook(stuck.url, project=project)
            client.add_rule(project, "AP >= 0.5")
            client.push_values({"AP": 0.4}, project=project, system="s", at="2026-04-01T00:00:00Z")
            stuck.wait_for(1)  # the worker is now inside a request that does not answer
            outs = [
                client.push_values({"AP": 0.4 if day % 2 else 0.6}, project=project, system="s", at=f"2026-04-{day:02d}T00:00:00Z")
                for day in range(2, 10)
            ]
            # every push was answered while the webhook still hangs: 8 more alert changes queued behind it
            assert not gate.is_set()
            assert [o["rules"][0]["alert"]["change"] for o in outs] == ["resolved", "fired"] * 4
        finally:
            gate.set()


def test_unreachable_webhook_is_retried_then_failed(tmp_path: Any) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    srv = ServerProcess(f"sqlite:///{tmp_path / 'w.db'}", env={"RANKLENS_WEBHOOK_MAX_ATTEMPTS": "3", "RANKLENS_WEBHOOK_BACKOFF": "0.1"},
                        args=ALLOW_LOOPBACK).start()
    try:
        with srv.client() as client:
            hook = client.add_webhook(f"http://127.0.0.1:{port}/hook")
            client.add_rule("p", "AP >= 0.5")
            client.push_values({"AP": 0.1}, project="p", system="s")
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                rows = [d for d in client.webhooks()["deliveries"] if d["webhook_id"] == hook["id"]]
                if rows and rows[0]["status"] == "failed":
                    break
                time.sleep(0.1)
            assert rows[0]["status"] == "failed" and rows[0]["attempts"] == 3
            assert len(rows[0]["log"]) == 3 and all(a["status_code"] is None for a in rows[0]["log"])
            assert "ConnectError" in rows[0]["last_error"]
    finally:
        srv.stop()
