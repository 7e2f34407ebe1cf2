"""The evaluation engine: align → RankedLists → kernels → Results."""

from ranklens.engine.alignment import AlignReport, align
from ranklens.engine.arrays import evaluate_arrays
from ranklens.engine.evaluator import Evaluator, evaluate
from ranklens.engine.policy import EvalPolicy
from ranklens.engine.ranked import NONPOOL, UNJUDGED, RankedLists

__all__ = ["NONPOOL", "UNJUDGED", "AlignReport", "EvalPolicy", "Evaluator", "RankedLists", "align", "evaluate", "evaluate_arrays"]
