"""The cost–quality Pareto analysis of a comparison: which systems another one dominates (at least as good
on quality and every cost, better on one)."""

from __future__ import annotations

from dataclasses import dataclass

from ranklens import stats
from ranklens.comparison.rows import SummaryRow, json_value
from ranklens.errors import InputError, did_you_mean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ParetoPoint", "pareto_points"]


@dataclass(frozen=True)
class ParetoPoint:
    """One system's quality on one measure against its costs (lower is better), and who dominates it."""

    system: str
    measure: str
    quality: float
    costs: tuple[tuple[str, float], ...]
    dominated_by: tuple[str, ...]

    @property
    def dominated(self) -> bool:
        """True when another system is at least as good on quality and every cost, and better on one."""
        return bool(self.dominated_by)

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "measure": self.measure,
            "quality": json_value(self.quality),
            "costs": {k: json_value(v) for k, v in self.costs},
            "dominated": self.dominated,
            "dominated_by": list(self.dominated_by),
        }


def pareto_points(
    summary: list[SummaryRow],
    measures: tuple[str, ...],
    names: tuple[str, ...],
    costs: dict[str, dict[str, float]] | None,
    notes: list[str],
) -> list[ParetoPoint]:
    if not costs:
        return []
    unknown = sorted(set(costs) - set(names))
    if unknown:
        raise InputError(
            f"costs name unknown systems {', '.join(unknown)}; the systems are {', '.join(names)}"
            + did_you_mean(unknown[0], names)
        )
    with_costs = [s for s in names if s in costs]
    missing = [s for s in names if s not in costs]
    if missing:
        notes.append(f"costs: no cost for {', '.join(missing)}; left out of the Pareto analysis")
    cost_names = sorted({c for s in with_costs for c in costs[s]})
    incomplete = [s for s in with_costs if set(costs[s]) != set(cost_names)]
    if incomplete:
        raise InputError(f"costs: every system needs every cost ({', '.join(cost_names)}); {incomplete[0]!r} does not")
    out = []
    import numpy as np  # (only with costs)

    matrix = np.array([[costs[s][c] for c in cost_names] for s in with_costs], dtype=np.float64).reshape(
        len(with_costs), len(cost_names)
    )
    means = {(r.system, r.measure): r.mean for r in summary if r.segment is None}
    for m in measures:
        quality = np.array([means[(s, m)] for s in with_costs])
        if not np.isfinite(quality).all():
            continue
        doms = stats.dominators(quality, matrix)
        for i, s in enumerate(with_costs):
            out.append(
                ParetoPoint(
                    system=s,
                    measure=m,
                    quality=float(quality[i]),
                    costs=tuple((c, float(matrix[i, k])) for k, c in enumerate(cost_names)),
                    dominated_by=tuple(with_costs[j] for j in doms[i]),
                )
            )
    return out
