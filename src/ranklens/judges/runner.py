"""Judging many pairs: the cache first, then the judge over a thread pool, with exact accounting."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from ranklens.judges.accounting import Price, Usage
from ranklens.judges.cache import JudgeCache, Key, doc_hash, new_owner
from ranklens.judges.pairs import Pair
from ranklens.judges.types import Judge, Judgment


@dataclass
class JudgeRun:
    """What a run produced: a judgment for every pair (in the input order) and its accounting."""

    pairs: list[Pair]
    judgments: list[Judgment]
    from_cache: int
    usage: dict[str, int]
    price: Price | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def unjudged(self) -> list[tuple[Pair, Judgment]]:
        """The pairs without a verdict after the retries, with why."""
        return [(p, j) for p, j in zip(self.pairs, self.judgments) if j.grade is None]

    def labels(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` of the judged pairs only (unjudged pairs are not labels)."""
        out: dict[str, dict[str, int]] = {}
        for p, j in zip(self.pairs, self.judgments):
            if j.grade is not None:
                out.setdefault(p.query_id, {})[p.doc_id] = j.grade
        return out

    @property
    def cost(self) -> float | None:
        """The run's cost from its tokens, when a price is known."""
        if self.price is None:
            return None
        return self.price.cost(self.usage.get("prompt_tokens", 0), self.usage.get("completion_tokens", 0))

    def summary(self) -> dict[str, Any]:
        """The run as a JSON-ready dict (pairs, judged, from cache, unjudged, requests, tokens, cost, the counters).

        >>> JudgeRun([], [], 0, {"requests": 0}).summary()["pairs"]
        0
        """
        n_unjudged = sum(j.grade is None for j in self.judgments)
        return {
            "pairs": len(self.pairs),
            "judged": len(self.pairs) - n_unjudged,
            "from_cache": self.from_cache,
            "unjudged": n_unjudged,
            "requests": self.usage.get("requests", 0),
            "prompt_tokens": self.usage.get("prompt_tokens", 0),
            "completion_tokens": self.usage.get("completion_tokens", 0),
            "cost": self.cost,
            "counters": dict(self.usage),
            "unjudged_pairs": [{"query_id": p.query_id, "doc_id": p.doc_id, "why": j.reason} for p, j in self.unjudged],
            "notes": list(self.notes),
        }

    def summary_text(self) -> str:
        """The summary in lines for stderr."""
        s = self.summary()
        cost = "unknown (no price for the model)" if s["cost"] is None else f"{s['cost']:.6f}"
        c = s["counters"]
        lines = [
            f"pairs: {s['pairs']}  judged: {s['judged']} ({s['from_cache']} from cache)  unjudged after retries: {s['unjudged']}",
            f"requests: {s['requests']}  retries: {c.get('retries', 0)}  malformed: {c.get('malformed', 0)}  "
            f"429: {c.get('rate_limited', 0)}  5xx: {c.get('server_errors', 0)}  timeouts: {c.get('timeouts', 0)}",
            f"tokens: {s['prompt_tokens']} prompt + {s['completion_tokens']} completion  cost: {cost}",
        ]
        for item in s["unjudged_pairs"][:10]:
            lines.append(f"unjudged: {item['query_id']} {item['doc_id']}: {item['why']}")
        if len(s["unjudged_pairs"]) > 10:
            lines.append(f"… and {len(s['unjudged_pairs']) - 10} more unjudged pairs (all in --summary)")
        return "\n".join(lines + [f"note: {n}" for n in s["notes"]]) + "\n"


def _key(judge: Judge, pair: Pair) -> Key:
    endpoint, model, version = judge.identity
    return (endpoint, model, version, pair.query, doc_hash(pair.text))


