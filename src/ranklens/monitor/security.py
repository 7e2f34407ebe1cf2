"""The request gate: the write token and the body-size limit are enforced before a request body is read.

FastAPI reads and decodes a JSON body before it runs a route's dependencies, so a token check in a
dependency comes too late: an unauthenticated client could make the server parse (and hold, at ~30× its
size) any body under the size limit. :class:`RequestGate` is an ASGI middleware in front of the app:

* a request with a body-carrying method (anything but ``GET``, ``HEAD``, ``OPTIONS``) needs
  ``Authorization: Bearer <token>``, checked from the headers alone: without it the answer is 401 and not one
  byte of the body is read (``POST /login`` and ``POST /logout``, the two forms, are the exception: the login
  form carries the token, and logging out needs none);
* a ``Content-Length`` over the limit is answered 413 without reading; a body without one (chunked) is read
  up to the limit and answered 413 as soon as it goes over, then handed to the app from memory.

Both answers use the API's one error shape and close the connection.
"""

from __future__ import annotations

import hmac
import json
import math
import urllib.parse

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOGIN_BODY_LIMIT", "MIN_TOKEN_BITS", "NulGate", "RequestGate", "bearer_token", "token_matches", "token_weakness"]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOGIN_BODY_LIMIT = 16 * 1024  # the login form holds one token
#: The least estimated strength of a token the server accepts without ``--allow-weak-token``.
MIN_TOKEN_BITS = 64
MIN_TOKEN_LENGTH = 16


def token_weakness(token: str) -> str | None:
    """Why ``token`` is too weak to guard a server on a network (``None`` if it is not): shorter than 16
    characters, fewer than 8 distinct characters, or under 64 bits by a generous estimate (length × log2
    of the size of the character classes it uses). The generated tokens (``secrets.token_urlsafe(24)``) have
    192 random bits.

    >>> token_weakness("s3cret")
    'it has 6 characters (at least 16 are needed)'
    >>> token_weakness("aaaaaaaaaaaaaaaaaaaaaaaa")
    'it has only 1 distinct characters (at least 8 are needed)'
    >>> token_weakness("q8Zr-1vM_k2Wp7sXe4TbYc") is None
    True
    """
    if len(token) < MIN_TOKEN_LENGTH:
        return f"it has {len(token)} characters (at least {MIN_TOKEN_LENGTH} are needed)"
    distinct = len(set(token))
    if distinct < 8:
        return f"it has only {distinct} distinct characters (at least 8 are needed)"
    pool = sum(
        size for size, present in (
            (26, any(c.islower() for c in token)), (26, any(c.isupper() for c in token)),
            (10, any(c.isdigit() for c in token)), (33, any(not c.isalnum() for c in token)),
        ) if present
    )
    bits = min(len(token), 2 * distinct) * math.log2(max(pool, 2))
    if bits < MIN_TOKEN_BITS:
        return f"it has about {bits:.0f} bits by a generous estimate (at least {MIN_TOKEN_BITS} are needed)"
    return None


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, else ``None``."""
    scheme, _, value = (authorization or "").partition(" ")
    value = value.strip()
    return value if scheme.lower() == "bearer" and value else None


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison of a presented token with the server's."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


async def send_error(send: Send, status: int, code: str, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps({"error": {"status": status, "code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"connection", b"close"),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


class RequestGate:
    """Token before body, and the body limit while streaming (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, token: str, limit: int, form_paths: tuple[str, ...] = ("/login", "/logout")) -> None:
        self.app = app
        self.token = token
        self.limit = limit
        self.form_paths = form_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        for k, v in scope.get("headers", []):
            headers.setdefault(k.lower(), v)
        is_login = scope["method"] == "POST" and scope["path"] in self.form_paths
        limit = LOGIN_BODY_LIMIT if is_login else self.limit
        if not is_login:
            given = bearer_token(headers.get(b"authorization", b"").decode("latin-1"))
            if not token_matches(given, self.token):
                await send_error(
                    send, 401, "unauthorized", "writes need the server's token: Authorization: Bearer <RANKLENS_TOKEN>",
                    [(b"www-authenticate", b"Bearer")],
                )
                return
        too_big = f"request body over {limit} bytes"
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                declared = -1
            if declared < 0:
                await send_error(send, 400, "bad_request", "Content-Length is not a number")
                return
            if declared > limit:
                await send_error(send, 413, "payload_too_large", too_big)
                return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body = message.get("body", b"")
            seen += len(body)
            if seen > limit:
                await send_error(send, 413, "payload_too_large", too_big)
                return
            if body:
                chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                chunks.clear()
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class NulGate:
    """A NUL character in the URL's path or query values is a 400: it cannot name anything stored (names
    refuse control characters) and PostgreSQL refuses it in a query parameter."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            query = scope.get("query_string", b"")
            values = urllib.parse.parse_qsl(query.decode("latin-1"), keep_blank_values=True) if b"%00" in query else []
            if "\x00" in scope["path"] or any("\x00" in k or "\x00" in v for k, v in values):
                await send_error(send, 400, "bad_request", "the URL must not contain NUL characters")
                return
        await self.app(scope, receive, send)
