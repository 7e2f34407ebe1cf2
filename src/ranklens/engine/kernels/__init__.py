"""Vectorised kernels over :class:`~ranklens.engine.ranked.RankedLists`, one per measure family.

A kernel takes the ranked lists and a :class:`~ranklens.measures.Measure` and returns one float64 value
per evaluated query. No Python loop runs per query or per document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ranklens.engine.kernels import agreement, binary, cascade, cwl, dcg, incomplete, rag, recsys, trec_extra
from ranklens.engine.ranked import RankedLists
from ranklens.errors import MeasureError
from ranklens.measures.base import Measure

__all__ = ["KERNELS", "SIDE_KERNELS", "Kernel", "kernel_for", "register_kernel"]

Kernel = Callable[[RankedLists, Measure], np.ndarray]

KERNELS: dict[str, Kernel] = {
    "nDCG": dcg.ndcg,
    "DCG": dcg.dcg,
    "IDCG": dcg.idcg,
    "P": binary.precision,
    "R": binary.recall,
    "RR": binary.reciprocal_rank,
    "AP": binary.average_precision,
    "Rprec": binary.r_precision,
    "Success": binary.success,
    "Judged": binary.judged,
    "NumQ": binary.num_q,
    "NumRet": binary.num_ret,
    "NumRel": binary.num_rel,
    "NumRelRet": binary.num_rel_ret,
    "Hits": binary.relevant_in_top,
    "Bpref": incomplete.bpref,
    "infAP": incomplete.inf_ap,
    "ERR": cascade.err,
    "MZRBP": cascade.rbp,
    "MZRBPResidual": cascade.rbp_residual,
}
KERNELS.update(trec_extra.TREC_KERNELS)
KERNELS.update(rag.RAG_KERNELS)
KERNELS.update(cwl.CWL_KERNELS)
KERNELS.update(agreement.AGREEMENT_KERNELS)


def register_kernel(family: str, kernel: Kernel) -> None:
    """Register the kernel computing measure family ``family``."""
    KERNELS[family] = kernel


#: kernels that also read side inputs (``kernel(lists, m, side)``): the recommender measures
SIDE_KERNELS: dict[str, Callable[[RankedLists, Measure, Any], Any]] = dict(recsys.RECSYS_KERNELS)


def kernel_for(m: Measure, side: Any = None, available: Iterable[str] = ()) -> Kernel:
    """The kernel of ``m``'s family; a recommender measure's kernel is bound to ``side`` (a
    :class:`~ranklens.engine.kernels.recsys.RecsysInputs`), whose tables ``available`` names
    (``"train"``, ``"items"``, ``"catalog"``).

    Raises:
        MeasureError: no kernel computes ``m``, or it needs inputs the ranked lists lack (its family's
            ``needs``, e.g. α-nDCG's intent-level qrels): the message says where it is computed.
    """
    reason = m.family.unavailable(m, available)
    if reason is not None:
        raise MeasureError(reason)
    if m.name in SIDE_KERNELS:
        side_kernel = SIDE_KERNELS[m.name]
        bound = side if side is not None else recsys.RecsysInputs()
        return lambda lists, measure: side_kernel(lists, measure, bound)
    try:
        return KERNELS[m.name]
    except KeyError:
        raise MeasureError(f"no kernel computes measure '{m}'") from None

