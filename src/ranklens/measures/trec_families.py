"""Measure families for the rest of trec_eval's ``all_trec`` set (v10.0).

Each family is a definition only (name, parameters, defaults, docs); the kernels live in
:mod:`ranklens.engine.kernels.trec_extra`. Names, parameters and the trec_eval name they mirror:

=========================  ============================  ==========================================
ranklens                   trec_eval                     what
=========================  ============================  ==========================================
``IPrec(recall=0.1)``      ``iprec_at_recall.0.1``       interpolated precision at a recall level
``IPrecAvg``               ``11pt_avg``                  mean of IPrec over recall levels
``GMAP``                   ``gm_map``                    AP, geometric mean over queries
``GMBpref``                ``gm_bpref``                  bpref, geometric mean over queries
``RprecMult(mult=0.2)``    ``Rprec_mult.0.2``            precision at ⌊mult·R + 0.9⌋
``Utility``                ``utility``                   linear set utility a·TP + b·FP + c·FN + d·TN
``BinG``                   ``binG``                      binary G
``G``                      ``G``                         normalised G (gain-based)
``nDCGRel``                ``ndcg_rel``                  nDCG averaged over the relevant documents
``RnDCG``                  ``Rndcg``                     nDCG averaged at the R levels of the ideal
``RelativeP@k``            ``relative_P.k``              P@k divided by the best possible P@k
``SetP``                   ``set_P``                     precision of the whole retrieved set
``SetRelativeP``           ``set_relative_P``            SetP divided by the best possible SetP
``SetAP``                  ``set_map``                   SetP × set recall
``SetF(beta2=1)``          ``set_F.1``                   (β²+1)·P·R / (β²·P + R) over the set
``Unjudged@k``             ``unj.k``                     fraction of the top k without a judgement
``NumNonRelJudgedRet``     ``num_nonrel_judged_ret``     judged non-relevant documents retrieved
``TrecRBP(p=0.9)``         ``rbp.p=0.9``                 trec_eval's graded RBP (also ``RBP``)
``TrecRBPResidual``        ``rbp_resid``                 trec_eval's RBP residual (also ``RBPResidual``)
=========================  ============================  ==========================================

trec_eval's ``set_recall`` is the existing ``R`` without a cutoff.
"""

from __future__ import annotations

from dataclasses import dataclass

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, Param
from ranklens.measures.definitions import GAIN, REL
from ranklens.measures.registry import register

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ELEVEN_POINTS", "FAMILIES", "LevelsParam"]

#: trec_eval's default recall levels for iprec_at_recall and 11pt_avg
ELEVEN_POINTS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class LevelsParam(Param):
    """A parameter holding a tuple of numbers, written ``{0.2,0.5,0.8}`` in the measure language."""

    def coerce(self, value: Any, measure: str) -> Any:
        where = f"{measure}: parameter '{self.name}'"
        items: Any = value
        if isinstance(value, str):
            text = value.strip()
            if not (text.startswith("{") and text.endswith("}")):
                raise MeasureError(f"{where}: a list of levels looks like {{0.2,0.5,0.8}}; got {value!r}")
            items = [p for p in text[1:-1].split(",") if p.strip()]
        try:
            out = tuple(float(v) for v in items)
        except (TypeError, ValueError):
            raise MeasureError(f"{where} must be a list of numbers like {{0.2,0.5,0.8}}; got {value!r}") from None
        if not out:
            raise MeasureError(f"{where} needs at least one level")
        return out

    def format(self, value: Any) -> str:
        return "{" + ",".join(_num(v) for v in value) + "}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _check_levels(m: Measure) -> None:
    levels = m.get("recall")
    if list(levels) != sorted(set(levels)):
        raise MeasureError(f"{m}: recall levels must be increasing without duplicates (as trec_eval assumes)")


def _check_p(m: Measure) -> None:
    p = m.get("p")
    if not 0 < p < 1:
        raise MeasureError(f"{m}: p must be in (0, 1); got {p}")


