"""Per-query values for the relevance formats other than plain qrels: ``-R qrels_jg``, ``-R prefs`` and
``-R qrels_prefs``.

These inputs are small (a few hundred judged queries at most) and their measures are defined per
query over per-group structures, so they are computed one query at a time in plain Python
(:mod:`.judgment_groups`, :mod:`.prefs`), while the main loop is trec_eval's (``trec_eval.c``):

* queries are those of the judgment file, in ``strcmp`` order; run-only queries are ignored;
* a judged query the run lacks is an error (status 4) unless ``-c``, which ranks it against the single
  placeholder document; ``-D level.qid`` keeps one query;
* a measure reads one format: asking for ``map`` with ``-R prefs`` (or ``prefs_simp`` with plain qrels)
  fails with "Can't calculate measure" (status 4), as trec_eval does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ranklens.data.run import Run
from ranklens.errors import FormatError
from ranklens.trec_eval.inputs import PLACEHOLDER_DOC
from ranklens.trec_eval.select import foreign_measure
from ranklens.trec_eval.table import Selected
from ranklens.trec_eval.values import QueryValues

__all__ = ["Judgments", "compute_other", "foreign_measure", "read_judgments"]


@dataclass(frozen=True)
class Judgments:
    """The judged queries of a ``-R`` file other than ``qrels``: ``by_query`` maps a query id (in
    ``strcmp`` order) to what that format's measures read."""

    rel_format: str
    by_query: Mapping[str, Any]


def read_judgments(path: str, rel_format: str) -> Judgments:
    """Read ``path`` as ``qrels_jg``, ``prefs`` or ``qrels_prefs``; a file with no judgement is an error."""
    if rel_format == "qrels_jg":
        from ranklens.trec_eval.judgment_groups import read_qrels_jg

        by_query: Mapping[str, Any] = read_qrels_jg(path)
    else:
        from ranklens.trec_eval.prefs import read_prefs, read_qrels_prefs

        by_query = read_prefs(path) if rel_format == "prefs" else read_qrels_prefs(path)
    if not by_query:
        raise FormatError(path, f"expected at least one judgement ({rel_format} line), found none")
    ordered = {q: by_query[q] for q in sorted(by_query, key=lambda q: q.encode("utf-8", "surrogateescape"))}
    return Judgments(rel_format, ordered)


def compute_other(
    judgments: Judgments,
    run: Run,
    selected: Sequence[Selected],
    *,
    complete: bool,
    max_docs: int | None,
    rel_level: int,
    judged_only: bool,
) -> tuple[QueryValues, str | None]:
    """Every selected column for each judged query, and the first judged query the run lacks (when not
    ``complete``; the values then cover only the queries before it)."""
    rankings = _rankings(run)
    query_ids: list[str] = []
    rows: list[dict[str, float]] = []
    placeholder: list[bool] = []
    for qid, judged in judgments.by_query.items():
        found = rankings.get(qid)
        if found is None and not complete:
            return _values(query_ids, rows, placeholder, selected), qid
        if judgments.rel_format == "qrels_jg":
            ranked = [PLACEHOLDER_DOC] if found is None else _trec_order(*found, max_docs)
            rows.append(_jg_values(judged, ranked, selected, rel_level, judged_only))
        else:
            from ranklens.trec_eval.prefs import prefs_query_values, prefs_ranking

            ranked = [PLACEHOLDER_DOC] if found is None else prefs_ranking(*found, max_docs)
            rows.append(prefs_query_values(judged, ranked))
        query_ids.append(qid)
        placeholder.append(found is None)
    return _values(query_ids, rows, placeholder, selected), None


def _jg_values(
    judged: Any, ranked: list[str], selected: Sequence[Selected], rel_level: int, judged_only: bool
) -> dict[str, float]:
    from ranklens.trec_eval.judgment_groups import jg_query_values

    columns = {sel.entry.name: list(sel.parameters) for sel in selected if sel.entry.rel_format == "qrels_jg"}
    return jg_query_values(judged, ranked, columns, rel_level=rel_level, judged_only=judged_only)


def _values(
    query_ids: list[str], rows: list[dict[str, float]], placeholder: list[bool], selected: Sequence[Selected]
) -> QueryValues:
    numbers = {
        printed: np.array([row[printed] for row in rows], dtype=np.float64)
        for sel in selected
        if sel.entry.rel_format is not None
        for printed, _ in sel.columns
    }
    return QueryValues(query_ids, numbers, {}, np.array(placeholder, dtype=bool))


def _rankings(run: Run) -> dict[str, tuple[list[str], list[float]]]:
    """``{query id: (documents, scores)}`` in file order."""
    out: dict[str, tuple[list[str], list[float]]] = {}
    ids = run.query_ids.to_pylist()
    for q, d, s in zip(run.query.tolist(), run.docs.to_pylist(), run.score.tolist()):
        docs, scores = out.setdefault(ids[q], ([], []))
        docs.append(d)
        scores.append(s)
    return out


def _trec_order(docs: list[str], scores: list[float], max_docs: int | None) -> list[str]:
    """trec_eval's evaluation order (``form_res_rels.c``): score descending, ties by docno descending
    (bytewise), then the first ``max_docs``."""
    order = sorted(zip(scores, (d.encode("utf-8", "surrogateescape") for d in docs), docs), reverse=True)
    ranked = [d for _, _, d in order]
    return ranked if max_docs is None else ranked[: max(max_docs, 0)]
