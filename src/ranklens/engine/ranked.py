"""RankedLists: the one layout every kernel reads (flat arrays + per-query offsets)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

__all__ = ["NONPOOL", "UNJUDGED", "RankedLists"]

#: label of a retrieved document that is not in the qrels (trec_eval RELVALUE_NONPOOL)
NONPOOL = -1
#: label of a retrieved document judged with a negative value: "pooled but unjudged" (RELVALUE_UNJUDGED)
UNJUDGED = -2


@dataclass(frozen=True, eq=False)
class RankedLists:
    """The ranked labels of every evaluated query, in rank order, as flat arrays.

    Rows of query ``i`` are ``offsets[i]:offsets[i+1]``. ``labels`` holds the qrels label of each retrieved
    document, :data:`NONPOOL` when it is not in the qrels and :data:`UNJUDGED` when the qrels give it a
    negative label (trec_eval semantics; the ``negative`` policy may map negatives elsewhere first).
    ``ideal_labels`` holds, per query, every judged label of the qrels (retrieved or not), sorted
    descending, with its own ``ideal_offsets``.

    Labels are int32 for integer qrels and float64 for real-valued ones (``labels="float"``); the markers
    are the same negative values in both. They cannot collide with a label: every label a retrieved row
    keeps is ≥ 0 (a negative qrels label becomes :data:`UNJUDGED`, or 0 under ``negative="zero"``).
    ``ideal_labels`` has no markers and keeps negative qrels labels as they are.

    Attributes:
        query_ids: the evaluated query ids, in output order (bytewise sorted).
        offsets: int64, ``len(query_ids) + 1``.
        labels: int32 (float64 with real-valued qrels) per retrieved row.
        scores: float64 per retrieved row.
        docs: int32 document code per row, into ``doc_ids``.
        doc_ids: the run's document vocabulary (for explanations).
        ideal_offsets, ideal_labels: the judged labels per query, sorted descending.
        ideal_docs: qrels document codes aligned with ``ideal_labels`` (into ``qrels_doc_ids``).
        qrels_doc_ids: the qrels document vocabulary.
        run_name: the run's name.
    """

    query_ids: pa.Array
    offsets: np.ndarray
    labels: np.ndarray
    scores: np.ndarray
    docs: np.ndarray
    doc_ids: pa.Array
    ideal_offsets: np.ndarray
    ideal_labels: np.ndarray
    ideal_docs: np.ndarray
    qrels_doc_ids: pa.Array
    run_name: str = "run"
    top_label: float = 0
    """the largest label in the whole qrels (the top of the scale when none is given)"""
    map_negative_labels: bool = False
    """True (the Evaluator): a gain map naming a negative label gives documents with that label its gain
    in nDCG/DCG/IDCG. False (``ranklens trec-eval``): trec_eval semantics, a negative label matches no
    level of the gain table and has gain 0"""
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def num_queries(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @property
    def lengths(self) -> np.ndarray:
        """Number of retrieved documents per query."""
        return np.diff(self.offsets)

    @property
    def ideal_lengths(self) -> np.ndarray:
        """Number of judged documents per query."""
        return np.diff(self.ideal_offsets)

    @property
    def row_query(self) -> np.ndarray:
        """Query index (0-based, into ``query_ids``) of every retrieved row."""
        if "row_query" not in self._cache:
            self._cache["row_query"] = _segment_ids(self.offsets)
        return self._cache["row_query"]

    @property
    def rank0(self) -> np.ndarray:
        """0-based rank of every retrieved row within its query."""
        if "rank0" not in self._cache:
            self._cache["rank0"] = _positions(self.offsets)
        return self._cache["rank0"]

    @property
    def ideal_query(self) -> np.ndarray:
        """Query index of every ideal (judged) row."""
        if "ideal_query" not in self._cache:
            self._cache["ideal_query"] = _segment_ids(self.ideal_offsets)
        return self._cache["ideal_query"]

    @property
    def ideal_rank0(self) -> np.ndarray:
        """0-based position of every judged label in its query's descending order."""
        if "ideal_rank0" not in self._cache:
            self._cache["ideal_rank0"] = _positions(self.ideal_offsets)
        return self._cache["ideal_rank0"]

    def per_query_sum(self, values: np.ndarray, *, ideal: bool = False) -> np.ndarray:
        """Sum ``values`` (one per row) within each query (empty queries give 0)."""
        ids = self.ideal_query if ideal else self.row_query
        return np.bincount(ids, weights=values, minlength=self.num_queries).astype(np.float64, copy=False)

    def per_query_count(self, mask: np.ndarray, *, ideal: bool = False) -> np.ndarray:
        """Count the rows where ``mask`` holds, within each query."""
        ids = self.ideal_query if ideal else self.row_query
        return np.bincount(ids[mask], minlength=self.num_queries).astype(np.int64, copy=False)

    def num_relevant(self, rel: float) -> np.ndarray:
        """Judged documents with label ≥ ``rel`` per query (trec_eval ``num_rel``)."""
        return self.per_query_count(self.ideal_labels >= rel, ideal=True)

    def num_judged_nonrelevant(self, rel: float) -> np.ndarray:
        """Judged documents with 0 ≤ label < ``rel`` per query."""
        lab = self.ideal_labels
        return self.per_query_count((lab >= 0) & (lab < rel), ideal=True)

    def max_label(self) -> float:
        """The largest label in the qrels (0 when there is none): the default top of the grade scale.

        Taken over the whole qrels, not the evaluated queries, so a query's value never depends on
        which other queries the run happens to contain (and streamed chunks agree with one pass)."""
        return max(self.top_label, 0)


def _segment_ids(offsets: np.ndarray) -> np.ndarray:
    n = offsets.shape[0] - 1
    return np.repeat(np.arange(n, dtype=np.int32), np.diff(offsets))


def _positions(offsets: np.ndarray) -> np.ndarray:
    total = int(offsets[-1])
    starts = np.repeat(offsets[:-1], np.diff(offsets))
    return (np.arange(total, dtype=np.int64) - starts).astype(np.int32)
