"""A ranklens measure plugin: harm-weighted nDCG for a medical-style grade scale.

In health search a wrong answer is worse than no answer. Judges grade documents on a 0–4 scale:

    0 = harmful (contradicts clinical guidance)   1 = not relevant   2 = partly useful
    3 = useful                                    4 = authoritative and complete

HWnDCG@k gives useful documents the usual exponential gain 2^(label−1) − 1 (grades 2, 3, 4 → 1, 3, 7), and a
*harmful* document the negative gain −harm (default 3: showing one harmful document at rank 1 costs as
much as a "useful" one earns). Unjudged documents gain 0. The sum is discounted by 1/log2(rank+1) and
divided by the ideal DCG (the best grades of the query at the top), so a perfect ranking scores 1, an
empty or all-irrelevant ranking 0, and rankings that show harmful documents can go below 0.

Use it:

    ranklens eval qrels.txt run.txt --plugin examples/plugins/harm_weighted.py -m HWnDCG@10 -m 'HWnDCG(harm=10)@5'

or in Python: ``import harm_weighted`` (or ``ranklens.plugins.load_plugins(["examples/plugins/harm_weighted.py"])``)
then ``ranklens.evaluate(qrels, run, "HWnDCG@10")``.
"""

from __future__ import annotations

import numpy as np

from ranklens.plugins import Measure, Param, RankedLists, measure


def _gain(labels: np.ndarray, harm: float, harmful: int) -> np.ndarray:
    """2^(label−1) − 1 for useful labels (> harmful + 1), −harm for the harmful label, 0 otherwise."""
    lab = labels.astype(np.float64)
    useful = np.where(labels > harmful + 1, np.exp2(lab - harmful - 1) - 1.0, 0.0)
    return np.where(labels == harmful, -harm, useful)


@measure(
    "HWnDCG",
    doc="Harm-weighted nDCG for a 0–4 medical scale: gain 2^(label−1) − 1 for useful documents, −harm for "
    "harmful ones (label `harmful`), divided by the ideal DCG; can be negative. (example plugin)",
    params=(
        Param("harm", "float", 3.0, "the penalty (negative gain) of a harmful document", minimum=0),
        Param("harmful", "int", 0, "the label that marks a harmful document", minimum=0),
    ),
    cutoff="optional",
    example="HWnDCG@10, HWnDCG(harm=10)@5",
)
def hw_ndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """HWnDCG@k per query (vectorised over the flat ranked lists)."""
    harm, harmful, k = float(m.get("harm")), int(m.get("harmful")), m.cutoff
    inside = lists.rank0 < k if k is not None else np.ones(lists.rank0.shape[0], dtype=bool)
    discount = np.log2(lists.rank0 + 2.0)
    dcg = lists.per_query_sum(np.where(inside, _gain(lists.labels, harm, harmful) / discount, 0.0))
    # ideal: the query's positive gains, best first (ideal_labels are sorted descending per query)
    ideal_gain = np.maximum(_gain(lists.ideal_labels, harm, harmful), 0.0)
    ideal_inside = lists.ideal_rank0 < k if k is not None else np.ones(ideal_gain.shape[0], dtype=bool)
    idcg = lists.per_query_sum(np.where(ideal_inside, ideal_gain / np.log2(lists.ideal_rank0 + 2.0), 0.0), ideal=True)
    out = np.zeros(lists.num_queries)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out
