"""The columns of a table of judgements or of a ranking: what each is called (aliases), what ``columns=``
maps, and where the query, document and value columns are among a header's names.

Shared by every reader of named columns (CSV/TSV, JSON Lines, Parquet, frames) and by the express path,
so it imports neither numpy nor pyarrow.

>>> resolve_columns(["qid", "docno", "sim"], RUN, "run.parquet")
(0, 1, 2)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ranklens.errors import FormatError, did_you_mean

__all__ = [
    "DOC_ALIASES", "FLOAT_QRELS", "LABEL_ALIASES", "POSITION_NAMES", "QRELS", "QUERY_ALIASES", "RUN", "SCORE_ALIASES",
    "ColumnMap", "Kind", "ambiguous_keys", "column_roles", "qrels_kind", "rank_columns", "resolve_columns",
]

#: Accepted column names (lower case), preferred first. Used by CSV/TSV, JSON Lines, Parquet and frames.
#: ``query-id``/``corpus-id``/``score`` are BEIR's qrels; ``user``/``item``/``rating``/``prediction`` (and
#: MovieLens' ``userId``/``movieId``) are recommender logs. ``score`` is resolved by kind: in qrels it is the
#: label (BEIR), and only when no other label column is present; in a run it is the score.
QUERY_ALIASES = ("query_id", "qid", "query", "q_id", "topic", "query-id", "user_id", "userid", "user")
DOC_ALIASES = ("doc_id", "docid", "docno", "doc", "corpus-id", "item_id", "itemid", "movieid", "item")
SCORE_ALIASES = ("score", "sim", "prediction")
LABEL_ALIASES = ("relevance", "rel", "label", "grade", "rating", "score")


class Kind:
    """What is being read: the value column's role and its accepted names (a plain class: ``dataclasses``
    costs the express path's start-up 17 ms).

    Attributes:
        name: ``"qrels"`` or ``"run"``.
        value: the canonical value column name, ``"relevance"`` or ``"score"``.
        value_aliases: the accepted names of the value column (lower case), preferred first.
        value_roles: what ``columns=`` may call the value column.
        value_option: its key in ``--qrels-columns`` / ``--run-columns``.
        real_values: values are any finite number (scores; ``labels="float"``), else integers.
    """

    __slots__ = ("name", "value", "value_aliases", "value_roles", "value_option", "real_values")

    def __init__(
        self, name: str, value: str, value_aliases: tuple[str, ...], value_roles: tuple[str, ...], value_option: str,
        real_values: bool = False,
    ) -> None:
        self.name, self.value, self.value_aliases = name, value, value_aliases
        self.value_roles, self.value_option, self.real_values = value_roles, value_option, real_values

    def __repr__(self) -> str:
        return f"Kind({self.name!r}, real_values={self.real_values})"


QRELS = Kind("qrels", "relevance", LABEL_ALIASES, ("relevance", "label", "rel", "grade"), "label")
RUN = Kind("run", "score", SCORE_ALIASES, ("score",), "score", real_values=True)
#: qrels with real-valued labels (``read_qrels(..., labels="float")``): read as QRELS, values as numbers
FLOAT_QRELS = Kind(QRELS.name, QRELS.value, QRELS.value_aliases, QRELS.value_roles, QRELS.value_option, real_values=True)


def qrels_kind(labels: str) -> Kind:
    """The :class:`Kind` reading qrels with ``labels="int"`` (:data:`QRELS`) or ``"float"`` (:data:`FLOAT_QRELS`)."""
    return FLOAT_QRELS if labels == "float" else QRELS


def _describe(aliases: Sequence[str]) -> str:
    return f"{aliases[0]} (or {', '.join(aliases[1:])})"


#: What ``columns=`` may call the query and document columns (the value's names are in :class:`Kind`).
_QUERY_ROLES = ("query_id", "query", "qid")
_DOC_ROLES = ("doc_id", "doc", "docid", "docno")

ColumnMap = Mapping[str, str]
"""``columns=``: ``{column name: role}``, e.g. ``{"user": "query_id", "item": "doc_id", "rating": "relevance"}``."""


def column_roles(columns: ColumnMap | None, kind: Kind, source: str) -> dict[str, str] | None:
    """Check ``columns=`` (``{column name: role}``) and return it as ``{role: column name}``, with the roles
    ``"query"``, ``"doc"`` and ``"value"``. Roles: ``query_id``/``query``/``qid``, ``doc_id``/``doc``/
    ``docid``/``docno``, and for the value ``relevance``/``label``/``rel``/``grade`` (qrels) or ``score`` (runs).

    >>> column_roles({"user": "query_id", "item": "doc", "rating": "label"}, QRELS, "ratings.csv")
    {'query': 'user', 'doc': 'item', 'value': 'rating'}
    >>> column_roles({"user": "qid", "rating": "relevance"}, RUN, "predictions.csv")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: predictions.csv: columns=: 'relevance' is a role of qrels; a run's value is its score: {'rating': 'score'}
    """
    if columns is None:
        return None
    if not isinstance(columns, Mapping):
        raise FormatError(source, f"columns=: expected a dict {{column name: role}}, got {type(columns).__name__}")
    other = QRELS if kind is RUN else RUN
    roles: dict[str, str] = {}
    for column, role in columns.items():
        key = str(role).strip().lower()
        if key in _QUERY_ROLES:
            which = "query"
        elif key in _DOC_ROLES:
            which = "doc"
        elif key in kind.value_roles:
            which = "value"
        elif key in other.value_roles:
            owner = "a run's value is its score" if kind is RUN else "the qrels' value is the relevance"
            raise FormatError(
                source, f"columns=: {role!r} is a role of {other.name}; {owner}: {{{column!r}: {kind.value!r}}}"
            )
        else:
            hint = ""
            if str(column).strip().lower() in (*_QUERY_ROLES, *_DOC_ROLES, *kind.value_roles):
                hint = f" (columns= maps a column name to its role: did you mean {{{role!r}: {column!r}}}?)"
            raise FormatError(
                source,
                f"columns=: unknown role {role!r} for column {column!r}; expected one of query_id, doc_id, "
                f"{kind.value}{hint}",
            )
        if which in roles:
            raise FormatError(
                source, f"columns=: {roles[which]!r} and {column!r} are both mapped to {_role_name(which, kind)}"
            )
        roles[which] = str(column)
    return roles


#: words of a column name that say it holds a position in a shown list (1 = first), not a score
POSITION_NAMES = ("rank", "position", "pos")


def rank_columns(columns: ColumnMap | None, source: str) -> tuple[ColumnMap | None, bool]:
    """A run's ``columns=`` with its ordering roles resolved, and whether the value is a rank.

    ``rank`` maps a column of positions (1 = first; ascending): it is read as the score and negated, so
    position 1 ranks first (``True`` is returned). ``score_desc`` maps a column that is a score (higher
    first) whatever its name. A column named like a position (``rank``, ``position``, ``pos``, also within
    ``shown_position``) mapped to ``score`` is refused: read as a score it would rank the last position first.

    >>> rank_columns({"u": "query_id", "position": "rank"}, "log.csv")
    ({'u': 'query_id', 'position': 'score'}, True)
    >>> rank_columns({"pos": "score"}, "log.csv")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: log.csv: columns=: column 'pos' looks like a position (1 = first), and a score ranks its highest value first; map it to rank ({'pos': 'rank'}; --run-columns rank=pos), or, if higher values are better, to score_desc ({'pos': 'score_desc'}; --run-columns score_desc=pos)
    """
    if columns is None or not isinstance(columns, Mapping):
        return columns, False
    out: dict[str, str] = {}
    by_rank = False
    valued = [str(c) for c, r in columns.items() if str(r).strip().lower() in ("rank", "score_desc", "score")]
    if len(valued) > 1:
        raise FormatError(source, f"columns=: {valued[0]!r} and {valued[1]!r} are both mapped to the run's order "
                          "(score, score_desc or rank); map one")
    for column, role in columns.items():
        key = str(role).strip().lower()
        if key == "rank":
            out[str(column)], by_rank = "score", True
        elif key == "score_desc":
            out[str(column)] = "score"
        elif key == "score" and _looks_like_position(str(column)):
            raise FormatError(
                source,
                f"columns=: column {column!r} looks like a position (1 = first), and a score ranks its highest value "
                f"first; map it to rank ({{{column!r}: 'rank'}}; --run-columns rank={column}), or, if higher values "
                f"are better, to score_desc ({{{column!r}: 'score_desc'}}; --run-columns score_desc={column})",
            )
        else:
            out[str(column)] = str(role)
    return out, by_rank


def _looks_like_position(name: str) -> bool:
    words = [w for w in re.split(r"[^a-z0-9]+|(?<=[a-z])(?=[0-9])", name.strip().lower()) if w]
    return any(w in POSITION_NAMES for w in words) and "score" not in words


def _role_name(role: str, kind: Kind) -> str:
    return {"query": "query_id", "doc": "doc_id"}.get(role, kind.value)


def resolve_columns(
    names: Sequence[str],
    kind: Kind,
    source: str,
    line: int | None = None,
    *,
    noun: str = "column",
    mapping: Mapping[str, str] | None = None,
    suggest_map: bool = True,
) -> tuple[int, int, int]:
    """Return the positions of the query, document and value columns among ``names``.

    ``mapping`` (from :func:`column_roles`) names some of them explicitly; the others are found by their
    aliases. Matching ignores case and surrounding spaces; the first alias present wins.

    >>> resolve_columns(["QID", "docno", "rank", "sim"], RUN, "run.csv")
    (0, 1, 3)
    >>> resolve_columns(["sku", "member", "rating"], QRELS, "q.csv", mapping={"query": "member", "doc": "sku"})
    (1, 0, 2)
    >>> resolve_columns(["qid", "docno", "rank"], RUN, "run.csv", 1)
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: run.csv:1: missing column score (or sim, prediction); expected columns query_id, doc_id, score; found: qid, docno, rank; map it with --run-columns score=COLUMN (columns= in Python); a column of positions (1 = first) is mapped with --run-columns rank=rank
    """
    stripped = [str(n).strip() for n in names]
    lowered = [n.lower() for n in stripped]
    shown = ", ".join(str(n) for n in names) if names else "(none)"
    positions: dict[str, int] = {}
    for role, column in (mapping or {}).items():
        want = column.strip()
        pos = next((i for i, n in enumerate(stripped) if n == want), None)  # exact first, then ignoring case
        if pos is None:
            pos = next((i for i, n in enumerate(lowered) if n == want.lower()), None)
        if pos is None:
            raise FormatError(
                source,
                f"{noun} {column!r} (mapped to {_role_name(role, kind)}) not found; found: {shown}"
                f"{did_you_mean(column, stripped)}",
                line,
            )
        positions[role] = pos
    taken = set(positions.values())
    missing: list[str] = []
    for role, aliases in (("query", QUERY_ALIASES), ("doc", DOC_ALIASES), ("value", kind.value_aliases)):
        if role in positions:
            continue
        pos = next((i for a in aliases for i, n in enumerate(lowered) if n == a and i not in taken), None)
        if pos is None:
            missing.append(role)
        else:
            positions[role] = pos
            taken.add(pos)
    if missing:
        aliases_of = {"query": QUERY_ALIASES, "doc": DOC_ALIASES, "value": kind.value_aliases}
        plural = "s" if len(missing) > 1 else ""
        message = (
            f"missing {noun}{plural} {' and '.join(_describe(aliases_of[r]) for r in missing)}; expected {noun}s "
            f"query_id, doc_id, {kind.value}; found: {shown}"
        )
        other = QRELS if kind is RUN else RUN
        if len(missing) == 1 and any(a in lowered for a in other.value_aliases if a not in kind.value_aliases):
            message += f"; this looks like {other.name} data: did you swap QRELS and RUN?"
        elif suggest_map:
            pairs = ",".join(f"{r if r != 'value' else kind.value_option}=COLUMN" for r in missing)
            message += f"; map {'them' if plural else 'it'} with --{kind.name}-columns {pairs} (columns= in Python)"
            position = next((n for n in stripped if _looks_like_position(n)), None)
            if kind is RUN and missing == ["value"] and position is not None:
                message += f"; a column of positions (1 = first) is mapped with --run-columns rank={position}"
        raise FormatError(source, message, line)
    return positions["query"], positions["doc"], positions["value"]




def ambiguous_keys(
    names: Sequence[str], kind: Kind, source: str, line: int | None = None, *, mapping: Mapping[str, str] | None = None
) -> FormatError | None:
    """The error for ``names`` (the keys of one JSON Lines object) holding two keys for one role, or None.

    Two aliases of the query id (``topic`` and ``qid``), of the document id or of the value are ambiguous:
    which one is meant would depend on a preference order, and a reader that took its key names from another
    line would take another one (issue 22 item 9). A role that ``mapping`` (from :func:`column_roles`) names
    is not ambiguous; nor is qrels' ``score`` next to another label key (it is the label only when no other
    label key is there, as for a table's columns).

    >>> str(ambiguous_keys(["topic", "doc_id", "score", "qid"], RUN, "r.jsonl", 3))
    "r.jsonl:3: keys 'topic' and 'qid' both name the query id: which one is meant is ambiguous; remove one, or name it with --run-columns query_id=KEY (columns= in Python)"
    >>> ambiguous_keys(["qid", "doc_id", "relevance", "score"], QRELS, "q.jsonl") is None
    True
    """
    lowered = [str(n).strip().lower() for n in names]
    mapped = {column.strip().lower() for column in (mapping or {}).values()}
    roles = (("query", QUERY_ALIASES, "the query id"), ("doc", DOC_ALIASES, "the document id"),
             ("value", kind.value_aliases, f"the {kind.value}"))
    for role, aliases, what in roles:
        if mapping is not None and role in mapping:
            continue
        hits = [i for i, n in enumerate(lowered) if n in aliases and n not in mapped]
        if role == "value" and kind.name == "qrels" and any(lowered[i] != "score" for i in hits):
            hits = [i for i in hits if lowered[i] != "score"]
        if len(hits) > 1:
            option = {"query": "query_id", "doc": "doc_id"}.get(role, kind.value_option)
            return FormatError(
                source,
                f"keys '{names[hits[0]]}' and '{names[hits[1]]}' both name {what}: which one is meant is ambiguous; "
                f"remove one, or name it with --{kind.name}-columns {option}=KEY (columns= in Python)",
                line,
            )
    return None
