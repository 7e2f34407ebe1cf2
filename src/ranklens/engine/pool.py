"""Queries whose judged pool is the run's own top d: the ideal of a pool-normalised measure is then the run
itself.

RA-nWG, PROC, %PROC and the normalised recalls divide by what the judged pool of a query offers. When the
judged documents of a query are exactly the run's top d (an LLM judge labelled the run's top 10), that
ideal is built from the run, so RA-nWG@k with k ≥ d is 1.0 by construction and the value says how the run
orders its own top d, not what it missed: the same warning a trec_eval user reads from ``Judged@k`` = 1
on a pool of one run. :func:`self_pool_depths` finds those queries; :func:`self_pool_note` words the note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ranklens.engine.ranked import NONPOOL, RankedLists
from ranklens.measures.base import Measure

__all__ = ["POOL_IDEAL_FAMILIES", "SelfPool", "self_pool_depths", "self_pool_note"]

#: the families whose value is normalised by the judged pool of the query
POOL_IDEAL_FAMILIES = frozenset({"RAnWG", "PROC", "PctPROC", "NRecall4p", "NRecall5"})


@dataclass(frozen=True)
class SelfPool:
    """Over some evaluated queries: how many there were, and the pool depth d of each query whose judged
    documents are exactly the run's top d."""

    queries: int = 0
    depths: tuple[int, ...] = ()

    def __add__(self, other: SelfPool) -> SelfPool:
        return SelfPool(self.queries + other.queries, self.depths + other.depths)


def self_pool_depths(lists: RankedLists) -> SelfPool:
    """The queries of ``lists`` whose judged documents (every qrels row, negative labels included) are
    exactly the run's top d, d ≥ 2 being their number, one of them judged non-relevant (label ≤ 0): what
    a judge who labelled the run's top d gives, and gold labels alone never do. Lists cut above d (an
    evaluator whose measures read fewer rows) never qualify: no note rather than a wrong one.

    >>> from ranklens import Evaluator
    >>> lists, _ = Evaluator("AP", {"q": {"a": 1, "b": 0}, "r": {"c": 1}}).align(
    ...     {"q": {"a": 2.0, "b": 1.0, "x": 0.5}, "r": {"y": 2.0, "c": 1.0}})
    >>> self_pool_depths(lists)
    SelfPool(queries=2, depths=(2,))
    """
    pool = lists.ideal_lengths
    judged = lists.labels != NONPOOL
    inside = judged & (lists.rank0 < pool[lists.row_query])
    count = lists.per_query_count(inside)
    # a judged non-relevant document (label ≤ 0) tells a judged top-d pool from gold labels that the run
    # simply ranked first (one gold passage at rank 1 is a perfect answer, not a pool of the run)
    nonrelevant = lists.per_query_count(lists.ideal_labels <= 0, ideal=True)
    hit = (pool > 1) & (count == pool) & (nonrelevant > 0)
    return SelfPool(lists.num_queries, tuple(int(d) for d in pool[hit]))


def self_pool_note(measures: Sequence[Measure], pool: SelfPool) -> str | None:
    """The note for the pool-normalised ``measures`` when some queries are judged on the run's top d only.

    >>> from ranklens.measures import parse_many
    >>> self_pool_note(parse_many(["RAnWG@10", "P@5"]), SelfPool(3, (10, 10)))[:78]
    "RAnWG@10: the judged documents of 2 of 3 queries are exactly the run's own top"
    """
    names = [str(m) for m in measures if m.name in POOL_IDEAL_FAMILIES]
    if not names or not pool.depths:
        return None
    low, high = min(pool.depths), max(pool.depths)
    depth = f"{low}" if low == high else f"{low}–{high}"
    n, total = len(pool.depths), pool.queries
    return (
        f"{', '.join(names)}: the judged documents of {n} of {total} quer{'y' if total == 1 else 'ies'} are "
        f"exactly the run's own top {depth} (judged-pool depth {depth}): the ideal is computed from the run "
        "itself, so a value of 1 says how the run orders its own top documents, not what it missed; judge "
        "documents beyond them (or other runs' documents) for a pool"
    )
