"""Synthetic evaluation queries from a document collection, through an OpenAI-compatible endpoint, with a round trip.

For each document the model is asked for ``per_doc`` questions the document answers. The contract is strict: the
message content must be exactly the JSON object ``{"queries": [<string>, ...]}`` with ``per_doc`` distinct,
non-blank strings (asked for with a JSON schema where the server supports ``response_format``). Anything else is
malformed and retried like a 429 or a 500 (:meth:`ranklens.judges.OpenAIJudge.ask`); a document still without a valid
answer after the retries is counted and listed as **failed** — its queries are never guessed from a broken answer.

The round-trip filter keeps a query only when a retriever over the whole collection (BM25,
:mod:`ranklens.judges.bm25`) ranks its source document in the top ``round_trip_k``; every query is still written,
with ``kept`` and the source document's ``rank`` (``None`` when it shares no term with the query), and the qrels
hold the kept ones (source document, grade 1), so the set can be evaluated at once.

>>> parse_queries('{"queries": ["what is ndcg?", "who made bm25?"]}', 2)
['what is ndcg?', 'who made bm25?']
>>> parse_queries('{"queries": ["what is ndcg?"]}', 2)
Traceback (most recent call last):
...
ranklens.judges.prompt.MalformedVerdict: expected 2 queries, got 1
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ranklens.judges.openai_compat import OpenAIJudge
from ranklens.judges.prompt import MalformedVerdict

__all__ = ["PROMPT_VERSION", "RETRIEVERS", "SynthQuery", "SynthResult", "messages", "parse_queries", "synthesize"]

PROMPT_VERSION = "ranklens-synth/v1"
RETRIEVERS = ("bm25",)

SYSTEM = """\
You write evaluation queries for a search engine. Given a document, write {n} distinct {what} that a user \
might type and that this document answers. Each must stand on its own: do not mention "the document", "the text" \
or "the passage", and do not copy a sentence from it. Answer with a single JSON object and nothing else: \
{{"queries": ["<question>", ...]}} with exactly {n} {strings}."""


def messages(text: str, n: int = 1) -> list[dict[str, str]]:
    """The chat messages asking for ``n`` questions that ``text`` answers.

    >>> m = messages("BM25 ranks documents by term statistics.", 2)
    >>> [x["role"] for x in m], m[1]["content"].startswith("Document:")
    (['system', 'user'], True)
    """
    what, strings = ("question", "string") if n == 1 else ("questions", "strings")
    system = SYSTEM.format(n=n, what=what, strings=strings)
    return [{"role": "system", "content": system}, {"role": "user", "content": f"Document:\n{text}"}]


def response_format(n: int) -> dict[str, Any]:
    """The ``response_format`` (JSON schema) of an answer with ``n`` queries.

    >>> response_format(3)["json_schema"]["schema"]["properties"]["queries"]["maxItems"]
    3
    """
    schema = {
        "type": "object",
        "properties": {"queries": {"type": "array", "items": {"type": "string", "minLength": 1},
                                   "minItems": n, "maxItems": n}},
        "required": ["queries"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "synthetic_queries", "strict": True, "schema": schema}}


def parse_queries(content: str, n: int) -> list[str]:
    """The ``n`` queries of an answer, stripped of surrounding blanks; :class:`MalformedVerdict` for anything else
    (not JSON, another shape, another count, a non-string, a blank or a repeated query)."""
    try:
        obj = json.loads(content)
    except (json.JSONDecodeError, TypeError) as exc:
        raise MalformedVerdict(f"not JSON: {exc}") from None
    if not isinstance(obj, dict) or set(obj) != {"queries"} or not isinstance(obj["queries"], list):
        raise MalformedVerdict('expected {"queries": [...]}')
    items = obj["queries"]
    if len(items) != n:
        raise MalformedVerdict(f"expected {n} queries, got {len(items)}")
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise MalformedVerdict(f"every query must be a non-blank string, got {item!r}")
        out.append(item.strip())
    if len({q.casefold() for q in out}) != len(out):
        raise MalformedVerdict("the queries repeat")
    return out


@dataclass(frozen=True)
class SynthQuery:
    """One synthetic query: ``kept`` by the round trip (always, without one); ``rank`` of its source document."""

    query_id: str
    query: str
    source_doc_id: str
    kept: bool
    rank: int | None

    def to_json(self) -> str:
        """The JSONL line (without the newline).

        >>> SynthQuery("d1:q1", "what is x?", "d1", True, 1).to_json()
        '{"query_id": "d1:q1", "query": "what is x?", "source_doc_id": "d1", "kept": true, "rank": 1}'
        """
        return json.dumps({"query_id": self.query_id, "query": self.query, "source_doc_id": self.source_doc_id,
                           "kept": self.kept, "rank": self.rank}, ensure_ascii=False)


@dataclass
class SynthResult:
    """The queries (in collection order), the documents that failed and why, and the endpoint's counters."""

    documents: int
    queries: list[SynthQuery]
    failed: list[tuple[str, str]]
    usage: dict[str, int]
    round_trip_k: int | None = None
    retriever: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def kept(self) -> list[SynthQuery]:
        """The queries the round trip kept."""
        return [q for q in self.queries if q.kept]

    def qrels(self) -> dict[str, dict[str, int]]:
        """``{query_id: {source_doc_id: 1}}`` of the kept queries."""
        return {q.query_id: {q.source_doc_id: 1} for q in self.kept}

    def summary(self) -> dict[str, Any]:
        """The run as a JSON-ready dict.

        >>> SynthResult(0, [], [], {"requests": 0}).summary()["kept"]
        0
        """
        return {
            "documents": self.documents, "queries": len(self.queries), "kept": len(self.kept),
            "dropped_by_round_trip": len(self.queries) - len(self.kept), "failed_documents": len(self.failed),
            "round_trip_k": self.round_trip_k, "retriever": self.retriever,
            "requests": self.usage.get("requests", 0), "counters": dict(self.usage),
            "failed": [{"doc_id": d, "why": why} for d, why in self.failed], "notes": list(self.notes),
        }

    def summary_text(self) -> str:
        """The summary in lines for stderr."""
        s, c = self.summary(), self.usage
        trip = (f"kept by the round trip (source in the top {s['round_trip_k']} by {s['retriever']}): {s['kept']}"
                if s["round_trip_k"] else f"kept: {s['kept']} (no round trip)")
        lines = [f"documents: {s['documents']}  queries: {s['queries']}  {trip}  "
                 f"failed documents: {s['failed_documents']}",
                 f"requests: {s['requests']}  retries: {c.get('retries', 0)}  malformed: {c.get('malformed', 0)}  "
                 f"429: {c.get('rate_limited', 0)}  5xx: {c.get('server_errors', 0)}  timeouts: {c.get('timeouts', 0)}"]
        lines += [f"failed: {d}: {why}" for d, why in self.failed[:10]]
        if len(self.failed) > 10:
            lines.append(f"… and {len(self.failed) - 10} more failed documents")
        return "\n".join(lines + [f"note: {n}" for n in self.notes]) + "\n"

    def write(self, path: str | Path, qrels: str | Path | None = None) -> None:
        """Write the queries as JSONL to ``path`` and, given ``qrels``, the kept ones as TREC qrels."""
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(q.to_json() + "\n" for q in self.queries)
        if qrels is not None:
            with open(qrels, "w", encoding="utf-8") as out:
                out.writelines(f"{q.query_id} 0 {q.source_doc_id} 1\n" for q in self.kept)


