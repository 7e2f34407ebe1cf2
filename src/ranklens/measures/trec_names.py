"""trec_eval measure names (``ndcg_cut.5,10``, ``P.5``, ``map``, ``recip_rank``) → ranklens measures.

Each trec_eval name maps to one or more :class:`Measure` values plus the name trec_eval prints for each
(``ndcg_cut.5,10`` → ``ndcg_cut_5``/``nDCG@5`` and ``ndcg_cut_10``/``nDCG@10``). Parameters follow
trec_eval v10.0's ``meas_init.c``: integer cutoffs and float levels are sorted ascending and must be
unique (cutoffs also positive); ``level=gain`` pairs and float parameter lists are kept in order and the
printed name becomes ``name_<parameters as given>`` (``ndcg.1=1,2=3`` prints ``ndcg_1=1,2=3``).

``relstring`` and ``runid`` are not measures (they print text); :mod:`ranklens.trec_eval` handles them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ranklens.errors import MeasureError, did_you_mean
from ranklens.measures.base import Measure, cutoff_of
from ranklens.measures.registry import get_family
from ranklens.measures.trec_families import ELEVEN_POINTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "TREC_MEASURES",
    "TrecName",
    "add",
    "from_printed_name",
    "is_trec_name",
    "language_lookup",
    "parse_trec",
    "shadowed",
    "trec_examples",
]

DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

KINDS = ("single", "cutoffs", "levels", "gains", "params")


@dataclass(frozen=True)
class TrecName:
    """How one trec_eval measure name expands.

    ``kind`` (trec_eval's parameter style):

    * ``"single"``: no parameters;
    * ``"cutoffs"``: comma list of positive integers, one measure each, printed ``name_k``;
    * ``"levels"``: comma list of numbers, one measure each, printed ``name_%.2f`` (``Rprec_mult_0.20``);
    * ``"gains"``: ``name=value`` pairs (``level=gain``, and ``p=`` for rbp) for one measure;
    * ``"params"``: comma list of numbers for one measure (``11pt_avg``, ``set_F``, ``utility``).

    ``build(value)`` gives the measure for one cutoff or level, or for the parsed parameters (``None``
    when none were given) of the one-measure kinds.
    """

    name: str
    kind: str
    build: Callable[[Any], Measure]
    defaults: tuple[Any, ...] = ()

    def expand(self, params: str | None) -> list[tuple[str, Measure]]:
        """``(printed name, measure)`` pairs for this name with ``params`` (the text after the first '.')."""
        if self.kind == "single":
            if params:
                raise MeasureError(f"trec_eval measure '{self.name}' takes no parameters; got '{params}'")
            return [(self.name, self.build(None))]
        if self.kind in ("gains", "params"):
            if not params:
                return [(self.name, self.build(None))]
            parsed = _pairs(self.name, params) if self.kind == "gains" else _numbers(self.name, params)
            return [(f"{self.name}_{params}", self.build(parsed))]
        values: list[Any] = list(self.defaults)
        if params:
            values = _cutoffs(self.name, params) if self.kind == "cutoffs" else sorted(_numbers(self.name, params))
            if len(set(values)) != len(values):
                raise MeasureError(f"trec_eval measure '{self.name}.{params}': duplicate cutoffs")
        if self.kind == "cutoffs":
            return [(f"{self.name}_{v}", self.build(v)) for v in values]
        return [(f"{self.name}_{float(v):.2f}", self.build(v)) for v in values]


def _numbers(name: str, params: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in params.split(","))
    except ValueError:
        raise MeasureError(f"trec_eval measure '{name}.{params}': parameters must be comma-separated numbers") from None


def _cutoffs(name: str, params: str) -> list[int]:
    try:
        values = sorted(
            cutoff_of(v, f"trec_eval measure '{name}'") if v.isascii() and v.isdigit() else int(v)
            for v in params.split(",")
        )
    except MeasureError:
        raise  # (beyond the bound)
    except ValueError:
        raise MeasureError(
            f"trec_eval measure '{name}.{params}': cutoffs must be comma-separated positive integers"
        ) from None
    if values[0] <= 0:
        raise MeasureError(f"trec_eval measure '{name}.{params}': cutoffs must be positive")
    return values


_INT = re.compile(r"[+-]?[0-9]+")


def _pairs(name: str, params: str) -> tuple[tuple[str, float], ...]:
    out = []
    for item in params.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise MeasureError(f"trec_eval measure '{name}.{params}': expected name=value pairs like 1=1,2=3")
        try:
            out.append((key, float(value)))
        except ValueError:
            raise MeasureError(f"trec_eval measure '{name}.{params}': '{item}' is not name=number") from None
    return tuple(out)


def gain_map(pairs: tuple[tuple[str, float], ...] | None) -> tuple[tuple[int, float], ...] | None:
    """The ``level=gain`` pairs as a gain map; names that are not integers are ignored, as trec_eval's
    ``setup_gains`` does (``rbp.p=0.8`` names a parameter, not a level)."""
    if not pairs:
        return None
    levels = tuple((int(k), v) for k, v in pairs if _INT.fullmatch(k))
    return levels or None


def _family(name: str, **fixed: Any) -> Callable[[Any], Measure]:
    def build(_: Any) -> Measure:
        return get_family(name)(**fixed)

    return build


def _cut(name: str) -> Callable[[Any], Measure]:
    def build(k: Any) -> Measure:
        return get_family(name) @ int(k)

    return build


def _level(name: str, param: str) -> Callable[[Any], Measure]:
    def build(v: Any) -> Measure:
        return get_family(name)(**{param: float(v)})

    return build


def _gains(name: str) -> Callable[[Any], Measure]:
    def build(pairs: Any) -> Measure:
        g = gain_map(pairs)
        return get_family(name)(gain=g) if g else get_family(name)()

    return build


def _rbp(pairs: Any) -> Measure:
    params: dict[str, Any] = {}
    for key, value in pairs or ():
        if key == "p":
            params["p"] = value
    g = gain_map(pairs)
    if g:
        params["gain"] = g
    return get_family("TrecRBP")(**params)


def _iprec_avg(values: Any) -> Measure:
    return get_family("IPrecAvg")(recall=values) if values else get_family("IPrecAvg")()


def _set_f(values: Any) -> Measure:
    return get_family("SetF")(beta2=values[0]) if values else get_family("SetF")()


def _utility(values: Any) -> Measure:
    if not values:
        return get_family("Utility")()
    if len(values) != 4:
        raise MeasureError(f"trec_eval measure 'utility' takes exactly 4 coefficients a,b,c,d; got {len(values)}")
    return get_family("Utility")(**dict(zip("abcd", values)))


TREC_MEASURES: dict[str, TrecName] = {}


def add(spec: TrecName) -> None:
    """Register a trec_eval name."""
    if spec.kind not in KINDS:
        raise MeasureError(f"trec name kind must be one of {', '.join(KINDS)}; got {spec.kind!r}")
    TREC_MEASURES[spec.name.lower()] = spec


for _spec in (
    TrecName("num_q", "single", _family("NumQ")),
    TrecName("num_ret", "single", _family("NumRet")),
    TrecName("num_rel", "single", _family("NumRel")),
    TrecName("num_rel_ret", "single", _family("NumRelRet")),
    TrecName("map", "single", _family("AP")),
    TrecName("gm_map", "single", _family("GMAP")),
    TrecName("Rprec", "single", _family("Rprec")),
    TrecName("bpref", "single", _family("Bpref")),
    TrecName("recip_rank", "single", _family("RR")),
    TrecName("iprec_at_recall", "levels", _level("IPrec", "recall"), ELEVEN_POINTS),
    TrecName("P", "cutoffs", _cut("P"), DEFAULT_CUTOFFS),
    TrecName("recall", "cutoffs", _cut("R"), DEFAULT_CUTOFFS),
    TrecName("infAP", "single", _family("infAP")),
    TrecName("gm_bpref", "single", _family("GMBpref")),
    TrecName("Rprec_mult", "levels", _level("RprecMult", "mult"), RPREC_MULTS),
    TrecName("utility", "params", _utility),
    TrecName("11pt_avg", "params", _iprec_avg),
    TrecName("binG", "single", _family("BinG")),
    TrecName("G", "gains", _gains("G")),
    TrecName("dcg", "gains", _gains("DCG")),
    TrecName("ideal_dcg", "gains", _gains("IDCG")),
    TrecName("ndcg", "gains", _gains("nDCG")),
    TrecName("ndcg_rel", "gains", _gains("nDCGRel")),
    TrecName("Rndcg", "gains", _gains("RnDCG")),
    TrecName("ndcg_cut", "cutoffs", _cut("nDCG"), DEFAULT_CUTOFFS),
    TrecName("map_cut", "cutoffs", _cut("AP"), DEFAULT_CUTOFFS),
    TrecName("relative_P", "cutoffs", _cut("RelativeP"), DEFAULT_CUTOFFS),
    TrecName("success", "cutoffs", _cut("Success"), (1, 5, 10)),
    TrecName("set_P", "single", _family("SetP")),
    TrecName("set_relative_P", "single", _family("SetRelativeP")),
    TrecName("set_recall", "single", _family("R")),
    TrecName("set_map", "single", _family("SetAP")),
    TrecName("set_F", "params", _set_f),
    TrecName("num_nonrel_judged_ret", "single", _family("NumNonRelJudgedRet")),
    TrecName("rbp", "gains", _rbp),
    TrecName("rbp_resid", "single", _family("TrecRBPResidual")),
    TrecName("unj", "cutoffs", _cut("Unjudged"), (5, 10, 20)),
):
    add(_spec)


def _split(text: str) -> tuple[str, str | None]:
    name, _, params = text.strip().partition(".")
    return name, (params or None)


def lookup(name: str) -> TrecName | None:
    """The trec_eval name ``name`` (case-insensitive), unless it is a ranklens family name in other case:
    ``RBP`` is read by the measure language (the TrecRBP family, which it aliases)."""
    spec = TREC_MEASURES.get(name.lower())
    if spec is None or spec.name == name:
        return spec
    try:
        get_family(name)
    except MeasureError:
        return spec
    return None


def language_lookup(name: str) -> TrecName | None:
    """The trec_eval name ``name`` in the measure language (any letter case), except where the name is a
    ranklens family that trec_eval defines differently (:func:`shadowed`)."""
    if shadowed(name) is not None:
        return None
    return TREC_MEASURES.get(name.lower())


def shadowed(name: str) -> tuple[str, str] | None:
    """``(ranklens family, trec_eval's family)`` when ``name`` is both a ranklens family name and a
    trec_eval name of a different measure. No built-in family is (``rbp`` and ``RBP`` are trec_eval's RBP,
    TrecRBP; Moffat & Zobel's is MZRBP: ``tests/measures/test_trec_spellings.py``); a plugin's could be,
    and then the measure language refuses trec_eval parameters on it rather than guess.

    >>> shadowed("rbp"), shadowed("map")
    (None, None)
    """
    spec = TREC_MEASURES.get(name.lower())
    if spec is None:
        return None
    try:
        family = get_family(name)
    except MeasureError:
        return None
    try:
        theirs = spec.expand(None)[0][1].family
    except MeasureError:
        return None
    return None if theirs.name == family.name else (family.name, theirs.name)


def from_printed_name(text: str) -> str | None:
    """The trec_eval argument of a name trec_eval prints: ``P_5`` → ``P.5``, ``ndcg_cut_10`` →
    ``ndcg_cut.10``, ``iprec_at_recall_0.10`` → ``iprec_at_recall.0.10``; None for anything else.

    >>> from_printed_name("ndcg_cut_10"), from_printed_name("recall_100"), from_printed_name("nDCG@10")
    ('ndcg_cut.10', 'recall.100', None)
    """
    name, sep, value = text.strip().rpartition("_")
    if not sep or not re.fullmatch(r"[0-9]+(\.[0-9]+)?", value):
        return None
    spec = language_lookup(name)
    if spec is None or spec.kind not in ("cutoffs", "levels"):
        return None
    if spec.kind == "cutoffs" and "." in value:
        return None
    return f"{spec.name}.{value}"


def is_trec_name(text: object) -> bool:
    """True when ``text`` is a trec_eval measure name (with or without parameters)."""
    if not isinstance(text, str):
        return False
    # 'P' alone or 'map' are trec names; 'P@5' or 'AP(rel=2)' are not
    if "@" in text or "(" in text:
        return False
    name, _ = _split(text)
    return lookup(name) is not None


def parse_trec(text: str) -> list[tuple[str, Measure]]:
    """Expand a trec_eval measure name into ``(printed name, measure)`` pairs.

    >>> [(n, str(m)) for n, m in parse_trec("ndcg_cut.10,5")]
    [('ndcg_cut_5', 'nDCG@5'), ('ndcg_cut_10', 'nDCG@10')]
    >>> [(n, str(m)) for n, m in parse_trec("ndcg.1=1,2=3")]
    [('ndcg_1=1,2=3', 'nDCG(gain={1:1,2:3})')]
    """
    name, params = _split(text)
    spec = lookup(name) or language_lookup(name)
    if spec is None:
        raise MeasureError(f"unknown trec_eval measure '{text}'{did_you_mean(name, [s.name for s in TREC_MEASURES.values()])}")
    return spec.expand(params)


def trec_examples() -> list[str]:
    """Names to suggest from (``ndcg_cut.10`` style)."""
    out = []
    for spec in TREC_MEASURES.values():
        out.append(spec.name if spec.kind in ("single", "gains", "params") else f"{spec.name}.10")
    return out
