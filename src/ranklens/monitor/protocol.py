"""The HTTP protocol ``ranklens serve`` runs: uvicorn's, with a limit on request-header size and a deadline
for reading the headers.

uvicorn's httptools protocol accepts headers of any size (a 200 MiB header was parsed, slowly, and served),
and neither of its protocols bounds how long a client may take to send its headers (slowloris). The
subclasses here count the bytes a request has sent before its headers are complete and answer
``431 request_header_fields_too_large`` over ``max_header`` bytes (within one network read, at most 256 KiB,
of it); and they close a connection whose request headers are not complete ``header_timeout`` seconds
after its first byte (or after the connection opened), answering ``408 request_timeout``. Idle keep-alive
connections are closed by uvicorn's own ``timeout_keep_alive``. With h11, its own limit on an incomplete
event (``h11_max_incomplete_event_size``) is set to ``max_header`` too.

    >>> cls = guarded_protocol(max_header=65536, header_timeout=10.0)
    >>> cls.max_header, cls.header_timeout
    (65536, 10.0)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

__all__ = ["DEFAULT_HEADER_TIMEOUT", "DEFAULT_MAX_HEADER", "guarded_protocol"]

DEFAULT_MAX_HEADER = 64 * 1024
DEFAULT_HEADER_TIMEOUT = 10.0


def _error(status: int, reason: str, code: str, message: str) -> bytes:
    body = json.dumps({"error": {"status": status, "code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class _Guard:
    """The shared part: header byte count and deadline (mixed into a uvicorn protocol class)."""

    max_header: int = DEFAULT_MAX_HEADER
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop

    def connection_made(self, transport: asyncio.Transport) -> None:
        self._guard_init()
        super().connection_made(transport)  # type: ignore[misc]  # the uvicorn protocol this is mixed into
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def _guard_init(self) -> None:
        self._in_headers = True  # waiting for (the rest of) a request's headers
        self._completed = False  # the headers completed during the current read
        self._discarding = False  # refused (431): the rest of the request is read and dropped, then closed
        self._header_bytes = 0
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._header_timed_out)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timed_out(self) -> None:
        self._header_timer = None
        if self._discarding:
            self.transport.close()
        elif self._in_headers and not self.transport.is_closing():
            self.transport.write(_error(408, "Request Timeout", "request_timeout", "the request headers took too long"))
            self.transport.close()

    def _headers_done(self) -> None:
        self._in_headers = False
        self._header_bytes = 0
        self._disarm()

    def _next_request(self) -> None:
        self._in_headers = True
        self._header_bytes = 0

    def _count(self, n: int) -> bool:
        """Count ``n`` bytes read while the headers are incomplete; False (and the connection answered 431
        and closed) when they go over the limit."""
        if not self._in_headers:
            return True
        self._header_bytes += n
        if self._header_bytes <= self.max_header:
            return True
        if not self.transport.is_closing():
            self.transport.write(
                _error(431, "Request Header Fields Too Large", "request_header_fields_too_large",
                       f"the request headers are over {self.max_header} bytes")
            )
            # not closed at once: closing with unread bytes resets the connection and loses the answer for a
            # client still sending; what it sends is dropped unparsed until the deadline, then it is closed
            self._discarding = True
            self._arm()
        return False


def guarded_protocol(*, max_header: int = DEFAULT_MAX_HEADER, header_timeout: float = DEFAULT_HEADER_TIMEOUT) -> type[Any]:
    """uvicorn's HTTP protocol class (httptools when installed, else h11) with the header limit and the
    header deadline; pass it as ``uvicorn.Config(http=...)``."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return _h11(max_header, header_timeout)
    return _httptools(max_header, header_timeout)


def _httptools(max_header: int, header_timeout: float) -> type[Any]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedHttpTools(_Guard, HttpToolsProtocol):  # type: ignore[misc]
        def data_received(self, data: bytes) -> None:
            if self._discarding:
                return
            waiting = self._in_headers
            if waiting:
                self._arm()
            self._completed = False
            super().data_received(data)
            if waiting and not self._completed and not self.transport.is_closing():
                self._count(len(data))  # every byte of this read belongs to the unfinished headers

        def on_headers_complete(self) -> None:
            self._completed = True
            self._headers_done()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._next_request()

    GuardedHttpTools.max_header = max_header
    GuardedHttpTools.header_timeout = header_timeout
    return GuardedHttpTools


def _h11(max_header: int, header_timeout: float) -> type[Any]:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11(_Guard, H11Protocol):  # type: ignore[misc]
        def data_received(self, data: bytes) -> None:
            super().data_received(data)  # h11 itself refuses headers over h11_max_incomplete_event_size
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():  # headers still incomplete
                self._next_request()
                self._arm()
            else:
                self._headers_done()

    GuardedH11.max_header = max_header
    GuardedH11.header_timeout = header_timeout
    return GuardedH11
