"""A judge behind any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp server, hosted APIs).

Temperature 0; the answer is asked for with a JSON schema (``response_format``) and, when the server answers 400
to that, with the same prompt alone (plain JSON). Every answer is checked (:func:`ranklens.judges.prompt.parse`);
malformed output, 429, 5xx, timeouts and dropped connections are retried with exponential backoff, honouring
``Retry-After`` up to ``max_wait`` (a longer wait asked for is capped, counted and said). ``timeout`` is a total
deadline per request and the body read stops at ``max_body`` bytes (:mod:`ranklens.judges.exchange`). A document
without a valid verdict after the retries is returned **unjudged** (grade ``None``). Credentials in the endpoint
URL and the API key never reach the cache key, the summary or an error message (:mod:`ranklens.judges.endpoint`).
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ranklens.errors import InputError, MissingDependencyError
from ranklens.judges import prompt
from ranklens.judges.accounting import Usage
from ranklens.judges.endpoint import Endpoint
from ranklens.judges.exchange import DeadlineExceeded, Reply, post_json
from ranklens.judges.limits import RateLimiter
from ranklens.judges.scale import Scale
from ranklens.judges.types import Judgment

T = TypeVar("T")


class EndpointError(InputError):
    """The endpoint refuses every request (bad URL, key or model): retrying cannot help, so the run stops."""


def chat_url(endpoint: str) -> str:
    """The chat-completions URL of a base URL (``…/v1``) or of the full URL; a query string stays last.

    >>> chat_url("http://127.0.0.1:8000/v1/")
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> chat_url("http://host/v1/chat/completions")
    'http://host/v1/chat/completions'
    >>> chat_url("http://host/v1?api-version=2")
    'http://host/v1/chat/completions?api-version=2'
    """
    return Endpoint.parse(endpoint).url


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date); ``None`` when absent or unreadable.

    >>> retry_after("2"), retry_after(None), retry_after("soon")
    (2.0, None, None)
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


#: the most bytes read of one response (a verdict is a few hundred bytes; a batch of 100 a few dozen KB)
DEFAULT_MAX_BODY = 1 << 20


def _size(n: int) -> str:
    """``1 MiB``, ``512 KiB``, ``100 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def _excerpt(response: Reply) -> str:
    return response.body[:200].decode("utf-8", errors="replace")


def _checked(check: Callable[[str], T], content: str) -> T:
    """``check(content)``; a ``ValueError`` or ``RecursionError`` from parsing it (an integer of more than 4,300
    digits, JSON nested too deep) is a malformed answer like any other, never the end of the run."""
    try:
        return check(content)
    except prompt.MalformedVerdict:
        raise
    except (ValueError, RecursionError) as exc:
        raise prompt.MalformedVerdict(f"unreadable answer ({type(exc).__name__}: {str(exc)[:100]})") from None


class _Reject(Exception):
    """The server refused this one request (400, 413, 422 without ``response_format``): retrying cannot help."""


class _Retry(Exception):
    def __init__(self, kind: str, detail: str, wait: float | None = None) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.wait = kind, detail, wait


