"""Measures of agreement with the ideal ordering: Compat (Clarke, Vtyurina & Smucker, TOIS 2021) and
Accuracy (ir_measures' pairwise diagnosis) — definitions only; kernels in
:mod:`ranklens.engine.kernels.agreement`.
"""

from __future__ import annotations

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, Param
from ranklens.measures.definitions import REL
from ranklens.measures.registry import register

__all__ = ["AGREEMENT_FAMILIES"]


def _check_p(m: Measure) -> None:
    if not 0 < m.get("p") < 1:
        raise MeasureError(f"{m}: p must be in (0, 1); got {m.get('p')}")


AGREEMENT_FAMILIES: tuple[Family, ...] = (
    Family(
        "Compat",
        "Compatibility: the rank-biased overlap RBO_p of the run with the ideal ranking (the documents with label "
        "≥ rel, by label descending, equal labels in the run's order, retrieved before unretrieved), to depth "
        "D = max(retrieved, relevant): Σ_{i≤D} p^(i−1)·|run_i ∩ ideal_i|/i over Σ_{i≤D} p^(i−1); normalize=true "
        "divides by the ideal's own RBO instead (1 for the ideal ranking; 0 with no relevant document).",
        params=(
            Param("p", "float", 0.95, "persistence p in (0, 1) of the rank-biased overlap"),
            Param("normalize", "bool", True, "divide by the ideal ranking's RBO at the same depth"),
            REL,
        ),
        cutoff="none",
        reference="Clarke, Vtyurina & Smucker, TOIS 2021",
        example="Compat, Compat(p=0.8)",
        check=_check_p,
    ),
    Family(
        "Accuracy",
        "The fraction of (relevant, non-relevant) pairs of retrieved documents (top k) in which the relevant one "
        "is ranked first: 1 − Σ_{relevant d} (non-relevant above d) / (relevant × non-relevant). Unjudged "
        "documents are non-relevant. NA (left out of the mean) when the top k holds no such pair: no relevant "
        "or no non-relevant document (ir_measures skips the first and divides by zero on the second).",
        params=(REL,),
        aggregate="nanmean",
        reference="ir_measures (Piwowarski)",
        example="Accuracy, Accuracy@10, Accuracy(rel=2)@100",
        reads="top",
    ),
)

for _f in AGREEMENT_FAMILIES:
    register(_f)
