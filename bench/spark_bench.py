"""Spark backend benchmark (issue 15): graded mean nDCG@10 with both Spark paths, the in-memory engine and
Polars/DuckDB (when installed), on the same synthetic Parquet inputs; every engine's mean must agree.

    python bench/spark_bench.py --rows 2000000 --master 'local[2]'

Prints a Markdown table (seconds, wall clock; Spark's session start-up reported apart) for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import tempfile
import time
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def make_data(rows: int, docs_per_query: int, seed: int = 15) -> tuple[pa.Table, pa.Table]:
    """``rows`` run rows (queries × ``docs_per_query``) and half as many qrels rows (grades 0–3)."""
    rng = np.random.default_rng(seed)
    nq = max(rows // docs_per_query, 1)
    q = np.repeat(np.arange(nq), docs_per_query)
    d = rng.integers(0, docs_per_query * 4, size=q.size)
    # unique (query, doc): offset by position so no pair repeats
    d = np.arange(q.size) % docs_per_query * 4 + d % 4
    score = np.round(rng.random(q.size), 3)  # ties on purpose
    run = pa.table({"query_id": pa.array([f"q{i}" for i in q]), "doc_id": pa.array([f"d{i}" for i in d]), "score": score})
    pick = rng.random(q.size) < 0.5
    qrels = pa.table({
        "query_id": run.column("query_id").filter(pa.array(pick)),
        "doc_id": run.column("doc_id").filter(pa.array(pick)),
        "relevance": pa.array(rng.integers(0, 4, size=int(pick.sum())).astype(np.int32)),
    })
    return run, qrels


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def polars_ndcg(run_path: str, qrels_path: str, k: int) -> float:
    import polars as pl

    run = pl.scan_parquet(run_path)
    qrels = pl.scan_parquet(qrels_path)
    ranked = (
        run.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
        .with_columns(pl.int_range(1, pl.len() + 1).over("query_id").alias("rank"))
        .filter(pl.col("rank") <= k)
        .join(qrels, on=["query_id", "doc_id"], how="left")
        .with_columns((pl.col("relevance").fill_null(0).clip(0) / (pl.col("rank") + 1).log(2)).alias("g"))
        .group_by("query_id").agg(pl.col("g").sum().alias("dcg"))
    )
    ideal = (
        qrels.filter(pl.col("relevance") > 0).sort(["query_id", "relevance"], descending=[False, True])
        .with_columns(pl.int_range(1, pl.len() + 1).over("query_id").alias("rank")).filter(pl.col("rank") <= k)
        .with_columns((pl.col("relevance") / (pl.col("rank") + 1).log(2)).alias("g"))
        .group_by("query_id").agg(pl.col("g").sum().alias("idcg"))
    )
    queries = run.select("query_id").unique().join(qrels.select("query_id").unique(), on="query_id")
    out = (
        queries.join(ranked, on="query_id", how="left").join(ideal, on="query_id", how="left")
        .select(pl.when(pl.col("idcg") > 0).then(pl.col("dcg").fill_null(0) / pl.col("idcg")).otherwise(0.0).mean())
    )
    return float(out.collect().item())


def duckdb_ndcg(run_path: str, qrels_path: str, k: int) -> float:
    import duckdb

    sql = f"""
    WITH r AS (SELECT query_id, doc_id, row_number() OVER (PARTITION BY query_id ORDER BY score DESC, doc_id DESC) AS rank
               FROM '{run_path}'),
    d AS (SELECT r.query_id, sum(greatest(coalesce(q.relevance, 0), 0) / log2(rank + 1)) AS dcg
          FROM r LEFT JOIN '{qrels_path}' q USING (query_id, doc_id) WHERE rank <= {k} GROUP BY r.query_id),
    i AS (SELECT query_id, sum(relevance / log2(rank + 1)) AS idcg FROM
          (SELECT query_id, relevance, row_number() OVER (PARTITION BY query_id ORDER BY relevance DESC) AS rank
           FROM '{qrels_path}' WHERE relevance > 0) WHERE rank <= {k} GROUP BY query_id),
    e AS (SELECT DISTINCT query_id FROM '{run_path}' INTERSECT SELECT DISTINCT query_id FROM '{qrels_path}')
    SELECT avg(CASE WHEN idcg > 0 THEN coalesce(dcg, 0) / idcg ELSE 0 END) FROM e LEFT JOIN d USING (query_id)
    LEFT JOIN i USING (query_id)"""
    return float(duckdb.sql(sql).fetchall()[0][0])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000, help="run rows (qrels: about half as many)")
    ap.add_argument("--docs-per-query", type=int, default=100)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--measure", default="nDCG@10")
    ap.add_argument("--no-duplicate-check", action="store_true", help="also time both paths without the duplicate check")
    ap.add_argument("--skip", default="", help="comma-separated engines to skip: memory,arrow,sql,polars,duckdb")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    k = int(args.measure.rpartition("@")[2])

    import ranklens

    run_t, qrels_t = make_data(args.rows, args.docs_per_query)
    tmp = tempfile.mkdtemp(prefix="ranklens-spark-bench-")
    run_path, qrels_path = os.path.join(tmp, "run.parquet"), os.path.join(tmp, "qrels.parquet")
    pq.write_table(run_t, run_path)
    pq.write_table(qrels_t, qrels_path)
    rows: list[tuple[str, float, float]] = []

    if "memory" not in skip:
        def memory() -> float:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ranklens.evaluate(qrels_path, run_path, [args.measure])[args.measure]
        value, sec = timed(memory)
        rows.append(("ranklens in-memory (read Parquet + evaluate)", sec, value))
    if "polars" not in skip:
        value, sec = timed(lambda: polars_ndcg(run_path, qrels_path, k))
        rows.append(("Polars lazy (hand-written nDCG)", sec, value))
    if "duckdb" not in skip:
        try:
            import duckdb  # noqa: F401
        except ImportError:
            print("duckdb not installed: skipped", file=sys.stderr)
        else:
            value, sec = timed(lambda: duckdb_ndcg(run_path, qrels_path, k))
            rows.append(("DuckDB (hand-written nDCG)", sec, value))
    if not {"arrow", "sql"} <= skip:
        from ranklens.spark import evaluate, session

        spark, start = timed(lambda: session(args.master, shuffle_partitions=args.shuffle_partitions))
        # warm-up (JVM JIT, Python workers) on a few rows, so the first timed row does not pay it alone
        tiny_run, tiny_qrels = spark.read.parquet(run_path).limit(1000), spark.read.parquet(qrels_path).limit(1000)
        for path in ("arrow", "sql"):
            evaluate(tiny_run, tiny_qrels, [args.measure], path=path, warn=False).unpersist()
        for path in ("arrow", "sql"):
            if path in skip:
                continue
            for check in (True, False) if args.no_duplicate_check else (True,):
                def spark_eval(path: str = path, check: bool = check) -> float:
                    run_df, qrels_df = spark.read.parquet(run_path), spark.read.parquet(qrels_path)
                    ev = evaluate(run_df, qrels_df, [args.measure], path=path, warn=False, check_duplicates=check)
                    ev.unpersist()
                    return ev[args.measure]
                value, sec = timed(spark_eval)
                what = "incl. duplicate check" if check else "no duplicate check"
                rows.append((f"ranklens.spark path={path} ({args.master}, {what})", sec, value))
        spark.stop()
        print(f"Spark session start-up: {start:.1f} s (not in the rows below)", file=sys.stderr)

    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    ref = rows[0][2]
    print(f"{args.rows:,} run rows, {qrels_t.num_rows:,} qrels rows, {args.docs_per_query} docs/query, "
          f"{args.measure}; {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n")
    print("| engine | seconds | mean | |Δ| vs first |")
    print("|---|---:|---:|---:|")
    for name, sec, value in rows:
        delta = abs(value - ref)
        print(f"| {name} | {sec:.1f} | {value:.12f} | {delta:.1e} |")
        assert math.isclose(value, ref, abs_tol=1e-9), f"{name} disagrees: {value} vs {ref}"


if __name__ == "__main__":
    main()
