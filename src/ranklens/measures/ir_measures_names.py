"""ir_measures' spellings of the measures ranklens has: ``nDCG(dcg='exp-log2')@10``, ``nDCG(gains={0:0,1:1,2:3})@10``,
``P(judged_only=True)@10``, ``IPrec@0.5``, ``SetR``, ``NumRet(rel=1)``, ``SetF(beta=1)``.

The measure language reads its own names first; what it does not read is tried here, as ir_measures writes it:
a name, Python-literal parameters (quoted strings, ``True``/``False``, numbers, ``{label: gain}`` maps) and ``@``
a cutoff (a recall level for IPrec). An ir_measures object (``ir_measures.RBP``) is read here first, by its
``str()``, with ir_measures' defaults (``RBP``: p = 0.8; ``ERR``: a top grade of 4, gdeval's), where the same
name written as text is ranklens' (trec_eval's p = 0.9; the largest label).
A small hand-written reader, no ``eval``. ``docs/measures-ir_measures.md`` lists what has no ranklens twin.

>>> [str(from_ir_measures(t)) for t in ("nDCG(dcg='exp-log2')@10", "IPrec@0.5", "NumRet(rel=1)", "SetR")]
['nDCG(gain=exp)@10', 'IPrec(recall=0.5)', 'NumRelRet', 'R']
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ranklens.errors import MeasureError
from ranklens.measures.base import Measure, cutoff_of
from ranklens.measures.registry import get_family

__all__ = ["IR_MEASURES_ONLY", "from_ir_measures", "ir_measures_only"]

_FORM = re.compile(r"(?P<name>[A-Za-z_α][A-Za-z0-9_]*)(?:\((?P<params>.*)\))?(?:@(?P<cutoff>[0-9.]+))?\Z", re.DOTALL)

#: ir_measures names whose measure ranklens does not compute (or computes only from other inputs), with the
#: nearest ranklens measure to name in the error: none left (issue 28 added the last ones)
IR_MEASURES_ONLY: dict[str, str] = {}


def ir_measures_only(text: str) -> bool:
    """True when ``text`` names a measure only ir_measures has (or writes a parameter only it has)."""
    m = _FORM.match(text.strip())
    if m is None:
        return False
    return m.group("name") in IR_MEASURES_ONLY or any(
        re.search(rf"\b{key}\s*=", m.group("params") or "") for key in ("dcg", "gains", "beta", "relative")
    )


def from_ir_measures(text: str) -> Measure | None:
    """The ranklens measure of an ir_measures spelling, or None when ``text`` is not one ranklens has.

    Raises:
        MeasureError: the name is an ir_measures measure ranklens lacks (naming the nearest it has), or a
            parameter ir_measures accepts has a value ranklens cannot match.
    """
    m = _FORM.match(text.strip())
    if m is None:
        return None
    name = m.group("name")
    if name in IR_MEASURES_ONLY:
        raise MeasureError(
            f"'{text}' is an ir_measures measure ranklens does not compute; the nearest it has is "
            f"{IR_MEASURES_ONLY[name]} (docs/measures-ir_measures.md)"
        )
    translate = _TRANSLATE.get(name)
    if translate is None:
        return None
    try:
        params = _params(m.group("params") or "", text)
    except _NotPython:
        return None
    cutoff = m.group("cutoff")
    return translate(params, cutoff, text)


def _params(body: str, text: str) -> dict[str, object]:
    """Python-literal keyword arguments: ``dcg='exp-log2', gains={0:0,1:1}, judged_only=True, p=0.8``."""
    out: dict[str, object] = {}
    depth, start, parts = 0, 0, []
    for i, ch in enumerate(body):
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    for part in (p.strip() for p in parts):
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq:
            raise MeasureError(f"parameter '{part}' in '{text}' needs a value: name=value")
        out[key.strip()] = _literal(value.strip(), text)
    return out


def _literal(value: str, text: str) -> object:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if value in ("True", "False"):
        return value == "True"
    if value.startswith("{"):
        return value  # a gain map: Param "gain" reads {0:0,1:1,2:3}
    if not value.isascii():
        raise _NotPython  # (int() reads '١' as 1: only ASCII digits are numbers here)
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        raise _NotPython from None  # (a bare word: the measure language's spelling, not ir_measures')


class _NotPython(Exception):
    """A parameter value that is no Python literal: ``text`` is not written as ir_measures writes measures."""


def _cutoff(cutoff: str | None, text: str) -> int | None:
    if cutoff is None:
        return None
    if not cutoff.isdigit():
        raise MeasureError(f"'{text}': the cutoff must be a positive integer; got {cutoff!r}")
    return cutoff_of(cutoff, f"'{text}'")  # (bounded: issue 22 item 17)


def _build(family: str, params: dict[str, object], cutoff: int | None) -> Measure:
    return Measure.build(get_family(family), params, cutoff)


def _judged(params: dict[str, object], text: str) -> dict[str, object]:
    """``judged_only=True``: kept as the measure's own parameter (documents without a judgement are removed
    from this measure's ranking, as ir_measures and trec_eval -J do)."""
    judged = params.pop("judged_only", False)
    if judged not in (True, False):
        raise MeasureError(f"'{text}': judged_only must be True or False; got {judged!r}")
    if judged:
        params["judged_only"] = True
    return params