RECALL = Param("recall", "float", 0.0, "recall level in [0, 1]; the cutoff is round(recall·R) relevant documents")
LEVELS = LevelsParam(
    "recall", "float", ELEVEN_POINTS, "recall levels, increasing, e.g. {0.2,0.5,0.8} (default: 0, 0.1, …, 1)"
)
P_PERSIST = Param("p", "float", 0.9, "persistence p in (0,1) (trec_eval default 0.9)")

FAMILIES: tuple[Family, ...] = (
    Family(
        "IPrec",
        "Interpolated precision at a recall level: the best precision at any rank at or below the one where "
        "the c-th relevant document is retrieved, c = round(recall·R) (half away from zero); when c = 0 the "
        "best precision over the ranking; 0 when fewer than c relevant documents are retrieved "
        "(trec_eval m_iprec_at_recall.c).",
        params=(RECALL, REL),
        cutoff="none",
        reference="TREC recall-precision graph (Buckley & Voorhees 2005)",
        example="IPrec(recall=0.1)",
    ),
    Family(
        "IPrecAvg",
        "Mean of IPrec over recall levels; with the default eleven levels it is trec_eval's 11pt_avg "
        "(m_11pt_avg.c).",
        params=(LEVELS, REL),
        cutoff="none",
        example="IPrecAvg, IPrecAvg(recall={0.2,0.5,0.8})",
        check=_check_levels,
    ),
    Family(
        "GMAP",
        "Average precision aggregated with the geometric mean over queries, each value floored at 1e-5 "
        "(trec_eval gm_map, m_gm_map.c). Per query the value is AP.",
        params=(REL,),
        cutoff="none",
        aggregate="gmean",
        reference="Robertson, 'On GMAP', CIKM 2006",
        example="GMAP",
    ),
    Family(
        "GMBpref",
        "bpref aggregated with the geometric mean over queries, floored at 1e-5 (trec_eval gm_bpref, "
        "m_gm_bpref.c). Per query the value is bpref.",
        params=(REL,),
        cutoff="none",
        aggregate="gmean",
        example="GMBpref",
    ),
    Family(
        "RprecMult",
        "Precision at a multiple of R: P@c with c = ⌊mult·R + 0.9⌋ (0 when c = 0; missing ranks count as "
        "non-relevant) (trec_eval Rprec_mult, m_Rprec_mult.c).",
        params=(Param("mult", "float", 1.0, "the multiple of R", minimum=0.0), REL),
        cutoff="none",
        example="RprecMult(mult=0.5)",
    ),
    Family(
        "Utility",
        "Linear set utility a·TP + b·FP + c·FN + d·TN over the retrieved set, with TN = num_docs − R − FP "
        "(trec_eval utility, m_utility.c; num_docs is trec_eval -N).",
        params=(
            Param("a", "float", 1.0, "worth of a relevant retrieved document"),
            Param("b", "float", -1.0, "worth of a non-relevant retrieved document"),
            Param("c", "float", 0.0, "worth of a relevant document not retrieved"),
            Param("d", "float", 0.0, "worth of a non-relevant document not retrieved"),
            Param("num_docs", "int", 0, "number of documents in the collection (for d)", minimum=0),
            REL,
        ),
        cutoff="none",
        example="Utility, Utility(a=2,b=-1)",
    ),
    Family(
        "BinG",
        "Binary G: (1/R)·Σ_{relevant retrieved} 1/log2(2 + non-relevant retrieved above it) "
        "(trec_eval binG, m_binG.c).",
        params=(REL,),
        cutoff="none",
        example="BinG",
    ),
    Family(
        "G",
        "Normalised G: Σ_i g_i / log2(2 + C_i − S_i) divided by the total ideal gain, where S_i is the gain "
        "retrieved up to rank i and C_i = Σ_{j ≤ i} max(ideal gain at j, 1) (trec_eval G, m_G.c).",
        params=(GAIN,),
        cutoff="none",
        example="G, G(gain={1:1,2:3})",
    ),
    Family(
        "nDCGRel",
        "nDCG averaged over the relevant documents: at each retrieved document with positive gain, "
        "DCG/IDCG at its rank; each positive-gain document not retrieved adds DCG/IDCG at the end of the "
        "ranking; divided by the number of positive-gain judged documents (trec_eval ndcg_rel, m_ndcg_rel.c).",
        params=(GAIN,),
        cutoff="none",
        example="nDCGRel",
    ),
    Family(
        "RnDCG",
        "nDCG averaged at the R levels: DCG/IDCG at every rank where the ideal gain changes, plus at the end "
        "of the ranking when it extends past the ideal by more than one document; 0 when R = 0 "
        "(trec_eval Rndcg, m_Rndcg.c).",
        params=(GAIN, REL),
        cutoff="none",
        example="RnDCG",
    ),
    Family(
        "RelativeP",
        "Relative precision: relevant documents in the top k divided by min(k, R), the best possible "
        "(0 when R = 0) (trec_eval relative_P, m_rel_P.c).",
        params=(REL,),
        cutoff="required",
        example="RelativeP@10",
    ),
    Family(
        "SetP",
        "Precision of the whole retrieved set: relevant retrieved / retrieved (0 if none retrieved) "
        "(trec_eval set_P).",
        params=(REL,),
        cutoff="none",
        example="SetP",
    ),
    Family(
        "SetRelativeP",
        "Relevant retrieved / min(retrieved, R) (0 if none retrieved or R = 0) (trec_eval set_relative_P).",
        params=(REL,),
        cutoff="none",
        example="SetRelativeP",
    ),
    Family(
        "SetAP",
        "Unranked average precision: (relevant retrieved)² / (retrieved · R) = set precision × set recall "
        "(trec_eval set_map).",
        params=(REL,),
        cutoff="none",
        example="SetAP",
    ),
    Family(
        "SetF",
        "Set F measure (β²+1)·P·R / (β²·P + R) over the retrieved set; 0 when nothing relevant is retrieved "
        "(trec_eval set_F, whose parameter is β²).",
        params=(Param("beta2", "float", 1.0, "β², the weight of recall relative to precision", minimum=0.0), REL),
        cutoff="none",
        reference="van Rijsbergen, Information Retrieval, 1979",
        example="SetF, SetF(beta2=0.25)",
    ),
    Family(
        "Unjudged",
        "Fraction of the top k without a judgement (not in the qrels or with a negative label), missing "
        "ranks counting as judged: #unjudged in top k / k (trec_eval unj.k).",
        params=(),
        cutoff="required",
        example="Unjudged@10",
    ),
    Family(
        "NumNonRelJudgedRet",
        "Number of judged non-relevant documents retrieved (0 ≤ label < rel), summed over queries "
        "(trec_eval num_nonrel_judged_ret).",
        params=(REL,),
        cutoff="none",
        aggregate="sum",
    ),
    Family(
        "TrecRBP",
        "trec_eval's RBP (m_rbp.c): (1−p)·Σ_i g'_i·p^(i−1), where the gain of a label is the label (or the "
        "gain map) and the query's gain table (levels 0…max judged label) is min–max normalised to [0,1] "
        "when any gain lies outside it. rbp and RBP name it (trec_eval's name); Moffat & Zobel's binary/max_rel "
        "form is MZRBP.",
        params=(P_PERSIST, GAIN),
        cutoff="none",
        check=_check_p,
        reference="Moffat & Zobel, TOIS 2008",
        aliases=("RBP",),
        example="TrecRBP, RBP(p=0.8), rbp.p=0.8",
    ),
    Family(
        "TrecRBPResidual",
        "trec_eval's RBP residual (m_rbp_resid.c): 0 when every retrieved document is judged, else "
        "p^n + (1−p)·Σ_{unjudged i} p^(i−1). Moffat & Zobel's residual (MZRBPResidual) always adds p^n.",
        params=(P_PERSIST,),
        cutoff="none",
        check=_check_p,
        aliases=("RBPResidual",),
        example="TrecRBPResidual, rbp_resid",
    ),
)

for _family in FAMILIES:
    register(_family)
