"""Large run and qrels Parquet inputs written a chunk at a time (issue 30's 20M and 100M rows): the scheme of
``bench.spark_bench.make_data`` (queries × ``docs_per_query`` documents, unique per query, scores rounded to 3
decimals so that ties occur, about half the rows judged 0–3), generated with numpy and Arrow compute in
chunks of whole queries, so the writer never holds more than one chunk (a few hundred MB at most).

    python -m bench.duckdb_data --rows 100000000 --out /tmp/ranklens_100m --parts 10

``--parts 1`` writes ``run.parquet`` and ``qrels.parquet``; more writes the datasets ``run/`` and ``qrels/``
(``part-000.parquet`` …), each part a few row groups. Prints the paths, the row counts, the size on disk and
an estimate of the size the same rows would take as Python objects (a tuple of two str and a float or an
int per row, from ``sys.getsizeof`` of sample rows). Generated data never goes into git: write it under
/tmp or bench/data/ (git-ignored) and delete it after.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

CHUNK_ROWS = 2_000_000
ROW_GROUP_ROWS = 1_000_000


def _chunk(first_query: int, queries: int, docs_per_query: int, seed: int) -> tuple[Any, Any]:
    """The run and qrels Arrow tables of queries ``first_query`` … ``first_query + queries - 1``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng([seed, first_query])
    q = np.repeat(np.arange(first_query, first_query + queries), docs_per_query)
    d = np.arange(q.size) % docs_per_query * 4 + rng.integers(0, 4, size=q.size)  # (unique per query)
    qid = pc.binary_join_element_wise("q", pa.array(q).cast(pa.string()), "")
    did = pc.binary_join_element_wise("d", pa.array(d).cast(pa.string()), "")
    run = pa.table({"query_id": qid, "doc_id": did, "score": np.round(rng.random(q.size), 3)})
    pick = pa.array(rng.random(q.size) < 0.5)
    qrels = pa.table({
        "query_id": qid.filter(pick), "doc_id": did.filter(pick),
        "relevance": pa.array(rng.integers(0, 4, size=int(pc.sum(pick).as_py() or 0)).astype(np.int32)),
    })
    return run, qrels


def python_bytes_per_row(table: Any, sample: int = 10_000) -> float:
    """Bytes a row of ``table`` takes as a Python tuple of its values (the tuple, each str and number)."""
    rows = table.slice(0, sample).to_pylist()
    total = sum(sys.getsizeof(tuple(r.values())) + sum(sys.getsizeof(v) for v in r.values()) for r in rows)
    return total / max(len(rows), 1)


def write_inputs(out: Path, rows: int, docs_per_query: int = 100, parts: int = 1, seed: int = 30) -> dict[str, Any]:
    """Write the run and qrels under ``out`` (files when ``parts == 1``, else datasets); what was written."""
    import pyarrow.parquet as pq

    nq = max(rows // docs_per_query, 1)
    per_chunk = max(CHUNK_ROWS // docs_per_query, 1)
    per_part = -(-nq // parts)
    out.mkdir(parents=True, exist_ok=True)
    if parts == 1:
        paths = {"run": out / "run.parquet", "qrels": out / "qrels.parquet"}
    else:
        paths = {"run": out / "run", "qrels": out / "qrels"}
        for p in paths.values():
            p.mkdir(exist_ok=True)
    counts = {"run": 0, "qrels": 0}
    bytes_per_row: dict[str, float] = {}
    writers: dict[str, Any] = {}
    try:
        for first in range(0, nq, per_chunk):
            part = first // per_part
            for name, table in zip(("run", "qrels"), _chunk(first, min(per_chunk, nq - first), docs_per_query, seed)):
                target = paths[name] if parts == 1 else paths[name] / f"part-{part:03d}.parquet"
                w = writers.get(name)
                if w is not None and w.where != str(target):
                    w.close()
                    w = None
                if w is None:
                    w = writers[name] = pq.ParquetWriter(str(target), table.schema)
                w.write_table(table, row_group_size=ROW_GROUP_ROWS)
                counts[name] += table.num_rows
                bytes_per_row.setdefault(name, python_bytes_per_row(table))
    finally:
        for w in writers.values():
            w.close()
    disk = sum(f.stat().st_size for p in paths.values() for f in ([p] if p.is_file() else p.glob("*.parquet")))
    python = sum(counts[n] * bytes_per_row[n] for n in counts)
    return {"run": str(paths["run"]), "qrels": str(paths["qrels"]), "run_rows": counts["run"],
            "qrels_rows": counts["qrels"], "disk_bytes": disk, "python_bytes": python}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, required=True, help="run rows (qrels: about half as many)")
    ap.add_argument("--out", type=Path, required=True, help="a folder outside git, e.g. /tmp/ranklens_100m")
    ap.add_argument("--docs-per-query", type=int, default=100)
    ap.add_argument("--parts", type=int, default=1, help="1: two files; more: two datasets of this many parts")
    args = ap.parse_args(argv)
    done = write_inputs(args.out, args.rows, args.docs_per_query, args.parts)
    print(f"run {done['run']} ({done['run_rows']:,} rows), qrels {done['qrels']} ({done['qrels_rows']:,} rows); "
          f"{done['disk_bytes'] / 1e9:.2f} GB on disk, about {done['python_bytes'] / 1e9:.1f} GB as Python objects")


if __name__ == "__main__":
    main()