def _same(family: str, *, cutoff: bool = True) -> Callable[[dict[str, object], str | None, str], Measure]:
    """A measure whose parameters (rel, judged_only) have the same names in both."""

    def translate(params: dict[str, object], at: str | None, text: str) -> Measure:
        if not cutoff:
            _no_cutoff(at, text)
        return _build(family, _judged(params, text), _cutoff(at, text) if cutoff else None)

    return translate


def _no_cutoff(at: str | None, text: str) -> None:
    if at is not None:
        raise MeasureError(f"'{text}' takes no cutoff")


def _ndcg(params: dict[str, object], at: str | None, text: str) -> Measure:
    params = _judged(params, text)
    dcg = params.pop("dcg", "log2")
    if dcg not in ("log2", "exp-log2"):
        raise MeasureError(f"'{text}': dcg must be 'log2' or 'exp-log2'; got {dcg!r}")
    gains = params.pop("gains", None)
    if gains is not None and dcg == "exp-log2":
        raise MeasureError(f"'{text}': gains= sets every gain; drop dcg='exp-log2'")
    if gains is not None:
        params["gain"] = gains
    elif dcg == "exp-log2":
        params["gain"] = "exp"
    return _build("nDCG", params, _cutoff(at, text))


def _numret(params: dict[str, object], at: str | None, text: str) -> Measure:
    _no_cutoff(at, text)
    if "rel" in params:  # NumRet(rel=1) is how ir_measures writes NumRelRet
        return _build("NumRelRet", _judged(params, text), None)
    return _build("NumRet", _judged(params, text), None)


def _iprec(params: dict[str, object], at: str | None, text: str) -> Measure:
    params = _judged(params, text)
    if at is not None:
        params["recall"] = float(at)
    return _build("IPrec", params, None)


def _setp(params: dict[str, object], at: str | None, text: str) -> Measure:
    _no_cutoff(at, text)
    relative = params.pop("relative", False)
    return _build("SetRelativeP" if relative else "SetP", _judged(params, text), None)


def _setf(params: dict[str, object], at: str | None, text: str) -> Measure:
    _no_cutoff(at, text)
    params = _judged(params, text)
    if "beta" in params:  # ir_measures passes beta to trec_eval's set_F, whose parameter ranklens calls beta2
        params["beta2"] = params.pop("beta")
    return _build("SetF", params, None)


def _err(params: dict[str, object], at: str | None, text: str) -> Measure:
    params = _judged(params, text)
    params.setdefault("max_rel", 4)  # (gdeval's top grade, which ir_measures computes ERR with)
    return _build("ERR", params, _cutoff(at, text))


def _rbp(params: dict[str, object], at: str | None, text: str) -> Measure:
    params = _judged(params, text)
    params.setdefault("p", 0.8)  # (ir_measures' default persistence; trec_eval's and ranklens' is 0.9)
    return _build("MZRBP", params, _cutoff(at, text))  # (ir_measures' RBP is Moffat & Zobel's, binary at rel)


_TRANSLATE: dict[str, Callable[[dict[str, object], str | None, str], Measure]] = {
    "nDCG": _ndcg,
    "P": _same("P"),
    "R": _same("R"),
    "SetR": _same("R", cutoff=False),
    "AP": _same("AP"),
    "RR": _same("RR"),
    "Rprec": _same("Rprec", cutoff=False),
    "Bpref": _same("Bpref", cutoff=False),
    "infAP": _same("infAP", cutoff=False),
    "Success": _same("Success"),
    "Judged": _same("Judged"),
    "ERR": _err,
    "NumQ": _same("NumQ", cutoff=False),
    "NumRel": _same("NumRel", cutoff=False),
    "NumRet": _numret,
    "IPrec": _iprec,
    "SetP": _setp,
    "SetAP": _same("SetAP", cutoff=False),
    "SetF": _setf,
    "RBP": _rbp,
}
