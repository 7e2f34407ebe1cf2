"""pytrec_eval's nested form ``{query_id: {doc_id: value}}``, flattened to three parallel columns and back.

>>> flatten({"q1": {"d1": 2, "d2": 0}, "q2": {"d9": 1}}, "<dict>", "label")
(['q1', 'q1', 'q2'], ['d1', 'd2', 'd9'], [2, 0, 1])
>>> nest(["q1", "q1"], ["d1", "d2"], [0.5, 0.25])
{'q1': {'d1': 0.5, 'd2': 0.25}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ranklens.errors import FormatError

__all__ = ["flatten", "nest"]


def flatten(data: Mapping[Any, Any], source: str, what: str) -> tuple[list[str], list[str], list[object]]:
    """Query ids, doc ids (both as strings) and values, in the mapping's order; ``what`` names the value."""
    qs: list[str] = []
    ds: list[str] = []
    vs: list[object] = []
    for qid, docs in data.items():
        if not isinstance(docs, Mapping):
            raise FormatError(
                source, f"query '{qid}': expected a mapping of doc id to {what}, got {type(docs).__name__}"
            )
        for did, value in docs.items():
            qs.append(str(qid))
            ds.append(str(did))
            vs.append(value)
    return qs, ds, vs


def nest(queries: Iterable[str], docs: Iterable[str], values: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The nested form of three parallel columns."""
    out: dict[str, dict[str, Any]] = {}
    for q, d, v in zip(queries, docs, values):
        out.setdefault(q, {})[d] = v
    return out
