"""The intent-aware measures (ndeval's set: α-nDCG, α-DCG, ERR-IA, nERR-IA, NRBP, nNRBP, P-IA, AP-IA,
StRecall): definitions only.

They read intent-level qrels (``qid intent docid rel``, the TREC diversity format): ``--intents FILE`` on
``ranklens eval``/``compare``/``gate``/``explain``/``ab``, ``intents=`` of the Evaluator, or ``ranklens
diversity``. An intent counts for a document when its intent label is ≥ ``rel``; S is the number of intents
of the query with at least one relevant document, G_j = Σ_{intents of d_j} (1 − α)^(times the intent was
covered above j), and every measure is 0 when S = 0. The greedy ideal takes, at each rank, the judged
document with the largest marginal gain, equal gains going to the larger document id (ndeval).

Where ndeval (the TREC Web track's tool; pyndeval) departs from these definitions, ranklens follows the
definition and the departure is tested against a hand implementation: ndeval leaves ERR-IA@1 and α-DCG@1
unnormalised, gives nNRBP = NaN when S = 0 and stops at k = 20. Kernels:
:mod:`ranklens.engine.kernels.intent_aware` and :mod:`ranklens.engine.kernels.diversity`.
"""

from __future__ import annotations

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, Param

__all__ = ["ALPHA_NDCG", "DIVERSITY_FAMILIES", "INTENT_FAMILIES"]


def _check(m: Measure) -> None:
    names = {p.name for p in m.family.params}
    if "alpha" in names and not 0.0 <= m.get("alpha") <= 1.0:
        raise MeasureError(f"{m}: alpha must be in [0, 1]; got {m.get('alpha')}")
    if "beta" in names and not 0.0 < m.get("beta") < 1.0:
        raise MeasureError(f"{m}: beta must be in (0, 1); got {m.get('beta')}")


ALPHA = Param("alpha", "float", 0.5, "redundancy penalty α in [0, 1]: each repeat of an intent gains (1−α)× less")
REL = Param("rel", "int", 1, "an intent judgement counts when its label is ≥ rel")
BETA = Param("beta", "float", 0.5, "patience β in (0, 1): the user goes on to the next rank with probability β")
_WHERE = (
    "`ranklens eval QRELS RUN --intents FILE -m {m}` (also compare, gate, explain, ab), "
    "ranklens.Evaluator(measures, qrels, intents=FILE) or ranklens.diversity.evaluate_diversity"
)
_SUFFIX = " Needs intent-level qrels (--intents FILE)."


def _intent_family(name: str, doc: str, params: tuple[Param, ...], cutoff: str, aliases: tuple[str, ...],
                   reference: str, example: str) -> Family:
    return Family(
        name, doc + _SUFFIX, params=params, cutoff=cutoff, aliases=aliases,  # type: ignore[arg-type]
        reference=reference, example=example, check=_check, needs=("intents",), computed_by=_WHERE,
    )


ALPHA_NDCG = _intent_family(
    "alpha-nDCG",
    "α-nDCG@k: α-DCG@k (gain G_j discounted by log2(j+1)) divided by the same for the greedy ideal (ties: "
    "document id descending, as ndeval).",
    (ALPHA, REL), "required", ("alpha_ndcg", "andcg", "alpha_nDCG", "α_nDCG", "α-nDCG"),
    "Clarke et al., SIGIR 2008", "alpha-nDCG@10, alpha-nDCG(alpha=0.3)@20",
)

INTENT_FAMILIES: tuple[Family, ...] = (
    _intent_family(
        "alpha-DCG",
        "α-DCG@k = Σ_{j≤k} G_j/log2(j+1), divided by S·Σ_{j≤k} (1−α)^(j−1)/log2(j+1) (every intent covered at "
        "every rank: ndeval's normalisation, at every k including 1).",
        (ALPHA, REL), "required", ("alpha_DCG", "α_DCG", "α-DCG"), "Clarke et al., SIGIR 2008; ndeval",
        "alpha-DCG@10",
    ),
    _intent_family(
        "ERR-IA",
        "Intent-aware ERR@k = Σ_{j≤k} G_j/j divided by S·Σ_{j≤k} (1−α)^(j−1)/j (ndeval; with binary intent "
        "grades and α = 0.5, the mean over intents of ERR normalised by its best value).",
        (ALPHA, REL), "required", ("ERR_IA",), "Chapelle et al., CIKM 2009; Clarke et al., ICTIR 2009; ndeval",
        "ERR-IA@20",
    ),
    _intent_family(
        "nERR-IA",
        "ERR-IA@k divided by the ERR-IA@k of the greedy ideal (collection-dependent normalisation).",
        (ALPHA, REL), "required", ("nERR_IA",), "ndeval", "nERR-IA@20",
    ),
    _intent_family(
        "NRBP",
        "Novelty- and rank-biased precision = (1 − (1−α)β)/S · Σ_j β^(j−1)·G_j, over the whole ranking.",
        (ALPHA, BETA, REL), "none", (), "Clarke, Kolla & Vechtomova, ICTIR 2009", "NRBP, NRBP(beta=0.8)",
    ),
    _intent_family(
        "nNRBP",
        "NRBP divided by the NRBP of the greedy ideal of every judged document (0 when that is 0; ndeval: NaN).",
        (ALPHA, BETA, REL), "none", (), "Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval", "nNRBP",
    ),
    _intent_family(
        "P-IA",
        "Intent-aware precision@k: the mean over the S intents of P@k = Σ_{j≤k} |intents of d_j| / (k·S).",
        (REL,), "required", ("P_IA",), "Agrawal et al., WSDM 2009", "P-IA@10",
    ),
    _intent_family(
        "AP-IA",
        "Intent-aware average precision: the mean over the S intents of the intent's AP over the whole ranking "
        "(its mean over queries is ndeval's MAP-IA).",
        (REL,), "none", ("AP_IA", "MAP_IA", "MAP-IA"), "Agrawal et al., WSDM 2009", "AP-IA",
    ),
    _intent_family(
        "StRecall",
        "Subtopic recall@k: the fraction of the S intents covered by the top k.",
        (REL,), "required", ("strec", "S-recall"), "Zhai, Cohen & Lafferty, SIGIR 2003", "StRecall@10",
    ),
)

DIVERSITY_FAMILIES: tuple[Family, ...] = (ALPHA_NDCG, *INTENT_FAMILIES)
