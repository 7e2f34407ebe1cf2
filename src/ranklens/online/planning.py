"""``plan``: how many queries (paired, offline) or users per arm (unpaired, online) an experiment needs to
detect a difference, and the minimum detectable effect at a given size, from a pilot's per-query or
per-user values."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ranklens.errors import InputError
from ranklens.results.core import Results
from ranklens.stats.power import DESIGNS, minimum_detectable_effect, sample_size

__all__ = ["PlanResult", "plan"]


@dataclass(frozen=True)
class PlanResult:
    """``n``: queries (paired) or users per arm (unpaired) needed; ``mde_at_n`` the minimum detectable
    difference at the ``n_given`` asked for; ``sd`` the standard deviation used (of the per-query differences,
    or the pooled per-user sd, CUPED-adjusted when a pre-period was given: ``sd_raw · √(1 − ρ²)``)."""

    measure: str
    design: str
    delta: float
    alpha: float
    power: float
    sd: float
    n: int
    n_exact: float
    pilot_n: int
    n_given: int | None = None
    mde_at_n: float | None = None
    sd_raw: float | None = None
    rho: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _results(sources: Sequence[Any]) -> list[Results]:
    from ranklens.results.io import read_results

    out: list[Results] = []
    for s in sources:
        found = [s] if isinstance(s, Results) else read_results(s)
        for r in found:
            if not r.query_ids:
                raise InputError(f"{s}: holds aggregates only; plan needs per-query values (ranklens eval -q -f json)")
        out.extend(found)
    return out


def plan(
    pilot: Sequence[Any] | Any,
    measure: str,
    *,
    delta: float,
    design: str,
    alpha: float = 0.05,
    power: float = 0.8,
    n: int | None = None,
    pre: Any = None,
) -> PlanResult:
    """Sample size (and MDE at ``n``) for detecting ``delta`` on ``measure`` from pilot results.

    ``paired``: two systems' per-query values (two results files, or one with two runs) → the sd of the
    per-query differences on their common queries; the answer is the number of queries (the t-test topic
    set size of Sakai 2016). ``unpaired``: per-user values of one or two arms → the pooled sd; the answer is
    users per arm. ``pre``: per-user results of a pre-period (unpaired): the sd is CUPED-adjusted by the
    correlation ρ between pilot and pre-period values of the users in both.

    >>> from ranklens.measures import parse_many
    >>> from ranklens.results.core import assemble
    >>> pilot = assemble("pilot", parse_many(["nDCG@4"]), [f"u{i}" for i in range(6)],
    ...                  np.array([[0.1], [0.5], [0.3], [0.9], [0.7], [0.4]]))
    >>> r = plan([pilot], "nDCG@4", delta=0.1, design="unpaired")
    >>> r.n, round(r.sd, 4)
    (130, 0.2858)
    """
    if design not in DESIGNS:
        raise InputError(f"design must be paired or unpaired; got {design!r}")
    delta = abs(delta)  # two-sided: a drop of 0.03 is as hard to detect as a rise of 0.03
    sources = [pilot] if isinstance(pilot, (str, os.PathLike, Results)) else list(pilot)
    found = _results(sources)
    values = [np.asarray(r.column(measure), dtype=np.float64) for r in found]
    sd_raw: float | None = None
    rho: float | None = None
    if design == "paired":
        if len(found) != 2:
            raise InputError(f"a paired plan needs the per-query values of exactly two systems; got {len(found)} runs")
        a, b = found
        common = [q for q in a.query_ids if q in set(b.query_ids)]
        if len(common) < 3:
            raise InputError(f"a paired plan needs at least 3 queries both systems answered; got {len(common)}")
        va, vb = a.per_query(measure), b.per_query(measure)
        d = np.array([va[q] - vb[q] for q in common], dtype=np.float64)
        d = d[np.isfinite(d)]
        sd = float(d.std(ddof=1))
        pilot_n = int(d.size)
    else:
        if len(found) > 2:
            raise InputError(f"an unpaired plan takes the per-user values of one or two arms; got {len(found)} runs")
        groups = [v[np.isfinite(v)] for v in values]
        if any(g.size < 3 for g in groups):
            raise InputError("an unpaired plan needs at least 3 users with a value per pilot arm")
        dof = sum(g.size - 1 for g in groups)
        sd = math.sqrt(sum(float(g.var(ddof=1)) * (g.size - 1) for g in groups) / dof)
        pilot_n = int(sum(g.size for g in groups))
        if pre is not None:
            pre_res = _results([pre])[0]
            before = pre_res.per_query(measure)
            xs, ys = [], []
            for r in found:
                for q, v in r.per_query(measure).items():
                    if q in before and math.isfinite(v) and math.isfinite(before[q]):
                        xs.append(before[q])
                        ys.append(v)
            if len(xs) < 3:
                raise InputError(f"{pre}: shares fewer than 3 users with the pilot; no CUPED adjustment possible")
            rho = float(np.corrcoef(xs, ys)[0, 1])
            sd_raw, sd = sd, sd * math.sqrt(max(0.0, 1.0 - rho**2))
    if not sd > 0:
        raise InputError(f"the pilot's {'differences have' if design == 'paired' else 'values have'} no spread (sd = 0): nothing to plan with")
    need, exact = sample_size(delta, sd, alpha=alpha, power=power, design=design)
    mde = minimum_detectable_effect(n, sd, alpha=alpha, power=power, design=design) if n is not None else None
    return PlanResult(measure, design, float(delta), float(alpha), float(power), sd, need, exact, pilot_n, n, mde, sd_raw, rho)
