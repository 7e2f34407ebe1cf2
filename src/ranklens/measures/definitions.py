"""The built-in measure families. Defaults reproduce trec_eval v10 (``../shared/spec/METRICS.md``)."""

from __future__ import annotations

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, Param

REL = Param(
    "rel",
    "level",
    1,
    "relevance threshold: a document is relevant when its label is ≥ rel; with real-valued labels "
    "(labels=float) any number, and no default: give rel or rel_level (docs/labels.md)",
)
TIES = Param(
    "ties",
    "choice",
    "trec",
    "tie policy: trec = score desc then doc id desc (strcmp); average = expectation over the orderings "
    "of tied documents (McSherry & Najork 2008, as scikit-learn); input = score desc, ties in the run's row order",
    choices=("trec", "average", "input"),
)
GAIN = Param(
    "gain",
    "gain",
    "linear",
    "gain of a label: linear (g = label), exp (g = 2^label − 1), or a map {label: gain} "
    "(labels not listed keep gain = label, as trec_eval's ndcg parameters; in nDCG, DCG and IDCG a negative "
    "label named in the map has that gain instead of being pooled but unjudged)",
)
DISCOUNT = Param(
    "discount",
    "choice",
    "log2",
    "log2 = 1/log2(rank+1) (Burges, trec_eval, scikit-learn); log = 1/log_base(rank+1) (scikit-learn "
    "dcg_score log_base; cancels in nDCG); jk = Järvelin–Kekäläinen: ranks < base undiscounted, then "
    "1/log_base(rank)",
    choices=("log2", "log", "jk"),
)
BASE = Param("base", "int", 2, "the base b of the log and jk discounts (only with discount=log or jk)", minimum=2)
IDEAL = Param(
    "ideal",
    "choice",
    "global",
    "ideal ranking: global = all judged labels of the query (trec_eval); local = the retrieved top-k "
    "re-sorted; recall = the retrieved top-`depth` re-sorted; max = `max_rel` at every rank",
    choices=("global", "local", "recall", "max"),
)
DEPTH = Param("depth", "int", 0, "depth K of the recall ideal (required with ideal=recall)", minimum=0)
MAX_REL = Param(
    "max_rel", "int", 0, "the top grade of the label scale (ideal=max; ERR; MZRBP); 0 = the largest label in the qrels", minimum=0
)
NORM = Param(
    "norm",
    "choice",
    "ideal",
    "normalisation of nDCG: ideal = DCG/IDCG; minmax = (DCG − minDCG)/(IDCG − minDCG), where negative qrels "
    "labels are harmful documents with negative gain (linear: the label; exp: −(2^|label| − 1)) and minDCG "
    "is the DCG of the worst ordering of the ideal pool (Gienapp et al., CIKM 2020); in [0, 1]",
    choices=("ideal", "minmax"),
)


def _check_discount(m: Measure) -> None:
    if m.get("base") != 2 and m.get("discount") == "log2":
        raise MeasureError(
            f"{m}: base applies to discount=log or discount=jk, e.g. {m.name}(discount=log,base={m.get('base')})"
        )


def _check_ndcg(m: Measure) -> None:
    _check_discount(m)
    ideal = m.get("ideal")
    if ideal == "recall":
        depth = m.get("depth")
        if depth < 1:
            raise MeasureError(f"{m}: ideal=recall needs depth=K, e.g. nDCG(ideal=recall,depth=100)@10")
        if m.cutoff is None:
            raise MeasureError(f"{m}: ideal=recall needs a cutoff k ≤ depth, e.g. nDCG(ideal=recall,depth=100)@10")
        if depth < m.cutoff:
            raise MeasureError(f"{m}: depth ({depth}) must be ≥ the cutoff ({m.cutoff})")
    elif m.get("depth"):
        raise MeasureError(f"{m}: depth applies only with ideal=recall")


def _check_rbp(m: Measure) -> None:
    p = m.get("p")
    if not 0 < p < 1:
        raise MeasureError(f"{m}: p must be in (0, 1); got {p}")


def _recall_ideal_depth(m: Measure) -> int:
    """nDCG/IDCG with the recall ideal also read the retrieved top-``depth`` rows (to re-sort them)."""
    return int(m.get("depth")) if m.get("ideal") == "recall" else 0


DCG_PARAMS = (GAIN, DISCOUNT, BASE, TIES)

