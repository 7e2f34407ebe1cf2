"""C/W/L measures (Moffat et al.; cwl_eval): SDCG, NERR8–11, INST, INSQ and BPM — definitions only.

A C/W/L measure is a user model: C_i is the probability that a user at rank i continues to rank i + 1;
the weight of rank i is W_i = Π_{j<i} C_j / Σ_r Π_{j<r} C_j, and the measure is the expected utility per
document, Σ_i W_i·g_i. Gains are labels scaled into [0, 1]: g = (clip(label, min_rel, max_rel) − min_rel) /
(max_rel − min_rel); unjudged documents gain 0. The ranking is read to ``depth`` (1000, cwl_eval's
``max_n``) and padded with non-relevant documents up to it: the user model may continue past the last
retrieved document. Kernels: :mod:`ranklens.engine.kernels.cwl`. Every value equals cwl_eval's (through
ir_measures' provider) on generated collections (``tests/measures/test_parity_cwl.py``).
"""

from __future__ import annotations

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, Param
from ranklens.measures.registry import register

__all__ = ["CWL_FAMILIES"]

MIN_REL = Param("min_rel", "int", 0, "the lowest grade of the scale: labels ≤ min_rel gain 0", minimum=0)
TOP_REL = Param(
    "max_rel", "int", 0, "the top grade of the scale (gain 1); 0 = the largest label in the qrels", minimum=0
)
T_GOAL = Param("T", "float", 1.0, "the total gain the user wants (in units of a top-grade document)")
DEPTH = Param(
    "depth", "int", 1000,
    "the ranking is read to this depth and padded with non-relevant documents up to it (cwl_eval's max_n)",
    minimum=1,
)
_SCALE = (MIN_REL, TOP_REL)
_REF_NERR = "Azzopardi, Mackenzie & Moffat, ICTIR 2021"


def _check(m: Measure) -> None:
    top, low = int(m.get("max_rel")), int(m.get("min_rel"))
    if top and top <= low:
        raise MeasureError(f"{m}: max_rel ({top}) must be greater than min_rel ({low})")
    if "T" in {p.name for p in m.family.params} and not m.get("T") > 0:
        raise MeasureError(f"{m}: T must be > 0; got {m.get('T')}")
    if "p" in {p.name for p in m.family.params} and not 0 < m.get("p") < 1:
        raise MeasureError(f"{m}: p must be in (0, 1); got {m.get('p')}")


def _family(name: str, doc: str, params: tuple[Param, ...], cutoff: str, reference: str, example: str) -> Family:
    return Family(
        name,
        doc + " Gains: labels scaled into [0, 1] by min_rel and max_rel; W_i = Π_{j<i} C_j / Σ_r Π_{j<r} C_j "
        "over `depth` ranks (the ranking padded with non-relevant documents); value Σ_i W_i·g_i (C/W/L).",
        params=(*params, *_SCALE, DEPTH),
        cutoff=cutoff,  # type: ignore[arg-type]
        reference=reference,
        example=example,
        check=_check,
        reads="top" if cutoff == "required" else "all",
    )


CWL_FAMILIES: tuple[Family, ...] = (
    _family(
        "SDCG",
        "Scaled DCG: DCG@k with gains in [0, 1] divided by Σ_{i≤k} 1/log2(i+1), the DCG of k top-grade "
        "documents (nDCG assuming at least k fully relevant documents exist); C_i = log2(i+1)/log2(i+2) for "
        "i < k, else 0.",
        (), "required", "Moffat, Scholer & Thomas, ADCS 2012 (cwl_eval NDCG-k)", "SDCG@10, SDCG(max_rel=3)@20",
    ),
    _family(
        "NERR8",
        "Not (but nearly) ERR, equation 8: C_i = 1 − g_i for i < k, else 0 (ERR's gain-based stopping, "
        "truncated at k).",
        (), "required", _REF_NERR, "NERR8@10",
    ),
    _family(
        "NERR9",
        "Not (but nearly) ERR, equation 9: C_i = i/(i+1)·(1 − g_i) for i < k, else 0 (gain-based stopping "
        "and ERR's 1/i discount, truncated at k).",
        (), "required", _REF_NERR, "NERR9@10",
    ),
    _family(
        "NERR10",
        "Not (but nearly) ERR, equation 10: C_i = p·(1 − g_i) (gain-based stopping with RBP's patience p).",
        (Param("p", "float", 0.9, "persistence p in (0, 1)"),), "none", _REF_NERR, "NERR10, NERR10(p=0.8)",
    ),
    _family(
        "NERR11",
        "Not (but nearly) ERR, equation 11: C_i = ((i + 2T − 1)/(i + 2T))²·(1 − g_i) (gain-based stopping "
        "with INSQ's goal T).",
        (T_GOAL,), "none", _REF_NERR, "NERR11, NERR11(T=2)",
    ),
    _family(
        "INST",
        "INST: C_i = ((i + T + T_i − 1)/(i + T + T_i))² with T_i = T − Σ_{j≤i} g_j, the gain still wanted "
        "(adaptive: the user stops sooner once T is met).",
        (T_GOAL,), "none", "Moffat, Bailey, Scholer & Thomas, ADCS 2015", "INST, INST(T=3)",
    ),
    _family(
        "INSQ",
        "INSQ: C_i = ((i + 2T − 1)/(i + 2T))², a weighted precision whose weights depend on the goal T only.",
        (T_GOAL,), "none", "Moffat, Scholer & Thomas, ADCS 2012", "INSQ, INSQ(T=2)",
    ),
    _family(
        "BPM",
        "Bejeweled Player Model (static): the user reads until the gain so far reaches T or k documents are "
        "read (C_i = 1 while Σ_{j≤i} g_j < T and i < k, else 0); value = gain read / documents read.",
        (T_GOAL,), "required", "Zhang et al., SIGIR 2017", "BPM@10, BPM(T=2)@20",
    ),
)

for _f in CWL_FAMILIES:
    register(_f)
