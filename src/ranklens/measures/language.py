"""The measure language: ``nDCG@10``, ``P(rel=2)@5``, ``nDCG(gain=exp,ideal=local)@10``, and trec_eval
names (``ndcg_cut.10``, ``P.5``, ``map``, ``recip_rank``), all case-insensitive.

A small hand-written parser (no ``eval``, no ``ast``)::

    measure := NAME [ "(" param ("," param)* ")" ] [ "@" cutoffs ]
    cutoffs := INT | INT ("," INT)+ | "[" INT ("," INT)* "]"     several cutoffs: several measures
    param   := NAME "=" VALUE            VALUE may be a {label:gain,...} map
    INT     := ASCII digits

One name is one measure in any letter case. Also read: the names trec_eval prints (``ndcg_cut_10``,
``P_5``) and ranx's names (``hit_rate``, ``hits``, ``ndcg_burges``, ``f1``, ``mrr``, ``r-precision``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping

from ranklens.errors import MeasureError
from ranklens.measures.base import Family, Measure, cutoff_of
from ranklens.measures.registry import families, get_family

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol
else:
    Protocol = object  # (typing at run time costs every face a few milliseconds; the protocol is the checker's)

__all__ = ["PRESETS", "MeasureLike", "MeasuresArg", "closest", "measure_items", "parse", "parse_many", "suggest"]

class ForeignMeasure(Protocol):
    """An ir_measures measure object (``ir_measures.nDCG@10``): read by its name, ``str(measure)``."""

    NAME: str


#: what names one measure: its text (``"nDCG@10"``), a :class:`Measure` (``nDCG@10`` in Python), a family
#: (``AP``) or an ir_measures measure object (``ir_measures.nDCG@10``)
MeasureLike = str | Measure | Family | ForeignMeasure
#: what every entry point takes for ``measures``: one measure as :data:`MeasureLike` or an iterable of them
MeasuresArg = MeasureLike | Iterable[MeasureLike]


def measure_items(measures: MeasuresArg) -> list[Measure | str]:
    """The one reading of a ``measures=`` argument, shared by every entry point (``evaluate``, ``Evaluator``,
    ``compare``, ``evaluate_files``): one measure or an iterable of them, each a name, a :class:`Measure`,
    a family (``AP``: the measure with its defaults) or an ir_measures measure (read by its name, which the
    language reads as ir_measures does). Names stay text (a trec_eval name may name several measures).

    >>> from ranklens.measures import AP, nDCG
    >>> measure_items(AP), measure_items([nDCG @ 10, "P@5"])
    ([AP], [nDCG@10, 'P@5'])
    >>> measure_items(3)
    Traceback (most recent call last):
    ...
    ranklens.errors.MeasureError: expected a measure (a name such as 'nDCG@10', a ranklens or ir_measures measure) or a list of them; got int 3
    """
    one = _one_item(measures)
    if one is not None:
        return [one]
    if isinstance(measures, Iterable) and not isinstance(measures, (bytes, Mapping)):
        out: list[Measure | str] = []
        for item in measures:
            found = _one_item(item)
            if found is None:
                raise MeasureError(f"expected a measure in the list of measures; got {type(item).__name__} {item!r}")
            out.append(found)
        return out
    raise MeasureError(
        "expected a measure (a name such as 'nDCG@10', a ranklens or ir_measures measure) or a list of them; "
        f"got {type(measures).__name__} {measures!r}"
    )


def _one_item(item: Any) -> Measure | str | None:
    """``item`` as one measure's text or value, or None when it is not one measure."""
    if isinstance(item, (str, Measure)):
        return item
    if isinstance(item, Family):
        return Measure.build(item, {}, None, require_cutoff=False)
    if type(item).__module__.split(".")[0] == "ir_measures" and hasattr(item, "NAME"):
        from ranklens.measures.ir_measures_names import from_ir_measures

        # ir_measures' meaning first (its RBP has p = 0.8, its ERR a top grade of 4), else its name as written
        return from_ir_measures(str(item)) or str(item)
    return None

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")

