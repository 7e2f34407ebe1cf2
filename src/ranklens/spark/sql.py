"""The pure Spark SQL path: nDCG, DCG, P, R, AP, RR, Success with trec_eval semantics, no Python worker.

Semantics (the engine's, docs/METRICS): documents ranked by score descending, ties by document id
descending (bytewise, as ``strcmp``); a retrieved document not in the qrels, or judged with a negative label
(``negative="trec"``: pooled but unjudged), has gain 0 and is never relevant; relevant = label ≥ ``rel``
(default 1); DCG@k = Σ_{i≤k} g(rel_i)/log2(i+1); the ideal is every positive judged gain of the query sorted
descending; nDCG = DCG/IDCG, 0 when IDCG = 0; P@k divides by k; R@k and AP divide by R = #judged labels ≥
``rel``, 0 when R = 0; RR is 1/rank of the first relevant document (within k), 0 if none.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ranklens.data.qrels import LABEL_RANGE
from ranklens.engine.evaluator import Evaluator
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import FormatError, InputError, MeasureError
from ranklens.measures.base import Measure

__all__ = ["SQL_MEASURES", "check_sql_measures", "evaluate_sql", "validate_frames"]

#: family → the parameters the SQL path honours (the others must keep their defaults)
SQL_MEASURES = {"nDCG": {"gain"}, "DCG": {"gain"}, "P": {"rel"}, "R": {"rel"}, "AP": {"rel"}, "RR": {"rel"},
                "Success": {"rel"}}


def check_sql_measures(measures: tuple[Measure, ...]) -> None:
    """A :class:`MeasureError` naming the Arrow path for every measure the SQL path does not compute."""
    for m in measures:
        allowed = SQL_MEASURES.get(m.family.name)
        other = [k for k, _ in m.params if allowed is None or k not in allowed]
        bad_gain = allowed is not None and "gain" in allowed and m.get("gain") not in ("linear", "exp")
        if allowed is None or other or bad_gain:
            raise MeasureError(
                f"{m}: the Spark SQL path computes nDCG, DCG (gain linear or exp), P, R, AP, RR and Success "
                f"(rel=…) with trec ties only; evaluate {m} with path='arrow' (the engine's own kernels per "
                "query bucket, through Arrow)"
            )


def check_sql_side(probe: Evaluator, policy: EvalPolicy) -> None:
    """A :class:`MeasureError` naming the Arrow path for the recommender side of an evaluation (``train=``,
    ``items=``, ``exclude_seen=``, ``empty=``, ``aggregate=``), which the SQL path does not apply."""
    given = [k for k in ("train", "items", "empty", "aggregate") if getattr(policy, k) is not None]
    given += ["exclude_seen"] if policy.exclude_seen else []
    if given:
        raise MeasureError(
            f"the Spark SQL path does not apply {', '.join(f'{k}=' for k in given)}; evaluate with path='arrow' "
            "(the engine's own kernels per query bucket, the training statistics broadcast)"
        )


def evaluate_sql(
    run: Any, qrels: Any, probe: Evaluator, policy: EvalPolicy, sources: tuple[str, str] = ("<run DataFrame>", "<qrels DataFrame>")
) -> tuple[Any, ...]:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    measures = probe.measures
    check_sql_measures(measures)
    validate_frames(run, qrels, policy, sources)
    lab = F.col("relevance").cast("double")
    if policy.negative == "zero":
        lab = F.greatest(lab, F.lit(0.0))
    q = qrels.select("query_id", "doc_id", lab.alias("label"))
    thresholds = sorted({float(m.get("rel")) for m in measures if "rel" in {p.name for p in m.family.params}})

    # queries of both inputs: run rows per query, and whether the qrels have it
    rq = run.groupBy("query_id").agg(F.count(F.lit(1)).alias("n_run"))
    qq = q.groupBy("query_id").agg(F.lit(True).alias("in_qrels"))
    queries = rq.join(qq, "query_id", "full_outer")

    # the ranked run rows of queries the qrels have, with their labels (one join)
    ranked = run.join(qq.select("query_id"), "query_id", "left_semi").join(q, ["query_id", "doc_id"], "left")
    order = Window.partitionBy("query_id").orderBy(F.col("score").desc(), F.col("doc_id").desc())
    ranked = ranked.withColumn("rank", F.row_number().over(order))
    judged = F.when(F.col("label") >= 0, F.col("label"))
    ranked = ranked.withColumn("jl", judged)
    extra = [F.lit(0).alias("truncated"), F.lit(0).alias("removed")]
    if policy.max_docs is not None:
        ranked = ranked.withColumn("cut", (F.col("rank") > policy.max_docs).cast("int"))
        extra[0] = F.sum("cut").alias("truncated")
    if policy.judged_only:
        ranked = ranked.withColumn("unj", (F.col("jl").isNull() & (F.col("rank") <= (policy.max_docs or 2**31 - 1))).cast("int"))
        extra[1] = F.sum("unj").alias("removed")
    counts = ranked.groupBy("query_id").agg(*extra)
    if policy.max_docs is not None:
        ranked = ranked.filter(F.col("rank") <= policy.max_docs)
    if policy.judged_only:
        ranked = ranked.filter(F.col("jl").isNotNull()).withColumn("rank", F.row_number().over(order))
    cum = Window.partitionBy("query_id").orderBy("rank").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    for i, t in enumerate(thresholds):
        ranked = ranked.withColumn(f"r{i}", (F.col("jl") >= F.lit(t)).cast("int"))
        ranked = ranked.withColumn(f"c{i}", F.sum(f"r{i}").over(cum))
    disc = F.log2(F.col("rank") + 1)
    row_aggs, ideal_aggs, finals = [], [], []
    for j, m in enumerate(measures):
        k = m.cutoff
        top = F.col("rank") <= k if k is not None else F.lit(True)
        fam = m.family.name
        if fam in ("nDCG", "DCG"):
            g = _gain(F.col("jl"), str(m.get("gain")))
            row_aggs.append(F.sum(F.when(top, g / disc).otherwise(0.0)).alias(f"dcg{j}"))
            dcg = F.coalesce(F.col(f"dcg{j}"), F.lit(0.0))
            if fam == "DCG":
                finals.append(dcg.alias(f"m{j}"))
            else:
                itop = F.col("irank") <= k if k is not None else F.lit(True)
                ig = _gain(F.col("label"), str(m.get("gain")))
                ideal_aggs.append(F.sum(F.when(itop, ig / F.log2(F.col("irank") + 1)).otherwise(0.0)).alias(f"idcg{j}"))
                idcg = F.coalesce(F.col(f"idcg{j}"), F.lit(0.0))
                finals.append(F.when(idcg > 0, dcg / idcg).otherwise(0.0).alias(f"m{j}"))
            continue
        i = thresholds.index(float(m.get("rel")))
        hit = top & (F.col(f"r{i}") == 1)
        big_r = F.coalesce(F.col(f"R{i}"), F.lit(0))
        if fam in ("P", "R", "Success"):
            row_aggs.append(F.sum(F.when(hit, 1).otherwise(0)).alias(f"n{j}"))
            n = F.coalesce(F.col(f"n{j}"), F.lit(0)).cast("double")
            if fam == "P":
                finals.append((n / float(k)).alias(f"m{j}"))  # type: ignore[arg-type]
            elif fam == "R":
                finals.append(F.when(big_r > 0, n / big_r).otherwise(0.0).alias(f"m{j}"))
            else:
                finals.append(F.when(n > 0, 1.0).otherwise(0.0).alias(f"m{j}"))
        elif fam == "RR":
            row_aggs.append(F.min(F.when(hit, F.col("rank"))).alias(f"first{j}"))
            finals.append(F.coalesce(1.0 / F.col(f"first{j}"), F.lit(0.0)).alias(f"m{j}"))
        else:  # AP
            row_aggs.append(F.sum(F.when(hit, F.col(f"c{i}") / F.col("rank")).otherwise(0.0)).alias(f"ap{j}"))
            total = F.coalesce(F.col(f"ap{j}"), F.lit(0.0))
            finals.append(F.when(big_r > 0, total / big_r).otherwise(0.0).alias(f"m{j}"))
    per_run = ranked.groupBy("query_id").agg(*(row_aggs or [F.lit(0).alias("_none")]))

    # the ideal: every positive judged label of the query, best first; R per threshold
    positive = q.filter(F.col("label") > 0).withColumn(
        "irank", F.row_number().over(Window.partitionBy("query_id").orderBy(F.col("label").desc()))
    )
    ideal = positive.groupBy("query_id").agg(*(ideal_aggs or [F.lit(0).alias("_none2")]))
    rel_counts = q.groupBy("query_id").agg(
        *[F.sum((F.col("label") >= F.lit(t)).cast("int")).alias(f"R{i}") for i, t in enumerate(thresholds)],
        F.lit(0).alias("_none3"),
    )
    present = F.col("n_run").isNotNull()
    evaluated = F.col("in_qrels").isNotNull() & (present | F.lit(policy.missing == "zero"))
    wide = (
        queries.join(counts, "query_id", "left").join(per_run, "query_id", "left").join(ideal, "query_id", "left")
        .join(rel_counts, "query_id", "left")
        .select("query_id", "n_run", "in_qrels", "truncated", "removed", evaluated.alias("evaluated"), *finals)
    ).persist()
    rows = wide.collect()
    stats = {
        "run_only_queries": sum(1 for r in rows if r["in_qrels"] is None),
        "run_only_rows": sum(r["n_run"] for r in rows if r["in_qrels"] is None),
        "qrels_only_queries": sum(1 for r in rows if r["in_qrels"] is not None and r["n_run"] is None),
        "truncated_rows": sum(r["truncated"] or 0 for r in rows if r["in_qrels"] is not None),
        "removed_unjudged_rows": sum(r["removed"] or 0 for r in rows if r["in_qrels"] is not None),
        "qrels_queries": sum(1 for r in rows if r["in_qrels"] is not None),
        "run_queries": sum(1 for r in rows if r["n_run"] is not None),
    }
    kept = [r for r in rows if r["evaluated"]]
    values = np.array([[r[f"m{j}"] for j in range(len(measures))] for r in kept], dtype=np.float64).reshape(
        len(kept), len(measures)
    )
    names = [str(m) for m in measures]
    long = F.explode(F.array(*[F.struct(F.lit(s).alias("measure"), F.col(f"m{j}").alias("value")) for j, s in enumerate(names)]))
    per_query = wide.filter("evaluated").select("query_id", long.alias("mv")).select("query_id", "mv.measure", "mv.value")
    return per_query, [r["query_id"] for r in kept], values, stats, wide


def _gain(label: Any, gain: str) -> Any:
    from pyspark.sql import functions as F

    positive = label > 0
    g = label if gain == "linear" else F.pow(F.lit(2.0), label) - 1.0
    return F.when(positive, g).otherwise(0.0)


def validate_frames(
    run: Any, qrels: Any, policy: EvalPolicy, sources: tuple[str, str] = ("<run DataFrame>", "<qrels DataFrame>")
) -> None:
    """The engine's input checks (:class:`~ranklens.data.qrels.Qrels`' and :class:`~ranklens.data.run.Run`'s
    rules: ids, NaN scores, integer labels in the 32-bit range, negative labels), as one aggregate over each
    input; ``sources`` names them in messages (rows of a DataFrame have no line number).

    >>> validate_frames(run_df, qrels_df, EvalPolicy(), ("s3a://b/run", "s3a://b/qrels"))  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    def count(cond: Any) -> Any:
        return F.sum(F.when(cond, 1).otherwise(0))

    r = run.agg(
        count(F.col("query_id").isNull() | F.col("doc_id").isNull() | (F.col("query_id") == "") | (F.col("doc_id") == "")).alias("ids"),
        count(F.col("score").isNull() | F.isnan("score")).alias("nan"),
    ).collect()[0]
    run_source, qrels_source = sources
    if r["ids"]:
        raise FormatError(run_source, "empty query or document id")
    if r["nan"]:
        raise FormatError(run_source, f"score is NaN ({r['nan']} row(s) in all); give every document a number")
    lab = F.col("relevance").cast("double")
    integer = (policy.labels or "int") == "int"
    bad = lab.isNull() | F.isnan(lab) | (F.lit(integer) & (lab != F.round(lab)))
    q = qrels.agg(
        count(F.col("query_id").isNull() | F.col("doc_id").isNull() | (F.col("query_id") == "") | (F.col("doc_id") == "")).alias("ids"),
        count(bad).alias("bad"),
        F.min(F.when(bad, F.col("relevance").cast("string"))).alias("bad_value"),
        # (the in-memory engine keeps integer labels as int32: outside that range is an error, never a wrap)
        F.min(F.when(F.lit(integer) & ((lab < -(2**31)) | (lab >= 2**31)), F.col("relevance").cast("string"))).alias("huge"),
        F.min(F.struct(lab.alias("label"), F.col("query_id"))).alias("lowest"),
    ).collect()[0]
    if q["ids"]:
        raise FormatError(qrels_source, "empty query or document id")
    if q["bad"]:
        kind = "an integer" if integer else "a finite number"
        raise FormatError(qrels_source, f"relevance label must be {kind}, got {q['bad_value']!r}")
    if q["huge"] is not None:
        raise FormatError(qrels_source, f"{LABEL_RANGE}, got {q['huge']}")
    low = q["lowest"]
    if policy.negative == "error" and low is not None and low["label"] < 0:
        value = int(low["label"]) if integer else low["label"]
        raise InputError(
            f"{qrels_source}: negative relevance label {value} (query '{low['query_id']}'); choose a "
            "negative-label policy (trec, zero)"
        )
