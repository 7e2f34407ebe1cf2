"""RAG samples → ranklens qrels and run: :func:`read_rag` and :func:`build_rag`.

The qrels hold every query's (distinct) reference contexts, relevant with grade 1 (or the grade given; with a
judge that has a scale, the top of its scale);
the run holds its retrieved contexts with scores n, n−1, …, 1 so that rank order = list order. Queries
without reference contexts are left out of both (nothing to find: every measure would be 0 or undefined)
and counted in the notes; a query with an empty retrieved list stays in the qrels only, so it scores 0
wherever unanswered queries score 0 (``ranklens rag``, ``gate``), and is counted too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.errors import FormatError, InputError
from ranklens.rag.context import context_precision, context_recall
from ranklens.rag.inputs import RagSample, _fail, read_samples
from ranklens.rag.matching import Matched, match_sample

__all__ = ["Judge", "RagData", "build_rag", "load_rag", "read_rag"]

Judge = Callable[[str | None, Sequence[str]], Sequence[int | None]]
"""Grades retrieved chunks that match no reference: called once per query with the query text and the
chunk texts; returns one grade per text, or None where it gives no verdict (counted as unjudged).

A judge may also have ``grade_many(requests)`` (a list of ``(query text, texts)``; one list of grades per
request): it is then called once for the whole file, so it can ask for many queries' chunks at once
(:class:`ranklens.judges.RagJudge` does, on ``concurrency`` threads). A judge with a ``scale`` (``low``, ``high``,
``version``) puts the references at the top of that scale (see :func:`build_rag`)."""


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True)
class RagData:
    """Everything read from one RAG sample file.

    Attributes:
        qrels: the references (and any judged chunks) as judgements.
        run: the retrieved lists as a run named after the file.
        notes: what was left out, repeated, unmatched or unjudged.
        context: per query id (the queries with references), RAGAS context precision and recall.
        unjudged: retrieved chunks that match no reference and have no judge grade.
    """

    qrels: Qrels
    run: Run
    notes: tuple[str, ...]
    context: dict[str, tuple[float, float]] = field(default_factory=dict)
    unjudged: int = 0


def _asked(sample: RagSample, m: Matched) -> tuple[list[int], int]:
    """The positions among ``m.unmatched`` with a text to judge, and how many have none."""
    asked = [i for i in m.unmatched if sample.retrieved[i].text]
    return asked, len(m.unmatched) - len(asked)


def _grades(judge: Judge, requests: list[tuple[RagSample, list[int]]]) -> list[Sequence[int | None]]:
    """One list of grades per request: from ``judge.grade_many`` in one call when it has one, else per query."""
    texts = [(sample.query, [sample.retrieved[i].text or "" for i in asked]) for sample, asked in requests]
    many = getattr(judge, "grade_many", None)
    if callable(many):
        out = list(many(texts))
        if len(out) != len(texts):
            raise InputError(f"the judge returned {len(out)} lists of grades for {len(texts)} queries")
        return out
    return [judge(query, chunk_texts) for query, chunk_texts in texts]


def _judged(sample: RagSample, m: Matched, asked: list[int], grades: Sequence[int | None]) -> tuple[list[tuple[str, int]], int]:
    """The judged (doc, grade) pairs of one sample, and how many of ``asked`` stayed unjudged."""
    grades = list(grades)
    if len(grades) != len(asked):
        raise InputError(f"the judge returned {len(grades)} grades for {len(asked)} texts (query {sample.query_id})")
    out = []
    unjudged = 0
    for i, g in zip(asked, grades):
        if g is None:
            unjudged += 1
        elif isinstance(g, bool) or not isinstance(g, int):
            raise InputError(f"the judge returned {g!r} for query {sample.query_id}; expected an integer grade or None")
        else:
            out.append((m.run_docs[i], g))
    return out, unjudged


def _reference_grade(grade: int | None, judge: Judge | None) -> tuple[int, str | None]:
    """The label of a reference without its own grade, and the note that says which scale was used.

    Without a judge: ``grade`` (default 1). With a judge that has a scale: its top grade — references are the
    answers, so no chunk the judge grades may outrank them; any other ``grade`` is refused (mixed scales).
    """
    scale = getattr(judge, "scale", None) if judge is not None else None
    if scale is None:
        return (1 if grade is None else grade), None
    low, high = scale.low, scale.high
    if grade is not None and grade != high:
        raise InputError(
            f"references graded {grade} (--grade) would sit below chunks the judge grades up to {high} (its scale is "
            f"{low}..{high}): give the references the top grade (--grade {high}, or leave --grade out)")
    return high, f"references graded {high}, the top of the judge's scale {low}..{high} ({scale.version})"


def build_rag(
    samples: Sequence[RagSample],
    *,
    source: str = "<rag>",
    name: str = "rag",
    match: str = "auto",
    grade: int | None = None,
    judge: Judge | None = None,
) -> RagData:
    """Match every sample and build the qrels, the run, the context measures and the notes.

    Args:
        samples: from :func:`ranklens.rag.inputs.read_samples`.
        match: ``auto``, ``id``, ``text`` or ``contains`` (:mod:`ranklens.rag.matching`).
        grade: the label of a reference context that gives none (default 1; with a judge that has a scale, the
            top of that scale, and no other value is accepted: references must not sit below judged chunks).
        judge: grades the retrieved chunks that match no reference (see :data:`Judge`); without one they
            are not in the qrels (non-relevant for every measure) and are counted as unjudged.

    >>> from ranklens.rag.inputs import parse_samples
    >>> s = parse_samples("s.jsonl", '{"query_id": "q1", "retrieved": ["b", "a"], "reference": ["a"]}', bare_ids=True)
    >>> data = build_rag(s)
    >>> data.qrels.to_dict(), data.run.to_dict(), data.context
    ({'q1': {'a': 1}}, {'q1': {'b': 2.0, 'a': 1.0}}, {'q1': (0.5, 1.0)})
    """
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)):
        raise InputError(f"grade must be an integer; got {grade!r}")
    ref_grade, scale_note = _reference_grade(grade, judge)
    scale = getattr(judge, "scale", None) if judge is not None else None
    matched: list[tuple[RagSample, Matched]] = []
    for sample in samples:
        m = match_sample(sample, match=match, grade=ref_grade)
        if scale is not None:
            off = [g for _, g in m.qrels_docs if not scale.low <= g <= scale.high]
            if off:
                raise _fail(sample.where, f"a reference has grade {off[0]}, off the judge's scale {scale.low}..{scale.high}; "
                          "expected grades on the judge's scale (mixed scales are refused)")
        matched.append((sample, m))
    # every chunk to judge, asked in one go (so a judge can ask many queries' chunks at once)
    requests: list[tuple[RagSample, list[int]]] = []
    textless: dict[str, int] = {}
    if judge is not None:
        for sample, m in matched:
            if m.qrels_docs and m.unmatched:
                asked, textless[sample.query_id] = _asked(sample, m)
                if asked:
                    requests.append((sample, asked))
    graded = dict(zip((smp.query_id for smp, _ in requests), _grades(judge, requests))) if judge and requests else {}
    asked_at = {smp.query_id: asked for smp, asked in requests}
    q_q: list[str] = []
    q_d: list[str] = []
    q_l: list[int] = []
    r_q: list[str] = []
    r_d: list[str] = []
    r_s: list[float] = []
    context: dict[str, tuple[float, float]] = {}
    no_ref = empty = repeats = dup_refs = unmatched = unjudged = judged = 0
    for sample, m in matched:
        dup_refs += m.duplicate_references
        if not m.qrels_docs:
            no_ref += 1
            continue
        if not m.run_docs:
            empty += 1
        repeats += m.repeats
        unmatched += len(m.unmatched)
        pairs = list(m.qrels_docs)
        if judge is not None and m.unmatched:
            qid = sample.query_id
            extra, missing = _judged(sample, m, asked_at.get(qid, []), graded.get(qid, []))
            pairs += extra
            judged += len(extra)
            unjudged += missing + textless.get(qid, 0)
        else:
            unjudged += len(m.unmatched)
        for doc, g in pairs:
            q_q.append(sample.query_id)
            q_d.append(doc)
            q_l.append(g)
        n = len(m.run_docs)
        for i, doc in enumerate(m.run_docs):
            r_q.append(sample.query_id)
            r_d.append(doc)
            r_s.append(float(n - i))
        context[sample.query_id] = (context_precision(m.relevant), context_recall(m.found))
    if not q_q:
        raise FormatError(source, f"expected reference contexts; found none in {_plural(len(samples), 'sample', 'samples')}")
    notes: list[str] = []
    if no_ref:
        notes.append(f"{_plural(no_ref, 'query has', 'queries have')} no reference context: left out")
    if empty:
        notes.append(f"{_plural(empty, 'query has', 'queries have')} an empty retrieved list: scored 0")
    if dup_refs:
        notes.append(f"{_plural(dup_refs, 'reference context repeats', 'reference contexts repeat')} an earlier one of its query: counted once")
    if repeats:
        notes.append(
            f"{_plural(repeats, 'retrieved chunk matches', 'retrieved chunks match')} only references already "
            "matched higher up: not relevant in the qrels/run measures (relevant in ContextPrecision)"
        )
    if judge is not None:
        notes.append(f"the judge graded {judged} of {unmatched} retrieved chunks matching no reference; {unjudged} unjudged")
        if scale_note:
            notes.append(scale_note)
    elif unmatched:
        notes.append(f"{_plural(unmatched, 'retrieved chunk matches', 'retrieved chunks match')} no reference: unjudged, counted as not relevant")
    qrels = Qrels.from_arrays(q_q, q_d, q_l, source=source)
    run = Run.from_arrays(r_q, r_d, r_s, name=name, source=source)
    return RagData(qrels, run, tuple(notes), context, unjudged)


def load_rag(
    path: str | os.PathLike[str],
    *,
    layout: str | None = None,
    match: str = "auto",
    grade: int | None = None,
    judge: Judge | None = None,
    name: str | None = None,
) -> RagData:
    """:func:`build_rag` over the samples of the file at ``path``; the run is named after the file.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "dense.jsonl"
    >>> _ = p.write_text('{"query": "a", "expected_ids": ["d1"], "retrieved_ids": ["d2", "d1"]}\\n')
    >>> data = load_rag(p)
    >>> data.run.name, data.context
    ('dense', {'q1': (0.5, 1.0)})
    """
    from ranklens.data.names import run_name_of

    display = os.fspath(path)
    samples = read_samples(path, layout=layout, bare_ids=match == "id")
    return build_rag(samples, source=display, name=name or run_name_of(display), match=match, grade=grade, judge=judge)


def read_rag(
    path: str | os.PathLike[str],
    *,
    layout: str | None = None,
    match: str = "auto",
    grade: int | None = None,
    judge: Judge | None = None,
) -> tuple[Qrels, Run, tuple[str, ...]]:
    """``(qrels, run, notes)`` from a RAG sample file (JSONL or JSON; layouts in :mod:`ranklens.rag.inputs`).

    >>> import pathlib, tempfile, ranklens
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = p.write_text('{"user_input": "capital?", "retrieved_contexts": ["Lyon.", "Paris."], "reference_contexts": ["paris."]}\\n')
    >>> qrels, run, notes = read_rag(p)
    >>> ranklens.evaluate(qrels, run, ["RR", "P@2"]).aggregates
    (0.5, 0.5)
    >>> notes
    ('1 retrieved chunk matches no reference: unjudged, counted as not relevant',)
    """
    data = load_rag(path, layout=layout, match=match, grade=grade, judge=judge)
    return data.qrels, data.run, data.notes
