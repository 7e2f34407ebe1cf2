"""The webhook worker: sends pending deliveries (JSON POST) with retries and backoff, off the ingest path.

Deliveries are rows written in the ingest transaction (an outbox). A background thread claims due rows
(``locked_until`` guards a claim, so two server processes never send the same delivery at once), POSTs
the payload, and records every attempt in ``delivery_attempts``. A 2xx answer marks the delivery
``delivered``; anything else is retried after ``base · 2^(attempts-1)`` seconds (capped, with jitter) until
``max_attempts``, then marked ``failed``. Headers: ``X-Ranklens-Event``, ``X-Ranklens-Delivery``,
``X-Ranklens-Event-Id`` and, when the webhook has a secret, ``X-Ranklens-Signature: sha256=<hex HMAC of the
body>``.

Delivery is **at least once**: a send whose answer was not recorded (the server killed between the
receiver's 2xx and the commit, a lost answer, a lease that ran out) is sent again. So every delivery carries
an idempotency key, the event id (:func:`event_id`: the same on every attempt and every copy of one alert
change, different for every other), as the header ``X-Ranklens-Event-Id`` and the body's ``event_id``;
receivers drop an id they have seen.

Before every attempt the target is checked again (:class:`ranklens.monitor.ssrf.TargetPolicy`): the host is
resolved, refused if it names a loopback, link-local, private, multicast or otherwise non-public address
(unless the operator allowed it), and the request goes to the address that was checked (the ``Host``
header and TLS server name stay the URL's host). A refused target fails the delivery at once, without
retries. Logs show webhook URLs redacted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select, update

from ranklens.monitor.db import Database
from ranklens.monitor.errors import TargetRefused
from ranklens.monitor.models import Delivery, DeliveryAttempt, Webhook, utcnow
from ranklens.monitor.ssrf import TargetPolicy, redact_url

__all__ = ["DeliveryWorker", "WebhookPolicy", "event_id", "with_event_id"]

log = logging.getLogger("ranklens.monitor.webhooks")


def event_id(delivery: Delivery) -> str:
    """The idempotency key of a delivery: ``<event>:<alert id>`` (an alert fires once and resolves once), or
    ``delivery:<id>`` for an event without an alert.

    >>> event_id(Delivery(id=3, event="alert.firing", alert_id=7)), event_id(Delivery(id=3, event="test", alert_id=None))
    ('alert.firing:7', 'delivery:3')
    """
    return f"{delivery.event}:{delivery.alert_id}" if delivery.alert_id is not None else f"delivery:{delivery.id}"


def with_event_id(payload: str, key: str) -> bytes:
    """The body sent: the stored JSON object with ``event_id`` first (a payload that is not an object is sent
    as stored).

    >>> with_event_id('{"event": "alert.firing"}', "alert.firing:7")
    b'{"event_id": "alert.firing:7", "event": "alert.firing"}'
    """
    try:
        doc = json.loads(payload)
    except ValueError:
        return payload.encode()
    if not isinstance(doc, dict):
        return payload.encode()
    doc.pop("event_id", None)
    return json.dumps({"event_id": key, **doc}, ensure_ascii=False).encode()


@dataclass(frozen=True)
class WebhookPolicy:
    """How hard to try: attempts, backoff base and cap (seconds), request timeout, concurrent sends."""

    max_attempts: int = 8
    backoff_base: float = 2.0
    backoff_cap: float = 600.0
    timeout: float = 10.0
    concurrency: int = 4
    poll_interval: float = 1.0

    def delay(self, attempts: int) -> float:
        """Seconds to wait after ``attempts`` failed attempts: exponential, capped, with ±10% jitter."""
        raw = min(self.backoff_cap, self.backoff_base * (2 ** max(0, attempts - 1)))
        return float(raw * random.uniform(0.9, 1.1))


class DeliveryWorker:
    """Background sender of webhook deliveries; :meth:`wake` after a commit that queued some."""

    def __init__(self, db: Database, policy: WebhookPolicy | None = None, *, targets: TargetPolicy | None = None) -> None:
        self.db = db
        self.policy = policy or WebhookPolicy()
        self.targets = targets or TargetPolicy()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._pool = ThreadPoolExecutor(max_workers=self.policy.concurrency, thread_name_prefix="ranklens-webhook")
        self._thread = threading.Thread(target=self._run, name="ranklens-webhooks", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                sent = self.run_once()
            except Exception:  # keep the worker alive whatever one round does; log and go on
                log.exception("webhook worker round failed")
                sent = 0
            if not sent:
                self._wake.wait(self.policy.poll_interval)
                self._wake.clear()

    def run_once(self) -> int:
        """Claim and send the due deliveries; returns how many were attempted."""
        ids = self._claim()
        if not ids:
            return 0
        pool = self._pool
        if pool is None:
            for i in ids:
                self._send(i)
        else:
            list(pool.map(self._send, ids))
        return len(ids)

    def _claim(self, limit: int = 20) -> list[int]:
        now = utcnow()
        lease = now + dt.timedelta(seconds=self.policy.timeout * 3 + 5)
        with self.db.read() as s:
            due = s.scalars(
                select(Delivery.id)
                .where(Delivery.status == "pending", Delivery.next_attempt_at <= now)
                .where(or_(Delivery.locked_until.is_(None), Delivery.locked_until < now))
                .order_by(Delivery.next_attempt_at, Delivery.id)
                .limit(limit)
            ).all()
        claimed: list[int] = []
        for delivery_id in due:
            def fn(s: object, delivery_id: int = delivery_id) -> int:
                res = s.execute(  # type: ignore[attr-defined]
                    update(Delivery)
                    .where(Delivery.id == delivery_id, Delivery.status == "pending")
                    .where(or_(Delivery.locked_until.is_(None), Delivery.locked_until < now))
                    .values(locked_until=lease)
                )
                return int(res.rowcount or 0)

            if self.db.write(fn):
                claimed.append(delivery_id)
        return claimed

    def _send(self, delivery_id: int) -> None:
        import httpx

        with self.db.read() as s:
            row = s.execute(
                select(Delivery, Webhook).join(Webhook, Webhook.id == Delivery.webhook_id).where(Delivery.id == delivery_id)
            ).first()
        if row is None:
            return
        delivery, hook = row
        key = event_id(delivery)
        body = with_event_id(delivery.payload, key)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "ranklens-monitor",
            "X-Ranklens-Event": delivery.event,
            "X-Ranklens-Delivery": str(delivery.id),
            "X-Ranklens-Event-Id": key,
        }
        if hook.secret:
            sig = hmac.new(hook.secret.encode(), body, hashlib.sha256).hexdigest()
            headers["X-Ranklens-Signature"] = f"sha256={sig}"
        status: int | None = None
        error: str | None = None
        refused = False
        t0 = time.perf_counter()
        try:
            url, extensions = self._pinned(hook.url, headers)
            with httpx.Client(timeout=self.policy.timeout, follow_redirects=False, trust_env=False) as client:
                resp = client.post(url, content=body, headers=headers, extensions=extensions)
            status = resp.status_code
            if not 200 <= status < 300:
                error = f"HTTP {status}"
        except TargetRefused as exc:
            refused = True
            error = f"refused: {exc}"[:1000]
        except OSError as exc:  # the name does not resolve (now): retried like a connection error
            error = f"{type(exc).__name__}: {exc}"[:1000]
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:1000]
        if error is not None and hook.url in error:
            error = error.replace(hook.url, redact_url(hook.url))
        ms = (time.perf_counter() - t0) * 1000.0
        attempts = delivery.attempts + 1
        now = utcnow()
        ok = error is None
        values: dict[str, object] = {
            "attempts": attempts,
            "last_status_code": status,
            "last_error": error,
            "locked_until": None,
        }
        if ok:
            values.update(status="delivered", delivered_at=now)
        elif refused or attempts >= self.policy.max_attempts:
            values.update(status="failed")
        else:
            values.update(next_attempt_at=now + dt.timedelta(seconds=self.policy.delay(attempts)))

        def fn(s: object) -> None:
            s.add(DeliveryAttempt(delivery_id=delivery_id, at=now, status_code=status, error=error, duration_ms=ms))  # type: ignore[attr-defined]
            s.execute(update(Delivery).where(Delivery.id == delivery_id).values(**values))  # type: ignore[attr-defined]

        self.db.write(fn)
        if not ok:
            log.warning("webhook delivery %s to %s failed (attempt %s): %s", delivery_id, redact_url(hook.url), attempts, error)

    def _pinned(self, url: str, headers: dict[str, str]) -> tuple[Any, dict[str, Any]]:
        """The URL to connect to (the host replaced by its checked address) and the request extensions;
        sets the ``Host`` header to the URL's own host. :class:`TargetRefused` if the target is refused."""
        import httpx

        target = self.targets.resolve(url)
        original = httpx.URL(url)
        extensions: dict[str, Any] = {}
        if target.is_ip:
            return original, extensions
        assert target.address is not None
        headers["Host"] = original.netloc.decode("ascii")
        if original.scheme == "https":
            extensions["sni_hostname"] = original.host  # TLS: the name in the certificate, not the address
        return original.copy_with(host=target.address), extensions
