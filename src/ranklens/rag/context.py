"""RAGAS's non-LLM context precision and context recall (with reference contexts), on our match relation.

* **Context precision** of a retrieved list with relevance flags v_1 … v_n (v_k = 1 when retrieved chunk k
  matches some reference): Σ_k precision@k · v_k / Σ_k v_k, and 0 when nothing retrieved is relevant.
  It is average precision computed over the retrieved list only, with the number of relevant *retrieved*
  chunks — not the number of references — as the denominator.
* **Context recall**: the fraction of the (distinct) reference contexts that some retrieved chunk matches;
  undefined (NaN) without references.

RAGAS decides "matches" with a string similarity (Levenshtein by default) against a threshold; ranklens
uses the exact rules of :mod:`ranklens.rag.matching`. With the same relation the numbers are the same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ranklens.measures.base import Family, Measure

__all__ = ["CONTEXT_MEASURES", "CONTEXT_PRECISION", "CONTEXT_RECALL", "context_precision", "context_recall"]


def context_precision(relevant: Sequence[bool]) -> float:
    """Σ_k precision@k · v_k / Σ_k v_k over the retrieved list (0 when no retrieved chunk is relevant).

    >>> context_precision([True, False, True])  # (1/1 + 2/3) / 2
    0.8333333333333333
    >>> context_precision([False, False]), context_precision([])
    (0.0, 0.0)
    """
    hits = 0
    total = 0.0
    for k, rel in enumerate(relevant, 1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def context_recall(found: Sequence[bool]) -> float:
    """The fraction of reference contexts found among the retrieved ones; NaN without references.

    >>> context_recall([True, False, True, True])
    0.75
    >>> import math; math.isnan(context_recall([]))
    True
    """
    return sum(found) / len(found) if found else math.nan


# Not registered in the measure language: they are computed from the match relation of RAG samples, which
# the engine's qrels/run never see (a many-to-many relation; see ranklens.rag.matching).
_CP = Family(
    "ContextPrecision",
    "RAGAS non-LLM context precision with reference contexts: Σ precision@k·v_k / #relevant retrieved.",
    cutoff="none",
    aggregate="nanmean",
)
_CR = Family(
    "ContextRecall",
    "RAGAS non-LLM context recall: the fraction of reference contexts matched by a retrieved context.",
    cutoff="none",
    aggregate="nanmean",
)
CONTEXT_PRECISION = Measure(_CP, "ContextPrecision")
CONTEXT_RECALL = Measure(_CR, "ContextRecall")
CONTEXT_MEASURES = (CONTEXT_PRECISION, CONTEXT_RECALL)
