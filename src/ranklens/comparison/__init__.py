"""Compare systems like a careful researcher: paired tests over queries, confidence intervals, corrected
p-values, effect sizes, wins/ties/losses, per-segment breakdowns and the cost–quality Pareto front.

:func:`compare` evaluates every run once, pairs them on the queries they have in common (saying how many
were dropped: never silently) and returns a :class:`Comparison`, which the ``ranklens.report`` renderers
turn into a terminal table, Markdown, LaTeX, JSON or an HTML report.
"""

from __future__ import annotations

from ranklens._lazy import lazy_names
from ranklens.comparison.core import Comparison, compare
from ranklens.comparison.evaluation import evaluation_measures
from ranklens.comparison.inputs import load_costs, load_segments
from ranklens.comparison.rows import ComparisonRow, QueryDelta, SummaryRow
from ranklens.data.names import unique_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ranklens.comparison.pareto import ParetoPoint

__all__ = [
    "Comparison",
    "ComparisonRow",
    "ParetoPoint",
    "QueryDelta",
    "SummaryRow",
    "compare",
    "evaluation_measures",
    "load_costs",
    "load_segments",
    "unique_names",
]

# (the Pareto analysis only when asked for: compare imports it with costs only)
__getattr__, __dir__ = lazy_names(__name__, {"ParetoPoint": "ranklens.comparison.pareto"}, globals())
