"""A deterministic OpenAI-compatible chat-completions server on loopback, for the judge's tests.

The behaviour is chosen by the query text of the request (the ``Query: …`` line); the grade of a good answer by a
``[gN]`` marker in the passage. The server counts every request it receives, per query and in total.

A request for synthetic queries (``ranklens synth``: a user message starting ``Document:``) is answered with the
``<<question>>`` markers of the document; a ``[synth:BEHAVIOUR]`` marker makes it misbehave (:meth:`FakeServer.synth`).
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fake_http import serve

QUERY = re.compile(r"^Query: (.*)$", re.M)
MARK = re.compile(r"\[g(-?\d+)\]")
SYNTH_QUESTION = re.compile(r"<<(.*?)>>")
SYNTH_BEHAVIOUR = re.compile(r"\[synth:([\w-]+)\]")


class FakeServer:
    """State and behaviour of the fake endpoint."""

    def __init__(self, refuse_response_format: bool = False, slow_seconds: float = 1.0) -> None:
        self.refuse_response_format = refuse_response_format
        self.slow_seconds = slow_seconds
        self.lock = threading.Lock()
        self.requests = 0
        self.by_query: Counter[str] = Counter()
        self.attempts: Counter[str] = Counter()  # per user message (query + passage)
        self.bodies: list[dict[str, Any]] = []
        self.url = ""
        self.in_flight = self.max_in_flight = self.gathered = 0
        self.arrived = threading.Condition(self.lock)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        user = body["messages"][-1]["content"]
        if user.startswith("Document:"):
            return self.synth(body, user)
        query = QUERY.search(user).group(1)  # type: ignore[union-attr]
        with self.lock:
            self.requests += 1
            self.by_query[query] += 1
            self.attempts[user] += 1
            attempt = self.attempts[user]
            self.bodies.append(body)
        if self.refuse_response_format and "response_format" in body:
            return 400, {}, b'{"error": {"message": "response_format is not supported"}}'
        grades = [int(g) for g in MARK.findall(user)] or [0]
        good = json.dumps({"grade": grades[0], "reason": f"marked {grades[0]}"})
        if len(grades) > 1:
            good = json.dumps({"judgments": [{"grade": g, "reason": f"marked {g}"} for g in grades]})
        behaviour = query.split()[0]
        content = good
        if behaviour == "malformed-once" and attempt == 1:
            content = "Sure! The grade is 2."
        elif behaviour == "missing-field" and attempt == 1:
            content = json.dumps({"grade": 1})
        elif behaviour == "off-scale":
            content = json.dumps({"grade": 7, "reason": "very relevant"})
        elif behaviour == "always-malformed":
            content = '{"grade": 2, "reason": '
        elif behaviour == "rate-limited" and attempt == 1:
            return 429, {"Retry-After": "1"}, b'{"error": "slow down"}'
        elif behaviour == "server-error" and attempt <= 2:
            return 500, {}, b'{"error": "boom"}'
        elif behaviour == "always-500":
            return 503, {}, b'{"error": "down"}'
        elif behaviour == "slow" and attempt == 1:
            time.sleep(self.slow_seconds)
        elif behaviour == "too-long":
            return 413, {}, b'{"error": "context length exceeded"}'
        elif behaviour == "dated-429" and attempt == 1:
            return 429, {"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"}, b'{"error": "slow down"}'
        elif behaviour == "unauthorized":
            return 401, {}, b'{"error": "bad key"}'
        elif behaviour == "gather":  # held until a second "gather" request has arrived (3 s at most): shows concurrency
            with self.arrived:
                self.gathered += 1
                self.arrived.notify_all()
                self.arrived.wait_for(lambda: self.gathered >= 2, timeout=3.0)
        elif behaviour == "fickle":  # a non-deterministic model: another grade on every ask, a little slow
            time.sleep(0.05)
            content = json.dumps({"grade": (attempt + len(user)) % 4, "reason": f"ask {attempt}"})
        return _reply(body, content)

    def synth(self, body: dict[str, Any], user: str) -> tuple[int, dict[str, str], bytes]:
        """Questions for a document: its ``<<…>>`` markers, unless ``[synth:B]`` says otherwise — ``prose-once``,
        ``wrong-count-once`` (one question short), ``always-malformed`` (queries not a list), ``blank`` (an empty
        question, always), ``500-once``, ``refuse`` (413, never retried)."""
        with self.lock:
            self.requests += 1
            self.attempts[user] += 1
            attempt = self.attempts[user]
            self.bodies.append(body)
        if self.refuse_response_format and "response_format" in body:
            return 400, {}, b'{"error": {"message": "response_format is not supported"}}'
        questions = SYNTH_QUESTION.findall(user)
        found = SYNTH_BEHAVIOUR.search(user)
        behaviour = found.group(1) if found else ""
        content = json.dumps({"queries": questions})
        if behaviour == "prose-once" and attempt == 1:
            content = "Here are some questions: " + "; ".join(questions)
        elif behaviour == "wrong-count-once" and attempt == 1:
            content = json.dumps({"queries": questions[:-1]})
        elif behaviour == "always-malformed":
            content = json.dumps({"queries": "; ".join(questions)})
        elif behaviour == "blank":
            content = json.dumps({"queries": [" "] * len(questions)})
        elif behaviour == "500-once" and attempt == 1:
            return 500, {}, b'{"error": "boom"}'
        elif behaviour == "refuse":
            return 413, {}, b'{"error": "context length exceeded"}'
        return _reply(body, content)


def _reply(body: dict[str, Any], content: str) -> tuple[int, dict[str, str], bytes]:
    reply = {"id": "x", "object": "chat.completion", "model": body["model"],
             "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
    return 200, {}, json.dumps(reply).encode()


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            try:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.arrived:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    server.arrived.notify_all()
                try:
                    status, headers, data = server.answer(body) if self.path == "/v1/chat/completions" else (404, {}, b"{}")
                finally:
                    with server.arrived:
                        server.in_flight -= 1
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                pass

    return Handler


def _start(server: FakeServer) -> Iterator[FakeServer]:
    with serve(_handler(server)) as base:
        server.url = base + "/v1"
        yield server


@pytest.fixture
def llm_server() -> Iterator[FakeServer]:
    """A server that supports ``response_format``."""
    yield from _start(FakeServer())


@pytest.fixture
def plain_server() -> Iterator[FakeServer]:
    """A server that answers 400 to any request with ``response_format``."""
    yield from _start(FakeServer(refuse_response_format=True))