class OpenAIJudge:
    """Grade documents with a chat model behind an OpenAI-compatible endpoint.

    Args:
        endpoint: the base URL (``http://127.0.0.1:8000/v1``) or the full chat-completions URL.
        model: the model name the server knows.
        scale: grades, rubric and prompt version (default 0–3).
        api_key_env: the environment variable holding the API key; unset or empty sends no key (local servers).
        timeout: seconds per request, in total (connecting, sending, waiting and reading the whole answer).
        retries: further attempts after the first, for malformed output, 429, 5xx, timeouts and connection errors.
        backoff: the first wait in seconds, doubled on each retry (with jitter), at most ``max_wait``.
        max_wait: the longest wait between attempts, also when ``Retry-After`` asks for more (counted as
            ``retry_after_capped`` and said in the run's notes).
        max_body: the most bytes of one response read; a longer answer is malformed (``too_large``).
        limiter: a shared :class:`RateLimiter` (requests and tokens per minute).
        usage: the counters to add to (shared by the threads of one run).

    >>> j = OpenAIJudge("http://127.0.0.1:9/v1", "my-model")
    >>> j.identity
    ('http://127.0.0.1:9/v1/chat/completions', 'my-model', 'ranklens-graded-0-3/v1')
    """

    def __init__(self, endpoint: str, model: str, *, scale: Scale | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 60.0, retries: int = 4, backoff: float = 1.0, max_wait: float = 60.0,
                 max_body: int = DEFAULT_MAX_BODY, max_tokens: int = 256, limiter: RateLimiter | None = None,
                 usage: Usage | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.api_key = os.environ.get(api_key_env) or None
        self.endpoint = Endpoint.parse(endpoint, self.api_key)
        self.url = self.endpoint.public  # what is shown and stored; the request goes to self.endpoint.url
        self.model = model
        self.scale = scale or Scale()
        self.identity = (self.url, model, self.scale.version)
        self.timeout, self.retries, self.backoff, self.max_wait = timeout, retries, backoff, max_wait
        self.max_body = max_body
        self._asked_wait = 0.0  # the longest Retry-After that was capped
        self.max_tokens = max_tokens
        self.limiter = limiter or RateLimiter()
        self.usage = usage or Usage()
        self._sleep = sleep
        self._structured = True  # becomes False once the server refuses response_format
        self._lock = threading.Lock()
        self._http: Any = None

    def _client(self) -> Any:
        """The judge's one ``httpx.Client`` (thread-safe, shared by the threads of a run), made on first use."""
        with self._lock:
            if self._http is None:
                try:
                    import httpx
                except ImportError:  # pragma: no cover - httpx is in the judges extra
                    raise MissingDependencyError("httpx", "judges", "the OpenAI-compatible judge") from None
                headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
                self._http = httpx.Client(timeout=self.timeout, headers=headers)
            return self._http

    def close(self) -> None:
        """Close the HTTP connections (the judge opens new ones if used again)."""
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    def __enter__(self) -> OpenAIJudge:  # noqa: PYI034 - the module targets Python 3.10 (no typing.Self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_notes(self) -> list[str]:
        """What a run's summary should say about this judge (a capped ``Retry-After``).

        >>> OpenAIJudge("http://127.0.0.1:9/v1", "m").run_notes()
        []
        """
        n = self.usage.as_dict().get("retry_after_capped", 0)
        if not n:
            return []
        times = f"{n} time{'s' if n > 1 else ''}"
        return [f"the server asked to wait up to {self._asked_wait:.0f} s (Retry-After) {times}; "
                + f"waited at most {self.max_wait:g} s each time"]

    def judge(self, query: str, documents: Sequence[str]) -> list[Judgment]:
        """One judgment per document; all of one request share its fate (a malformed batch is retried whole).

        The documents are sent in one request: pass one document for the default contract.
        """
        documents = list(documents)
        if not documents:
            return []
        n = len(documents)
        verdicts, raw, why = self.ask(prompt.messages(self.scale, query, documents),
                                      lambda content: prompt.parse(content, self.scale, n), n=n)
        if verdicts is None:
            return [Judgment(None, f"unjudged: {why}", raw) for _ in documents]
        return [Judgment(g, r, raw) for g, r in verdicts]

    def ask(self, msgs: list[dict[str, str]], check: Callable[[str], T], *,
            response_format: dict[str, Any] | None = None, n: int = 1) -> tuple[T | None, str, str]:
        """Send ``msgs`` and return ``(check(content), content, "")``; ``check`` raises :class:`MalformedVerdict`
        on an answer that breaks the contract, which is retried like 429, 5xx and timeouts. After the retries, or
        when the server rejects the request, ``(None, last error, why)``: the caller records a failure, never a guess.

        ``response_format`` defaults to the verdict schema of ``n`` documents on this judge's scale; ``n`` scales
        ``max_tokens``. Other contracts (``ranklens.judges.synth``) pass their own schema and check.
        """
        estimate = sum(len(m["content"]) for m in msgs) // 4 + self.max_tokens
        fmt = response_format if response_format is not None else prompt.response_format(self.scale, n)
        last = "no attempt"
        for attempt in range(self.retries + 1):
            if attempt:
                self.usage.add("retries")
            try:
                content = self.endpoint.redact(self._ask(msgs, n, estimate, fmt))
                return _checked(check, content), content, ""
            except prompt.MalformedVerdict as exc:
                self.usage.add("malformed")
                last, wait = f"malformed answer: {self.endpoint.redact(str(exc))}", None
            except _Retry as exc:
                self.usage.add(exc.kind)
                last, wait = exc.detail, exc.wait
            except _Reject as exc:
                self.usage.add("rejected")
                why = self.endpoint.redact(str(exc))
                return None, why, f"the server rejected the request ({why})"
            if attempt < self.retries:
                self._sleep(self._wait(attempt, wait))
        return None, last, f"no valid verdict after {self.retries + 1} attempts ({last})"

    def _wait(self, attempt: int, server_wait: float | None) -> float:
        """The own backoff (with jitter), or longer when the server asks; never more than ``max_wait``."""
        own = min(min(self.backoff * (2 ** attempt), self.max_wait) * (1 + random.random() * 0.1), self.max_wait)
        if server_wait is not None and server_wait > self.max_wait:
            self.usage.add("retry_after_capped")
            with self._lock:
                self._asked_wait = max(self._asked_wait, server_wait)
            return self.max_wait
        return max(own, server_wait or 0.0)

    def _ask(self, msgs: list[dict[str, str]], n: int, estimate: int, fmt: dict[str, Any] | None = None) -> str:
        """One HTTP exchange (two when the server refuses ``response_format``); the message content."""
        import httpx

        body: dict[str, Any] = {"model": self.model, "messages": msgs, "temperature": 0, "max_tokens": self.max_tokens * n}
        structured = self._structured
        if structured:
            body["response_format"] = fmt if fmt is not None else prompt.response_format(self.scale, n)
        handle = self.limiter.acquire(estimate)
        self.usage.add("requests")
        try:
            response = post_json(self._client(), self.endpoint.url, body, timeout=self.timeout, max_body=self.max_body)
        except (DeadlineExceeded, httpx.TimeoutException):
            raise _Retry("timeouts", f"timed out after {self.timeout:g} s (the whole request)") from None
        except httpx.TransportError as exc:
            raise _Retry("connection_errors", f"connection error: {type(exc).__name__}") from None
        status = response.status
        if status == 400 and structured:
            with self._lock:
                self._structured = False
            self.usage.add("response_format_refused")
            return self._ask(msgs, n, estimate, fmt)
        if status == 429 or status == 408:
            raise _Retry("rate_limited", f"HTTP {status}", retry_after(response.headers.get("retry-after")))
        if status >= 500:
            raise _Retry("server_errors", f"HTTP {status}", retry_after(response.headers.get("retry-after")))
        if status in (400, 413, 422):
            raise _Reject(f"HTTP {status}: {_excerpt(response)!r}")
        if status >= 400:
            raise EndpointError(self.endpoint.redact(
                f"{self.url}: HTTP {status} for model {self.model!r}: {_excerpt(response)!r}"))
        if response.too_large:
            self.usage.add("too_large")
            raise prompt.MalformedVerdict(f"the response body is larger than {_size(self.max_body)}")
        try:
            data = json.loads(response.body)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, an integer of > 4,300 digits, too deep
            raise prompt.MalformedVerdict("the response body is not JSON (or too deeply nested)") from None
        usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(usage, dict):
            p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
            p = p if isinstance(p, int) else 0
            c = c if isinstance(c, int) else 0
            self.usage.add("prompt_tokens", p)
            self.usage.add("completion_tokens", c)
            self.limiter.settle(handle, p + c)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise prompt.MalformedVerdict("no choices[0].message.content in the response") from None
        if not isinstance(content, str):
            raise prompt.MalformedVerdict("the message content is not a string")
        return content
