"""The OpenAI-compatible judge against a real HTTP server on loopback: every failure mode, exact accounting."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklens.judges import EndpointError, JudgeCache, OpenAIJudge, Pair, RateLimiter, Scale, Usage, judge_pairs

# (query, passage marker, requests it costs, judged?)
CASES = [
    ("good one", "[g2]", 1, True),
    ("good two", "[g3]", 1, True),
    ("malformed-once a", "[g1]", 2, True),
    ("missing-field a", "[g2]", 2, True),
    ("off-scale a", "[g1]", 5, False),
    ("always-malformed a", "[g1]", 5, False),
    ("rate-limited a", "[g3]", 2, True),
    ("server-error a", "[g0]", 3, True),
    ("always-500 a", "[g1]", 5, False),
    ("slow a", "[g2]", 2, True),
]


def _pairs() -> list[Pair]:
    return [Pair(f"q{i}", query, f"d{i}", f"passage {mark} for {query}") for i, (query, mark, _, _) in enumerate(CASES)]


def _judge(url: str, usage: Usage | None = None, **kw: object) -> OpenAIJudge:
    options = {"timeout": 0.5, "retries": 4, "backoff": 0.01, "usage": usage or Usage()}
    options.update(kw)
    return OpenAIJudge(url, "test-model", **options)  # type: ignore[arg-type]


def test_every_failure_mode_is_survived_and_counted_exactly(llm_server, tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache.sqlite")
    waits: list[float] = []
    # the slow answer takes twice the deadline; every other answer has 2 s, so a busy machine does not turn a
    # quick answer into a timeout (the test counts requests exactly)
    llm_server.slow_seconds = 4.0
    res = judge_pairs(_pairs(), _judge(llm_server.url, timeout=2.0, sleep=waits.append), cache=cache, concurrency=4)

    assert llm_server.requests == sum(c[2] for c in CASES) == 28
    for query, _, cost, _ in CASES:
        assert llm_server.by_query[query] == cost, query
    s = res.summary()
    assert (s["pairs"], s["judged"], s["unjudged"], s["from_cache"], s["requests"]) == (10, 7, 3, 0, 28)
    c = s["counters"]
    assert c["malformed"] == 1 + 1 + 5 + 5
    assert c["retries"] == 0 + 0 + 1 + 1 + 4 + 4 + 1 + 2 + 4 + 1
    assert (c["rate_limited"], c["server_errors"], c["timeouts"], c["connection_errors"]) == (1, 7, 1, 0)
    assert (c["response_format_refused"], c["rejected"]) == (0, 0)
    # tokens are counted from every 200 response the client read (the timed-out one it never read)
    assert (s["prompt_tokens"], s["completion_tokens"]) == (19 * 100, 19 * 10)
    assert res.labels() == {"q0": {"d0": 2}, "q1": {"d1": 3}, "q2": {"d2": 1}, "q3": {"d3": 2}, "q6": {"d6": 3},
                            "q7": {"d7": 0}, "q9": {"d9": 2}}
    unjudged = {item["query_id"]: item["why"] for item in s["unjudged_pairs"]}
    assert set(unjudged) == {"q4", "q5", "q8"}
    assert "off the scale 0..3" in unjudged["q4"] and "after 5 attempts" in unjudged["q4"]
    assert "not JSON" in unjudged["q5"] and "HTTP 503" in unjudged["q8"]
    # Retry-After: 1 was honoured once (the own backoff is 10 ms, doubling: at most 0.16 s × 1.1 for 4 retries)
    assert len(waits) == c["retries"] and sum(w >= 1.0 for w in waits) == 1 and max(waits) <= 1.0
    # every request asked at temperature 0 for schema-constrained output
    assert all(b["temperature"] == 0 and b["response_format"]["type"] == "json_schema" for b in llm_server.bodies)

    # a rerun: judged pairs come from the cache, only the 3 unjudged ones are asked again (5 attempts each)
    before = llm_server.requests
    again = judge_pairs(_pairs(), _judge(llm_server.url), cache=cache, concurrency=4)
    assert llm_server.requests - before == 15
    assert (again.summary()["from_cache"], again.summary()["requests"], again.summary()["unjudged"]) == (7, 15, 3)
    assert again.labels() == res.labels()


def test_a_rerun_sends_zero_requests(llm_server, tmp_path: Path) -> None:
    pairs = [Pair("q1", "good x", f"d{g}", f"text [g{g}]") for g in range(4)]
    first = judge_pairs(pairs, _judge(llm_server.url), cache=JudgeCache(tmp_path / "c.sqlite"))
    assert llm_server.requests == 4 and first.summary()["judged"] == 4
    second = judge_pairs(pairs, _judge(llm_server.url), cache=JudgeCache(tmp_path / "c.sqlite"))
    assert llm_server.requests == 4
    s = second.summary()
    assert (s["from_cache"], s["requests"], s["prompt_tokens"], s["judged"]) == (4, 0, 0, 4)
    assert second.labels() == first.labels() == {"q1": {"d0": 0, "d1": 1, "d2": 2, "d3": 3}}


def test_the_cache_key_holds_model_and_prompt_version(llm_server, tmp_path: Path) -> None:
    pairs = [Pair("q1", "good x", "d1", "text [g2]")]
    cache = JudgeCache(tmp_path / "c.sqlite")
    judge_pairs(pairs, _judge(llm_server.url), cache=cache)
    judge_pairs(pairs, OpenAIJudge(llm_server.url, "other-model", usage=Usage()), cache=cache)
    judge_pairs(pairs, _judge(llm_server.url, scale=Scale(version="v2")), cache=cache)
    judge_pairs(pairs, _judge(llm_server.url), cache=cache)  # the first again: cached
    assert llm_server.requests == 3 and len(cache) == 3


def test_a_server_refusing_response_format_gets_plain_json(plain_server) -> None:
    usage = Usage()
    pairs = [Pair("q1", "good x", f"d{g}", f"text [g{g}]") for g in (1, 3)]
    res = judge_pairs(pairs, _judge(plain_server.url, usage), concurrency=1)
    assert res.labels() == {"q1": {"d1": 1, "d3": 3}}
    c = res.summary()["counters"]
    assert (c["requests"], c["response_format_refused"], c["retries"]) == (3, 1, 0)
    assert ["response_format" in b for b in plain_server.bodies] == [True, False, False]


def test_batching_sends_one_request_for_several_documents(llm_server) -> None:
    pairs = [Pair("q1", "good x", f"d{g}", f"text [g{g}]") for g in range(3)]
    res = judge_pairs(pairs, _judge(llm_server.url), batch_size=3)
    assert llm_server.requests == 1
    assert res.labels() == {"q1": {"d0": 0, "d1": 1, "d2": 2}}
    assert llm_server.bodies[0]["response_format"]["json_schema"]["schema"]["required"] == ["judgments"]


def test_duplicate_texts_of_one_query_cost_one_request(llm_server) -> None:
    pairs = [Pair("q1", "good x", "d1", "same [g2]"), Pair("q1", "good x", "d2", "same [g2]")]
    res = judge_pairs(pairs, _judge(llm_server.url))
    assert llm_server.requests == 1 and res.labels() == {"q1": {"d1": 2, "d2": 2}}


def test_a_refused_key_stops_the_run(llm_server) -> None:
    with pytest.raises(EndpointError, match="HTTP 401"):
        judge_pairs([Pair("q1", "unauthorized", "d1", "t")], _judge(llm_server.url))
    assert llm_server.requests == 1


def test_an_unreachable_endpoint_leaves_every_pair_unjudged() -> None:
    usage = Usage()
    res = judge_pairs([Pair("q1", "good", "d1", "t")], _judge("http://127.0.0.1:9/v1", usage, retries=2))
    s = res.summary()
    assert (s["judged"], s["unjudged"], s["counters"]["connection_errors"], s["requests"]) == (0, 1, 3, 3)
    assert res.labels() == {}


def test_the_rate_limiter_waits_for_the_window() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    lim = RateLimiter(rpm=2, tpm=1000, clock=lambda: now[0], sleep=sleep)
    lim.acquire(10)
    lim.acquire(10)
    lim.acquire(10)  # the third request of the minute waits until the first leaves the window
    assert now[0] == pytest.approx(60.0)
    tok = RateLimiter(tpm=100, clock=lambda: now[0], sleep=sleep)
    handle = tok.acquire(90)
    tok.settle(handle, 20)  # the server reported fewer tokens: room again
    start = now[0]
    tok.acquire(70)
    assert now[0] == start
    tok.acquire(50)  # 20 + 70 + 50 > 100: waits
    assert now[0] > start
    big = RateLimiter(tpm=10, clock=lambda: now[0], sleep=sleep)
    big.acquire(500)  # bigger than the budget: let through alone, no deadlock


def test_the_rpm_limit_holds_against_the_server(llm_server) -> None:
    now = [0.0]
    lim = RateLimiter(rpm=2, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    pairs = [Pair("q1", "good x", f"d{g}", f"text [g{g}]") for g in range(3)]
    judge_pairs(pairs, _judge(llm_server.url, limiter=lim))
    assert llm_server.requests == 3 and now[0] == pytest.approx(60.0)


def test_a_rejected_request_is_unjudged_without_retries(llm_server) -> None:
    res = judge_pairs([Pair("q1", "too-long", "d1", "t [g1]"), Pair("q2", "dated-429", "d1", "t [g1]")],
                      _judge(llm_server.url))
    s = res.summary()
    assert (s["judged"], s["unjudged"], s["requests"]) == (1, 1, 3)
    assert (s["counters"]["rejected"], s["counters"]["rate_limited"], s["counters"]["retries"]) == (1, 1, 1)
    assert "HTTP 413" in s["unjudged_pairs"][0]["why"]


def test_retry_after_reads_seconds_and_dates() -> None:
    from ranklens.judges.openai_compat import retry_after

    assert retry_after("3") == 3.0 and retry_after("-1") == 0.0
    assert retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=0.0) == 10.0
    assert retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=100.0) == 0.0
