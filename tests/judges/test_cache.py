"""The SQLite verdict cache shared by concurrent runs: two processes and two threads on one file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from ranklens.judges import (
    JudgeCache,
    Judgment,
    OpenAIJudge,
    Pair,
    Usage,
    doc_hash,
    judge_pairs,
)

WRITER = """
import sys
from ranklens.judges import JudgeCache, Judgment, doc_hash
cache = JudgeCache(sys.argv[1], busy_timeout=30)
start, stop = int(sys.argv[2]), int(sys.argv[3])
for i in range(start, stop):
    key = ("http://x/v1/chat/completions", "m", "v1", f"query {i % 7}", doc_hash(f"doc {i}"))
    cache.put_many([(key, Judgment(i % 4, sys.argv[4], "{}"))])
"""


def test_two_processes_write_one_cache_file(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    JudgeCache(path).close()
    # overlapping ranges: 0..299 and 200..499; the overlap's first writer wins, nothing is lost or doubled
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, path, "0", "300", "a"]),
             subprocess.Popen([sys.executable, "-c", WRITER, path, "200", "500", "b"])]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cache = JudgeCache(path)
    assert len(cache) == 500
    keys = [("http://x/v1/chat/completions", "m", "v1", f"query {i % 7}", doc_hash(f"doc {i}")) for i in range(500)]
    found = cache.get_many(keys)
    assert len(found) == 500 and all(found[k].grade == i % 4 for i, k in enumerate(keys))
    assert {found[k].reason for k in keys[:200]} == {"a"} and {found[k].reason for k in keys[300:]} == {"b"}
    assert cache._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_two_runs_share_one_cache_at_once(llm_server, tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    pairs = [Pair(f"q{i}", f"good {i}", f"d{i}", f"text [g{i % 4}]") for i in range(40)]
    results = []

    def run() -> None:
        judge = OpenAIJudge(llm_server.url, "m", timeout=5, backoff=0.01, usage=Usage())
        results.append(judge_pairs(pairs, judge, cache=JudgeCache(path), concurrency=4))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.summary()["judged"] for r in results] == [40, 40]
    assert results[0].labels() == results[1].labels()
    # together they asked once per pair (each pair is claimed before it is asked), the cache holds each verdict once
    assert llm_server.requests == 40 and len(JudgeCache(path)) == 40
    before = llm_server.requests
    third = judge_pairs(pairs, OpenAIJudge(llm_server.url, "m", usage=Usage()), cache=JudgeCache(path))
    assert llm_server.requests == before and third.summary()["from_cache"] == 40


def test_unjudged_verdicts_are_not_cached(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.sqlite")
    key = ("e", "m", "v", "q", doc_hash("t"))
    assert cache.put_many([(key, Judgment(None, "unjudged", "HTTP 500"))]) == 0 and len(cache) == 0


def test_a_file_that_is_not_sqlite_is_a_one_line_error(tmp_path: Path) -> None:
    import pytest

    from ranklens.errors import FormatError

    bad = tmp_path / "notes.txt"
    bad.write_text("this is not a database\n" * 100)
    with pytest.raises(FormatError, match="not a usable judge cache"):
        JudgeCache(bad)


def _cached_labels(path: Path) -> dict[str, dict[str, int]]:
    """The cache's verdicts as labels of the pairs of :func:`_fickle_pairs`, read with sqlite3 itself."""
    import sqlite3

    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT query, grade FROM judgments").fetchall()
    out: dict[str, dict[str, int]] = {}
    for query, grade in rows:
        i = query.split()[1]
        out.setdefault(f"q{i}", {})[f"d{i}"] = grade
    return out


def _fickle_pairs(n: int) -> list[Pair]:
    return [Pair(f"q{i}", f"fickle {i}", f"d{i}", f"text {i}") for i in range(n)]


def test_two_runs_with_a_non_deterministic_model_pay_once_and_write_what_the_cache_holds(llm_server, tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    pairs = _fickle_pairs(30)
    start = threading.Barrier(2)
    results = []

    def run() -> None:
        cache = JudgeCache(path)
        with OpenAIJudge(llm_server.url, "m", timeout=10, backoff=0.01, usage=Usage()) as judge:
            start.wait()
            results.append(judge_pairs(pairs, judge, cache=cache, concurrency=3))
        cache.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # every ask of this model gives another grade: the old runs asked each pair twice and each wrote its own
    assert llm_server.requests == 30
    stored = _cached_labels(path)
    assert sum(len(d) for d in stored.values()) == 30
    assert results[0].labels() == stored and results[1].labels() == stored
    s0, s1 = (r.summary() for r in results)
    assert s0["requests"] + s1["requests"] == 30 and s0["judged"] == s1["judged"] == 30
    # what one run did not ask it took from the cache, once the other run had stored it
    assert s0["from_cache"] == s1["requests"] and s1["from_cache"] == s0["requests"]


def test_a_claim_of_a_dead_run_is_taken_over(llm_server, tmp_path: Path) -> None:
    import socket

    path = tmp_path / "c.sqlite"
    pairs = _fickle_pairs(3)
    with OpenAIJudge(llm_server.url, "m", usage=Usage()) as judge:
        keys = [(judge.identity[0], "m", judge.identity[2], p.query, doc_hash(p.text)) for p in pairs]
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
        cache = JudgeCache(path)
        # pair 0: claimed by a process of this host that has exited; pair 1: by a lease that ran out long ago
        assert cache.claim(keys[:1], f"{socket.gethostname()}:{dead.stdout.strip()}:x", lease=3600)[1] == {keys[0]}
        assert cache.claim(keys[1:2], "elsewhere:1:y", lease=3600, now=0.0)[1] == {keys[1]}  # expired in 1970
        # a live claim of another run is respected
        assert cache.claim(keys[:2], f"{socket.gethostname()}:{os.getpid()}:z", lease=3600)[1] == {keys[0], keys[1]}
        assert cache.claim(keys[:2], "other:1:w", lease=3600)[1] == set()
        cache.release(keys[:2], f"{socket.gethostname()}:{os.getpid()}:z")
        res = judge_pairs(pairs, judge, cache=cache)
    assert llm_server.requests == 3 and res.labels() == _cached_labels(path)
    cache.close()
