"""The ``alpha-nDCG`` measure family: a definition only.

Its kernel is :func:`ranklens.engine.kernels.diversity.alpha_ndcg_values`; reading intent-level qrels and
the entry points (:func:`ranklens.diversity.evaluate_diversity`, ``ranklens diversity``) live in
:mod:`ranklens.diversity`. The family is registered with the other built-in families by
:mod:`ranklens.measures`, so the measure language, ``ranklens measures`` and :class:`~ranklens.Results`
lookups know ``alpha-nDCG@10``.
"""

from __future__ import annotations

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, Param

__all__ = ["ALPHA_NDCG", "DIVERSITY_FAMILIES"]


def _check(m: Measure) -> None:
    if not 0.0 <= m.get("alpha") <= 1.0:
        raise MeasureError(f"{m}: alpha must be in [0, 1]; got {m.get('alpha')}")


ALPHA_NDCG = Family(
    "alpha-nDCG",
    "α-nDCG@k over intent-level qrels (qid intent docid rel): gain of the document at rank j = Σ over its "
    "intents of (1−α)^(times the intent was covered above j), discounted by log2(j+1), divided by the "
    "same for a greedy ideal (ties: document id ascending). Computed by `ranklens diversity` and "
    "ranklens.diversity.evaluate_diversity, not by `ranklens eval` (standard qrels carry no intents).",
    params=(
        Param("alpha", "float", 0.5, "redundancy penalty α in [0, 1]: each repeat of an intent gains (1−α)× less"),
        Param("rel", "int", 1, "an intent judgement counts when its label is ≥ rel"),
    ),
    cutoff="required",
    aliases=("alpha_ndcg", "andcg"),
    reference="Clarke et al., SIGIR 2008",
    example="alpha-nDCG@10, alpha-nDCG(alpha=0.3)@20",
    check=_check,
    needs=("intents",),
    computed_by="`ranklens diversity QRELS RUN -m {m}` or ranklens.diversity.evaluate_diversity(qrels, run, measures)",
)

DIVERSITY_FAMILIES: tuple[Family, ...] = (ALPHA_NDCG,)
