"""The rule model: one frozen :class:`Rule` for a CI gate and a monitor alert, and what a check returns."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["COVERAGE", "KINDS", "Check", "GateSettings", "Rule"]

#: ``min``: the value must be at least the threshold; ``max``: at most; ``max_drop``: it may trail a
#: baseline (CI: the --baseline run; monitor: the trailing-window mean or a reference system) by at most it.
KINDS = ("min", "max", "max_drop")

#: The series of query coverage: answered / expected queries (the qrels' queries), overall and per segment.
#: Not a measure of the ranklens measure language: the monitor computes it from a snapshot's expected set.
COVERAGE = "query_coverage"


@dataclass(frozen=True)
class Rule:
    """One rule. ``str(rule)`` is its text form and ``parse_rule(str(rule)) == rule``.

    ``segment`` is ``None`` for a general rule (all queries and, with segments, every segment) or the one
    segment it is written for. ``strict`` turns ``>=``/``<=`` into ``>``/``<``. For ``max_drop``:
    ``alpha`` makes a drop beyond the limit fail only when a paired test finds it significant; ``window``
    (days) is the monitor's trailing window and ``reference`` the monitor's reference system (the CI gate
    compares with ``--baseline`` and ignores both).

    >>> Rule("min", "nDCG@10", 0.85)
    Rule('nDCG@10 >= 0.85')
    >>> str(Rule("max_drop", "AP", 0.01, segment="books", alpha=0.05, window=7.0))
    'AP drop <= 0.01 segment=books alpha=0.05 window=7'
    """

    kind: str
    measure: str
    threshold: float
    segment: str | None = None
    strict: bool = False
    alpha: float | None = None
    window: float | None = None
    reference: str | None = None

    @property
    def op(self) -> str:
        """The comparison a bound applies: ``>=``, ``>``, ``<=`` or ``<`` (``<=`` for a drop)."""
        if self.kind == "min":
            return ">" if self.strict else ">="
        return "<" if self.strict else "<="

    def __str__(self) -> str:
        text = f"{self.measure}{' drop' if self.kind == 'max_drop' else ''} {self.op} {_num(self.threshold)}"
        for key in ("segment", "alpha", "window", "reference"):
            value = getattr(self, key)
            if value is not None:
                text += f" {'vs' if key == 'reference' else key}={_num(value) if isinstance(value, float) else value}"
        return text

    def __repr__(self) -> str:
        return f"Rule({str(self)!r})"


def _num(x: float) -> str:
    return f"{x:g}" if float(f"{x:g}") == x else repr(x)


@dataclass(frozen=True)
class Check:
    """One rule checked on one scope (``segment`` ``None`` = all queries)."""

    kind: str
    measure: str
    segment: str | None
    threshold: float
    value: float
    n: int
    status: str  # pass or fail (a check over no query fails)
    message: str
    p_value: float | None = None
    total: int | None = None  # the queries in scope: n < total when some were left out (--missing skip)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: NaN and infinities become ``None``."""
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}


@dataclass
class GateSettings:
    """File-wide settings: the paired test and correction for drops, their default ``alpha``, the
    randomisation ``seed``/``samples``, and the monitor's default trailing ``window`` (days)."""

    alpha: float | None = None
    test: str = "t"
    correction: str = "holm"
    seed: int = 0
    samples: int = 10_000
    window: float | None = None
