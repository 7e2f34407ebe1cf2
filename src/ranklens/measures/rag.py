"""RA-nWG@K and its companions: order-free, per-query normalised, rarity-aware measures of the *set* of
passages a RAG system hands to its generator (Dallaire, arXiv:2511.09545, spec §6).

Families (canonical names first; ``RA-nWG`` and ``N-Recall5`` are accepted aliases):

==================  =============================  =================================================
ranklens            paper                          value per query (NaN = NA, excluded from the mean)
==================  =============================  =================================================
``RAnWG@K``         RA-nWG@K                       G_obs(K) / G_ideal(K); NA when G_ideal(K) = 0
``NRecall4p@K``     N-Recall4+@K                   #(grade ≥ 4 in TopK) / min(K, n4 + n5); NA if none
``NRecall5@K``      N-Recall5@K                    #(grade 5 in TopK) / min(K, n5); NA if n5 = 0
``Precision4p@K``   Precision4+@K                  #(grade ≥ 4 in TopK) / K
``Harm@K``          Harm@K                         #(judged grade ≤ 2 in TopK) / K
``PROC@K``          PROC@K                         best K of the candidate pool / G_ideal(K)
``PctPROC@K``       %PROC                          RA-nWG@K / PROC@K (NA when PROC is 0 or NA)
==================  =============================  =================================================

Grades are read on the paper's 1–5 scale through the parameter ``top``: label ``top`` plays grade 5,
``top − 1`` grade 4, ``top − 2`` grade 3, lower labels grades 2 and 1 (weight 0). Labels above ``top``
count as ``top``. Retrieved passages without a judgement weigh 0 and are not counted as harmful.

Weights (per query, from the pool of every judged passage of the query): ``p_g = n_g / N``,
``r_g = b_g / p_g^alpha``, ``w5 = 1``, ``w4 = min(r4/r5, cap4)``, ``w3 = min(r3/r5, cap3)``; when the pool
has no grade-5 passage, ``w = (1, fallback4, fallback3)``. ``N`` cancels, so adding judged grade-1/2
passages never changes the weights.

**Set semantics.** TopK is the first K documents of the run in the engine's order: score descending,
ties by document id descending (trec_eval). With ``ties=average`` a tie group straddling the cut
contributes its mean value times the number of its slots inside the cut: the expectation over every
ordering of the tied documents, so the value no longer depends on document ids. Within the set the order
never matters.

**PROC.** The pool-restricted oracle ceiling needs a candidate pool. ``PROC(depth=D)@K`` takes the run's
own top ``D`` documents as the pool (``D = 0``: everything retrieved) — right when the run is the
reranker's output over its whole candidate list. When the pool is a different run (the first stage's
Top-50), use :func:`ranklens.rag.evaluate_rag` (``pool=``), which evaluates the pool run with ``PROC``
and the system run with ``RAnWG`` on the same queries.
"""

from __future__ import annotations

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, Param
from ranklens.measures.registry import families, register

__all__ = ["RAG_FAMILIES", "SET_PARAMS", "WEIGHT_PARAMS"]

TOP = Param(
    "top",
    "int",
    5,
    "the label that plays grade 5 of the paper's 1–5 scale (top−1 is grade 4, top−2 grade 3, lower labels "
    "grades 2 and 1); e.g. top=4 for a 0–4 scale",
    minimum=1,
)
SET_TIES = Param(
    "ties",
    "choice",
    "trec",
    "how the run is cut to its top-K set: trec = score desc, ties by doc id desc; average = the expectation "
    "over the orderings of documents tied at the cut",
    choices=("trec", "average"),
)
B5 = Param("b5", "float", 1.0, "base utility of grade 5 (RA-nWG)", minimum=0)
B4 = Param("b4", "float", 0.5, "base utility of grade 4 (RA-nWG)", minimum=0)
B3 = Param("b3", "float", 0.1, "base utility of grade 3 (RA-nWG)", minimum=0)
ALPHA = Param("alpha", "float", 1.0, "rarity exponent: r_g = b_g / p_g^alpha (0 = no rarity)", minimum=0)
CAP4 = Param("cap4", "float", 1.0, "cap of the grade-4 weight relative to grade 5", minimum=0)
CAP3 = Param("cap3", "float", 0.25, "cap of the grade-3 weight relative to grade 5", minimum=0)
FALLBACK4 = Param("fallback4", "float", 1.0, "grade-4 weight when the query has no grade-5 passage", minimum=0)
FALLBACK3 = Param("fallback3", "float", 0.2, "grade-3 weight when the query has no grade-5 passage", minimum=0)
POOL_DEPTH = Param(
    "depth",
    "int",
    0,
    "the candidate pool of PROC: the run's top `depth` documents (0 = every retrieved document)",
    minimum=0,
)

