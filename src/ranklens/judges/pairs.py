"""The pairs to judge: JSONL lines ``{"query_id", "query", "doc_id", "text"}``, read strictly, and built from a
pool of runs (top K of each run, minus the documents existing qrels already judge)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ranklens.errors import FormatError

FIELDS = ("query_id", "query", "doc_id", "text")


@dataclass(frozen=True)
class Pair:
    """One (query, document) pair with both texts."""

    query_id: str
    query: str
    doc_id: str
    text: str

    def to_json(self) -> str:
        """One JSONL line (without the newline).

        >>> Pair("q1", "what is ndcg", "d1", "NDCG is ...").to_json()
        '{"query_id": "q1", "query": "what is ndcg", "doc_id": "d1", "text": "NDCG is ..."}'
        """
        return json.dumps({"query_id": self.query_id, "query": self.query, "doc_id": self.doc_id, "text": self.text},
                          ensure_ascii=False)


def _lines(path: str | Path) -> Iterator[tuple[int, str]]:
    display = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            yield from enumerate(handle, 1)
    except FileNotFoundError:
        raise FormatError(display, "no such file") from None
    except UnicodeDecodeError as exc:
        raise FormatError(display, f"not UTF-8 text ({exc.reason})") from None


def _object(display: str, number: int, line: str) -> dict[str, object]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FormatError(display, f"not a JSON object: {exc.msg}", number) from None
    if not isinstance(obj, dict):
        raise FormatError(display, f"expected a JSON object, got {type(obj).__name__}", number)
    return obj


def read_pairs(path: str | Path) -> list[Pair]:
    """Read and check a pairs file: every line a JSON object with string ``query_id``, ``query``, ``doc_id`` and
    ``text`` (other keys are ignored), no (query_id, doc_id) twice, one query text per query id.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "pairs.jsonl"
    >>> _ = p.write_text('{"query_id": "q1", "query": "ndcg", "doc_id": "d1", "text": "about ndcg"}\\n')
    >>> read_pairs(p)[0].doc_id
    'd1'
    """
    display = str(path)
    out: list[Pair] = []
    seen: dict[tuple[str, str], int] = {}
    queries: dict[str, str] = {}
    for number, line in _lines(path):
        if not line.strip():
            continue
        obj = _object(display, number, line)
        for name in FIELDS:
            if name not in obj:
                raise FormatError(display, f"missing field {name!r}", number)
            if not isinstance(obj[name], str):
                raise FormatError(display, f"field {name!r} must be a string, got {json.dumps(obj[name])[:40]}", number)
        pair = Pair(*(str(obj[name]) for name in FIELDS))
        if not pair.query_id or not pair.doc_id:
            raise FormatError(display, "empty query_id or doc_id", number)
        if any(ch.isspace() for ch in pair.query_id + pair.doc_id):
            raise FormatError(display, "query_id and doc_id must have no whitespace (they become TREC qrels)", number)
        key = (pair.query_id, pair.doc_id)
        if key in seen:
            raise FormatError(display, f"pair ({pair.query_id}, {pair.doc_id}) repeats line {seen[key]}", number)
        if queries.setdefault(pair.query_id, pair.query) != pair.query:
            raise FormatError(display, f"query {pair.query_id} has two different query texts", number)
        seen[key] = number
        out.append(pair)
    if not out:
        raise FormatError(display, "no pairs in the file")
    return out


def read_topics(path: str | Path) -> dict[str, str]:
    """Topics as TSV lines ``query_id<TAB>query text``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "topics.tsv"
    >>> _ = p.write_text("q1\\twhat is ndcg\\n")
    >>> read_topics(p)
    {'q1': 'what is ndcg'}
    """
    display = str(path)
    out: dict[str, str] = {}
    for number, line in _lines(path):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        qid, tab, text = line.partition("\t")
        if not tab or not qid.strip() or not text.strip():
            raise FormatError(display, "expected query_id<TAB>query text", number)
        if qid.strip() in out:
            raise FormatError(display, f"query {qid.strip()} appears twice", number)
        out[qid.strip()] = text.strip()
    return out


_ID_KEYS = ("doc_id", "docid", "_id", "id")
_TEXT_KEYS = ("text", "contents", "body")


def read_corpus(path: str | Path, wanted: set[str] | None = None) -> dict[str, str]:
    """The texts of the ``wanted`` documents from a JSONL corpus (id under ``doc_id``/``docid``/``_id``/``id``, text
    under ``text``/``contents``/``body``, a ``title`` put in front); other lines are read past, not kept.
    ``wanted=None`` keeps every document, in file order."""
    display = str(path)
    out: dict[str, str] = {}
    for number, line in _lines(path):
        if not line.strip():
            continue
        obj = _object(display, number, line)
        id_key = next((k for k in _ID_KEYS if k in obj), None)
        text_key = next((k for k in _TEXT_KEYS if k in obj), None)
        if id_key is None or text_key is None:
            raise FormatError(display, f"expected an id ({'/'.join(_ID_KEYS)}) and a text ({'/'.join(_TEXT_KEYS)})", number)
        doc_id = str(obj[id_key])
        if wanted is not None and doc_id not in wanted:
            continue
        text = obj[text_key]
        if not isinstance(text, str):
            raise FormatError(display, f"field {text_key!r} must be a string", number)
        title = obj.get("title")
        out[doc_id] = f"{title}\n{text}" if isinstance(title, str) and title.strip() else text
    return out


def pool(runs: Sequence[dict[str, dict[str, float]]], depth: int,
         judged: dict[str, dict[str, object]] | None = None) -> dict[str, list[str]]:
    """The union of each run's top ``depth`` per query (ties broken as trec_eval: higher doc id first), in first-seen
    order, minus the documents ``judged`` already has.

    >>> pool([{"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q1": {"c": 9.0, "b": 1.0}}], 1)
    {'q1': ['a', 'c']}
    >>> pool([{"q1": {"a": 3.0, "b": 2.0}}], 2, judged={"q1": {"a": 1}})
    {'q1': ['b']}
    """
    if depth < 1:
        raise ValueError("depth must be at least 1")
    out: dict[str, list[str]] = {}
    for run in runs:
        for qid, scores in run.items():
            ranked = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)[:depth]
            have = (judged or {}).get(qid, {})
            docs = out.setdefault(qid, [])
            docs.extend(d for d, _ in ranked if d not in have and d not in docs)
    return {q: docs for q, docs in out.items() if docs}


def build_pairs(pooled: dict[str, list[str]], topics: dict[str, str], texts: dict[str, str],
                topics_name: str = "topics", corpus_name: str = "corpus") -> list[Pair]:
    """Pairs for a pool; a pooled query without a topic or a document without a text is an error (fail closed).

    >>> build_pairs({"q1": ["d1"]}, {"q1": "ndcg"}, {"d1": "about ndcg"})
    [Pair(query_id='q1', query='ndcg', doc_id='d1', text='about ndcg')]
    """
    missing_q = [q for q in pooled if q not in topics]
    if missing_q:
        raise FormatError(topics_name, f"no topic for {len(missing_q)} pooled quer{'y' if len(missing_q) == 1 else 'ies'}"
                                       f" (first: {missing_q[0]})")
    missing_d = sorted({d for docs in pooled.values() for d in docs if d not in texts})
    if missing_d:
        raise FormatError(corpus_name, f"no text for {len(missing_d)} pooled document(s) (first: {missing_d[0]})")
    return [Pair(q, topics[q], d, texts[d]) for q, docs in pooled.items() for d in docs]


def write_pairs(pairs: Iterable[Pair], path: str | Path) -> int:
    """Write pairs as JSONL; returns how many."""
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        for pair in pairs:
            out.write(pair.to_json() + "\n")
            n += 1
    return n
