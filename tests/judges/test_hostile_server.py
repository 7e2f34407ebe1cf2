"""The judge client against a hostile or broken OpenAI-compatible server (issue 23 items 7–9): it never hangs,
never holds a huge body, never dies of one bad answer, and never writes or prints a key.

The in-process server below picks its behaviour by the request's model name and counts what it received; every
assertion is on counters, the bytes the server managed to send, traced memory or the files written, never on
how long something took. ``deadline`` is only a guard that turns a hang of the old code into a failure.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.judges import (
    EndpointError,
    JudgeCache,
    OpenAIJudge,
    Pair,
    Usage,
    judge_pairs,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fake_http import serve
from time_limit import deadline

SECRET = "sk-test-SECRET-abc123"
HUGE = 32 << 20  # a 32 MiB body


class Hostile:
    """What the server saw: requests per model, request paths and Authorization headers, body bytes sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.paths: list[str] = []
        self.auth: list[str | None] = []
        self.sent = 0
        self.finished_huge = False
        self.url = ""


def _ok(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).encode()


def _handler(state: Hostile) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            model = body["model"]
            with state.lock:
                state.requests[model] += 1
                state.paths.append(self.path)
                state.auth.append(self.headers.get("Authorization"))
            try:
                self._answer(model)
            except OSError:  # the client went away (a deadline, a size bound)
                self.close_connection = True

        def _answer(self, model: str) -> None:
            if model == "good":
                self._send(200, _ok(json.dumps({"grade": 2, "reason": "fine"})))
            elif model == "429-long":
                self._send(429, b'{"error": "rate"}', {"Retry-After": "3600"})
            elif model == "429-date":
                self._send(429, b'{"error": "rate"}', {"Retry-After": "Fri, 31 Dec 2099 23:59:59 GMT"})
            elif model == "bigint":
                self._send(200, _ok('{"grade": 1' + "0" * 5000 + ', "reason": "r"}'))
            elif model == "deep":
                self._send(200, b"[" * 200_000 + b"]" * 200_000)
            elif model == "echo-401":
                self._send(401, json.dumps({"error": "bad key", "you_sent": self.headers.get("Authorization")}).encode())
            elif model == "echo-content":
                self._send(200, _ok(json.dumps({"grade": 1, "reason": f"you sent {self.headers.get('Authorization')}"})))
            elif model == "drip":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                for _ in range(100000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    with state.lock:
                        state.sent += 1
                    threading.Event().wait(0.1)
            elif model == "huge":
                head, tail = b'{"choices":[{"message":{"content":"', b'"}}]}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(head) + HUGE + len(tail)))
                self.end_headers()
                self.wfile.write(head)
                chunk = b"x" * (1 << 20)
                for _ in range(HUGE >> 20):
                    self.wfile.write(chunk)
                    with state.lock:
                        state.sent += len(chunk)
                self.wfile.write(tail)
                state.finished_huge = True
            else:
                self._send(404, b'{"error": "unknown model"}')

    return Handler


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    state = Hostile()
    with serve(_handler(state)) as base:
        state.url = base + "/v1"
        yield state


def _one(judge: OpenAIJudge, cache: JudgeCache | None = None) -> Any:
    """Judge one pair, then close the judge's connections."""
    with judge:
        return judge_pairs([Pair("q1", "what", "d1", "a passage")], judge, cache=cache)


# ---------------------------------------------------------------------------------------------------------
# 23.7: Retry-After is capped (and said), --timeout is a total deadline per request


@pytest.mark.parametrize("model", ["429-long", "429-date"])
def test_a_huge_retry_after_is_capped_and_said(hostile: Hostile, model: str) -> None:
    slept: list[float] = []
    judge = OpenAIJudge(hostile.url, model, retries=2, backoff=0.01, max_wait=5.0, sleep=slept.append, usage=Usage())
    res = _one(judge)
    assert hostile.requests[model] == 3 and len(slept) == 2
    assert all(0 < s <= 5.0 for s in slept), slept  # never the hour (or the years) the server asked for
    s = res.summary()
    assert s["counters"]["retry_after_capped"] == 2 and s["unjudged"] == 1
    assert any("Retry-After" in n and "waited at most 5 s" in n for n in s["notes"]), s["notes"]
    assert "Retry-After" in res.summary_text()


def test_a_dripped_body_trips_the_timeout(hostile: Hostile) -> None:
    judge = OpenAIJudge(hostile.url, "drip", timeout=1.0, retries=1, backoff=0.0, sleep=lambda s: None, usage=Usage())
    with deadline(120):  # the old client read one byte every 0.1 s for 100,000 bytes
        res = _one(judge)
    s = res.summary()
    assert hostile.requests["drip"] == 2 and s["counters"]["timeouts"] == 2 and s["unjudged"] == 1
    assert "timed out after 1 s" in s["unjudged_pairs"][0]["why"]
    assert hostile.sent < 1000  # the server never got to send its body


# ---------------------------------------------------------------------------------------------------------
# 23.8: one bad answer is one unjudged pair; the body read is bounded


@pytest.mark.parametrize("model, why", [("bigint", "malformed answer"), ("deep", "malformed answer")])
def test_a_pathological_answer_is_one_unjudged_pair(hostile: Hostile, model: str, why: str) -> None:
    judge = OpenAIJudge(hostile.url, model, retries=1, backoff=0.0, sleep=lambda s: None, usage=Usage())
    pairs = [Pair("q1", "what", "d1", "a passage"), Pair("q2", "what", "d2", "another")]
    with judge:
        res = judge_pairs(pairs, judge, concurrency=2)
    s = res.summary()
    assert (s["judged"], s["unjudged"], s["counters"]["malformed"]) == (0, 2, 4)
    assert all(why in p["why"] for p in s["unjudged_pairs"])
    with OpenAIJudge(hostile.url, "good", usage=Usage()) as good:
        assert judge_pairs(pairs, good).summary()["judged"] == 2  # the same pairs with a sane server


def test_the_body_read_is_bounded(hostile: Hostile) -> None:
    judge = OpenAIJudge(hostile.url, "huge", retries=0, max_body=1 << 20, usage=Usage())
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        res = _one(judge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not tracing:
            tracemalloc.stop()
    s = res.summary()
    assert (s["unjudged"], s["counters"]["malformed"], s["counters"]["too_large"]) == (1, 1, 1)
    assert "larger than 1 MiB" in s["unjudged_pairs"][0]["why"]
    assert peak < 16 << 20, peak  # the old client held the whole 32 MiB body and its decoded copy
    assert not hostile.finished_huge


# ---------------------------------------------------------------------------------------------------------
# 23.9: keys never reach the cache, the summary or an error message; a query string stays a query string


def test_a_key_in_the_endpoint_url_stays_off_disk_and_out_of_messages(hostile: Hostile, tmp_path: Path) -> None:
    url = hostile.url.replace("http://", f"http://user:{SECRET}@")
    cache = JudgeCache(tmp_path / "c.sqlite")
    judge = OpenAIJudge(url, "good", usage=Usage())
    assert SECRET not in repr(judge.identity) and judge.identity[0].startswith("http://127.0.0.1:")
    res = _one(judge, cache)
    assert res.summary()["judged"] == 1 and hostile.auth[-1] is not None  # the credentials were still sent
    cache.close()
    for f in tmp_path.iterdir():
        assert SECRET.encode() not in f.read_bytes(), f
    with pytest.raises(EndpointError) as err:
        _one(OpenAIJudge(url, "echo-401", usage=Usage()))
    assert SECRET not in str(err.value) and "HTTP 401" in str(err.value)
    basic = base64.b64encode(f"user:{SECRET}".encode()).decode()  # the header the server echoed
    assert hostile.auth[-1] == f"Basic {basic}" and basic not in str(err.value)


def test_an_echoed_api_key_is_redacted(hostile: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", SECRET)
    with pytest.raises(EndpointError) as err:
        _one(OpenAIJudge(hostile.url, "echo-401", api_key_env="JUDGE_KEY_FOR_TEST", usage=Usage()))
    assert SECRET not in str(err.value)
    cache = JudgeCache(tmp_path / "c.sqlite")
    res = _one(OpenAIJudge(hostile.url, "echo-content", api_key_env="JUDGE_KEY_FOR_TEST", usage=Usage()), cache)
    assert hostile.auth[-1] == f"Bearer {SECRET}" and res.summary()["judged"] == 1
    assert SECRET not in res.judgments[0].raw and SECRET not in res.judgments[0].reason
    cache.close()
    assert SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_an_endpoint_with_a_query_string(hostile: Hostile, tmp_path: Path) -> None:
    judge = OpenAIJudge(hostile.url + f"?api-version=2024-06-01&key={SECRET}", "good", usage=Usage())
    cache = JudgeCache(tmp_path / "c.sqlite")
    assert _one(judge, cache).summary()["judged"] == 1
    assert hostile.paths == [f"/v1/chat/completions?api-version=2024-06-01&key={SECRET}"]
    assert SECRET not in repr(judge.identity)
    cache.close()
    assert SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_the_cli_never_prints_the_key(hostile: Hostile, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"query_id": "q1", "query": "q", "doc_id": "d1", "text": "t"}) + "\n")
    url = hostile.url.replace("http://", f"http://{SECRET}@")
    out = CliRunner().invoke(cli, ["judge", "run", str(pairs), "--endpoint", url, "--model", "echo-401",
                                   "-o", str(tmp_path / "o.qrels"), "--cache", str(tmp_path / "c.sqlite")])
    assert out.exit_code == 2 and out.stderr.count("\n") == 1, out.output
    assert SECRET not in out.output and "HTTP 401" in out.stderr
