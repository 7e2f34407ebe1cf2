"""The judge interface: a :class:`Judgment` per document and the :class:`Judge` protocol every backend follows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Judgment:
    """One verdict on one (query, document) pair.

    ``grade`` is ``None`` when the pair is **unjudged**: the backend got no valid verdict after its retries.
    Such a pair is kept and counted, never dropped and never given a guessed grade. ``raw`` is what the backend
    produced (the model's message content, a similarity, or the last error).

    >>> Judgment(2, "answers the question", '{"grade": 2, "reason": "answers the question"}').judged
    True
    >>> Judgment(None, "no valid verdict after 5 attempts", "HTTP 500").judged
    False
    """

    grade: int | None
    reason: str
    raw: str

    @property
    def judged(self) -> bool:
        """Whether the pair got a grade."""
        return self.grade is not None


@runtime_checkable
class Judge(Protocol):
    """What every backend does: grade each document for the query, one :class:`Judgment` per document, in order.

    ``identity`` is the cache key's prefix ``(endpoint, model, prompt version)``: two judges with the same
    identity must give the same verdicts, so a cached verdict can stand for a new request.

    >>> class Constant:
    ...     identity = ("local:constant", "constant", "v1")
    ...     def judge(self, query, documents):
    ...         return [Judgment(1, "always 1", "1") for _ in documents]
    >>> isinstance(Constant(), Judge)
    True
    """

    identity: tuple[str, str, str]

    def judge(self, query: str, documents: Sequence[str]) -> list[Judgment]:
        """One judgment per document, in the order given."""
        ...
