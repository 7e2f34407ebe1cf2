"""A judge behind any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp server, hosted APIs).

Temperature 0; the answer is asked for with a JSON schema (``response_format``) and, when the server answers 400
to that, with the same prompt alone (plain JSON). Every answer is checked (:func:`ranklens.judges.prompt.parse`);
malformed output, 429, 5xx, timeouts and dropped connections are retried with exponential backoff, honouring
``Retry-After``. A document without a valid verdict after the retries is returned **unjudged** (grade ``None``).
"""

from __future__ import annotations

import email.utils
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ranklens.errors import InputError, MissingDependencyError
from ranklens.judges import prompt
from ranklens.judges.accounting import Usage
from ranklens.judges.limits import RateLimiter
from ranklens.judges.scale import Scale
from ranklens.judges.types import Judgment

T = TypeVar("T")


class EndpointError(InputError):
    """The endpoint refuses every request (bad URL, key or model): retrying cannot help, so the run stops."""


def chat_url(endpoint: str) -> str:
    """The chat-completions URL of a base URL (``…/v1``) or of the full URL.

    >>> chat_url("http://127.0.0.1:8000/v1/")
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> chat_url("http://host/v1/chat/completions")
    'http://host/v1/chat/completions'
    """
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


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
        timeout: seconds per request.
        retries: further attempts after the first, for malformed output, 429, 5xx, timeouts and connection errors.
        backoff: the first wait in seconds, doubled on each retry (with jitter), at most ``max_wait``.
        limiter: a shared :class:`RateLimiter` (requests and tokens per minute).
        usage: the counters to add to (shared by the threads of one run).

    >>> j = OpenAIJudge("http://127.0.0.1:9/v1", "my-model")
    >>> j.identity
    ('http://127.0.0.1:9/v1/chat/completions', 'my-model', 'ranklens-graded-0-3/v1')
    """

    def __init__(self, endpoint: str, model: str, *, scale: Scale | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 60.0, retries: int = 4, backoff: float = 1.0, max_wait: float = 60.0,
                 max_tokens: int = 256, limiter: RateLimiter | None = None, usage: Usage | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.url = chat_url(endpoint)
        self.model = model
        self.scale = scale or Scale()
        self.identity = (self.url, model, self.scale.version)
        self.api_key = os.environ.get(api_key_env) or None
        self.timeout, self.retries, self.backoff, self.max_wait = timeout, retries, backoff, max_wait
        self.max_tokens = max_tokens
        self.limiter = limiter or RateLimiter()
        self.usage = usage or Usage()
        self._sleep = sleep
        self._structured = True  # becomes False once the server refuses response_format
        self._lock = threading.Lock()
        self._local = threading.local()

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            try:
                import httpx
            except ImportError:  # pragma: no cover - httpx is in the judges extra
                raise MissingDependencyError("httpx", "judges", "the OpenAI-compatible judge") from None
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            client = self._local.client = httpx.Client(timeout=self.timeout, headers=headers)
        return client

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
                content = self._ask(msgs, n, estimate, fmt)
                return check(content), content, ""
            except prompt.MalformedVerdict as exc:
                self.usage.add("malformed")
                last, wait = f"malformed answer: {exc}", None
            except _Retry as exc:
                self.usage.add(exc.kind)
                last, wait = exc.detail, exc.wait
            except _Reject as exc:
                self.usage.add("rejected")
                return None, str(exc), f"the server rejected the request ({exc})"
            if attempt < self.retries:
                self._sleep(self._wait(attempt, wait))
        return None, last, f"no valid verdict after {self.retries + 1} attempts ({last})"

    def _wait(self, attempt: int, server_wait: float | None) -> float:
        own = min(self.backoff * (2 ** attempt), self.max_wait) * (1 + random.random() * 0.1)
        return min(max(own, server_wait or 0.0), max(self.max_wait, server_wait or 0.0))

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
            response = self._client().post(self.url, json=body)
        except httpx.TimeoutException:
            raise _Retry("timeouts", f"timed out after {self.timeout:g} s") from None
        except httpx.TransportError as exc:
            raise _Retry("connection_errors", f"connection error: {type(exc).__name__}") from None
        status = response.status_code
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
            raise _Reject(f"HTTP {status}: {response.text[:200]!r}")
        if status >= 400:
            raise EndpointError(f"{self.url}: HTTP {status} for model {self.model!r}: {response.text[:200]!r}")
        try:
            data = response.json()
        except ValueError:
            raise prompt.MalformedVerdict("the response body is not JSON") from None
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
