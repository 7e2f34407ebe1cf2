"""A judge as the grading hook of :func:`ranklens.rag.read_rag`: ``hook(query_text, texts) -> [grade | None]``.

Every call goes through :func:`ranklens.judges.judge_pairs`, so verdicts come from the same SQLite cache as
``ranklens judge run`` (keyed by endpoint, model, prompt version, query text and the text's hash): a rerun sends no
request for what was judged. :meth:`RagJudge.grade_many` judges the chunks of every query of a file in one
``judge_pairs`` call, ``concurrency`` requests at a time (the RAG reader uses it). A text without a verdict after the
retries is ``None`` — unjudged, counted by the RAG reader — and so is every text of a sample without a query text
(there is nothing to judge it against). ``scale`` is the judge's: the RAG reader puts references at its top.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ranklens.judges.cache import JudgeCache
from ranklens.judges.pairs import Pair
from ranklens.judges.runner import judge_pairs
from ranklens.judges.types import Judge

__all__ = ["RagJudge"]


class RagJudge:
    """Adapt ``judge`` (any :class:`~ranklens.judges.Judge`) to the RAG hook, with running totals.

    >>> from ranklens.judges import Judgment
    >>> class Short:
    ...     identity = ("local:short", "short", "v1")
    ...     def judge(self, query, documents):
    ...         return [Judgment(1 if len(d) < 10 else 0, "length rule", d) for d in documents]
    >>> hook = RagJudge(Short())
    >>> hook("capital of France?", ["Paris.", "Lyon is a large city."]), hook(None, ["Paris."])
    ([1, 0], [None])
    >>> hook.asked, hook.unjudged, hook.from_cache
    (3, 1, 0)
    >>> hook.grade_many([("capital of France?", ["Paris."]), ("", ["x"])])
    [[1], [None]]
    """

    def __init__(self, judge: Judge, *, cache: JudgeCache | None = None, concurrency: int = 1) -> None:
        self.judge, self.cache, self.concurrency = judge, cache, concurrency
        self.asked = self.from_cache = self.unjudged = self.no_query = 0
        self.notes: list[str] = []

    @property
    def scale(self) -> Any:
        """The judge's grade scale (``low``, ``high``, ``version``), or None when it has none."""
        return getattr(self.judge, "scale", None)

    def __call__(self, query: str | None, texts: Sequence[str]) -> list[int | None]:
        """One grade (or ``None``) per text, in order."""
        return self.grade_many([(query, texts)])[0]

    def grade_many(self, requests: Sequence[tuple[str | None, Sequence[str]]]) -> list[list[int | None]]:
        """One list of grades per ``(query text, texts)``, all judged in one run of ``concurrency`` threads."""
        pairs: list[Pair] = []
        slots: list[list[int | None]] = []
        for r, (query, texts) in enumerate(requests):
            self.asked += len(texts)
            slots.append([None] * len(texts))
            if query is None or not query.strip():
                self.no_query += len(texts)
                self.unjudged += len(texts)
                continue
            pairs += [Pair(f"r{r}", query, f"{r}:{i}", text) for i, text in enumerate(texts)]
        if pairs:
            run = judge_pairs(pairs, self.judge, cache=self.cache, concurrency=self.concurrency)
            for pair, verdict in zip(pairs, run.judgments):
                r, i = (int(x) for x in pair.doc_id.split(":"))
                slots[r][i] = verdict.grade
            self.from_cache += run.from_cache
            self.unjudged += sum(j.grade is None for j in run.judgments)
            self.notes += [n for n in run.notes if n not in self.notes]
        return slots

    def summary(self) -> dict[str, Any]:
        """The totals, with the judge's request counters when it keeps them (``requests`` 0 otherwise)."""
        usage = getattr(self.judge, "usage", None)
        counters = usage.as_dict() if usage is not None else {}
        return {"asked": self.asked, "from_cache": self.from_cache, "unjudged": self.unjudged,
                "without_query": self.no_query, "requests": counters.get("requests", 0), "counters": counters,
                "notes": list(self.notes)}
