"""Unbiased offline evaluation from click logs (spec §5).

* :func:`estimate_position_bias` — examination probabilities θ_k (EM under the position-based model, or
  from randomised interventions) with bootstrap intervals and a plot;
* :func:`ips_dcg` — the inverse-propensity-scored DCG of a target ranking (expected clicks per page) with
  clipping, self-normalisation and a bootstrap interval;
* :func:`ordering_consistency` — whether mean nDCG orders systems as mean DCG does.

Command line: ``ranklens ips position-bias LOG`` and ``ranklens ips dcg LOG TARGET_RUN``.
"""

from ranklens._lazy import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:  # the names below are imported on first use (PEP 562), so importing the package stays light
    from ranklens.unbiased.consistency import ConsistencyReport, ordering_consistency, unnormalised_of
    from ranklens.unbiased.ips import IPSEstimate, examination_function, ips_dcg
    from ranklens.unbiased.position_bias import PositionBias, estimate_position_bias

#: public name → the module that defines it (imported when the name is first used)
_LAZY = {
    "ConsistencyReport": "ranklens.unbiased.consistency",
    "ordering_consistency": "ranklens.unbiased.consistency",
    "unnormalised_of": "ranklens.unbiased.consistency",
    "IPSEstimate": "ranklens.unbiased.ips",
    "examination_function": "ranklens.unbiased.ips",
    "ips_dcg": "ranklens.unbiased.ips",
    "PositionBias": "ranklens.unbiased.position_bias",
    "estimate_position_bias": "ranklens.unbiased.position_bias",
}

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

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
