"""Run fusion and score normalisation with ranx 0.3.21's definitions, vectorised over all queries.

>>> from ranklens.data import Run
>>> a = Run.from_dict({"q1": {"d1": 3.0, "d2": 1.0}}, name="bm25")
>>> b = Run.from_dict({"q1": {"d2": 0.9, "d3": 0.5}}, name="dense")
>>> fused = fuse([a, b], "sum", norm="min-max")
>>> sorted(fused.run.to_dict()["q1"].items())
[('d1', 1.0), ('d2', 1.0), ('d3', 0.0)]
"""

from ranklens.fusion.combine import Fused, fuse
from ranklens.fusion.methods import METHODS
from ranklens.fusion.normalise import NORMALISATIONS
from ranklens.fusion.search import optimise

__all__ = ["METHODS", "NORMALISATIONS", "Fused", "fuse", "optimise"]
