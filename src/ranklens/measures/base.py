"""Measure values: frozen, hashable, printable in the measure language, and parseable back.

A :class:`Family` declares a measure's parameters (types, choices, defaults, docs); a :class:`Measure`
is one family with concrete parameter values and an optional cutoff. Families know nothing of how they
are computed: kernels live in :mod:`ranklens.engine.kernels`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ranklens.errors import MeasureError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

__all__ = ["AGG", "AGGREGATES", "JUDGED_ONLY", "MAX_CUTOFF", "MIN_GEO_MEAN", "Family", "Measure", "Param", "cutoff_of"]

#: trec_eval's floor for geometric means (gm_map, gm_bpref; the gmean aggregate)
MIN_GEO_MEAN = 1e-5

#: the largest cutoff (2^31 - 1): no ranking is longer, and every measure computes at it; a larger one is an
#: error of the measure's name, never an overflow deeper down (issue 22 item 17)
MAX_CUTOFF = 2**31 - 1


def _too_big(where: str, shown: str) -> MeasureError:
    return MeasureError(f"{where}: the cutoff must be at most {MAX_CUTOFF}; got {shown}")


def cutoff_of(digits: str, where: str) -> int:
    """The cutoff written ``digits`` (ASCII digits), refused beyond :data:`MAX_CUTOFF` without converting a
    number of any length (``int()`` refuses more than 4,300 digits).

    >>> cutoff_of("10", "nDCG")
    10
    >>> cutoff_of("9" * 5000, "nDCG")
    Traceback (most recent call last):
    ...
    ranklens.errors.MeasureError: nDCG: the cutoff must be at most 2147483647; got a 5000-digit number
    """
    significant = digits.lstrip("0")
    if len(significant) > len(str(MAX_CUTOFF)):
        raise _too_big(where, f"a {len(significant)}-digit number")
    value = int(digits)
    if value > MAX_CUTOFF:
        raise _too_big(where, digits)
    return value

GainMap = tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Param:
    """One parameter of a measure family.

    ``kind`` is ``"int"``, ``"float"``, ``"choice"``, ``"bool"``, ``"gain"`` (``linear``, ``exp`` or a
    ``{level: gain}`` map) or ``"level"``: a relevance threshold, an integer (a grade of integer labels,
    kept an ``int``) or any finite real number (for real-valued labels, ``labels="float"``).
    """

    name: str
    kind: Literal["int", "float", "choice", "bool", "gain", "level"]
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None

    def coerce(self, value: Any, measure: str) -> Any:
        """Validate ``value`` (a Python value or the text of the measure language) for this parameter."""
        where = f"{measure}: parameter '{self.name}'"
        if self.kind == "choice":
            text = str(value).lower()
            if text not in self.choices:
                raise MeasureError(f"{where} must be one of {', '.join(self.choices)}; got {value!r}")
            return text
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).lower()
            if text in ("true", "1", "yes"):
                return True
            if text in ("false", "0", "no"):
                return False
            raise MeasureError(f"{where} must be true or false; got {value!r}")
        if self.kind == "gain":
            return _coerce_gain(value, where)
        try:
            if isinstance(value, str) and not value.isascii():
                raise ValueError  # int() and float() read '١٠' as 10: only ASCII digits are numbers here
            if self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                out: float = int(str(value)) if not isinstance(value, (int, float)) else int(value)
            elif self.kind == "level":
                if isinstance(value, bool):
                    raise ValueError
                real = float(value)
                if not math.isfinite(real):
                    raise ValueError
                out = int(real) if real.is_integer() else real
            else:
                out = float(value)
        except (TypeError, ValueError, OverflowError):
            if self.kind == "level":
                raise MeasureError(
                    f"{where} must be an integer; got {value!r} (with real-valued labels, labels='float', "
                    "any finite number such as 0.5)"
                ) from None
            raise MeasureError(f"{where} must be {'an integer' if self.kind == 'int' else 'a number'}; got {value!r}") from None
        if self.minimum is not None and out < self.minimum:
            raise MeasureError(f"{where} must be ≥ {self.minimum:g}; got {value!r}")
        return out

    def format(self, value: Any) -> str:
        if self.kind == "gain" and isinstance(value, tuple):
            return "{" + ",".join(f"{lvl}:{_num(g)}" for lvl, g in value) + "}"
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind in ("float", "level"):
            return _num(value)
        return str(value)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _coerce_gain(value: Any, where: str) -> str | GainMap:
    items: Any
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, tuple) and all(isinstance(t, tuple) and len(t) == 2 for t in value):
        items = value
    else:
        text = str(value).strip().lower()
        if text in ("linear", "exp"):
            return text
        if text.startswith("{") and text.endswith("}"):
            pairs = [p for p in text[1:-1].split(",") if p.strip()]
            try:
                items = [tuple(p.split(":")) for p in pairs]
                items = [(int(a), float(b)) for a, b in items]
            except ValueError:
                raise MeasureError(f"{where}: a gain map looks like {{0:0,1:1,2:3}}; got {value!r}") from None
        else:
            raise MeasureError(f"{where} must be linear, exp or a map like {{1:1,2:3}}; got {value!r}")
    try:
        out = tuple(sorted((int(k), float(v)) for k, v in items))
    except (TypeError, ValueError):
        raise MeasureError(f"{where}: gain map keys are integer labels and values numbers; got {value!r}") from None
    return out


#: the aggregates ``agg=`` accepts: the mean, the median, quantiles pNN, the extremes
AGGREGATES = ("mean", "median", "p10", "p25", "p75", "p90", "p95", "p99", "min", "max")
AGG = Param(
    "agg",
    "choice",
    "mean",
    "how the per-query (per-user) values combine into the run's value: mean (default), median, pNN (the "
    "NN-th percentile, linear interpolation: numpy's default), min or max; NA queries are left out. Every "
    "measure averaged over queries has it; sums, geometric means and system-level measures do not",
    choices=AGGREGATES,
)

#: a parameter of every measure, as in ir_measures: this measure alone is computed on the ranking without the
#: unjudged documents (trec_eval -J, ``judged_only=True`` of the Evaluator, for one measure)
JUDGED_ONLY = Param(
    "judged_only", "bool", False,
    "drop retrieved documents without a (non-negative) judgement before computing this measure (trec_eval -J for "
    "this measure alone; ir_measures' judged_only)",
)


#: what each entry of :attr:`Family.needs` stands for, in messages
_INPUTS = {
    "intents": "intent-level qrels (qid intent docid rel)",
    "train": "the training interactions (train= in Python, --train FILE)",
    "items": "the item catalog with features (items= in Python, --items FILE)",
}


@dataclass(frozen=True)
class Family:
    """The definition of one measure: its name, parameters, cutoff rule, aggregation and docs."""

    name: str
    doc: str
    params: tuple[Param, ...] = ()
    cutoff: Literal["none", "optional", "required"] = "optional"
    aggregate: Literal["mean", "sum", "gmean", "first", "nanmean"] = "mean"
    """how per-query values combine: ``mean``; ``sum`` (counts); ``gmean`` (trec_eval gm_*); ``nanmean`` =
    the mean over queries whose value is defined, for measures that are NA (NaN) on some queries (RA-nWG)"""
    aliases: tuple[str, ...] = ()
    reference: str = ""
    example: str = ""
    check: Callable[[Measure], None] | None = field(default=None, compare=False)
    reads: Literal["all", "top"] = "all"
    """how deep the measure reads the ranking: ``top`` = only the top ``cutoff`` rows (and the qrels), so the
    engine joins no deeper; ``all`` = every retrieved row. See :meth:`rows_read`."""
    reads_deeper: Callable[[Measure], int] | None = field(default=None, compare=False)
    """with ``reads="top"``: a rank below the cutoff the measure also reads (nDCG's recall ideal reads its
    ``depth``), or 0"""
    needs: tuple[str, ...] = ()
    """inputs beyond document-level qrels and a run that the measure needs (``"intents"``: intent-level
    qrels); the engine cannot compute such a measure and says where it is computed (``computed_by``)"""
    computed_by: str = ""
    """for a measure with ``needs``: where it is computed, with ``{m}`` standing for the measure"""
    system: Callable[[Measure], bool] | None = field(default=None, compare=False)
    """a system-level measure (one value per run, no value per query: Coverage, Gini …): returns True for
    the measures of this family that are (``AUC(pooled=true)``); None = always per query. See
    :meth:`is_system`."""

    def __post_init__(self) -> None:
        # every measure averaged over queries may be combined otherwise (agg=median …); a sum (NumRet), a
        # geometric mean (GMAP) or a system-level value (Coverage) is defined by how it combines
        if self.aggregate in ("mean", "nanmean") and self.system is None and all(p.name != "agg" for p in self.params):
            object.__setattr__(self, "params", (*self.params, AGG))

    def rows_read(self, m: Measure) -> int | None:
        """The deepest rank ``m`` (a measure of this family) reads, or None when it reads the whole ranking.

        A tie-averaged value (``ties=average``) reads whole tie groups, so it may read past the cutoff.
        """
        if self.reads != "top" or m.cutoff is None or dict(m.params).get("ties") == "average":
            return None
        deepest = int(m.cutoff)
        if self.reads_deeper is not None:
            deepest = max(deepest, int(self.reads_deeper(m)))
        return deepest

    def is_system(self, m: Measure) -> bool:
        """True when ``m`` has one value per run and none per query (a system-level measure)."""
        return self.system is not None and bool(self.system(m))

    def unavailable(self, m: Measure, available: Iterable[str] = ()) -> str | None:
        """Why ``m`` cannot be computed from document-level qrels, a run and the ``available`` side inputs
        (``"train"``, ``"items"``): the ``needs`` it lacks, or None."""
        given = set(available)
        lacking = [need for need in self.needs if need not in given]
        if not lacking:
            return None
        what = ", ".join(_INPUTS.get(need, need) for need in lacking)
        where = self.computed_by.format(m=m)
        return f"{m} needs {what}" + (f": use {where}" if where else "")

    @property
    def all_params(self) -> tuple[Param, ...]:
        """The family's parameters and :data:`JUDGED_ONLY`, which every measure takes."""
        if any(p.name == JUDGED_ONLY.name for p in self.params):
            return self.params
        return (*self.params, JUDGED_ONLY)

    def param(self, name: str) -> Param:
        for p in self.all_params:
            if p.name == name:
                return p
        for p in self.all_params:  # (the language lowercases names: C/W/L's goal is written T)
            if p.name.lower() == name.lower():
                return p
        known = [p.name for p in self.all_params]
        from ranklens.errors import did_you_mean

        hint = did_you_mean(name, known)
        raise MeasureError(
            f"{self.name} has no parameter '{name}'"
            + (hint if hint else f"; its parameters are: {', '.join(known) or 'none'}")
        )

    def __call__(self, **params: Any) -> Measure:
        # the cutoff may follow (P(rel=2)@5): it is required only when the measure is used
        return Measure.build(self, params, None, require_cutoff=False)

    def __matmul__(self, cutoff: int) -> Measure:
        return Measure.build(self, {}, cutoff)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Measure:
    """A measure with concrete parameters: hashable, ``str()`` is its canonical name.

    >>> from ranklens.measures import nDCG, parse
    >>> m = nDCG(gain="exp", ideal="local") @ 10
    >>> str(m)
    'nDCG(gain=exp,ideal=local)@10'
    >>> parse(str(m)) == m
    True
    """

    family: Family = field(compare=False, hash=False)
    name: str
    params: tuple[tuple[str, Any], ...] = ()
    cutoff: int | None = None

    @staticmethod
    def build(
        family: Family, params: Mapping[str, Any], cutoff: int | None, *, require_cutoff: bool = True
    ) -> Measure:
        values: dict[str, Any] = {}
        for key, raw in params.items():
            spec = family.param(key)
            values[spec.name] = spec.coerce(raw, family.name)
        if cutoff is not None:
            if family.cutoff == "none":
                raise MeasureError(f"{family.name} takes no cutoff; drop '@{cutoff}'")
            if isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1:
                raise MeasureError(f"{family.name}: the cutoff must be a positive integer; got {cutoff!r}")
            if cutoff > MAX_CUTOFF:
                raise _too_big(family.name, str(cutoff) if cutoff.bit_length() < 128 else "a larger number")
        elif family.cutoff == "required" and require_cutoff:
            raise MeasureError(f"{family.name} needs a cutoff, e.g. '{family.name}@10'")
        ordered = tuple(
            (p.name, values[p.name]) for p in family.all_params if p.name in values and values[p.name] != p.default
        )
        m = Measure(family, family.name, ordered, cutoff)
        if family.check is not None and (cutoff is not None or require_cutoff):
            family.check(m)
        return m

    def __call__(self, **params: Any) -> Measure:
        merged = dict(self.params)
        merged.update(params)
        return Measure.build(self.family, merged, self.cutoff, require_cutoff=self.cutoff is not None)

    def validate(self) -> Measure:
        """Check the measure is complete (a required cutoff is given); return it."""
        return Measure.build(self.family, dict(self.params), self.cutoff)

    def __matmul__(self, cutoff: int) -> Measure:
        return Measure.build(self.family, dict(self.params), cutoff)

    def get(self, name: str) -> Any:
        """The value of parameter ``name`` (its default when not set)."""
        for key, value in self.params:
            if key == name:
                return value
        return self.family.param(name).default

    def with_defaults(self, **defaults: Any) -> Measure:
        """A copy where the given parameters are set unless this measure sets them already."""
        names = {p.name for p in self.family.params}
        merged = {k: v for k, v in defaults.items() if k in names}
        merged.update(dict(self.params))
        return Measure.build(self.family, merged, self.cutoff)

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ",".join(f"{k}={self.family.param(k).format(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    def __repr__(self) -> str:
        return str(self)
