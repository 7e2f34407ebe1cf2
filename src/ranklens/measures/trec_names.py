"""trec_eval measure names (``ndcg_cut.5,10``, ``P.5``, ``map``, ``recip_rank``) → ranklens measures.

Each trec_eval name maps to one or more :class:`Measure` values plus the name trec_eval prints for each
(``ndcg_cut.5,10`` → ``ndcg_cut_5``/``nDCG@5`` and ``ndcg_cut_10``/``nDCG@10``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ranklens.errors import MeasureError, did_you_mean
from ranklens.measures.base import Measure
from ranklens.measures.parse import parse

__all__ = ["TREC_MEASURES", "TrecName", "is_trec_name", "parse_trec", "trec_examples"]

DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecName:
    """How one trec_eval measure name expands.

    ``kind``: ``"single"`` (no parameters), ``"cutoffs"`` (a comma list of positive integers, printed as
    ``name_k``), ``"gains"`` (``level=gain`` pairs, as ``ndcg``), or ``"floats"`` (a comma list of numbers
    printed with two decimals, as ``Rprec_mult``); ``build(value)`` gives the measure for one value.
    """

    name: str
    kind: str
    build: Callable[[object], Measure]
    defaults: tuple[object, ...] = ()
    printed: Callable[[object], str] | None = None

    def expand(self, params: str | None) -> list[tuple[str, Measure]]:
        if self.kind == "single":
            if params:
                raise MeasureError(f"trec_eval measure '{self.name}' takes no parameters; got '{params}'")
            return [(self.name, self.build(None))]
        if self.kind == "gains":
            return [(self.name, self.build(_gain_params(self.name, params)))]
        values: list[object] = list(self.defaults)
        if params:
            try:
                values = [int(v) if self.kind == "cutoffs" else float(v) for v in params.split(",")]
            except ValueError:
                raise MeasureError(
                    f"trec_eval measure '{self.name}.{params}': parameters must be comma-separated "
                    f"{'positive integers' if self.kind == 'cutoffs' else 'numbers'}"
                ) from None
            if self.kind == "cutoffs" and (any(v <= 0 for v in values) or len(set(values)) != len(values)):  # type: ignore[operator]
                raise MeasureError(
                    f"trec_eval measure '{self.name}.{params}': cutoffs must be positive without duplicates"
                )
        printed = self.printed or (lambda v: f"{self.name}_{v}")
        return [(printed(v), self.build(v)) for v in values]


def _gain_params(name: str, params: str | None) -> tuple[tuple[int, float], ...] | None:
    if not params:
        return None
    pairs = []
    for item in params.split(","):
        if "=" not in item:
            raise MeasureError(f"trec_eval measure '{name}.{params}': expected level=gain pairs like 1=1,2=3")
        lvl, gain = item.split("=", 1)
        try:
            pairs.append((int(lvl), float(gain)))
        except ValueError:
            raise MeasureError(f"trec_eval measure '{name}.{params}': '{item}' is not level=gain") from None
    return tuple(pairs)


def _p(text: str) -> Callable[[object], Measure]:
    def build(value: object) -> Measure:
        return parse(text.format(value))

    return build


def _with_gain(text: str) -> Callable[[object], Measure]:
    def build(value: object) -> Measure:
        m = parse(text)
        return m(gain=value) if value else m

    return build


TREC_MEASURES: dict[str, TrecName] = {}


def add(spec: TrecName) -> None:
    """Register a trec_eval name (used by :mod:`ranklens.trec_eval` for the rest of ``all_trec``)."""
    TREC_MEASURES[spec.name.lower()] = spec


for _spec in (
    TrecName("num_q", "single", _p("NumQ")),
    TrecName("num_ret", "single", _p("NumRet")),
    TrecName("num_rel", "single", _p("NumRel")),
    TrecName("num_rel_ret", "single", _p("NumRelRet")),
    TrecName("map", "single", _p("AP")),
    TrecName("Rprec", "single", _p("Rprec")),
    TrecName("bpref", "single", _p("Bpref")),
    TrecName("recip_rank", "single", _p("RR")),
    TrecName("infAP", "single", _p("infAP")),
    TrecName("ndcg", "gains", _with_gain("nDCG")),
    TrecName("dcg", "gains", _with_gain("DCG")),
    TrecName("ideal_dcg", "gains", _with_gain("IDCG")),
    TrecName("P", "cutoffs", _p("P@{}"), DEFAULT_CUTOFFS),
    TrecName("recall", "cutoffs", _p("R@{}"), DEFAULT_CUTOFFS),
    TrecName("ndcg_cut", "cutoffs", _p("nDCG@{}"), DEFAULT_CUTOFFS),
    TrecName("map_cut", "cutoffs", _p("AP@{}"), DEFAULT_CUTOFFS),
    TrecName("success", "cutoffs", _p("Success@{}"), (1, 5, 10)),
):
    add(_spec)


def _split(text: str) -> tuple[str, str | None]:
    name, _, params = text.strip().partition(".")
    return name, (params or None)


def is_trec_name(text: object) -> bool:
    """True when ``text`` is a trec_eval measure name (with or without parameters)."""
    if not isinstance(text, str):
        return False
    name, params = _split(text)
    if name.lower() not in TREC_MEASURES:
        return False
    # 'P' alone or 'map' are trec names; 'P@5' or 'AP(rel=2)' are not
    return "@" not in text and "(" not in text


def parse_trec(text: str) -> list[tuple[str, Measure]]:
    """Expand a trec_eval measure name into ``(printed name, measure)`` pairs.

    >>> [(n, str(m)) for n, m in parse_trec("ndcg_cut.5,10")]
    [('ndcg_cut_5', 'nDCG@5'), ('ndcg_cut_10', 'nDCG@10')]
    """
    name, params = _split(text)
    spec = TREC_MEASURES.get(name.lower())
    if spec is None:
        raise MeasureError(f"unknown trec_eval measure '{text}'{did_you_mean(name, [s.name for s in TREC_MEASURES.values()])}")
    return spec.expand(params)


def trec_examples() -> list[str]:
    """Names to suggest from (``ndcg_cut.10`` style)."""
    out = []
    for spec in TREC_MEASURES.values():
        out.append(spec.name if spec.kind in ("single", "gains") else f"{spec.name}.10")
    return out
