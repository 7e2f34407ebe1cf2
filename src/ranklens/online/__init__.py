"""Online experiments with rankers: the between-subjects A/B analysis (:func:`ab`), sample-size planning
(:func:`plan`) and team-draft interleaving (:func:`interleave`).

>>> from ranklens.online import ab, interleave, plan
>>> callable(ab) and callable(plan) and callable(interleave)
True
"""

from ranklens.online.experiment import ABResult, ab
from ranklens.online.interleaving import InterleaveResult, interleave
from ranklens.online.planning import PlanResult, plan

__all__ = ["ABResult", "InterleaveResult", "PlanResult", "ab", "interleave", "plan"]
