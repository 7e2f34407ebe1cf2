"""Online experiments with rankers: the between-subjects A/B analysis (:func:`ab`), sample-size planning
(:func:`plan`) and team-draft interleaving (:func:`interleave`)."""

from ranklens.online.experiment import ABResult, ab

__all__ = ["ABResult", "ab"]
