"""The evaluation engine: align → RankedLists → kernels → Results."""

from ranklens._lazy import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:  # the names below are imported on first use (PEP 562), so importing the package stays light
    from ranklens.engine.alignment import AlignReport, align
    from ranklens.engine.arrays import evaluate_arrays
    from ranklens.engine.evaluator import Evaluator, evaluate
    from ranklens.engine.policy import EvalPolicy
    from ranklens.engine.ranked import NONPOOL, UNJUDGED, RankedLists

#: public name → the module that defines it (imported when the name is first used)
_LAZY = {
    "AlignReport": "ranklens.engine.alignment",
    "align": "ranklens.engine.alignment",
    "evaluate_arrays": "ranklens.engine.arrays",
    "Evaluator": "ranklens.engine.evaluator",
    "evaluate": "ranklens.engine.evaluator",
    "EvalPolicy": "ranklens.engine.policy",
    "NONPOOL": "ranklens.engine.ranked",
    "UNJUDGED": "ranklens.engine.ranked",
    "RankedLists": "ranklens.engine.ranked",
}

__all__ = ["NONPOOL", "UNJUDGED", "AlignReport", "EvalPolicy", "Evaluator", "RankedLists", "align", "evaluate", "evaluate_arrays"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
