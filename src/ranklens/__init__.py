"""ranklens: exact, fast ranking evaluation centred on NDCG.

>>> import ranklens
>>> qrels = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}}
>>> run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}
>>> round(ranklens.evaluate(qrels, run, "nDCG@5")["nDCG@5"], 3)
0.91
"""

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing: `ranklens eval`'s express path stays light)

from ranklens._lazy import lazy_names as _lazy_names
from ranklens._version import __version__
from ranklens.errors import FormatError, InputError, MeasureError, RanklensError, RanklensWarning

if TYPE_CHECKING:  # the names below are imported on first use (PEP 562), so `import ranklens` stays light
    from ranklens.api import evaluate
    from ranklens.comparison import Comparison, compare
    from ranklens.data import Qrels, Run
    from ranklens.data.io import read_qrels, read_run
    from ranklens.data.segments import read_segments
    from ranklens.engine import EvalPolicy, Evaluator, RankedLists, evaluate_arrays
    from ranklens.measures import Measure, parse
    from ranklens.online import ab
    from ranklens.results.core import Results
    from ranklens.results.io import read_results

#: public name → the module that defines it (imported when the name is first used)
_LAZY = {
    "Comparison": "ranklens.comparison",
    "compare": "ranklens.comparison",
    "Qrels": "ranklens.data",
    "Run": "ranklens.data",
    "read_qrels": "ranklens.data.io",
    "read_run": "ranklens.data.io",
    "read_segments": "ranklens.data.segments",
    "EvalPolicy": "ranklens.engine",
    "Evaluator": "ranklens.engine",
    "RankedLists": "ranklens.engine",
    "evaluate": "ranklens.api",
    "evaluate_arrays": "ranklens.engine",
    "Measure": "ranklens.measures",
    "parse": "ranklens.measures",
    "Results": "ranklens.results.core",
    "ab": "ranklens.online",
    "read_results": "ranklens.results.io",
}


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())


__all__ = [
    "Comparison",
    "EvalPolicy",
    "Evaluator",
    "FormatError",
    "InputError",
    "Measure",
    "MeasureError",
    "Qrels",
    "RankedLists",
    "RanklensError",
    "RanklensWarning",
    "Results",
    "Run",
    "__version__",
    "ab",
    "compare",
    "evaluate",
    "evaluate_arrays",
    "parse",
    "read_qrels",
    "read_results",
    "read_run",
    "read_segments",
]
