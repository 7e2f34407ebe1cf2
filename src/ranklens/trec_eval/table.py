"""trec_eval 10.0's measure table: which measures exist, in which order they print, how each prints and
aggregates, and the nicknames that name sets of them (``measures.c``, ``meas_print_*.c``, ``meas_avg.c``).

Values print as ``%-22s\\t%s\\t%6.4f`` (floats) or ``%-22s\\t%s\\t%ld`` (counts); ``relstring`` prints its
string per query only, ``runid`` the run id in the summary only; ``num_q``, ``gm_map`` and ``gm_bpref``
print in the summary only.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

__all__ = ["DEFAULT_RELSTRING_LEN", "MIN_GEO_MEAN", "NICKNAMES", "TABLE", "Selected", "TrecMeasure", "by_name"]

#: the floor of trec_eval's geometric means (gm_map, gm_bpref: meas_avg.c); the gmean aggregate's
#: ``ranklens.measures.base.MIN_GEO_MEAN`` (tests/trec_eval/test_plain_select.py checks they are equal; the
#: measure language is not imported to print trec_eval's output)
MIN_GEO_MEAN = 1e-5

DEFAULT_RELSTRING_LEN = 10

Value = Literal["float", "long", "relstring", "runid"]
Summary = Literal["mean", "sum", "count", "gmean", "none", "runid"]
RelFormat = Literal["qrels", "qrels_jg", "prefs"]


class TrecMeasure(NamedTuple):
    """One entry of trec_eval's measure table.

    Attributes:
        name: the name on the command line (``-m name[.params]``).
        value: how a value prints: ``float`` (``%6.4f``), ``long`` (``%ld``), or the two text measures.
        per_query: printed for each query with ``-q``.
        summary: the ``all`` line: mean over queries, sum, number of queries, geometric mean (floor 1e-5),
            the run id, or nothing.
        rel_format: the ``-R`` input the measure reads (``prefs`` stands for ``prefs`` and
            ``qrels_prefs``); ``None`` for ``runid`` and ``num_q``, which need none.
    """

    name: str
    value: Value = "float"
    per_query: bool = True
    summary: Summary = "mean"
    rel_format: RelFormat | None = "qrels"


#: the measures in trec_eval's print order (te_trec_measures[] of measures.c, qrels measures only)
TABLE: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "runid", per_query=False, summary="runid", rel_format=None),
    TrecMeasure("num_q", "long", per_query=False, summary="count", rel_format=None),
    TrecMeasure("num_ret", "long", summary="sum"),
    TrecMeasure("num_rel", "long", summary="sum"),
    TrecMeasure("num_rel_ret", "long", summary="sum"),
    TrecMeasure("map"),
    TrecMeasure("gm_map", per_query=False, summary="gmean"),
    TrecMeasure("Rprec"),
    TrecMeasure("bpref"),
    TrecMeasure("recip_rank"),
    TrecMeasure("iprec_at_recall"),
    TrecMeasure("P"),
    TrecMeasure("relstring", "relstring", summary="none"),
    TrecMeasure("recall"),
    TrecMeasure("infAP"),
    TrecMeasure("gm_bpref", per_query=False, summary="gmean"),
    TrecMeasure("Rprec_mult"),
    TrecMeasure("utility"),
    TrecMeasure("11pt_avg"),
    TrecMeasure("binG"),
    TrecMeasure("G"),
    TrecMeasure("dcg"),
    TrecMeasure("ideal_dcg"),
    TrecMeasure("ndcg"),
    TrecMeasure("ndcg_rel"),
    TrecMeasure("Rndcg"),
    TrecMeasure("ndcg_cut"),
    TrecMeasure("map_cut"),
    TrecMeasure("relative_P"),
    TrecMeasure("success"),
    TrecMeasure("set_P"),
    TrecMeasure("set_relative_P"),
    TrecMeasure("set_recall"),
    TrecMeasure("set_map"),
    TrecMeasure("set_F"),
    TrecMeasure("num_nonrel_judged_ret", "long", summary="sum"),
    # preference judgments (-R prefs / qrels_prefs): counts are summed, ratios averaged
    TrecMeasure("prefs_num_prefs_poss", "long", summary="sum", rel_format="prefs"),
    TrecMeasure("prefs_num_prefs_ful", "long", summary="sum", rel_format="prefs"),
    TrecMeasure("prefs_num_prefs_ful_ret", "long", summary="sum", rel_format="prefs"),
    TrecMeasure("prefs_simp", rel_format="prefs"),
    TrecMeasure("prefs_pair", rel_format="prefs"),
    TrecMeasure("prefs_avgjg", rel_format="prefs"),
    TrecMeasure("prefs_avgjg_Rnonrel", rel_format="prefs"),
    TrecMeasure("prefs_simp_ret", rel_format="prefs"),
    TrecMeasure("prefs_pair_ret", rel_format="prefs"),
    TrecMeasure("prefs_avgjg_ret", rel_format="prefs"),
    TrecMeasure("prefs_avgjg_Rnonrel_ret", rel_format="prefs"),
    TrecMeasure("prefs_simp_imp", rel_format="prefs"),
    TrecMeasure("prefs_pair_imp", rel_format="prefs"),
    TrecMeasure("prefs_avgjg_imp", rel_format="prefs"),
    # judgment groups (-R qrels_jg)
    TrecMeasure("map_avgjg", rel_format="qrels_jg"),
    TrecMeasure("P_avgjg", rel_format="qrels_jg"),
    TrecMeasure("Rprec_mult_avgjg", rel_format="qrels_jg"),
    TrecMeasure("yaap"),
    TrecMeasure("rbp"),
    TrecMeasure("rbp_resid"),
    TrecMeasure("unj"),
)

#: nicknames for sets of measures (measures.c te_trec_measure_nicknames)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P",
    ),
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
        "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
        "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
        "set_F", "num_nonrel_judged_ret",
    ),
    "all_prefs": (
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
        "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
        "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    ),
    "prefs": (
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
        "prefs_simp", "prefs_pair", "prefs_avgjg",
    ),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}  # fmt: skip

_BY_NAME = {m.name: m for m in TABLE}


class Selected(NamedTuple):
    """One marked measure and what it prints (:func:`ranklens.trec_eval.select.select`).

    ``columns`` holds ``(printed name, measure)`` for numeric measures (several for cutoff lists);
    ``relstring`` measures have one printed name in ``columns`` with ``measure`` ``None`` and the string
    length in ``relstring_len``. ``parameters``: ``(printed name, cutoff or multiple)`` of a judgment-group
    measure (:func:`.judgment_groups.jg_columns`).
    """

    entry: TrecMeasure
    columns: tuple[tuple[str, Any], ...]
    relstring_len: int = DEFAULT_RELSTRING_LEN
    parameters: tuple[tuple[str, float | None], ...] = ()


def by_name(name: str) -> TrecMeasure | None:
    """The table entry called exactly ``name`` (trec_eval names are case-sensitive)."""
    return _BY_NAME.get(name)
