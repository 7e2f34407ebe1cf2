"""Measure definitions, the measure language and the registry.

Every built-in family is importable by name, so measures can be written in Python the way they are
written in the measure language: ``nDCG@10``, ``P(rel=2)@5``, ``nDCG(gain="exp", ideal="local")@10``.
"""

from ranklens.measures.base import Family, Measure, Param
from ranklens.measures.definitions import FAMILIES
from ranklens.measures.registry import families, get_family, register

for _family in FAMILIES:
    register(_family)

from ranklens.measures import agreement as _agreement  # noqa: E402,F401
from ranklens.measures import cwl as _cwl  # noqa: E402,F401
from ranklens.measures import rag as _rag  # noqa: E402,F401
from ranklens.measures import trec_families as _trec_families  # noqa: E402,F401
from ranklens.measures.diversity import DIVERSITY_FAMILIES  # noqa: E402
from ranklens.measures.language import parse, parse_many  # noqa: E402

for _family in DIVERSITY_FAMILIES:
    register(_family)
from ranklens.measures.recsys import RECSYS_FAMILIES  # noqa: E402

for _family in RECSYS_FAMILIES:
    register(_family)

nDCG = get_family("nDCG")
DCG = get_family("DCG")
IDCG = get_family("IDCG")
P = get_family("P")
R = get_family("R")
RR = get_family("RR")
AP = get_family("AP")
Rprec = get_family("Rprec")
Success = get_family("Success")
Bpref = get_family("Bpref")
infAP = get_family("infAP")
ERR = get_family("ERR")
RBP = get_family("RBP")  # trec_eval's rbp (TrecRBP); Moffat & Zobel's is MZRBP
RBPResidual = get_family("RBPResidual")  # trec_eval's rbp_resid (TrecRBPResidual)
MZRBP = get_family("MZRBP")
MZRBPResidual = get_family("MZRBPResidual")
Judged = get_family("Judged")
NumQ = get_family("NumQ")
NumRet = get_family("NumRet")
NumRel = get_family("NumRel")
NumRelRet = get_family("NumRelRet")

__all__ = [
    "AP",
    "DCG",
    "ERR",
    "IDCG",
    "Bpref",
    "Family",
    "Judged",
    "MZRBP",
    "MZRBPResidual",
    "Measure",
    "NumQ",
    "NumRel",
    "NumRelRet",
    "NumRet",
    "P",
    "Param",
    "R",
    "RBP",
    "RBPResidual",
    "RR",
    "Rprec",
    "Success",
    "families",
    "get_family",
    "infAP",
    "nDCG",
    "parse",
    "parse_many",
    "register",
]
