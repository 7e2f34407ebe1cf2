"""trec_eval 10.0's preference measures (``-R prefs``, ``-R qrels_prefs``, nickname ``all_prefs``).

Reading is :mod:`ranklens.trec_eval.prefs_read`, the measures :mod:`ranklens.trec_eval.prefs_measures`;
this module gathers the public names and says how each measure prints and aggregates.

d1 > d2 > d3 (3 preferences); the run ranks d3 above d1 and misses d2, so only d1 > d2 is fulfilled:

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.prefs"
>>> _ = p.write_text("q1 u1 s1 d1 2\\nq1 u1 s1 d2 1\\nq1 u1 s1 d3 0\\n")
>>> values = prefs_query_values(read_prefs(str(p))["q1"], prefs_ranking(["d3", "d1"], [2.0, 1.0]))
>>> values["prefs_num_prefs_poss"], values["prefs_num_prefs_ful"], values["prefs_simp"]
(3.0, 1.0, 0.3333333333333333)
"""

from __future__ import annotations

from typing import Literal

from ranklens.trec_eval.prefs_measures import PREFS_MEASURES, prefs_query_values, prefs_ranking
from ranklens.trec_eval.prefs_read import PrefLine, QueryPrefs, read_prefs, read_qrels_prefs

__all__ = [
    "PREFS_MEASURES",
    "PREFS_PRINT",
    "PrefLine",
    "QueryPrefs",
    "prefs_query_values",
    "prefs_ranking",
    "read_prefs",
    "read_qrels_prefs",
]

_COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")

#: how each measure prints (``%ld`` or ``%6.4f``, per query and in the summary) and what its ``all`` line
#: is: the three counts are summed over queries (te_calc_avg_meas_empty leaves the accumulated sum), the
#: ratios are the mean over queries (te_calc_avg_meas_s; with ``-c`` over every judged query, the same set)
PREFS_PRINT: dict[str, tuple[Literal["float", "long"], Literal["mean", "sum"]]] = {
    name: ("long", "sum") if name in _COUNTS else ("float", "mean") for name in PREFS_MEASURES
}
