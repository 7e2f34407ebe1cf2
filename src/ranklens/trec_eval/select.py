"""From ``-m`` arguments to the columns trec_eval prints (``trec_eval.c`` mark_measure, ``meas_init.c``).

* ``-m name`` marks a measure, ``-m nickname`` every measure of a set (``official``, ``set``,
  ``all_trec``); without any ``-m``, ``official`` is used.
* ``-m name.params`` also records parameters for ``name``; when several ``-m`` give parameters for the
  same name, the first one wins (trec_eval looks them up in command-line order).
* Marked measures print in the table order of :mod:`ranklens.trec_eval.table`, whatever the order of
  the ``-m`` flags, each once.
"""

from __future__ import annotations

from collections.abc import Sequence

from ranklens.errors import MeasureError
from ranklens.measures.base import Measure
from ranklens.measures.trec_names import lookup
from ranklens.trec_eval.c_numbers import cutoffs_as_atol
from ranklens.trec_eval.table import DEFAULT_RELSTRING_LEN, NICKNAMES, TABLE, Selected, TrecMeasure

__all__ = ["Selected", "TrecUsageError", "foreign_measure", "select"]



class TrecUsageError(Exception):
    """A bad ``-m`` argument: ``message`` is what trec_eval writes to stderr, ``status`` its exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def select(args: Sequence[str], *, rel_level: int = 1, num_docs: int = 0) -> list[Selected]:
    """The marked measures with their columns, in print order.

    ``rel_level`` (``-l``) becomes the ``rel`` of every measure that has one; ``num_docs`` (``-N``) the
    collection size of ``utility``.
    """
    params: dict[str, str] = {}
    marked: set[str] = set()
    for arg in args or ("official",):
        name, dot, given = arg.partition(".")
        if dot:
            if not given:
                raise TrecUsageError(
                    f"trec_eval: improper measure in parameter '{name}'\ntrec_eval: illegal measure '{name}'", 1
                )
            params.setdefault(name, given)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif any(m.name == name for m in TABLE):
            marked.add(name)
        else:
            raise TrecUsageError(f"trec_eval: illegal measure '{name}'", 1)
    out = []
    for entry in TABLE:
        if entry.name not in marked:
            continue
        try:
            out.append(_columns(entry, params.get(entry.name), rel_level, num_docs))
        except MeasureError as exc:
            raise TrecUsageError(
                f"trec_eval: {exc}\ntrec_eval: Cannot initialize measure '{entry.name}'", 2
            ) from None
    return out


def _columns(entry: TrecMeasure, params: str | None, rel_level: int, num_docs: int) -> Selected:
    if entry.value == "runid":
        return Selected(entry, (("runid", None),))
    if entry.rel_format == "prefs" or entry.name == "yaap":
        return Selected(entry, ((entry.name, None),))  # (parameters are ignored, as trec_eval ignores them)
    if entry.rel_format == "qrels_jg":
        from ranklens.trec_eval.judgment_groups import jg_columns

        parameters = tuple(jg_columns(entry.name, params))
        return Selected(entry, tuple((printed, None) for printed, _ in parameters), parameters=parameters)
    if entry.value == "relstring":
        length = DEFAULT_RELSTRING_LEN
        printed = entry.name
        if params:
            try:
                length = int(float(params.split(",")[0]))
            except ValueError:
                raise MeasureError(f"trec_eval measure 'relstring.{params}': the length must be a number") from None
            printed = f"{entry.name}_{params}"
        return Selected(entry, ((printed, None),), max(length, 0))
    spec = lookup(entry.name)
    assert spec is not None, entry.name  # every table entry has a trec name (tested)
    if params and spec.kind == "cutoffs":
        params = cutoffs_as_atol(params)  # trec_eval reads cutoffs with atol: 23.4 is 23
    expanded = spec.expand(params if spec.kind != "single" else None)
    columns = tuple((printed, _with_options(m, rel_level, num_docs)) for printed, m in expanded)
    return Selected(entry, columns)


def _with_options(m: Measure, rel_level: int, num_docs: int) -> Measure:
    names = {p.name for p in m.family.params}
    defaults: dict[str, int] = {}
    if "rel" in names:
        defaults["rel"] = rel_level
    if "num_docs" in names:
        defaults["num_docs"] = num_docs
    return m.with_defaults(**defaults) if defaults else m


def foreign_measure(selected: Sequence[Selected], rel_format: str) -> str | None:
    """The first selected measure that cannot be computed from ``rel_format`` input, if any."""
    family = "prefs" if rel_format in ("prefs", "qrels_prefs") else rel_format
    for sel in selected:
        if sel.entry.rel_format is not None and sel.entry.rel_format != family:
            return sel.entry.name
    return None
