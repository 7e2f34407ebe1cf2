"""Match the reference contexts of a RAG sample to its retrieved chunks, by id or by normalised text.

Two results per sample:

* the **match relation** — which retrieved positions match which references (many-to-many). RAGAS's
  non-LLM context precision/recall are defined on it (:mod:`ranklens.rag.context`);
* a **one-to-one assignment** — the document ids written to the qrels (every reference, relevant) and to
  the run (every retrieved chunk, in rank order), so that every ranklens measure applies unchanged. Each
  reference is credited to the first retrieved chunk (in rank order) that matches it and has not been
  credited yet; a later chunk matching only references already credited is a repeat and is not relevant.

Rules (``match=``):

* ``id``: entries are equal when their ids are equal (exactly, as strings);
* ``text``: equal when their texts are equal after :func:`normalize` (NFKC, casefold, whitespace collapsed);
* ``contains``: as ``text``, or one normalised text contains the other (a chunk holding a whole reference
  passage, or a chunk cut out of one);
* ``auto``: ``id`` when every entry on both sides has an id, else ``text``.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass

from ranklens.errors import FormatError
from ranklens.rag.inputs import Context, RagSample

__all__ = ["MATCH_RULES", "Matched", "match_sample", "normalize", "text_id"]

MATCH_RULES = ("auto", "id", "text", "contains")


def normalize(text: str) -> str:
    """Unicode NFKC, casefolded, runs of whitespace collapsed to one space, trimmed.

    >>> normalize("  The\\u00a0Eiffel   TOWER\\n is in ﬁne Paris ")
    'the eiffel tower is in fine paris'
    """
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_id(text: str) -> str:
    """A stable document id for a context known only by its text: ``t:`` and 16 hex digits of the BLAKE2b
    hash of its normalised text, so the same chunk gets the same id in every file and every system.

    >>> text_id("Paris is the capital.") == text_id("  paris IS the capital. ")
    True
    >>> text_id("Paris")[:2]
    't:'
    """
    return "t:" + hashlib.blake2b(normalize(text).encode("utf-8"), digest_size=8).hexdigest()


@dataclass(frozen=True)
class Matched:
    """One sample after matching.

    Attributes:
        relevant: per retrieved position, whether it matches any reference (the relation).
        found: per reference, whether any retrieved chunk matches it (the relation).
        run_docs: the document id of every retrieved position (distinct within the sample).
        qrels_docs: the document id and grade of every (distinct) reference.
        credited: per retrieved position, whether the one-to-one assignment made it relevant.
        repeats: retrieved positions that match only references already credited to a better rank.
        duplicate_references: references dropped because an earlier reference is the same context.
        unmatched: positions matching no reference (the candidates a judge may grade).
    """

    relevant: tuple[bool, ...]
    found: tuple[bool, ...]
    run_docs: tuple[str, ...]
    qrels_docs: tuple[tuple[str, int], ...]
    credited: tuple[bool, ...]
    repeats: int
    duplicate_references: int
    unmatched: tuple[int, ...]


def _rule(sample: RagSample, match: str) -> str:
    if match not in MATCH_RULES:
        raise FormatError(sample.where, f"unknown match rule '{match}'; expected one of {', '.join(MATCH_RULES)}")
    if match != "auto":
        return match
    entries = (*sample.retrieved, *sample.reference)
    return "id" if all(c.id is not None for c in entries) else "text"


def _key(c: Context, rule: str, sample: RagSample, side: str, i: int) -> str:
    if rule == "id":
        if c.id is None:
            raise FormatError(sample.where, f"{side} context {i + 1} has no id; match by text (--match text) or give every context an id")
        return c.id
    if c.text is None:
        raise FormatError(sample.where, f"{side} context {i + 1} has no text; match by id (--match id) or give every context a text")
    return normalize(c.text)


def _doc_id(c: Context, key: str, rule: str) -> str:
    if rule == "id":
        return key
    return c.id if c.id is not None else text_id(c.text or "")


def match_sample(sample: RagSample, *, match: str = "auto", grade: int = 1) -> Matched:
    """Match one sample's references to its retrieved chunks (see the module's rules).

    ``grade``: the label of a reference that gives none (a reference object's ``grade`` wins).

    >>> from ranklens.rag.inputs import Context, RagSample
    >>> s = RagSample("q", None, (Context(text="b"), Context(text="A  "), Context(text="a")), (Context(text="a"),), "s:1")
    >>> m = match_sample(s)
    >>> m.relevant, m.credited, m.repeats
    ((False, True, True), (False, True, False), 1)
    """
    rule = _rule(sample, match)
    ref_keys: list[str] = []
    qrels_docs: list[tuple[str, int]] = []
    dup_refs = 0
    for i, c in enumerate(sample.reference):
        key = _key(c, rule, sample, "reference", i)
        if key in ref_keys:
            dup_refs += 1
            continue
        ref_keys.append(key)
        qrels_docs.append((_doc_id(c, key, rule), c.grade if c.grade is not None else grade))
    ref_index = {k: j for j, k in enumerate(ref_keys)}
    ref_doc_ids = {d for d, _ in qrels_docs}
    found = [False] * len(ref_keys)
    credited_refs = [False] * len(ref_keys)
    relevant: list[bool] = []
    credited: list[bool] = []
    run_docs: list[str] = []
    used: set[str] = set()
    repeats = 0
    unmatched: list[int] = []
    for i, c in enumerate(sample.retrieved):
        key = _key(c, rule, sample, "retrieved", i)
        if rule == "contains":
            hits = [j for j, r in enumerate(ref_keys) if key and r and (r in key or key in r)]
        else:
            hits = [ref_index[key]] if key in ref_index else []
        for j in hits:
            found[j] = True
        relevant.append(bool(hits))
        take = next((j for j in hits if not credited_refs[j]), None)
        if take is not None:
            credited_refs[take] = True
            doc = qrels_docs[take][0]
        else:
            if hits:
                repeats += 1
            else:
                unmatched.append(i)
            doc = _doc_id(c, key, rule)
            if doc in ref_doc_ids or doc in used:  # never relevant by accident, never a duplicate row
                doc = f"{doc}#{i + 1}"
        credited.append(take is not None)
        used.add(doc)
        run_docs.append(doc)
    return Matched(
        tuple(relevant), tuple(found), tuple(run_docs), tuple(qrels_docs), tuple(credited), repeats, dup_refs,
        tuple(unmatched),
    )