#: trec_eval's measure names (lower case): the keys of :data:`ranklens.measures.trec_names.TREC_MEASURES` before
#: anything is added to it (``tests/measures/test_language_trec_names.py`` checks they are the same), so a bare
#: name such as ``AP`` is known not to be trec_eval's without building that table
TREC_NAMES = frozenset((
    "11pt_avg", "bing", "bpref", "dcg", "g", "gm_bpref", "gm_map", "ideal_dcg", "infap", "iprec_at_recall", "map",
    "map_cut", "ndcg", "ndcg_cut", "ndcg_rel", "num_nonrel_judged_ret", "num_q", "num_rel", "num_rel_ret",
    "num_ret", "p", "rbp", "rbp_resid", "recall", "recip_rank", "relative_p", "rndcg", "rprec", "rprec_mult",
    "set_f", "set_map", "set_p", "set_recall", "set_relative_p", "success", "unj", "utility",
))


def parse(text: MeasureLike) -> Measure:
    """Parse one measure: the measure language, or any other name :func:`parse_many` reads that names
    exactly one measure (``ndcg_cut.10``, ``P_5``, ``hit_rate@10``).

    >>> parse("ndcg@10")
    nDCG@10
    >>> parse("P(rel=2)@5")
    P(rel=2)@5
    >>> parse("ndcg_cut.10")
    nDCG@10
    >>> parse("ndgc@10")
    Traceback (most recent call last):
    ...
    ranklens.errors.MeasureError: unknown measure 'ndgc@10'; did you mean 'nDCG@10'?
    """
    items = measure_items(text)
    if len(items) != 1:
        raise MeasureError(f"parse reads one measure; got {len(items)} (parse_many reads lists)")
    if isinstance(items[0], Measure):
        return items[0]
    text = items[0]
    found, language_error = _read(text)
    if len(found) == 1:
        return found[0]
    if language_error is not None:
        raise language_error  # 'P' or 'success': the family needs a cutoff (parse_many gives trec_eval's list)
    raise MeasureError(
        f"'{text}' names {len(found)} measures ({', '.join(map(str, found))}); ask for one of them "
        "(parse_many reads lists)"
    )


def parse_many(texts: MeasuresArg, *, rel_level: float | None = None) -> list[Measure]:
    """Parse measures: the measure language, trec_eval names (``ndcg_cut.5,10`` gives two) and the names
    trec_eval prints (``ndcg_cut_10``), ranx names (``hit_rate@10``, ``ndcg_burges@10``, ``hits@10``) and
    cutoff lists (``nDCG@5,10``, ``P@[5,10]``).

    A name is read as a ranklens measure first (case-insensitively: ``mrr`` is ``RR``, ``recall@10`` is
    ``R@10``), except that a bare trec_eval name is trec_eval's measures (``P`` and ``recall`` alone are
    trec_eval's P.5 … P.1000 and recall.5 … recall.1000; ``rbp`` and ``RBP`` are trec_eval's RBP, TrecRBP).
    ``rel_level`` sets ``rel`` for every measure that has the parameter and does not set it (trec_eval ``-l``).
    Duplicates are removed, first occurrence kept.

    >>> [str(m) for m in parse_many(["ndcg_cut.5,10", "map", "nDCG@10", "P@[1,3]"])]
    ['nDCG@5', 'nDCG@10', 'AP', 'P@1', 'P@3']
    """
    items = measure_items(texts)
    out: list[Measure] = []
    for item in items:
        found = [item] if isinstance(item, Measure) else _read(item)[0]
        for m in found:
            if rel_level is not None:
                m = m.with_defaults(rel=rel_level)
            if m not in out:
                out.append(m)
    return out


#: Names other tools give a measure with parameters (ranx): name → (family, fixed parameters).
PRESETS: dict[str, tuple[str, dict[str, str]]] = {
    "ndcg_burges": ("nDCG", {"gain": "exp"}),
    "dcg_burges": ("DCG", {"gain": "exp"}),
}

_CUTOFF = re.compile(r"@([0-9]+)")
_CUTOFF_LIST = re.compile(r"@(?:\[\s*([0-9]+(?:\s*,\s*[0-9]+)*)\s*\]|([0-9]+(?:\s*,\s*[0-9]+)+))")


