"""Browser logins: a signed session cookie (never the token itself) and a throttle on failed attempts.

The cookie is ``v1.<issued>.<nonce>.<mac>``: the issue time (Unix seconds), 16 random bytes and an
HMAC-SHA256 of both under the server's session key (``RANKLENS_SESSION_SECRET``, else random per process,
so a restart logs everybody out). It proves the browser presented the token once; it carries nothing that
gives the token away, and it expires after ``max_age`` seconds. The MAC key is derived from the session key
*and the token in force* (``bind``), so a session ends when the token is rotated, even with the session key
kept. ``/logout`` revokes a session (:meth:`SessionSigner.revoke`: its nonce is refused until it would have
expired anyway).

The throttle counts failed logins per client address in a sliding window: after ``max_failures`` failures
the address gets 429 with ``Retry-After`` until the oldest failure leaves the window, and its attempts,
right or wrong, are not checked meanwhile.

    >>> t = LoginThrottle(max_failures=2, window=60, clock=lambda: 0.0)
    >>> t.failed("10.0.0.7"); t.failed("10.0.0.7"); t.retry_after("10.0.0.7")
    60
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["LoginThrottle", "SessionSigner"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class SessionSigner:
    """Issue, check and revoke signed session values; ``bind`` (the token in force) is part of the MAC key.

    >>> a = SessionSigner(b"k" * 32, bind="token-1"); cookie = a.issue()
    >>> a.valid(cookie), SessionSigner(b"k" * 32, bind="token-2").valid(cookie)
    (True, False)
    >>> a.revoke(cookie); a.valid(cookie)
    False
    """

    def __init__(
        self, key: bytes | None = None, *, bind: str = "", max_age: float = 12 * 3600, clock: Callable[[], float] = time.time,
        max_revoked: int = 100_000,
    ) -> None:
        root = key or secrets.token_bytes(32)
        self.key = hmac.new(root, b"ranklens-session\0" + hashlib.sha256(bind.encode()).digest(), hashlib.sha256).digest()
        self.max_age = max_age
        self.clock = clock
        self.max_revoked = max_revoked
        self._revoked: OrderedDict[str, float] = OrderedDict()  # nonce -> issue time
        self._lock = threading.Lock()

    def _mac(self, payload: str) -> str:
        return _b64(hmac.new(self.key, payload.encode(), hashlib.sha256).digest())

    def issue(self) -> str:
        payload = f"v1.{int(self.clock())}.{_b64(secrets.token_bytes(16))}"
        return f"{payload}.{self._mac(payload)}"

    def _parts(self, value: str | None) -> tuple[int, str] | None:
        """(issue time, nonce) of a correctly signed, unexpired value; else ``None``."""
        if not value or len(value) > 200:
            return None
        payload, _, mac = value.rpartition(".")
        parts = payload.split(".")
        if len(parts) != 3 or parts[0] != "v1" or not parts[1].isdigit():
            return None
        if not hmac.compare_digest(mac.encode(), self._mac(payload).encode()):
            return None
        age = self.clock() - int(parts[1])
        return (int(parts[1]), parts[2]) if -60 <= age <= self.max_age else None

    def valid(self, value: str | None) -> bool:
        found = self._parts(value)
        if found is None:
            return False
        with self._lock:
            return found[1] not in self._revoked

    def revoke(self, value: str | None) -> None:
        """End the session ``value`` (a no-op for an invalid one). Revoked nonces are kept until they would
        have expired; beyond ``max_revoked`` of them, the oldest are dropped."""
        found = self._parts(value)
        if found is None:
            return
        with self._lock:
            now = self.clock()
            for nonce, issued in list(self._revoked.items()):
                if now - issued <= self.max_age:
                    break
                del self._revoked[nonce]
            self._revoked[found[1]] = found[0]
            while len(self._revoked) > self.max_revoked:
                self._revoked.popitem(last=False)


class LoginThrottle:
    """Failed logins per client address in a sliding ``window`` (seconds); at most ``max_clients`` are
    remembered (the least recently failing are forgotten first)."""

    def __init__(
        self, *, max_failures: int = 5, window: float = 300.0, max_clients: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.max_clients = max_clients
        self.clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float] | None:
        q = self._failures.get(client)
        if q is None:
            return None
        while q and q[0] <= now - self.window:
            q.popleft()
        if not q:
            del self._failures[client]
            return None
        return q

    def retry_after(self, client: str) -> int | None:
        """Seconds until ``client`` may try again, or ``None`` if it may now."""
        with self._lock:
            now = self.clock()
            q = self._recent(client, now)
            if q is None or len(q) < self.max_failures:
                return None
            return max(1, math.ceil(q[-self.max_failures] + self.window - now))

    def failed(self, client: str) -> None:
        with self._lock:
            now = self.clock()
            q = self._recent(client, now) or deque(maxlen=self.max_failures)
            q.append(now)
            self._failures[client] = q
            self._failures.move_to_end(client)
            while len(self._failures) > self.max_clients:
                self._failures.popitem(last=False)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)
