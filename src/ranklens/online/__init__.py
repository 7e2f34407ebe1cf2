"""Online experiments with rankers: the between-subjects A/B analysis (:func:`ab`; :func:`ab_values` on
per-user values already computed, as the monitor holds them), sample-size planning (:func:`plan`) and
team-draft interleaving (:func:`interleave`).

>>> from ranklens.online import ab, ab_values, interleave, plan
>>> callable(ab) and callable(ab_values) and callable(plan) and callable(interleave)
True
"""

from ranklens.online.experiment import ABResult, ab
from ranklens.online.interleaving import InterleaveResult, interleave
from ranklens.online.planning import PlanResult, plan
from ranklens.online.values import ab_values

__all__ = ["ABResult", "InterleaveResult", "PlanResult", "ab", "ab_values", "interleave", "plan"]
