"""What an explanation is (:class:`Explanation`) and the words of its settings, shared by the backends that
give one (:mod:`ranklens.explain.reference`, :mod:`ranklens.explain.compiled`); no numpy."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: explain of a small collection imports neither typing nor dataclasses)
    from typing import Any

    from ranklens.express import ExpressMeasure
    from ranklens.measures.base import Measure

_FIELDS = ("measure", "query", "rows", "ideal_rows", "value", "dcg", "idcg", "settings", "notes", "total_retrieved",
           "min_dcg")


class Explanation:
    """The steps behind one value (immutable, compared field by field).

    ``rows`` are the ranked documents (rank, doc, score, label, gain, discount, contribution, running);
    ``ideal_rows`` the ideal ordering for nDCG; ``value`` is what the engine computes (the same kernel as
    :func:`ranklens.evaluate`), and ``dcg``/``idcg`` (and ``min_dcg`` with ``norm=minmax``) are the kernel's
    own intermediates (the reference's :func:`ranklens.engine.kernels.dcg.dcg_parts`, or what the compiled
    pass records while it evaluates: ``_cexpress.trace_queries``), never re-derived here.

    >>> Explanation("P@1", "q1", [], value=0.5) == Explanation("P@1", "q1", [], value=0.5)
    True
    """

    __slots__ = _FIELDS
    measure: Measure | ExpressMeasure  # (the compiled pass's plain words: a name and a cutoff)
    query: str
    rows: list[dict[str, Any]]
    ideal_rows: list[dict[str, Any]]
    value: float
    dcg: float | None
    idcg: float | None
    settings: dict[str, str]
    notes: list[str]
    total_retrieved: int
    min_dcg: float | None

    def __init__(
        self,
        measure: Measure | ExpressMeasure,
        query: str,
        rows: list[dict[str, Any]],
        ideal_rows: list[dict[str, Any]] | None = None,
        value: float = 0.0,
        dcg: float | None = None,
        idcg: float | None = None,
        settings: dict[str, str] | None = None,
        notes: list[str] | None = None,
        total_retrieved: int = 0,
        min_dcg: float | None = None,
    ) -> None:
        given = (measure, query, rows, [] if ideal_rows is None else ideal_rows, value, dcg, idcg,
                 {} if settings is None else settings, [] if notes is None else notes, total_retrieved, min_dcg)
        for name, v in zip(_FIELDS, given):
            object.__setattr__(self, name, v)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} (an Explanation is immutable)")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Explanation:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, f) for f in _FIELDS))

    def __repr__(self) -> str:
        return "Explanation(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"


#: the tie policies, as the settings say them
TIES_TEXT = {
    "trec": "score desc, then doc id desc (trec_eval)",
    "average": "averaged over tied orderings (McSherry–Najork)",
    "input": "run file order",
}


def label_text(label: float, unjudged: float, pooled: float) -> str:
    """A label as the tables show it: ``unjudged`` (not in the qrels), ``pooled, unjudged`` or the label.

    >>> label_text(2, -1, -2), label_text(-1, -1, -2)
    ('2', 'unjudged')
    """
    if label == unjudged:
        return "unjudged"
    if label == pooled:
        return "pooled, unjudged"
    return str(label)


def gain_text(gain: Any) -> str:
    """The gain setting in words.

    >>> gain_text("exp")
    'exponential: gain = 2^label − 1'
    """
    if gain == "linear":
        return "linear: gain = label"
    if gain == "exp":
        return "exponential: gain = 2^label − 1"
    return "map: " + ", ".join(f"{lvl}→{g:g}" for lvl, g in gain) + " (other labels: gain = label)"


def ideal_text(name: str, ideal: str, depth: Any = None, max_rel: Any = None) -> str:
    """The ideal flavour in words (``name``: the measure's family).

    >>> ideal_text("nDCG", "local")
    'local: the retrieved top-k, re-sorted best first'
    """
    if name == "DCG":
        return "n/a (unnormalised)"
    return {
        "global": "global: every judged document of the query, best first (trec_eval)",
        "local": "local: the retrieved top-k, re-sorted best first",
        "recall": f"recall: the retrieved top-{depth}, re-sorted best first",
        "max": f"max: the top grade ({max_rel or 'largest label in the qrels'}) at every rank",
    }[ideal]
