"""What each measure does with real-valued labels, and gain maps that name negative labels.

Both are checked once, when an :class:`~ranklens.Evaluator` is built, so that no measure silently ignores
a parameter or reads labels in a way it was not written for (docs/labels.md has the reasons).

Real-valued labels (``labels="float"``), per family (:data:`FLOAT_LABEL_USE`):

* ``gain``: the label is the gain (nDCG, DCG, IDCG, ERR, G, nDCGRel): ``0.93`` gains 0.93 (``exp``:
  2^0.93 − 1).
* ``threshold``: binary relevance, relevant when label ≥ ``rel`` (P, R, RR, AP, bpref, MZRBP without a
  grade scale …). There is **no default threshold** for real-valued labels: ``rel=1`` is the integer
  convention ("any grade above 0") and would read a 0.93 completion as not relevant, so each such
  measure must say ``rel`` (``P(rel=0.5)@10``) or the evaluator ``rel_level=`` (CLI ``--rel-level``).
* ``grade``: the RA-nWG family's discrete grades: a label counts at the highest grade it reaches.
* ``judged``: only whether a document is judged (Judged, Unjudged, NumRet, the RBP residuals).
* ``integer``: refused (TrecRBP: trec_eval's gain table has one entry per integer grade).

A family not listed (a plugin's) is refused with real-valued labels until its author adds it here:
``FLOAT_LABEL_USE["MyMeasure"] = "gain"``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ranklens.engine.kernels.dcg import negative_levels
from ranklens.errors import MeasureError
from ranklens.measures.base import Measure

__all__ = ["FLOAT_LABEL_USE", "check_measures"]

FLOAT_LABEL_USE: dict[str, str] = {
    **dict.fromkeys(("nDCG", "DCG", "IDCG", "ERR", "G", "nDCGRel"), "gain"),
    **dict.fromkeys(
        ("P", "R", "RR", "AP", "Rprec", "Success", "Bpref", "infAP", "NumRel", "NumRelRet", "Hits", "MZRBP",
         "IPrec", "IPrecAvg", "GMAP", "GMBpref", "RprecMult", "Utility", "BinG", "RnDCG", "RelativeP", "SetP",
         "SetRelativeP", "SetAP", "SetF", "NumNonRelJudgedRet"),
        "threshold",
    ),
    **dict.fromkeys(("RAnWG", "NRecall4p", "NRecall5", "Precision4p", "Harm", "PROC", "PctPROC"), "grade"),
    **dict.fromkeys(("Judged", "Unjudged", "NumRet", "NumQ", "MZRBPResidual", "TrecRBPResidual"), "judged"),
    "TrecRBP": "integer",
}

#: the families whose gain kernels give a negative label named in a gain map its gain
_MAPS_NEGATIVE_LABELS = ("nDCG", "DCG", "IDCG")


def check_measures(
    measures: Iterable[Measure], *, labels: str, negative: str, judged_only: bool, rel_level: float | None
) -> None:
    """Raise :class:`MeasureError` for a measure that cannot mean what it says with these labels and
    policies: a binary measure without a threshold on real-valued labels, an integer-only measure on
    them, or a gain-map entry for a negative label that could never apply.

    >>> from ranklens.measures import parse_many
    >>> check_measures(parse_many(["nDCG@10", "P(rel=0.5)@10"]), labels="float", negative="trec",
    ...                judged_only=False, rel_level=None)
    >>> check_measures(parse_many(["AP"]), labels="float", negative="trec", judged_only=False, rel_level=None)
    Traceback (most recent call last):
    ...
    ranklens.errors.MeasureError: AP reads binary relevance (relevant when label ≥ rel); real-valued labels have no default threshold, so give one: AP(rel=0.5) in the measure, or rel_level= for every binary measure (CLI --rel-level); rel=1, the integer default, would read a label of 0.93 as not relevant (to mean rel=1, pass rel_level=1: written in the measure it is the default, indistinguishable)
    """
    for m in measures:
        _check_gain_map(m, negative, judged_only or bool(m.get("judged_only")))
        if labels == "float":
            _check_float(m, rel_level)


def needs_threshold(m: Measure) -> bool:
    """Whether ``m`` reads binary relevance at ``rel`` (MZRBP only without a grade scale ``max_rel``)."""
    if FLOAT_LABEL_USE.get(m.name) != "threshold":
        return False
    return not (m.name == "MZRBP" and m.get("max_rel"))


def _check_float(m: Measure, rel_level: float | None) -> None:
    use = FLOAT_LABEL_USE.get(m.name)
    if use is None:
        raise MeasureError(
            f"{m}: {m.name} does not say how it reads real-valued labels (labels='float'); evaluate it on "
            "integer labels, or declare it in ranklens.engine.labels.FLOAT_LABEL_USE"
        )
    if use == "integer":
        raise MeasureError(
            f"{m}: {m.name} needs integer labels (trec_eval's gain table has one entry per integer grade); "
            "with real-valued labels use MZRBP(max_rel=…) or nDCG/DCG"
        )
    if needs_threshold(m) and rel_level is None and "rel" not in dict(m.params):
        graded = " (or MZRBP(max_rel=1): gain min(label, 1))" if m.name == "MZRBP" else ""
        raise MeasureError(
            f"{m} reads binary relevance (relevant when label ≥ rel); real-valued labels have no default "
            f"threshold, so give one: {m(rel=0.5)} in the measure{graded}, or rel_level= for every binary "
            "measure (CLI --rel-level); rel=1, the integer default, would read a label of 0.93 as not relevant "
            "(to mean rel=1, pass rel_level=1: written in the measure it is the default, indistinguishable)"
        )


def _check_gain_map(m: Measure, negative: str, judged_only: bool) -> None:
    if not any(p.name == "gain" for p in m.family.params):
        return
    named = negative_levels(m.get("gain"))
    if not named:
        return
    levels = ", ".join(map(str, named))
    if m.name not in _MAPS_NEGATIVE_LABELS:
        raise MeasureError(
            f"{m}: {m.name} follows trec_eval, where a negative label matches no gain level, so the map "
            f"entry for {levels} would be ignored; nDCG, DCG and IDCG give a negative label its mapped gain"
        )
    if negative == "zero":
        raise MeasureError(
            f"{m}: the gain map names label {named[0]}, but negative='zero' makes every negative label a judged "
            f"0 first, so that entry could never apply; keep negative='trec' (the default) to give it its gain"
        )
    if judged_only:
        raise MeasureError(
            f"{m}: the gain map names label {named[0]}, but judged_only removes documents with a negative "
            "label from the ranking (trec_eval -J), so that entry could never apply to them"
        )
