"""One arm of an online experiment: its users' per-user values of every measure, from the arm's own qrels and
run (evaluated by the engine) or from a per-user results file; users without any engagement label are
counted and scored by the ``missing`` rule."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError
from ranklens.measures.base import Measure
from ranklens.results.core import Results

__all__ = ["Arm", "load_arm", "pre_values"]


@dataclass(frozen=True, eq=False)
class Arm:
    """One arm's users and their values: ``values[measure][i]`` is the value of ``users[i]`` (NaN where the
    measure is undefined for the user). ``shown`` are the users the run served (every user, for a results
    file); ``unlabelled`` the served users without any engagement label; ``notes`` what was left out."""

    name: str
    users: tuple[str, ...]
    values: Mapping[str, np.ndarray]
    shown: frozenset[str]
    unlabelled: int = 0
    notes: tuple[str, ...] = field(default=())

    def subset(self, keep: Sequence[bool]) -> Arm:
        """The arm restricted to the users where ``keep`` is true."""
        mask = np.asarray(keep, dtype=bool)
        users = tuple(u for u, k in zip(self.users, mask) if k)
        return Arm(
            self.name, users, {m: v[mask] for m, v in self.values.items()}, self.shown, self.unlabelled, self.notes
        )


def _is_results(source: Any) -> bool:
    if isinstance(source, Results):
        return True
    if isinstance(source, (str, os.PathLike)) and os.path.isfile(source):
        from ranklens.comparison.inputs import is_results_file

        return is_results_file(source)
    return False


def load_arm(
    name: str, qrels: Any, run: Any, measures: Sequence[Measure | str], policy: EvalPolicy, *, where: str
) -> Arm:
    """Evaluate one arm: ``run`` against ``qrels`` with ``measures`` (per-user measures only) under ``policy``,
    or read ``run`` as a per-user results file (``eval -q -f json``; ``qrels`` is then unused).

    Users the run served but the qrels do not label at all (no engagement) are, by ``policy.missing``:
    ``skip`` — left out and counted; ``zero`` — scored 0 on every measure; ``error`` — refused.

    >>> arm = load_arm("control", {"u1": {"a": 1}}, {"u1": {"a": 1.0}, "u2": {"b": 1.0}}, ["P@1"],
    ...                EvalPolicy(missing="zero"), where="control")
    >>> arm.users, arm.values["P@1"].tolist(), arm.unlabelled
    (('u1', 'u2'), [1.0, 0.0], 1)
    """
    from ranklens.data.io import read_qrels, read_run
    from ranklens.engine.evaluator import Evaluator

    names = [str(m) for m in measures]
    if _is_results(run):
        from ranklens.comparison.inputs import one_results

        res = run if isinstance(run, Results) else one_results(run)
        for m in names:
            res.column(m)  # raises MeasureError naming the measures the file holds
        values = {m: np.asarray(res.column(m), dtype=np.float64) for m in names}
        return Arm(name, tuple(res.query_ids), values, frozenset(res.query_ids), 0, tuple(res.notes))
    if qrels is None:
        raise InputError(f"{where}: qrels are needed to evaluate a run (only a per-user results file may omit them)")
    q = read_qrels(qrels, format=policy.qrels_format, columns=policy.qrels_columns, labels=policy.labels or "int")
    r = read_run(run, format=policy.run_format, columns=policy.run_columns)
    evaluator = Evaluator(measures, q, policy=policy.replace(qrels_format=None, qrels_columns=None, run_format=None, run_columns=None))
    res = evaluator(r, name=name, warn=False)
    labelled = set(_ids(q.query_ids))
    served = _ids(r.query_ids)
    shown = frozenset(served)
    no_label = [u for u in served if u not in labelled]
    users = list(res.query_ids)
    values = {m: np.asarray(res.column(m), dtype=np.float64) for m in names}
    notes = [n for n in res.notes if "not in the qrels" not in n]
    if no_label:
        count = len(no_label)
        what = f"{where}: {count} user{'' if count == 1 else 's'} shown a list but without any engagement label"
        if policy.missing == "error":
            raise InputError(f"{what} (missing=error); score them 0 with --missing zero, or leave them out with --missing skip")
        if policy.missing == "zero":
            users += no_label
            values = {m: np.concatenate([v, np.zeros(count)]) for m, v in values.items()}
            notes.append(f"{what}: scored 0 (missing=zero)")
        else:
            notes.append(f"{what}: left out (missing=skip; --missing zero scores them 0)")
    return Arm(name, tuple(users), values, shown, len(no_label), tuple(notes))


def _ids(ids: Any) -> list[str]:
    """Query ids as Python strings (a Run or Qrels may hold them as an Arrow array)."""
    return [str(u) for u in (ids.to_pylist() if hasattr(ids, "to_pylist") else ids)]


def pre_values(arm: Arm, source: Any, measure: str, *, where: str) -> np.ndarray:
    """The pre-period value of ``measure`` for each user of ``arm`` (NaN for a user without one), from a
    per-user results file (``eval -q -f json``), Results, or a mapping ``{measure: {user: value}}``.

    Raises:
        MeasureError: the source holds no ``measure``.
        InputError: the source shares no user with the arm.

    >>> arm = Arm("control", ("u1", "u2"), {"P@1": np.array([1.0, 0.0])}, frozenset({"u1", "u2"}))
    >>> pre_values(arm, {"P@1": {"u2": 0.5, "u9": 1.0}}, "P@1", where="pre").tolist()
    [nan, 0.5]
    """
    if isinstance(source, Mapping) and not isinstance(source, Results):
        from ranklens.errors import MeasureError

        if measure not in source:
            raise MeasureError(f"{where}: holds no {measure} (it has {', '.join(map(str, source)) or 'no measure'})")
        by_user = {str(u): float(v) for u, v in source[measure].items()}
    else:
        from ranklens.comparison.inputs import one_results

        res = source if isinstance(source, Results) else one_results(source)
        column = res.column(measure)
        by_user = {u: float(v) for u, v in zip(res.query_ids, column.tolist())}
    out = np.array([by_user.get(u, np.nan) for u in arm.users], dtype=np.float64)
    if not np.any(~np.isnan(out)):
        shown = ", ".join(list(arm.users)[:3])
        raise InputError(
            f"{where}: shares no user with the {arm.name} arm (its users: {shown}, …); "
            "is it the other arm's pre-period, or keyed by another id?"
        )
    return out