def synthesize(corpus: Mapping[str, str], writer: OpenAIJudge, *, per_doc: int = 1, round_trip_k: int | None = None,
               retriever: str = "bm25", on_progress: Callable[[int], None] | None = None) -> SynthResult:
    """Ask ``writer``'s endpoint for ``per_doc`` queries per document of ``corpus`` (``{doc_id: text}``, in order)
    and, with ``round_trip_k``, keep those whose source document ``retriever`` ranks in the top K.

    Query ids are ``<doc_id>:q<j>`` (j from 1). A document with a blank text is failed without a request.

    >>> class Echo(OpenAIJudge):
    ...     def ask(self, msgs, check, **kw):
    ...         return check('{"queries": ["cats sat?"]}'), "", ""
    >>> res = synthesize({"d1": "the cat sat", "d2": "a dog"}, Echo("http://127.0.0.1:9/v1", "m"), round_trip_k=1)
    >>> [(q.query_id, q.kept, q.rank) for q in res.queries]
    [('d1:q1', True, 1), ('d2:q1', False, None)]
    """
    if per_doc < 1:
        raise ValueError("per_doc must be at least 1")
    if round_trip_k is not None and round_trip_k < 1:
        raise ValueError("round_trip_k must be at least 1")
    if retriever not in RETRIEVERS:
        raise ValueError(f"unknown retriever {retriever!r}; one of: {', '.join(RETRIEVERS)}")
    ids = list(corpus)
    index = None
    if round_trip_k is not None:
        from ranklens.judges.bm25 import BM25

        index = BM25([corpus[d] for d in ids])
    fmt = response_format(per_doc)
    queries: list[SynthQuery] = []
    failed: list[tuple[str, str]] = []
    for position, doc_id in enumerate(ids):
        text = corpus[doc_id]
        if not text.strip():
            failed.append((doc_id, "the document's text is blank"))
        else:
            found, _, why = writer.ask(messages(text, per_doc), lambda c: parse_queries(c, per_doc),
                                       response_format=fmt, n=per_doc)
            if found is None:
                failed.append((doc_id, why))
            else:
                for j, query in enumerate(found, 1):
                    rank = index.rank_of(query, position) if index is not None else None
                    kept = round_trip_k is None or (rank is not None and rank <= round_trip_k)
                    queries.append(SynthQuery(f"{doc_id}:q{j}", query, doc_id, kept, rank))
        if on_progress is not None:
            on_progress(1)
    return SynthResult(len(ids), queries, failed, writer.usage.as_dict(), round_trip_k,
                       retriever if round_trip_k is not None else None)
