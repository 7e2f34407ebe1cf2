"""One HTTP POST with a total deadline and a bounded body: :func:`post_json`.

httpx's ``timeout`` bounds each read, not the request: a server that sends its headers and then one byte every
two seconds never trips it. Here the exchange runs on its own daemon thread and the caller waits at most
``timeout`` seconds for it in total (connecting, sending, the headers and the whole body); when the deadline
passes the caller goes on with :class:`DeadlineExceeded` and the abandoned exchange stops at its next chunk (or at
httpx's own read timeout, which is the same ``timeout``). The body is read in chunks and never beyond
``max_body`` bytes: a larger answer comes back with ``too_large`` set and the rest unread.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


class DeadlineExceeded(Exception):
    """The exchange did not end within its total deadline."""


@dataclass(frozen=True)
class Reply:
    """What came back: the status, the headers (lower-case names), the body (at most ``max_body`` bytes).

    >>> Reply(200, {}, b"{}").text
    '{}'
    """

    status: int
    headers: dict[str, str]
    body: bytes
    too_large: bool = False

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


class _Cancelled(Exception):
    pass


def _exchange(client: Any, url: str, payload: dict[str, Any], max_body: int, cancel: threading.Event) -> Reply:
    with client.stream("POST", url, json=payload) as response:
        headers = {k.lower(): v for k, v in response.headers.items()}
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            if cancel.is_set():
                raise _Cancelled
            size += len(chunk)
            if size > max_body:
                return Reply(response.status_code, headers, b"".join(chunks), too_large=True)
            chunks.append(chunk)
        return Reply(response.status_code, headers, b"".join(chunks))


def post_json(client: Any, url: str, payload: dict[str, Any], *, timeout: float, max_body: int) -> Reply:
    """POST ``payload`` as JSON with ``client`` (an ``httpx.Client``): the :class:`Reply`, or
    :class:`DeadlineExceeded` after ``timeout`` seconds in total; httpx's transport errors pass through.

    >>> import httpx
    >>> with httpx.Client() as c:
    ...     post_json(c, "http://127.0.0.1:9/v1", {}, timeout=5, max_body=1024)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    httpx.ConnectError: connection refused
    """
    box: dict[str, Any] = {}
    cancel, done = threading.Event(), threading.Event()

    def run() -> None:
        try:
            box["reply"] = _exchange(client, url, payload, max_body, cancel)
        except _Cancelled:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="ranklens-judge-request", daemon=True).start()
    if not done.wait(timeout):
        cancel.set()
        raise DeadlineExceeded(f"no complete answer within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["reply"]  # type: ignore[no-any-return]
