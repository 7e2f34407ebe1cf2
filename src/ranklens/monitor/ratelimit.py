"""A per-client limit on reads, so a client without the token cannot keep the server busy.

Every read — each dashboard page and its ``/api/v1`` twin (:data:`LIMITED`: everything but the health
probe, the OpenAPI document, static files and the login form) — takes a token from the client's bucket
(``burst`` tokens, refilled at ``burst / period`` per second). An empty bucket is answered 429
``too_many_requests`` with ``Retry-After`` (whole seconds) in the API's error shape, before the route runs.
A request with the write token is not limited. The client is the connection's peer, or the address a
trusted proxy forwards (:mod:`ranklens.monitor.clients`).

``RANKLENS_READ_RATE`` sets the limit as ``BURST/SECONDS`` (default ``600/60``), ``off`` turns it off::

    >>> parse_rate("3/60"), parse_rate("off")
    ((3, 60.0), None)
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from ranklens.errors import InputError
from ranklens.monitor.security import bearer_token, send_error, token_matches

__all__ = ["DEFAULT_RATE", "LIMITED", "ReadLimit", "TokenBuckets", "parse_rate"]

DEFAULT_RATE = "600/60"
#: The limited read paths: every page and JSON twin (not the health probe, the OpenAPI document, static
#: files or the login form).
LIMITED = re.compile(r"^(?!/api/v1/health$|/api/v1/openapi\.json$|/static/|/login$|/logout$)/")


def parse_rate(spec: str | None) -> tuple[int, float] | None:
    """``BURST/SECONDS`` as ``(burst, seconds)``; ``None`` for ``off`` (or ``0``)."""
    text = (spec if spec is not None else DEFAULT_RATE).strip().lower()
    if text in {"off", "none", "0", ""}:
        return None
    m = re.fullmatch(r"(\d+)\s*/\s*(\d+(?:\.\d+)?)", text)
    if m is None or int(m[1]) < 1 or float(m[2]) <= 0:
        raise InputError(f"a read rate is BURST/SECONDS such as 600/60, or off; got {spec!r}")
    return int(m[1]), float(m[2])


class TokenBuckets:
    """One token bucket per client key; at most ``max_clients`` buckets are kept (the least recently used
    go first, which only ever gives a forgotten client a full bucket)."""

    def __init__(self, burst: int, period: float, *, max_clients: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.rate = burst / period  # tokens per second
        self.max_clients = max_clients
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key → (tokens, last time)
        self._lock = threading.Lock()

    def take(self, key: str) -> float | None:
        """Take one token: ``None`` if there was one, else the seconds until there is."""
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.pop(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            wait = None
            if tokens >= 1:
                tokens -= 1
            else:
                wait = (1 - tokens) / self.rate
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
            return wait


class ReadLimit:
    """ASGI middleware: the per-client limit of the expensive GETs (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, token: str, burst: int, period: float) -> None:
        self.app = app
        self.token = token
        self.buckets = TokenBuckets(burst, period)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") or not LIMITED.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        auth = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), b"")
        if token_matches(bearer_token(auth.decode("latin-1")), self.token):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        wait = self.buckets.take(client[0] if client else "?")
        if wait is None:
            await self.app(scope, receive, send)
            return
        seconds = max(1, math.ceil(wait))
        await send_error(
            send, 429, "too_many_requests",
            f"too many reads from this client; try again in {seconds} s (or send the token)",
            [(b"retry-after", str(seconds).encode())],
        )
