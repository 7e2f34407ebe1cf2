"""The evaluation policy: one value for the choices every evaluation makes besides its measures.

The same record serves the :class:`~ranklens.engine.evaluator.Evaluator` (``policy=``, and
``Evaluator.policy``), :func:`ranklens.evaluation.evaluate_files` and the command line, whose policy flags
(``--missing``, ``--negative``, ``-J``, ``-M``, ``--rel-level``, ``--labels``, the input formats and column
maps) build one :class:`EvalPolicy`. What a Results records of it, batch or streamed, is
:meth:`EvalPolicy.options` (``Evaluator.options()``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from ranklens.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ranklens.measures.base import Measure

__all__ = ["EvalPolicy"]

_MISSING = {"skip": "skip", "zero": "zero", "error": "error", "intersect": "skip", "qrels": "zero"}
_NEGATIVES = ("trec", "zero", "error")


@dataclasses.dataclass(frozen=True)
class EvalPolicy:
    """How runs are evaluated against qrels, apart from the measures (the defaults reproduce trec_eval).

    Attributes:
        missing: queries of the qrels absent from the run: ``"skip"`` (evaluate the intersection),
            ``"zero"`` (they score 0 and count in the mean: trec_eval ``-c``) or ``"error"``;
            ``"intersect"`` and ``"qrels"`` are read as ``"skip"`` and ``"zero"``.
        negative: negative qrels labels: ``"trec"`` (pooled but unjudged), ``"zero"`` or ``"error"``.
        judged_only: drop unjudged retrieved documents first (trec_eval ``-J``).
        max_docs: only the first ``max_docs`` documents per query count (trec_eval ``-M``).
        rel_level: default relevance threshold ``rel`` of binary measures (trec_eval ``-l``).
        labels: ``"int"``, ``"float"`` or ``None`` (read integers; keep the kind of a given Qrels).
        qrels_format, run_format: input formats of qrels and run files (default: by extension).
        qrels_columns, run_columns: ``{column name: role}`` of files and tables with named columns.
        train: the training interactions of recommender measures (a path, frame, dict or
            :class:`~ranklens.data.interactions.Interactions`); ``train_columns`` names their columns.
        items: the item catalog (a path, frame, dict or :class:`~ranklens.data.interactions.Catalog`);
            ``items_columns`` names its columns (``{column name: "item" | "category" | "feature"}``).
        exclude_seen: drop from each user's list the items that user has in ``train`` first.
        empty: users with no relevant test item: ``None`` (as without the option: every measure's own
            value), ``"skip"`` (left out), ``"zero"`` or ``"one"`` (their relevance measures score 0 or 1).
        aggregate: the default ``agg=`` of the measures that take one (``mean``, ``median``, ``p90`` …).
        intents: intent-level qrels (a path to ``qid intent docid rel`` lines, a dict ``{qid: {intent: {doc:
            rel}}}``, a table or :class:`~ranklens.data.intents.IntentQrels`) for the intent-aware measures
            (α-nDCG, α-DCG, ERR-IA, nERR-IA, NRBP, nNRBP, P-IA, AP-IA, StRecall).

    >>> import ranklens
    >>> policy = EvalPolicy(missing="zero", max_docs=100)
    >>> policy.options()
    {'missing': 'zero', 'negative': 'trec', 'judged_only': False, 'max_docs': 100}
    >>> ev = ranklens.Evaluator(["P@1"], {"q1": {"a": 1}, "q2": {"b": 1}}, policy=policy)
    >>> ev({"q1": {"a": 2.0, "c": 1.0}}, warn=False).per_query("P@1")
    {'q1': 1.0, 'q2': 0.0}
    >>> EvalPolicy.from_options(ev.options()) == EvalPolicy(missing="zero", max_docs=100)
    True
    """

    missing: str = "skip"
    negative: str = "trec"
    judged_only: bool = False
    max_docs: int | None = None
    rel_level: float | None = None
    labels: str | None = None
    qrels_format: str | None = None
    run_format: str | None = None
    qrels_columns: Mapping[str, str] | None = None
    run_columns: Mapping[str, str] | None = None
    train: Any = None
    items: Any = None
    exclude_seen: bool = False
    empty: str | None = None
    aggregate: str | None = None
    train_columns: Mapping[str, str] | None = None
    items_columns: Mapping[str, str] | None = None
    intents: Any = None

    def __post_init__(self) -> None:
        missing = _MISSING.get(self.missing) if isinstance(self.missing, str) else None
        if missing is None:
            raise InputError(f"missing-query policy must be skip, zero or error; got {self.missing!r}")
        object.__setattr__(self, "missing", missing)
        if self.negative not in _NEGATIVES:
            raise InputError(f"negative-label policy must be trec, zero or error; got {self.negative!r}")
        if self.max_docs is not None and self.max_docs < 1:
            raise InputError(f"max_docs must be a positive integer, got {self.max_docs}")
        if self.labels is not None and self.labels not in ("int", "float"):
            raise InputError(f"labels must be 'int' or 'float'; got {self.labels!r}")
        if self.empty is not None and self.empty not in ("skip", "zero", "one"):
            raise InputError(f"empty-user policy must be skip, zero or one; got {self.empty!r}")
        if self.exclude_seen and self.train is None:
            raise InputError("exclude_seen needs the training interactions: train= (Python) or --train FILE")
        for name in ("qrels_columns", "run_columns", "train_columns", "items_columns"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, dict(value))  # a copy: the caller's dict may change later

    def __hash__(self) -> int:
        fields = (getattr(self, f.name) for f in dataclasses.fields(self))
        return hash(tuple(
            frozenset(v.items()) if isinstance(v, Mapping) and all(isinstance(x, str) for x in v.values())
            else v if v is None or isinstance(v, (str, int, float, bool)) else id(v)
            for v in fields
        ))

    @property
    def query_set(self) -> str:
        """``missing`` as the aligner names it: ``"intersect"``, ``"qrels"`` or ``"error"``."""
        return {"skip": "intersect", "zero": "qrels"}.get(self.missing, self.missing)

    def options(self, labels: str | None = None) -> dict[str, Any]:
        """The policies a Results records (``Results.options``); ``labels`` is the kind of the qrels
        actually evaluated (default: this policy's)."""
        kind = labels if labels is not None else self.labels
        return {
            "missing": self.missing,
            "negative": self.negative,
            "judged_only": self.judged_only,
            "max_docs": self.max_docs,
            **({"labels": "float"} if kind == "float" else {}),
            **({"exclude_seen": True} if self.exclude_seen else {}),
            **({"empty": self.empty} if self.empty is not None else {}),
            **({"intents": _source(self.intents)} if self.intents is not None else {}),
        }

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> EvalPolicy:
        """The policy recorded in ``Results.options`` (saved results included); keys it does not know
        (``streamed``) are ignored. ``EvalPolicy.from_options(p.options())`` gives ``p`` back for every
        field a Results records (all but ``rel_level``, which the measures carry, the formats and the
        column maps; ``labels="int"`` is recorded as the default)."""
        known = {"missing", "negative", "judged_only", "max_docs", "labels"}
        return cls(**{k: v for k, v in options.items() if k in known})

    def with_aggregate(self, measures: Iterable[Measure]) -> list[Measure]:
        """``measures`` as an Evaluator under this policy evaluates them: ``aggregate`` is their default
        ``agg=`` (``nDCG@10`` under ``aggregate="median"`` is ``nDCG(agg=median)@10``); the measures without
        ``agg`` (sums, geometric means, system-level) unchanged.

        >>> from ranklens.measures import parse_many
        >>> [str(m) for m in EvalPolicy(aggregate="median").with_aggregate(parse_many(["nDCG@10", "NumRet"]))]
        ['nDCG(agg=median)@10', 'NumRet']
        """
        if self.aggregate is None:
            return list(measures)
        return [m.with_defaults(agg=self.aggregate) for m in measures]

    def replace(self, **changes: Any) -> EvalPolicy:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


def _source(value: Any) -> str:
    """Where side data came from, for ``Results.options``: a path as given, else the kind of object."""
    import os

    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)  # type: ignore[return-value]
    return f"<{type(value).__name__}>"
