"""Evaluating users in blocks of bounded size: what crosses the blocks.

A recommender evaluation (side tables, system-level measures) of a big run is done a block of users at a
time (:meth:`~ranklens.engine.evaluator.Evaluator.results` with ``block_users``, and the streamed
evaluation of a run file), so that the alignment and the kernels hold one block's rows, never the whole
run's. Per-user values depend only on the user's own rows and on the side tables' global statistics (n_i,
U, the similarity), so a block gives each of its users the value the whole run gives. What needs every
user is carried in a :class:`BlockTally`: the system-level measures' accumulators
(:mod:`ranklens.engine.kernels.recsys_system`, exact integer state: the same bits as one pass) and the
counts behind the notes (rows dropped by exclude-seen, items absent from the side tables, empty users,
what the alignment left out), worded once at the end as one pass words them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ranklens.data.run import Run
from ranklens.engine.kernels.recsys_system import Accumulator
from ranklens.engine.pool import SelfPool
from ranklens.errors import Note

__all__ = ["BLOCK_USERS", "BlockTally", "split_run"]

#: users per block when an Evaluator with side tables or system-level measures blocks a run by itself
BLOCK_USERS = 50_000


@dataclass
class BlockTally:
    """What a blocked evaluation sums over its blocks."""

    system: dict[int, Accumulator] = field(default_factory=dict)
    """the accumulator of every system-level measure, by column"""
    seen_dropped: int = 0
    seen_total: int = 0
    seen_applied: bool = False
    absent: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """(head, tail) of a side-table note → [absent, total] (:func:`~ranklens.engine.kernels.recsys.recsys_note_counts`)"""
    empty: list[int] = field(default_factory=lambda: [0, 0])
    """[users with no relevant test item, users] (``empty=``)"""
    report: dict[str, int] = field(
        default_factory=lambda: dict(run_only_queries=0, run_only_rows=0, truncated_rows=0, removed_unjudged_rows=0, evaluated=0)
    )
    pool: SelfPool | None = None
    blocks: int = 0

    def accumulator(self, j: int, measure: object) -> Accumulator:
        """The accumulator of column ``j`` (made on first use)."""
        if j not in self.system:
            self.system[j] = Accumulator(measure)  # type: ignore[arg-type]
        return self.system[j]

    def add_absent(self, counts: list[tuple[str, str, int, int]]) -> None:
        for head, tail, absent, total in counts:
            c = self.absent.setdefault((head, tail), [0, 0])
            c[0] += absent
            c[1] += total

    def absent_notes(self) -> list[Note]:
        return [absent_note(h, t, a, n) for (h, t), (a, n) in self.absent.items() if a]


def absent_note(head: str, tail: str, absent: int, total: int) -> Note:
    """``Novelty@10: 3 of 40 top-10 recommendations are of items not in the training data: …``, as data.

    >>> absent_note("Novelty@10", "top-10 recommendations are of items not in the training data", 3, 40).data()["total"]
    40
    """
    return Note("absent_items", absent, total=total, head=head, tail=tail)


def split_run(run: Run, users: int) -> Iterator[Run]:
    """``run`` as consecutive runs of at most ``users`` queries each, every query whole in one of them.

    The run's rows are cut where its query changes; a run whose queries are not grouped (a query's rows
    apart) is first put in query order by one stable sort (a copy of the run: the memory of its rows).
    Each part shares the run's document vocabulary (``doc``, ``doc_ids``: interned once) and has its own
    small query vocabulary (the alignment maps that one onto the qrels').

    >>> r = Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0, "a": 0.5}, "q3": {"c": 1.0}})
    >>> [p.query_ids.to_pylist() for p in split_run(r, 2)]
    [['q1', 'q2'], ['q3']]
    """
    users = max(int(users), 1)
    n = len(run)
    if n == 0:
        yield run
        return
    q = run.query
    starts = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate(([0], starts))
    if starts.size != np.unique(q[starts]).size:  # a query's rows are apart: group them once
        run = _grouped(run)
        q = run.query
        starts = np.concatenate(([0], np.flatnonzero(q[1:] != q[:-1]) + 1))
    doc, vocab = run.doc, run.doc_ids  # interned once for every part
    hashes = run._cache.get("doc_hash")
    for b in range(0, starts.size, users):
        lo = int(starts[b])
        hi = int(starts[b + users]) if b + users < starts.size else n
        codes = q[lo:hi]
        mine = np.unique(codes)
        part = Run(
            run.query_ids.take(pa.array(mine)), np.searchsorted(mine, codes).astype(np.int32),
            run.docs.slice(lo, hi - lo), run.score[lo:hi], run.name, run.source, id_kind=run.id_kind,
        )
        part._cache["doc"], part._cache["doc_ids"] = doc[lo:hi], vocab
        if hashes is not None:
            part._cache["doc_hash"] = hashes[lo:hi]
        yield part


def _grouped(run: Run) -> Run:
    order = np.argsort(run.query, kind="stable")
    out = Run(
        run.query_ids, run.query[order], run.docs.take(pa.array(order)), run.score[order], run.name, run.source,
        notes=run.notes, id_kind=run.id_kind,
    )
    if "doc" in run._cache:
        out._cache["doc"], out._cache["doc_ids"] = run._cache["doc"][order], run._cache["doc_ids"]
    if "doc_hash" in run._cache:
        out._cache["doc_hash"] = run._cache["doc_hash"][order]
    return out
