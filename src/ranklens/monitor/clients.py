"""Who is asking: the client address (behind the operator's trusted proxies only) and the throttle on
failed bearer tokens.

:class:`TrustedProxies` is the outermost ASGI middleware. A connection's peer address is the client unless
the peer is one of the configured proxies (``--trusted-proxy``, addresses or networks); only then are
``X-Forwarded-For`` (read from the right, skipping further trusted hops) and ``X-Forwarded-Proto`` believed.
Without configured proxies the headers are ignored, so a client cannot pick its own address to escape the
login throttle or the read rate limit (``ranklens serve`` also turns uvicorn's own forwarded-header
handling off).

:class:`BearerThrottle` counts wrong ``Authorization: Bearer`` tokens per client in the throttle that
``/login`` uses (:class:`ranklens.monitor.sessions.LoginThrottle`): after ``max_failures`` failed
credentials (login form or bearer) in the window, every request of that client that carries a bearer
token — right or wrong — is answered 429 with ``Retry-After`` without the token being compared.

    >>> [str(n) for n in parse_proxies(["10.0.0.5", "192.168.0.0/16", "::1"])]
    ['10.0.0.5/32', '192.168.0.0/16', '::1/128']
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from ranklens.errors import InputError
from ranklens.monitor.security import bearer_token, send_error, token_matches
from ranklens.monitor.sessions import LoginThrottle

__all__ = ["BearerThrottle", "TrustedProxies", "client_of", "parse_proxies"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: Paths that never look at a token (a bearer there is neither a guess nor throttled).
UNCHECKED = frozenset({"/api/v1/health", "/api/v1/openapi.json"})


def parse_proxies(specs: Iterable[str]) -> list[Network]:
    """The proxy networks of ``--trusted-proxy`` values (an address or a network such as ``10.0.0.0/8``);
    :class:`InputError` for anything else."""
    out: list[Network] = []
    for spec in specs:
        try:
            out.append(ipaddress.ip_network(spec.strip(), strict=False))
        except ValueError:
            raise InputError(f"--trusted-proxy takes an IP address or network such as 10.0.0.1 or 10.0.0.0/8; got {spec!r}") from None
    return out


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def _trusted(host: str, proxies: list[Network]) -> bool:
    addr = _address(host)
    return addr is not None and any(addr in net for net in proxies)


def client_of(scope: Scope) -> str:
    """The client address of a request (``?`` when unknown)."""
    client = scope.get("client")
    return str(client[0]) if client else "?"


class TrustedProxies:
    """ASGI middleware: the client address and scheme from ``X-Forwarded-For``/``-Proto``, believed only
    when the connection comes from a trusted proxy (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, proxies: list[Network]) -> None:
        self.app = app
        self.proxies = proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.proxies and _trusted(client_of(scope), self.proxies):
            headers = [(k.lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]
            forwarded = ",".join(v for k, v in headers if k == b"x-forwarded-for")
            hops = [h.strip() for h in forwarded.split(",") if h.strip()]
            client = None
            for hop in reversed(hops):  # the nearest hop first; the first untrusted one is the client
                if _address(hop) is None:
                    break
                client = hop.strip("[]")
                if not _trusted(hop, self.proxies):
                    break
            if client is not None:
                scope = {**scope, "client": (client, 0)}
            proto = ",".join(v for k, v in headers if k == b"x-forwarded-proto").split(",")[-1].strip().lower()
            if proto in ("http", "https"):
                scope = {**scope, "scheme": proto}
        await self.app(scope, receive, send)


class BearerThrottle:
    """ASGI middleware: failed bearer tokens per client share the ``/login`` throttle (see the module
    docstring)."""

    def __init__(self, app: ASGIApp, *, token: str, throttle: LoginThrottle) -> None:
        self.app = app
        self.token = token
        self.throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] in UNCHECKED or scope["path"].startswith("/static/"):  # no token is checked there
            await self.app(scope, receive, send)
            return
        auth = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), None)
        given = bearer_token(auth.decode("latin-1")) if auth is not None else None
        if given is not None:
            client = client_of(scope)
            wait = self.throttle.retry_after(client)
            if wait is not None:  # locked out: the token is not even compared
                await send_error(
                    send, 429, "too_many_requests", f"too many failed credentials from {client}; try again in {wait} s",
                    [(b"retry-after", str(wait).encode())],
                )
                return
            if not token_matches(given, self.token):
                self.throttle.failed(client)
        await self.app(scope, receive, send)
