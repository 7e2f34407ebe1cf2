"""Unbiased offline evaluation from click logs (spec §5).

* :func:`estimate_position_bias` — examination probabilities θ_k (EM under the position-based model, or
  from randomised interventions) with bootstrap intervals and a plot;
* :func:`ips_dcg` — the inverse-propensity-scored DCG of a target ranking (expected clicks per page) with
  clipping, self-normalisation and a bootstrap interval;
* :func:`ordering_consistency` — whether mean nDCG orders systems as mean DCG does.

Command line: ``ranklens ips position-bias LOG`` and ``ranklens ips dcg LOG TARGET_RUN``.
"""

from ranklens.unbiased.consistency import ConsistencyReport, ordering_consistency, unnormalised_of
from ranklens.unbiased.ips import IPSEstimate, examination_function, ips_dcg
from ranklens.unbiased.position_bias import PositionBias, estimate_position_bias

__all__ = [
    "ConsistencyReport",
    "IPSEstimate",
    "PositionBias",
    "estimate_position_bias",
    "examination_function",
    "ips_dcg",
    "ordering_consistency",
    "unnormalised_of",
]