def _read(text: str) -> tuple[list[Measure], MeasureError | None]:
    """The measures ``text`` names, and the measure-language error when a known family name was read as
    a trec_eval list instead (``P``: P needs a cutoff, trec_eval's ``P`` is nine measures)."""
    src = text.strip()
    head, tail = _head_and_cutoff_list(src)
    if tail is not None:
        return [_language(f"{head}@{k}", text) for k in tail], None
    try:
        found = [_language(src, text)]
    except MeasureError as err:
        language_error = err
    else:
        return _as_trec_eval_reads(src, found), None
    from ranklens.measures import trec_names  # (the trec_eval names: only for what the language did not read)

    name, dot, params = src.partition(".")
    shadow = trec_names.shadowed(name)
    if shadow is not None and dot:
        family, trec_family = shadow
        raise MeasureError(
            f"'{text}': in ranklens '{name}' is {family}, trec_eval's {name} is {trec_family}; write "
            f"{family}({params}) or {trec_family}({params}) (trec-eval -m {text} is trec_eval's)"
        ) from None
    if trec_names.language_lookup(name) is not None:
        found = [m for _, m in trec_names.parse_trec(src)]  # a bad parameter is trec_eval's error
        known = _known_family(_NAME.match(src))
        return found, (language_error if known else None)
    dotted = trec_names.from_printed_name(src)
    if dotted is not None:
        return [m for _, m in trec_names.parse_trec(dotted)], None
    from ranklens.measures.ir_measures_names import from_ir_measures, ir_measures_only

    try:  # ir_measures' spelling: nDCG(dcg='exp-log2')@10, IPrec@0.5, NumRet(rel=1)
        foreign = from_ir_measures(src)
    except MeasureError:
        if ir_measures_only(src):
            raise
        raise language_error from None  # (the language's own message says what is wrong)
    if foreign is not None:
        return [foreign], None
    raise language_error


def _as_trec_eval_reads(src: str, found: list[Measure]) -> list[Measure]:
    """A bare trec_eval name (no parameters, no cutoff) means trec_eval's measures: ``recall`` is recall.5 …
    recall.1000, as ``trec_eval -m recall`` prints, not ``R`` (``recall@10`` is ``R@10``)."""
    if not _NAME.fullmatch(src):
        return found
    if src.lower() not in TREC_NAMES and "ranklens.measures.trec_names" not in sys.modules:
        return found  # (not trec_eval's, and no name added to its table: the table need not be read)
    from ranklens.measures import trec_names

    if src.lower() not in trec_names.TREC_MEASURES:
        return found
    theirs = [m for _, m in trec_names.parse_trec(src)]
    return theirs or found


def _known_family(match: re.Match[str] | None) -> bool:
    if match is None:
        return False
    try:
        get_family(match.group(0))
    except MeasureError:
        return False
    return True


def _head_and_cutoff_list(src: str) -> tuple[str, list[int] | None]:
    """``nDCG@5,10`` / ``P@[5,10]`` → the measure without its cutoff and the cutoffs; else (src, None)."""
    at = src.rfind("@")
    if at <= 0:
        return src, None
    m = _CUTOFF_LIST.fullmatch(src[at:])
    if m is None:
        return src, None
    listed = m.group(1) if m.group(1) is not None else m.group(2)
    return src[:at], [cutoff_of(k.strip(), src[:at]) for k in listed.split(",")]


def _language(src: str, text: str) -> Measure:
    """One measure of the ranklens language (family names, aliases and presets)."""
    src = src.strip()
    m = _NAME.match(src)
    if not m:
        raise MeasureError(f"'{text}' is not a measure name; examples: nDCG@10, P(rel=2)@5, AP")
    name = m.group(0)
    pos = m.end()
    preset = PRESETS.get(name.lower())
    try:
        family = get_family(preset[0] if preset else name)
    except MeasureError:
        raise MeasureError(f"unknown measure '{text}'{suggest(text)}") from None
    params: dict[str, str] = {}
    if pos < len(src) and src[pos] == "(":
        close = _matching_paren(src, pos, text)
        params = _split_params(src[pos + 1 : close], text)
        pos = close + 1
    if preset:
        for key, value in preset[1].items():
            if key in params and params[key].lower() != value:
                raise MeasureError(f"'{text}': {name} means {preset[0]}({key}={value}); drop '{key}={params[key]}'")
            params[key] = value
    cutoff = None
    if pos < len(src):
        rest = src[pos:]
        if not _CUTOFF.fullmatch(rest):  # ASCII digits only: '@²' and '@١٠' are not cutoffs
            hint = " (separate several measures with spaces: -m nDCG@10 AP)" if "," in rest else ""
            raise MeasureError(f"cannot read '{rest}' in measure '{text}'; a cutoff looks like '@10'{hint}")
        cutoff = cutoff_of(rest[1:], name)
    if cutoff is None and not preset and name.lower() in NO_CUTOFF_TWINS:
        family = get_family(NO_CUTOFF_TWINS[name.lower()])  # 'f1': ranx's set F1; 'F1@10' is F1@k
    return Measure.build(family, params, cutoff)


