"""The measure language: ``nDCG@10``, ``P(rel=2)@5``, ``nDCG(gain=exp,ideal=local)@10``, and trec_eval
names (``ndcg_cut.10``, ``P.5``, ``map``, ``recip_rank``), all case-insensitive.

A small hand-written parser (no ``eval``, no ``ast``)::

    measure := NAME [ "(" param ("," param)* ")" ] [ "@" INT ]
    param   := NAME "=" VALUE            VALUE may be a {label:gain,...} map
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ranklens.errors import MeasureError, did_you_mean
from ranklens.measures.base import Measure
from ranklens.measures.registry import families, get_family

__all__ = ["parse", "parse_many"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")


def parse(text: str | Measure) -> Measure:
    """Parse one measure in the ranklens language.

    >>> parse("ndcg@10")
    nDCG@10
    >>> parse("P(rel=2)@5")
    P(rel=2)@5
    >>> parse("ndgc@10")
    Traceback (most recent call last):
    ...
    ranklens.errors.MeasureError: unknown measure 'ndgc@10'; did you mean 'nDCG@10'?
    """
    if isinstance(text, Measure):
        return text
    src = text.strip()
    m = _NAME.match(src)
    if not m:
        raise MeasureError(f"'{text}' is not a measure name; examples: nDCG@10, P(rel=2)@5, AP")
    name = m.group(0)
    pos = m.end()
    try:
        family = get_family(name)
    except MeasureError:
        raise MeasureError(f"unknown measure '{text}'{_suggest(text)}") from None
    params: dict[str, str] = {}
    if pos < len(src) and src[pos] == "(":
        close = _matching_paren(src, pos, text)
        params = _split_params(src[pos + 1 : close], text)
        pos = close + 1
    cutoff = None
    if pos < len(src):
        rest = src[pos:]
        if not rest.startswith("@") or not rest[1:].isdigit():
            raise MeasureError(f"cannot read '{rest}' in measure '{text}'; a cutoff looks like '@10'")
        cutoff = int(rest[1:])
    return Measure.build(family, params, cutoff)


def parse_many(texts: Iterable[Measure | str] | str, *, rel_level: int | None = None) -> list[Measure]:
    """Parse measures in the ranklens language or as trec_eval names (``ndcg_cut.5,10`` gives two).

    ``rel_level`` sets ``rel`` for every measure that has the parameter and does not set it (trec_eval ``-l``).
    Duplicates are removed, first occurrence kept.

    >>> [str(m) for m in parse_many(["ndcg_cut.5,10", "map", "nDCG@10"])]
    ['nDCG@5', 'nDCG@10', 'AP']
    """
    from ranklens.measures.trec_names import is_trec_name, parse_trec

    items: list[Measure | str] = [texts] if isinstance(texts, str) else list(texts)
    out: list[Measure] = []
    for item in items:
        found: list[Measure]
        if isinstance(item, Measure):
            found = [item]
        elif is_trec_name(item):
            found = [m for _, m in parse_trec(item)]
        else:
            found = [parse(item)]
        for m in found:
            if rel_level is not None:
                m = m.with_defaults(rel=rel_level)
            if m not in out:
                out.append(m)
    return out


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


def _suggest(text: str) -> str:
    from ranklens.measures.trec_names import trec_examples

    cutoff = ""
    at = text.find("@")
    if at > 0:
        cutoff = text[at:]
    names = [f.name + cutoff for f in families()] + trec_examples()
    return did_you_mean(text, names)