WEIGHT_PARAMS: tuple[Param, ...] = (TOP, B5, B4, B3, ALPHA, CAP4, CAP3, FALLBACK4, FALLBACK3)
SET_PARAMS: tuple[Param, ...] = (TOP, SET_TIES)

_REF = "Dallaire, arXiv:2511.09545 (2025)"


def _check_weights(m: Measure) -> None:
    if m.get("b5") <= 0:
        raise MeasureError(f"{m}: b5 must be > 0 (the weights are relative to grade 5)")


def _check_proc(m: Measure) -> None:
    _check_weights(m)
    depth = m.get("depth")
    if depth and m.cutoff is not None and depth < m.cutoff:
        raise MeasureError(f"{m}: the pool depth ({depth}) must be ≥ the cutoff K ({m.cutoff}), or 0 for all")


RAG_FAMILIES: tuple[Family, ...] = (
    Family(
        "RAnWG",
        "Rarity-aware normalised weighted gain of the top-K set: Σ w(grade) over TopK / the best Σ over any "
        "K judged passages; weights from base utilities, rarity p_g^alpha and caps (fallback without "
        "grade 5). NA (excluded from the mean, counted in the notes) when the ideal is 0.",
        params=(*WEIGHT_PARAMS, SET_TIES),
        cutoff="required",
        aggregate="nanmean",
        aliases=("RA-nWG", "ranwg"),
        reference=_REF,
        example="RAnWG@10, RAnWG(alpha=0,cap3=0.33)@20",
        check=_check_weights,
    ),
    Family(
        "NRecall4p",
        "Normalised recall of grade ≥ 4 passages: their count in TopK / min(K, n4 + n5); NA when the query "
        "has none.",
        params=SET_PARAMS,
        cutoff="required",
        aggregate="nanmean",
        aliases=("nrecall4plus",),
        reference=_REF,
        example="NRecall4p@10",
    ),
    Family(
        "NRecall5",
        "Normalised recall of grade-5 passages: their count in TopK / min(K, n5); NA when n5 = 0.",
        params=SET_PARAMS,
        cutoff="required",
        aggregate="nanmean",
        aliases=("N-Recall5",),
        reference=_REF,
        example="NRecall5@10",
    ),
    Family(
        "Precision4p",
        "Fraction of the K slots holding a grade ≥ 4 passage.",
        params=SET_PARAMS,
        cutoff="required",
        aliases=("precision4plus",),
        reference=_REF,
        example="Precision4p@10",
    ),
    Family(
        "Harm",
        "Fraction of the K slots holding a judged passage of grade ≤ 2 (distractors).",
        params=SET_PARAMS,
        cutoff="required",
        reference=_REF,
        example="Harm@10",
    ),
    Family(
        "PROC",
        "Pool-restricted oracle ceiling: the best RA-nWG weight sum of K passages from the candidate pool "
        "(the run's top `depth`) / the ideal over all judged passages. NA when the ideal is 0.",
        params=(*WEIGHT_PARAMS, POOL_DEPTH),
        cutoff="required",
        aggregate="nanmean",
        reference=_REF,
        example="PROC@10, PROC(depth=50)@10",
        check=_check_proc,
    ),
    Family(
        "PctPROC",
        "%PROC, utilisation of the pool: RAnWG@K / PROC@K over the same pool (the run's top `depth`). NA "
        "when PROC is 0 or NA.",
        params=(*WEIGHT_PARAMS, POOL_DEPTH, SET_TIES),
        cutoff="required",
        aggregate="nanmean",
        aliases=("pct_proc",),
        reference=_REF,
        example="PctPROC(depth=50)@10",
        check=_check_proc,
    ),
)


def _register() -> None:
    registered = families()  # (not get_family's MeasureError: its did-you-mean would import difflib on every start)
    for family in RAG_FAMILIES:
        if family not in registered:
            register(family)


_register()