FAMILIES: tuple[Family, ...] = (
    Family(
        "nDCG",
        "Normalised discounted cumulative gain: DCG@k / IDCG@k (0 when IDCG = 0). Without a cutoff, DCG "
        "runs over all retrieved documents (trec_eval ndcg); with @k it is trec_eval ndcg_cut.k.",
        params=(*DCG_PARAMS, IDEAL, DEPTH, MAX_REL, NORM),
        aliases=("ndcg",),
        reference="Järvelin & Kekäläinen, TOIS 2002; Burges et al., ICML 2005",
        example="nDCG@10, nDCG(gain=exp,ideal=local)@10, nDCG(norm=minmax)@10, nDCG(discount=log,base=10)@10",
        check=_check_ndcg,
        reads="top",
        reads_deeper=_recall_ideal_depth,
    ),
    Family(
        "DCG",
        "Discounted cumulative gain, unnormalised (trec_eval dcg). Mean DCG ranks systems consistently with "
        "expected reward where mean nDCG may not (spec §5).",
        params=DCG_PARAMS,
        example="DCG@10, DCG(discount=log,base=10)@10",
        check=_check_discount,
        reads="top",
    ),
    Family(
        "IDCG",
        "The ideal DCG that nDCG divides by (trec_eval ideal_dcg).",
        params=(GAIN, DISCOUNT, BASE, IDEAL, DEPTH, MAX_REL),
        example="IDCG@10, IDCG(discount=jk,base=3)@10",
        check=_check_ndcg,
        reads="top",
        reads_deeper=_recall_ideal_depth,
    ),
    Family(
        "P",
        "Precision: relevant documents in the top k, divided by k (k fixed even if fewer are retrieved).",
        params=(REL, TIES),
        cutoff="required",
        aliases=("precision",),
        example="P@10, P(rel=2)@5",
        reads="top",
    ),
    Family(
        "R",
        "Recall: relevant documents in the top k (all retrieved without a cutoff) divided by the number "
        "of relevant judged documents R (0 when R = 0).",
        params=(REL, TIES),
        aliases=("recall",),
        example="R@100",
        reads="top",
    ),
    Family(
        "RR",
        "Reciprocal rank of the first relevant document (0 if none in the top k); its mean is MRR.",
        params=(REL, TIES),
        aliases=("mrr", "reciprocal_rank"),
        example="RR, RR@10",
        reads="top",
    ),
    Family(
        "AP",
        "Average precision: sum of precision at each relevant rank (within the top k) divided by R "
        "(trec_eval map and map_cut.k); its mean is MAP.",
        params=(REL, TIES),
        aliases=("map",),
        reference="Buckley & Voorhees 2005",
        example="AP, AP@100",
        reads="top",
    ),
    Family(
        "Rprec",
        "R-precision: relevant documents in the top R, divided by R (0 when R = 0).",
        params=(REL,),
        cutoff="none",
        aliases=("r-prec", "rprecision", "r-precision", "r_precision"),
        example="Rprec",
    ),
    Family(
        "Success",
        "1 if at least one relevant document is in the top k, else 0 (HitRate@k).",
        params=(REL, TIES),
        cutoff="required",
        aliases=("hit", "hitrate", "hit_rate", "hr"),
        example="Success@10",
        reads="top",
    ),
    Family(
        "Bpref",
        "Binary preference over judged documents (trec_eval bpref, after the 2005 fix).",
        params=(REL,),
        cutoff="none",
        reference="Buckley & Voorhees, SIGIR 2004",
        example="Bpref",
    ),
    Family(
        "infAP",
        "Inferred AP for incomplete judgements (trec_eval infAP; negative qrels labels = pooled, unjudged).",
        params=(REL,),
        cutoff="none",
        aliases=("infap",),
        reference="Yilmaz & Aslam, CIKM 2006",
        example="infAP",
    ),
    Family(
        "ERR",
        "Expected reciprocal rank under the cascade model, R_i = (2^g − 1)/2^max_rel.",
        params=(MAX_REL,),
        reference="Chapelle et al., CIKM 2009",
        example="ERR@20, ERR(max_rel=4)@10",
        reads="top",
    ),
    Family(
        "MZRBP",
        "Moffat & Zobel's rank-biased precision (1−p)·Σ r_i p^(i−1) with r_i = min(label, max_rel)/max_rel "
        "(max_rel = 0 means binary at rel); the residual is MZRBPResidual. The trec_eval names rbp and RBP "
        "are trec_eval's graded RBP (TrecRBP).",
        params=(Param("p", "float", 0.9, "persistence p in (0,1) (trec_eval default 0.9)"), REL, MAX_REL),
        check=_check_rbp,
        reference="Moffat & Zobel, TOIS 2008",
        example="MZRBP, MZRBP(p=0.8)@20",
        reads="top",
    ),
    Family(
        "MZRBPResidual",
        "The RBP residual of Moffat & Zobel: (1−p)·Σ_{unjudged i ≤ n} p^(i−1) + p^n; the true RBP lies in "
        "[MZRBP, MZRBP + residual]. trec_eval's rbp_resid (TrecRBPResidual) is 0 when all are judged.",
        params=(Param("p", "float", 0.9, "persistence p in (0,1)"),),
        check=_check_rbp,
        example="MZRBPResidual(p=0.8)",
        reads="top",
    ),
    Family(
        "Judged",
        "Fraction of the top k retrieved documents that have a (non-negative) judgement; 0 if none retrieved.",
        params=(),
        cutoff="required",
        example="Judged@10",
        reads="top",
    ),
    Family("NumQ", "Number of evaluated queries (1 per query; summed).", cutoff="none", aggregate="sum"),
    Family(
        "NumRet", "Number of retrieved documents (summed over queries).", aggregate="sum", example="NumRet", reads="top"
    ),
    Family(
        "NumRel", "Number of relevant judged documents (label ≥ rel).", params=(REL,), cutoff="none", aggregate="sum"
    ),
    Family(
        "NumRelRet",
        "Number of relevant documents retrieved (in the top k).",
        params=(REL,),
        aggregate="sum",
        reads="top",
    ),
    Family(
        "Hits",
        "Number of relevant documents in the top k (all retrieved without a cutoff), averaged over queries "
        "(ranx hits); NumRelRet is the same count summed over queries (trec_eval num_rel_ret).",
        params=(REL, TIES),
        example="Hits@10",
        reads="top",
    ),
)