def judge_pairs(pairs: Sequence[Pair], judge: Judge, *, cache: JudgeCache | None = None, concurrency: int = 1,
                batch_size: int = 1, usage: Usage | None = None, price: Price | None = None,
                on_progress: Callable[[int], None] | None = None) -> JudgeRun:
    """Judge every pair: cached verdicts first, the rest by ``judge`` on ``concurrency`` threads, ``batch_size``
    documents of one query per request. Every pair gets a :class:`Judgment`; graded ones go into the cache as
    soon as their request ends, so an interrupted run loses nothing it paid for.

    With a cache, the pairs are claimed in it before they are asked: a pair another run (another process on the
    same file) is asking is waited for, not asked twice, and every graded pair of the result is the verdict the
    cache holds (the qrels written always equal the cache).

    >>> class Half:
    ...     identity = ("local:half", "half", "v1")
    ...     def judge(self, query, documents):
    ...         return [Judgment(len(d) % 2, "parity", str(len(d))) for d in documents]
    >>> res = judge_pairs([Pair("q1", "q", "d1", "ab"), Pair("q1", "q", "d2", "abc")], Half())
    >>> res.labels(), res.summary()["judged"]
    ({'q1': {'d1': 0, 'd2': 1}}, 2)
    """
    if concurrency < 1 or batch_size < 1:
        raise ValueError("concurrency and batch_size must be at least 1")
    pairs = list(pairs)
    keys = [_key(judge, p) for p in pairs]
    texts = {k: p.text for k, p in zip(keys, pairs)}
    at: dict[Key, list[int]] = {}  # one request per distinct (query, text)
    for i, k in enumerate(keys):
        at.setdefault(k, []).append(i)
    results: list[Judgment | None] = [None] * len(pairs)
    from_cache = 0

    def fill(verdicts: Iterable[tuple[Key, Judgment]], cached: bool) -> None:
        nonlocal from_cache
        n = 0
        for key, verdict in verdicts:
            for i in at[key]:
                results[i] = verdict
                n += 1
        from_cache += n if cached else 0
        if on_progress is not None and n:
            on_progress(n)

    def ask(todo: list[Key], owner: str) -> None:
        """Judge ``todo`` (the texts of one query in chunks of ``batch_size``); each answer is stored at once and
        the run keeps what the cache holds."""

        def record(done: list[tuple[Key, Judgment]]) -> None:
            stored = cache.store(done, owner) if cache is not None else {}
            fill([(k, stored.get(k, v)) for k, v in done], cached=False)

        _ask_all(judge, _chunks(todo, batch_size), texts, concurrency, record)

    waited: set[Key] = set()
    if cache is None:
        ask(list(at), "")
    else:
        owner = new_owner()
        fresh = list(at)  # not looked at yet, in input order, claimed a block at a time so runs share the work
        block = max(1, concurrency * batch_size * CLAIM_BLOCK)
        held_elsewhere: list[Key] = []
        try:
            with _Heartbeat(cache, owner, CLAIM_LEASE):
                while fresh or held_elsewhere:
                    if fresh:
                        looking, fresh = fresh[:block], fresh[block:]
                    else:
                        looking, held_elsewhere = held_elsewhere, []
                    stored, mine = cache.claim(looking, owner, lease=CLAIM_LEASE)
                    fill(stored.items(), cached=True)
                    if mine:
                        ask([k for k in looking if k in mine], owner)
                    rest = [k for k in looking if k not in stored and k not in mine]
                    waited.update(rest)
                    held_elsewhere += rest
                    if held_elsewhere and not fresh and not mine:  # another run is asking them: wait for it
                        time.sleep(CLAIM_POLL)
        finally:
            cache.abandon(owner)
    final = [r if r is not None else Judgment(None, "unjudged: not processed", "") for r in results]
    counters = (usage or getattr(judge, "usage", None) or Usage()).as_dict()
    counters["claimed_elsewhere"] = sum(len(at[k]) for k in waited)
    run_notes = getattr(judge, "run_notes", None)
    notes = list(run_notes()) if callable(run_notes) else []
    if waited:
        notes.append(f"{counters['claimed_elsewhere']} pairs were being judged by another run on this cache: "
                     "this run waited for their verdicts instead of paying for them twice")
    return JudgeRun(pairs, final, from_cache, counters, price, notes)


#: seconds a claim holds without renewal (a run renews its claims every quarter of it while it works)
CLAIM_LEASE = 60.0
#: seconds between two looks at the cache while another run judges the pairs this one needs
CLAIM_POLL = 0.1
#: pairs claimed at a time, in requests in flight: a second run on the same cache takes the next block
CLAIM_BLOCK = 4


def _chunks(todo: list[Key], batch_size: int) -> list[tuple[str, list[Key]]]:
    by_query: dict[str, list[Key]] = {}
    for key in todo:
        by_query.setdefault(key[3], []).append(key)
    return [(q, ks[s:s + batch_size]) for q, ks in by_query.items() for s in range(0, len(ks), batch_size)]


def _ask_all(judge: Judge, chunks: list[tuple[str, list[Key]]], texts: dict[Key, str], concurrency: int,
             record: Callable[[list[tuple[Key, Judgment]]], None]) -> None:
    """Send every chunk (``concurrency`` at a time) and ``record`` each answer as it arrives."""

    def work(query: str, chunk: list[Key]) -> list[tuple[Key, Judgment]]:
        verdicts = judge.judge(query, [texts[k] for k in chunk])
        if len(verdicts) != len(chunk):  # a backend bug, not the model's: fail loudly
            raise RuntimeError(f"judge returned {len(verdicts)} judgments for {len(chunk)} documents")
        return list(zip(chunk, verdicts))

    if concurrency == 1:
        for query, chunk in chunks:
            record(work(query, chunk))
        return
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = [pool.submit(work, q, c) for q, c in chunks]
        try:
            for future in as_completed(futures):
                record(future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise


class _Heartbeat:
    """Renews ``owner``'s claims every quarter lease on a daemon thread while the block runs."""

    def __init__(self, cache: JudgeCache, owner: str, lease: float) -> None:
        self.cache, self.owner, self.lease = cache, owner, lease
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="ranklens-judge-claims", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.lease / 4):
            self.cache.renew(self.owner, lease=self.lease)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
