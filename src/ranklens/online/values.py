"""``ab_values``: the between-subjects analysis of :func:`~ranklens.online.ab` on per-user values already
computed — ``{measure: {user: value}}`` per arm — as the monitor holds them in its snapshots. The same
implementation (:func:`~ranklens.online.experiment.analyse_arms`) as ``ranklens ab``, so the dashboard and
the command give the same numbers on the same values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ranklens.errors import InputError
from ranklens.online.arms import Arm
from ranklens.online.experiment import ABResult, analyse_arms, check_options

__all__ = ["ab_values"]

PerUser = Mapping[str, Mapping[str, float]]


def _arm(name: str, values: PerUser, measures: list[str]) -> Arm:
    users = list(dict.fromkeys(str(u) for m in measures for u in values[m]))
    cols = {}
    for m in measures:
        col = {str(u): float(v) for u, v in values[m].items()}
        cols[m] = np.fromiter((col.get(u, np.nan) for u in users), dtype=np.float64, count=len(users))
    return Arm(name, tuple(users), cols, frozenset(users))


def ab_values(
    control: PerUser,
    treatment: PerUser,
    measures: list[str] | None = None,
    *,
    names: tuple[str, str] = ("control", "treatment"),
    assignment: Any = None,
    expected_split: float = 0.5,
    pre: tuple[PerUser, PerUser] | None = None,
    pre_labels: tuple[str, str] | None = None,
    sequential: bool = False,
    exposure: Mapping[str, str] | None = None,
    tau: float | None = None,
    test: str = "welch",
    ci: str = "welch",
    correction: str = "holm",
    segments: Any = None,
    allow_overlap: str | None = None,
    alpha: float = 0.05,
    samples: int = 10_000,
    seed: int | None = 0,
    bootstrap: bool = True,
    warn: bool = True,
) -> ABResult:
    """Analyse an A/B test from each arm's per-user values ``{measure: {user: value}}`` (a user missing from
    a measure's mapping, or NaN, is undefined there and left out with a note). Every option is
    :func:`~ranklens.online.ab`'s; ``pre`` are the arms' pre-period values in the same shape (CUPED),
    ``pre_labels`` name them in messages, ``exposure`` is ``user → time`` (ISO dates: one look per distinct
    time), ``bootstrap=False`` skips the bootstrap (its p-value ``None``; ``test`` and ``ci`` must then
    not be ``bootstrap``) and ``warn=False`` keeps the notes in the result without issuing them as warnings.

    Raises:
        InputError: as :func:`~ranklens.online.ab` (fewer than 2 users in an arm, users in both arms without
            ``allow_overlap``, pre-period values sharing no user with an arm); a measure missing from an arm.

    >>> c = {"P@1": {"u1": 0.0, "u2": 1.0, "u3": 0.0}}
    >>> t = {"P@1": {"u4": 1.0, "u5": 1.0, "u6": 0.0}}
    >>> r = ab_values(c, t, bootstrap=False)
    >>> round(r["P@1"]["difference"], 4), r["P@1"]["p"]["bootstrap"], r.srm["counts"]
    (0.3333, nan, {'control': 3, 'treatment': 3})
    """
    measures = [str(m) for m in (measures if measures is not None else control)]
    if not measures:
        raise InputError("no measure given; e.g. nDCG@4")
    cname, tname = (str(n) for n in names)
    for name, arm in ((cname, control), (tname, treatment)):
        lacking = [m for m in measures if m not in arm]
        if lacking:
            raise InputError(f"{name}: no values of {', '.join(lacking)} (it has {', '.join(map(str, arm)) or 'none'})")
    checked = check_options(
        test=test, ci=ci, correction=correction, alpha=alpha, expected_split=expected_split, allow_overlap=allow_overlap,
        bootstrap=bootstrap,
    )
    return analyse_arms(
        _arm(cname, control, measures), _arm(tname, treatment, measures), measures, notes=[], assignment=assignment,
        pre=pre, pre_labels=pre_labels, sequential=sequential, exposure=exposure, tau=tau, segments=segments,
        samples=samples, seed=seed, warn=warn, **checked,
    )
