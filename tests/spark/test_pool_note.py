"""The note that a query's judged pool is the run's own top d (engine/pool.py) on Spark too, with the same
text and counts as the in-memory engine, over queries split between buckets (issue 22 item 5)."""

from __future__ import annotations

import warnings

import ranklens


def test_self_pooled_note_on_spark(spark) -> None:  # type: ignore[no-untyped-def]
    from ranklens.spark import evaluate

    run = {f"q{i}": {f"q{i}d{r}": float(20 - r) for r in range(1, 13)} for i in range(8)}
    # q0-q5: the run's top 6 judged, one of them non-relevant; q6, q7: a judged document the run missed
    qrels = {q: {f"{q}d{r}": (0 if r == 2 else 3) for r in range(1, 7)} for q in run}
    for q in ("q6", "q7"):
        qrels[q][f"{q}elsewhere"] = 3
    rdf = spark.createDataFrame([(q, d, s) for q, ds in run.items() for d, s in ds.items()],
                                "query_id string, doc_id string, score double")
    qdf = spark.createDataFrame([(q, d, lab) for q, ds in qrels.items() for d, lab in ds.items()],
                                "query_id string, doc_id string, relevance int")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ranklens.Evaluator(["RAnWG(top=3)@10"], qrels)(run)
        ev = evaluate(rdf, qdf, ["RAnWG(top=3)@10"], path="arrow")
    note = [n for n in ref.notes if "run itself" in n]
    assert len(note) == 1 and "6 of 8 queries" in note[0] and "top 6" in note[0]
    assert ev.results.notes == ref.notes
    ev.unpersist()