#: names that mean another family when written without a cutoff
NO_CUTOFF_TWINS = {"f1": "SetF"}


def _matching_paren(src: str, start: int, text: str) -> int:
    depth = 0
    for i in range(start, len(src)):
        if src[i] in "({":
            depth += 1
        elif src[i] in ")}":
            depth -= 1
            if depth == 0:
                return i
    raise MeasureError(f"unbalanced parentheses in measure '{text}'")


def _split_params(body: str, text: str) -> dict[str, str]:
    params: dict[str, str] = {}
    depth = 0
    current = ""
    parts = []
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    for part in parts:
        if "=" not in part:
            raise MeasureError(f"parameter '{part.strip()}' in '{text}' needs a value: name=value")
        key, value = part.split("=", 1)
        key = key.strip().lower()
        if key in params:
            raise MeasureError(f"parameter '{key}' given twice in '{text}'")
        params[key] = value.strip()
    return params


def suggest(text: str) -> str:
    """``"; did you mean 'X'?"`` for the measure name nearest to ``text``, or ``""``.

    The name part (before ``(``, ``@`` or ``.``) is compared with every family name, alias, preset and
    trec_eval name by edit distance (a swap of two letters counts once); the rest is kept, so
    ``recal@100`` suggests ``recall@100`` and ``ncdg_cut.10`` suggests ``ndcg_cut.10``.

    >>> suggest("recal@100"), suggest("ncdg"), suggest("xyzzy")
    ("; did you mean 'recall@100'?", "; did you mean 'nDCG'?", '')
    """
    from ranklens.measures.trec_names import TREC_MEASURES

    src = text.strip()
    head = re.match(r"[^(@.]*", src).group(0)  # type: ignore[union-attr]
    tail = src[len(head) :]
    stem, sep, number = head.rpartition("_")
    if sep and stem and re.fullmatch(r"[0-9]+", number):  # a trec_eval printed name: ncdg_cut_10
        head, tail = stem, f"_{number}{tail}"
    names: dict[str, str] = {}
    for f in families():
        names.setdefault(f.name.lower(), f.name)
    for f in families():
        for alias in f.aliases:
            names.setdefault(alias.lower(), alias)
    for preset in PRESETS:
        names.setdefault(preset, preset)
    for spec in TREC_MEASURES.values():
        names.setdefault(spec.name.lower(), spec.name)
    if head.lower() in names:
        return ""  # the name is right: what is wrong is elsewhere (a parameter, the cutoff)
    best = closest(head, list(names.values()))
    return f"; did you mean '{best}{tail}'?" if best else ""


def closest(word: str, candidates: list[str]) -> str | None:
    """The candidate nearest to ``word`` (case-insensitive), or None when none is near: edit distance at
    most 1 for words of up to 4 letters, 2 up to 8, else 3; ties go to the same first letter, then to
    the earlier candidate.

    >>> closest("ndgc", ["DCG", "nDCG", "NumQ"]), closest("zzz", ["DCG"])
    ('nDCG', None)
    """
    low = word.lower()
    if not low:
        return None
    limit = 1 if len(low) <= 4 else 2 if len(low) <= 8 else 3
    best: tuple[int, int, int] | None = None
    choice = None
    for i, c in enumerate(candidates):
        if abs(len(c) - len(low)) > limit:  # the distance is at least the difference in length: skip the work
            continue
        d = _distance(low, c.lower())
        if d > limit:
            continue
        key = (d, 0 if c[:1].lower() == low[:1] else 1, i)
        if best is None or key < best:
            best, choice = key, c
    return choice


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]
