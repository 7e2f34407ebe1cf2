"""trec_eval's measures at their default parameters, named without the measure language.

``ranklens trec-eval`` of the common forms (``-m official``, ``-m all_trec``, ``-m map -m P`` …: names and
nicknames without parameters, ``-l`` 1, no ``-N``, ``-R``, ``-Z``) prints what the compiled pass computes, and
on trec_eval's S-sized collections importing the measure language (its registry of every family) costs as
much as the evaluation. :func:`select_plain` gives the same columns as :func:`ranklens.trec_eval.select.select`
with :class:`ranklens.express.ExpressMeasure` for the measures (a plain word: the registry's defaults, which
the compiled declaration matches); ``tests/trec_eval/test_plain_select.py`` checks every name against
``select``. Anything else: None, and ``select`` reads the arguments (and says what is wrong with them).

>>> [(printed, str(m)) for sel in select_plain(["map", "iprec_at_recall"]) or () for printed, m in sel.columns][:3]
[('map', 'AP'), ('iprec_at_recall_0.00', 'IPrec(recall=0.0)'), ('iprec_at_recall_0.10', 'IPrec(recall=0.1)')]
>>> [printed for sel in select_plain(["P.10,5", "P.7"]) or () for printed, _ in sel.columns]
['P_5', 'P_10']
>>> select_plain(["P.5,5"]) is None, select_plain(["map.5"]) is None, select_plain(["dcg"]) is None
(True, True, True)
"""

from __future__ import annotations

from collections.abc import Sequence

from ranklens.express import ExpressMeasure
from ranklens.trec_eval.table import DEFAULT_RELSTRING_LEN, NICKNAMES, TABLE, Selected

__all__ = ["PLAIN", "select_plain"]

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # (trec_names.DEFAULT_CUTOFFS)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # (trec_families.ELEVEN_POINTS)
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)  # (trec_names.RPREC_MULTS)

#: trec_eval name → (family, cutoffs, levels of the family's passed parameter, or that parameter's default);
#: one column per cutoff or level (printed ``name_k`` / ``name_%.2f``), else one column printed ``name``
PLAIN: dict[str, tuple[str, tuple[int, ...], tuple[float, ...], float | None]] = {
    "num_q": ("NumQ", (), (), None),
    "num_ret": ("NumRet", (), (), None),
    "num_rel": ("NumRel", (), (), None),
    "num_rel_ret": ("NumRelRet", (), (), None),
    "map": ("AP", (), (), None),
    "gm_map": ("GMAP", (), (), None),
    "Rprec": ("Rprec", (), (), None),
    "bpref": ("Bpref", (), (), None),
    "recip_rank": ("RR", (), (), None),
    "iprec_at_recall": ("IPrec", (), _ELEVEN, None),
    "P": ("P", _CUTOFFS, (), None),
    "recall": ("R", _CUTOFFS, (), None),
    "infAP": ("infAP", (), (), None),
    "gm_bpref": ("GMBpref", (), (), None),
    "Rprec_mult": ("RprecMult", (), _MULTS, None),
    "utility": ("Utility", (), (), None),
    "11pt_avg": ("IPrecAvg", (), (), None),
    "binG": ("BinG", (), (), None),
    "G": ("G", (), (), None),
    "ndcg": ("nDCG", (), (), None),
    "ndcg_rel": ("nDCGRel", (), (), None),
    "Rndcg": ("RnDCG", (), (), None),
    "ndcg_cut": ("nDCG", _CUTOFFS, (), None),
    "map_cut": ("AP", _CUTOFFS, (), None),
    "relative_P": ("RelativeP", _CUTOFFS, (), None),
    "success": ("Success", (1, 5, 10), (), None),
    "set_P": ("SetP", (), (), None),
    "set_relative_P": ("SetRelativeP", (), (), None),
    "set_recall": ("R", (), (), None),
    "set_map": ("SetAP", (), (), None),
    "set_F": ("SetF", (), (), 1.0),
    "num_nonrel_judged_ret": ("NumNonRelJudgedRet", (), (), None),
    "rbp": ("TrecRBP", (), (), 0.9),
    "rbp_resid": ("TrecRBPResidual", (), (), 0.9),
    "unj": ("Unjudged", (5, 10, 20), (), None),
}


def select_plain(args: Sequence[str]) -> list[Selected] | None:
    """The marked measures with their columns, in print order, when every argument is a name or nickname
    whose measures :data:`PLAIN` names (``runid`` and ``relstring`` included), without parameters or, for a
    name with cutoffs, with plain ones (``P.5,10``: decimal digits, each once; the first ``-m`` of a name
    wins, as trec_eval); else None."""
    marked: set[str] = set()
    given: dict[str, tuple[int, ...]] = {}
    for arg in args or ("official",):
        name, dot, params = arg.partition(".")
        if dot:
            cutoffs = _plain_cutoffs(params)
            if name not in PLAIN or not PLAIN[name][1] or cutoffs is None:
                return None
            given.setdefault(name, cutoffs)
        if name in NICKNAMES and not dot:
            marked.update(NICKNAMES[name])
        elif name in PLAIN or (name in ("runid", "relstring") and not dot):
            marked.add(name)
        else:
            return None
    out = []
    for entry in TABLE:
        if entry.name not in marked:
            continue
        if entry.name in ("runid", "relstring"):
            out.append(Selected(entry, ((entry.name, None),), DEFAULT_RELSTRING_LEN))
            continue
        if entry.name not in PLAIN:
            return None
        family, cutoffs, levels, default = PLAIN[entry.name]
        cutoffs = given.get(entry.name, cutoffs)
        if cutoffs:
            columns = tuple((f"{entry.name}_{k}", ExpressMeasure(family, k)) for k in cutoffs)
        elif levels:
            columns = tuple((f"{entry.name}_{v:.2f}", ExpressMeasure(family, None, v)) for v in levels)
        else:
            columns = ((entry.name, ExpressMeasure(family, None, default)),)
        out.append(Selected(entry, columns))
    return out


def _plain_cutoffs(params: str) -> tuple[int, ...] | None:
    """``5,10`` as the sorted cutoffs (5, 10); None unless every item is 1 to 9 decimal digits, positive,
    and none is given twice (the measure language reads the rest: atol's prefixes, errors)."""
    items = params.split(",")
    if not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in items):
        return None
    values = sorted(int(p) for p in items)
    if values[0] <= 0 or len(set(values)) != len(values):
        return None
    return tuple(values)
