"""An endpoint URL split into what is sent and what may be shown or stored.

A URL may carry credentials: ``http://user:KEY@host/v1`` (userinfo) or ``…/v1?key=KEY`` (a query string). The
request goes to the URL as given (the path extended by ``/chat/completions`` before the query), but only the
**public** form — no userinfo, every query value replaced by ``***`` — is used in the cache key, the summary and
error messages, and :meth:`Endpoint.redact` blanks every secret (and the API key) out of any text shown or
stored (an error body that echoes the ``Authorization`` header, a model answer that repeats it).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

SUFFIX = "/chat/completions"
MASK = "***"


@dataclass(frozen=True)
class Endpoint:
    """The request URL, its public form and the secrets to blank out.

    >>> e = Endpoint.parse("https://me:sk-123456@api.example.com/v1?key=abcdef", api_key="tok-987654")
    >>> e.url
    'https://me:sk-123456@api.example.com/v1/chat/completions?key=abcdef'
    >>> e.public
    'https://api.example.com/v1/chat/completions?key=***'
    >>> e.redact("HTTP 401: you sent sk-123456 and Bearer tok-987654")
    'HTTP 401: you sent *** and Bearer ***'
    >>> e.redact("you sent Basic bWU6c2stMTIzNDU2")
    'you sent Basic ***'
    """

    url: str
    public: str
    secrets: tuple[str, ...] = ()

    @classmethod
    def parse(cls, endpoint: str, api_key: str | None = None) -> Endpoint:
        """Split ``endpoint`` (a base URL such as ``…/v1`` or the full chat-completions URL)."""
        parts = urlsplit(endpoint.strip())
        path = parts.path.rstrip("/")
        if not path.endswith(SUFFIX):
            path += SUFFIX
        host = parts.hostname or ""
        if ":" in host:  # an IPv6 literal
            host = f"[{host}]"
        netloc = host + (f":{parts.port}" if _port(parts) is not None else "")
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        public_query = "&".join(f"{quote(k, safe='')}={MASK}" for k, _ in pairs)
        secrets = [parts.username, parts.password, *(v for _, v in pairs), api_key]
        if parts.username or parts.password:  # as sent in "Authorization: Basic …" (a server may echo it)
            basic = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            secrets.append(base64.b64encode(basic.encode()).decode())
        return cls(
            url=urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")),
            public=urlunsplit((parts.scheme, netloc, path, public_query, "")),
            secrets=_variants(s for s in secrets if s),
        )

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text


def _port(parts: object) -> int | None:
    try:
        return parts.port  # type: ignore[attr-defined, no-any-return]
    except ValueError:  # a port out of range: the request will fail and say so
        return None


def _variants(secrets: Iterable[str]) -> tuple[str, ...]:
    """Each secret as given, percent-decoded and percent-encoded, longest first (so a secret containing another
    is blanked whole); secrets shorter than 4 characters are too common to blank out of every message."""
    out: set[str] = set()
    for s in secrets:
        out.update(v for v in (s, unquote(s), quote(s, safe="")) if len(v) >= 4)
    return tuple(sorted(out, key=len, reverse=True))
