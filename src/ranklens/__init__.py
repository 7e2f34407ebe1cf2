"""ranklens: exact, fast ranking evaluation centred on NDCG.

>>> import ranklens
>>> qrels = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}}
>>> run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}
>>> round(ranklens.evaluate(qrels, run, "nDCG@5")["nDCG@5"], 3)
0.91
"""

from ranklens.compare import Comparison, compare
from ranklens.data import Qrels, Run
from ranklens.data.io import read_qrels, read_run
from ranklens.data.segments import read_segments
from ranklens.engine import Evaluator, RankedLists, evaluate, evaluate_arrays
from ranklens.errors import FormatError, InputError, MeasureError, RanklensError, RanklensWarning
from ranklens.measures import Measure, parse
from ranklens.results import Results
from ranklens.results_io import read_results

__version__ = "0.1.0"

__all__ = [
    "Comparison",
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
    "compare",
    "evaluate",
    "evaluate_arrays",
    "parse",
    "read_qrels",
    "read_results",
    "read_run",
    "read_segments",
]
