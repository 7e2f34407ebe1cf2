"""The SQLite verdict cache shared by concurrent runs: two processes and two threads on one file."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from ranklens.judges import JudgeCache, Judgment, OpenAIJudge, Pair, Usage, doc_hash, judge_pairs

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
    # together they asked at most twice per pair, and the cache holds each verdict once
    assert 40 <= llm_server.requests <= 80 and len(JudgeCache(path)) == 40
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
