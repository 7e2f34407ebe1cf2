"""Does mean nDCG order the systems as mean DCG does? (spec §5, Jeunen et al., KDD 2024)

Mean nDCG weighs each query by 1/IDCG, which differs across queries, so the ordering of systems by mean
nDCG can invert their ordering by mean DCG — and under the assumptions of §5 mean DCG is proportional to
expected online reward. :func:`ordering_consistency` compares the two orderings over the queries every
system answered and lists each inverted pair, so a comparison report can say so and the user can choose
DCG as the primary measure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ranklens.errors import InputError, MeasureError
from ranklens.measures.base import Measure
from ranklens.measures.language import parse
from ranklens.measures.registry import get_family
from ranklens.results.core import Results
from ranklens.stats.sums import np_sum

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ConsistencyReport", "ordering_consistency", "unnormalised_of"]


@dataclass(frozen=True)
class ConsistencyReport:
    """The orderings of systems by a normalised and an unnormalised measure, and where they disagree.

    Attributes:
        primary, unnormalised: the two measures' canonical names.
        means_primary, means_unnormalised: ``{system: mean}`` over the common queries.
        order_primary, order_unnormalised: system names, best first.
        inversions: ``(a, b)`` pairs with ``a`` ahead of ``b`` by the primary measure and behind by the
            unnormalised one (ties in either are not inversions).
        num_queries: the queries every system answered.
    """

    primary: str
    unnormalised: str
    means_primary: dict[str, float]
    means_unnormalised: dict[str, float]
    order_primary: tuple[str, ...]
    order_unnormalised: tuple[str, ...]
    inversions: tuple[tuple[str, str], ...]
    num_queries: int

    @property
    def consistent(self) -> bool:
        """True when no pair of systems is inverted."""
        return not self.inversions

    def messages(self) -> list[str]:
        """One line per inversion, plus the advice; empty when the orderings agree."""
        out = []
        for a, b in self.inversions:
            out.append(
                f"{self.primary} ranks {a} above {b} ({self.means_primary[a]:.4f} vs {self.means_primary[b]:.4f}) but "
                f"{self.unnormalised} ranks {b} above {a} ({self.means_unnormalised[b]:.4f} vs "
                f"{self.means_unnormalised[a]:.4f})"
            )
        if out:
            out.append(
                f"mean {self.primary} and mean {self.unnormalised} order the systems differently; mean DCG tracks "
                f"expected reward under the position-based model (spec §5): consider {self.unnormalised} as the "
                "primary measure"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "primary": self.primary,
            "unnormalised": self.unnormalised,
            "consistent": self.consistent,
            "num_queries": self.num_queries,
            "order_primary": list(self.order_primary),
            "order_unnormalised": list(self.order_unnormalised),
            "means_primary": self.means_primary,
            "means_unnormalised": self.means_unnormalised,
            "inversions": [list(p) for p in self.inversions],
            "messages": self.messages(),
        }


def unnormalised_of(primary: Measure | str) -> Measure:
    """The DCG measure matching an nDCG one: same gain, discount, base, ties and cutoff.

    >>> str(unnormalised_of("nDCG(gain=exp,ideal=local)@10"))
    'DCG(gain=exp)@10'
    """
    m = parse(primary) if isinstance(primary, str) else primary
    if m.name != "nDCG":
        raise MeasureError(f"no unnormalised counterpart known for '{m}'; pass unnormalised= explicitly")
    dcg = get_family("DCG")
    keep = {p.name for p in dcg.params}
    return Measure.build(dcg, {k: v for k, v in m.params if k in keep}, m.cutoff)


def ordering_consistency(
    results_by_system: Mapping[str, Results],
    primary: Measure | str = "nDCG@10",
    unnormalised: Measure | str | None = None,
) -> ConsistencyReport:
    """Compare the orderings of systems by mean ``primary`` and mean ``unnormalised`` (default: the DCG
    with the primary's gain, discount, ties and cutoff) over the queries every system answered.

    Spec §5: two contexts, x1 with one relevant item, x2 with three; A finds x1's item at rank 1 and one
    of x2's at rank 3; B finds nothing for x1 and all three for x2.

    >>> import ranklens
    >>> qrels = {"x1": {"r": 1, "n1": 0, "n2": 0}, "x2": {"a": 1, "b": 1, "c": 1, "m1": 0, "m2": 0}}
    >>> runs = {"A": {"x1": {"r": 3, "n1": 2, "n2": 1}, "x2": {"m1": 3, "m2": 2, "a": 1}},
    ...         "B": {"x1": {"n1": 3, "n2": 2}, "x2": {"a": 3, "b": 2, "c": 1}}}
    >>> res = {s: ranklens.evaluate(qrels, r, ["nDCG@3", "DCG@3"]) for s, r in runs.items()}
    >>> rep = ordering_consistency(res, "nDCG@3")
    >>> rep.order_primary, rep.order_unnormalised, rep.inversions
    (('A', 'B'), ('B', 'A'), (('A', 'B'),))
    """
    if len(results_by_system) < 1:
        raise InputError("ordering_consistency needs at least one system")
    p = parse(primary) if isinstance(primary, str) else primary
    u = unnormalised_of(p) if unnormalised is None else (parse(unnormalised) if isinstance(unnormalised, str) else unnormalised)
    systems = list(results_by_system)
    for name, res in results_by_system.items():
        for m in (p, u):
            if m not in res.measures:
                raise MeasureError(
                    f"system '{name}' was not evaluated with {m}; evaluate both {p} and {u} (e.g. -m {p} {u})"
                )
    common = set(results_by_system[systems[0]].query_ids)
    for res in results_by_system.values():
        common &= set(res.query_ids)
    queries = sorted(common)

    def means(m: Measure) -> dict[str, float]:
        out = {}
        for name, res in results_by_system.items():
            per_query = res.per_query(m)
            values = [float(per_query[q]) for q in queries]
            defined = sum(1 for v in values if v == v)  # (numpy's nanmean, its floats: NaN as 0 in its sum)
            out[name] = np_sum([v if v == v else 0.0 for v in values]) / defined if defined else float("nan")
        return out

    mp, mu = means(p), means(u)
    order_p = tuple(sorted(systems, key=lambda s: (-mp[s], systems.index(s))))
    order_u = tuple(sorted(systems, key=lambda s: (-mu[s], systems.index(s))))
    inversions = []
    for a in order_p:
        for b in order_p:
            if mp[a] > mp[b] and mu[a] < mu[b]:
                inversions.append((a, b))
    return ConsistencyReport(str(p), str(u), mp, mu, order_p, order_u, tuple(inversions), len(queries))
