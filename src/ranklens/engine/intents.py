"""The intent-aware measures over ranked lists: join intent-level qrels to the retrieved rows and the judged
candidates (one join and one sort), then run each measure's kernel (:mod:`ranklens.engine.kernels.intent_aware`).

Used by the :class:`~ranklens.engine.evaluator.Evaluator` (``intents=``, ``--intents FILE``) and by
:func:`ranklens.diversity.evaluate_diversity`: one computation for every face.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ranklens.data.intents import IntentQrels
from ranklens.engine.kernels.diversity import IntentPairs
from ranklens.engine.kernels.intent_aware import INTENT_KERNELS
from ranklens.engine.ranked import RankedLists
from ranklens.errors import MeasureError
from ranklens.measures.base import Measure

__all__ = ["intent_pairs", "intent_values", "is_intent_measure"]


def is_intent_measure(m: Measure) -> bool:
    """True when ``m`` is computed from intent-level qrels."""
    return "intents" in m.family.needs


def intent_values(lists: RankedLists, intents: IntentQrels, measures: Sequence[Measure]) -> list[np.ndarray]:
    """One column of per-query values per measure (all intent-aware), joining the intents once per ``rel``.

    >>> from ranklens.engine.alignment import align
    >>> from ranklens.data.run import Run
    >>> from ranklens.measures import parse_many
    >>> iq = IntentQrels.from_dict({"q": {"i1": {"a": 1, "b": 1}, "i2": {"c": 1}}})
    >>> lists, _ = align(iq.to_qrels(), Run.from_dict({"q": {"a": 3.0, "b": 2.0, "c": 1.0}}))
    >>> [round(float(v[0]), 6) for v in intent_values(lists, iq, parse_many(["StRecall@2", "P-IA@2"]))]
    [0.5, 0.5]
    """
    by_rel: dict[int, IntentPairs] = {}
    out: list[np.ndarray] = []
    for m in measures:
        kernel = INTENT_KERNELS.get(m.name)
        if kernel is None:
            raise MeasureError(f"no kernel computes intent-aware measure '{m}'")
        rel = int(m.get("rel"))
        if rel not in by_rel:
            by_rel[rel] = intent_pairs(intents, lists, rel)
        out.append(kernel(lists, by_rel[rel], m))
    return out


def intent_pairs(iq: IntentQrels, lists: RankedLists, rel: int) -> IntentPairs:
    """Join the retrieved rows and the judged candidates of every query to the intents they cover (label ≥ rel)."""
    import polars as pl

    qmap = {q: i for i, q in enumerate(lists.query_ids.to_pylist())}
    keep = pa.array(iq.label >= rel)
    judged = pl.DataFrame({"q": iq.query.filter(keep), "i": iq.intent.filter(keep), "d": iq.doc.filter(keep)})
    judged = judged.with_columns(pl.col("q").replace_strict(qmap, default=-1, return_dtype=pl.Int64).alias("qi"))
    judged = judged.filter(pl.col("qi") >= 0)
    # a global code per (query, intent), ordered by query
    judged = judged.with_columns(pl.struct("qi", "i").rank("dense").cast(pl.Int64).sub(1).alias("intent_code"))
    num_intents = int(judged["intent_code"].max()) + 1 if judged.height else 0  # type: ignore[arg-type,operator]
    codes = judged.select("intent_code", "qi").unique().sort("intent_code")

    rows = pl.DataFrame(
        {
            "qi": lists.row_query.astype(np.int64),
            "d": lists.doc_ids.take(pa.array(lists.docs)),
            "row": np.arange(lists.labels.shape[0], dtype=np.int64),
        }
    )
    hit = rows.join(judged.select("qi", "d", "intent_code"), on=["qi", "d"], how="inner")
    hit = hit.sort(["intent_code", "row"])

    cands = judged.select("qi", "d").unique().sort(["qi", "d"])  # bytewise doc order within each query
    cands = cands.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("cand"))
    cpairs = judged.join(cands, on=["qi", "d"], how="inner")
    return IntentPairs(
        hit["row"].to_numpy(),
        hit["intent_code"].to_numpy(),
        cands["qi"].to_numpy(),
        cpairs["cand"].to_numpy(),
        cpairs["intent_code"].to_numpy(),
        num_intents,
        codes["qi"].to_numpy(),
    )
