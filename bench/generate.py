"""Synthetic benchmark collections: qrels and runs with a fixed seed, written as real tools write them.

Every query has a *pool* of ``depth + 20`` candidate documents. Qrels judge about ``qrels_per_query``
documents of the pool (mostly near its head, a few never retrieved), with graded labels 0–3 and at
least one relevant document per query. Run ``k`` retrieves the ``depth`` pool documents with the
smallest noisy key ``pool index + noise_k``, so relevant documents tend to rank high, and each run of
a collection differs. Scores strictly decrease down a ranking (no ties), except in a ``ties`` shape
where five neighbours share each score. TREC lines are ``qid Q0 docid rank score tag`` and
``qid 0 docid label``, single spaces; the Parquet variant holds the same rows in columns.

Generation is vectorised (numpy draws, Arrow string kernels, whole buffers written at once), so the
10M-line M collection takes seconds per file. Data is cached: a directory whose ``manifest.json``
matches is not written again.

    python -m bench.generate --shapes S,M --runs 10
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

__all__ = ["SCALING", "SHAPES", "Shape", "ensure", "parse_shape", "qrels_path", "run_path"]

GENERATOR_VERSION = 1
DATA_DIR = Path(__file__).resolve().parent / "data"
EXTRA_POOL = 20  # judged-but-never-retrieved candidates per query
DOC_SPACE = 10**8  # document numbers live in [0, DOC_SPACE)
DOC_STEP = 7_919  # prime, coprime with DOC_SPACE: pool documents of one query are distinct
CHUNK_ROWS = 1_000_000  # rows formatted and written at a time


@dataclass(frozen=True)
class Shape:
    """A synthetic collection: ``n_queries`` queries with ``depth`` retrieved documents each."""

    name: str
    n_queries: int
    depth: int
    qrels_per_query: int = 50
    ties: bool = False
    format: str = "trec"  # or "parquet"

    @property
    def lines(self) -> int:
        """Rows of one run."""
        return self.n_queries * self.depth

    @property
    def seed(self) -> int:
        """Derived from the data parameters only, so a Parquet variant holds the same rows."""
        key = f"{self.n_queries}x{self.depth}/{self.qrels_per_query}/{self.ties}"
        return zlib.crc32(key.encode())

    @property
    def suffix(self) -> str:
        return ".parquet" if self.format == "parquet" else ".txt"

    def describe(self) -> str:
        kind = ", many ties" if self.ties else ""
        kind += ", Parquet" if self.format == "parquet" else ""
        return f"{self.n_queries:,} queries × {self.depth:,} docs ({_millions(self.lines)} run lines{kind})"


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("S", 1_000, 100),
        Shape("M", 10_000, 1_000),
        Shape("W", 100_000, 100),
        Shape("T", 1_000, 100, ties=True),
        Shape("Mpq", 10_000, 1_000, format="parquet"),
        Shape("L1M", 1_000, 1_000),
        Shape("L2M", 2_000, 1_000),
        Shape("L5M", 5_000, 1_000),
        Shape("L20M", 20_000, 1_000),
        Shape("XL", 100_000, 1_000),  # 100M lines (~4 GB): the streaming check, not part of `make bench`
    )
}
#: The scaling series: 1M, 2M, 5M, 10M (= M) and 20M lines, 1,000 documents per query.
SCALING: tuple[str, ...] = ("L1M", "L2M", "L5M", "M", "L20M")


def parse_shape(spec: str) -> Shape:
    """A named shape (``S``, ``M`` …) or ``QxD`` (``20x10``: 20 queries × 10 docs; suffix ``t`` for ties,
    ``pq`` for Parquet: ``20x10t``, ``20x10pq``)."""
    spec = spec.strip()
    if spec in SHAPES:
        return SHAPES[spec]
    body, fmt = (spec[:-2], "parquet") if spec.endswith("pq") else (spec, "trec")
    body, ties = (body[:-1], True) if body.endswith("t") else (body, False)
    try:
        queries, depth = (int(part) for part in body.lower().split("x"))
    except ValueError:
        raise SystemExit(f"unknown shape {spec!r}: use one of {', '.join(SHAPES)} or QUERIESxDEPTH (e.g. 20x10)") from None
    return Shape(spec, queries, depth, qrels_per_query=min(50, depth + EXTRA_POOL), ties=ties, format=fmt)


def qrels_path(shape: Shape, data_dir: Path = DATA_DIR) -> Path:
    return data_dir / shape.name / f"qrels{shape.suffix}"


def run_path(shape: Shape, k: int, data_dir: Path = DATA_DIR) -> Path:
    """The ``k``-th run (1-based) of a shape."""
    return data_dir / shape.name / f"run-{k:02d}{shape.suffix}"


def ensure(shape: Shape, n_runs: int = 1, data_dir: Path = DATA_DIR, *, log: bool = True) -> Path:
    """Write the qrels and runs 1..n_runs of ``shape`` unless they are already there; return the directory."""
    directory = data_dir / shape.name
    manifest_path = directory / "manifest.json"
    wanted = {"version": GENERATOR_VERSION, "shape": asdict(shape), "lines": shape.lines}
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    fresh = {k: manifest.get(k) for k in wanted} != wanted or not qrels_path(shape, data_dir).exists()
    done = 0 if fresh else int(manifest.get("runs", 0))
    directory.mkdir(parents=True, exist_ok=True)
    pool = _Pool(shape)
    if fresh:
        _timed(log, f"{shape.name}: qrels", lambda: _write_qrels(shape, pool, qrels_path(shape, data_dir)))
    for k in range(1, n_runs + 1):
        if k > done or not run_path(shape, k, data_dir).exists():
            _timed(log, f"{shape.name}: run {k}", lambda k=k: _write_run(shape, pool, k, run_path(shape, k, data_dir)))
        done = max(done, k)
        manifest_path.write_text(json.dumps(dict(wanted, runs=done), indent=2) + "\n")  # an interruption resumes here
    return directory


# --------------------------------------------------------------------------------------------- content


class _Pool:
    """The candidate documents of every query and their qrels, drawn once per shape."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.size = shape.depth + EXTRA_POOL
        rng = np.random.default_rng([shape.seed, 0])
        nq, size = shape.n_queries, self.size
        self.offset = rng.integers(0, DOC_SPACE, nq, dtype=np.int64)
        index = np.arange(size)
        head = 0.9 * np.exp(-index / 20.0)
        base = max(0.0, (shape.qrels_per_query - head.sum()) / size)
        judged = rng.random((nq, size)) < np.minimum(1.0, head + base)
        relevant = rng.random((nq, size)) < 0.15 + 0.6 * np.exp(-index / 30.0)
        grade = rng.choice(np.array([1, 2, 3], dtype=np.int8), size=(nq, size), p=[0.5, 0.3, 0.2])
        labels = np.where(relevant, grade, 0).astype(np.int8)
        forced = rng.integers(0, size, nq)  # one relevant document per query, anywhere in the pool
        rows = np.arange(nq)
        judged[rows, forced] = True
        labels[rows, forced] = np.maximum(labels[rows, forced], 1)
        self.judged = judged
        self.labels = labels

    def doc_numbers(self, rows: np.ndarray, index: np.ndarray) -> np.ndarray:
        return (self.offset[rows] + index.astype(np.int64) * DOC_STEP) % DOC_SPACE

    def ranking(self, k: int) -> np.ndarray:
        """Pool indexes retrieved by run ``k``, best first: a ``(n_queries, depth)`` matrix."""
        rng = np.random.default_rng([self.shape.seed, k])
        spread = self.shape.depth * (0.05 + 0.05 * k)
        keys = np.arange(self.size) + spread * rng.standard_normal((self.shape.n_queries, self.size))
        return np.argsort(keys, axis=1, kind="stable")[:, : self.shape.depth]

    def scores(self, k: int) -> np.ndarray:
        """Scores down each ranking: strictly decreasing, or five-way ties in a ``ties`` shape."""
        depth = self.shape.depth
        position = np.arange(depth, dtype=np.float64)
        if self.shape.ties:
            return np.tile(np.floor((depth - position) / 5.0), (self.shape.n_queries, 1))
        rng = np.random.default_rng([self.shape.seed, 1000 + k])
        jitter = 0.9 * rng.random((self.shape.n_queries, depth))
        return np.round(depth - position + jitter, 4)  # neighbours differ by > 0.09: no ties after rounding


def _write_qrels(shape: Shape, pool: _Pool, path: Path) -> None:
    rows, index = np.nonzero(pool.judged)  # row-major: grouped by query
    qid = _ids("q", rows)
    doc = _ids("d", pool.doc_numbers(rows, index))
    label = pool.labels[rows, index]
    if shape.format == "parquet":
        _write_parquet(path, pa.table({"query_id": qid, "doc_id": doc, "relevance": pa.array(label)}))
        return
    with _atomic(path) as out:
        for lo in range(0, len(rows), CHUNK_ROWS):
            part = slice(lo, lo + CHUNK_ROWS)
            labels = pc.cast(pa.array(label[part]), pa.string())
            _write_lines(out, [qid[part], pa.scalar("0"), doc[part], labels])


def _write_run(shape: Shape, pool: _Pool, k: int, path: Path) -> None:
    ranking = pool.ranking(k)
    scores = pool.scores(k)
    if shape.ties:  # file order within a tie is not trec_eval's (score desc, docid desc): shuffle it
        order = np.argsort(-scores + 0.5 * np.random.default_rng([shape.seed, 2000 + k]).random(scores.shape), axis=1)
        ranking = np.take_along_axis(ranking, order, axis=1)
    tag = f"bench{k:02d}"
    if shape.format == "parquet":
        rows = np.repeat(np.arange(shape.n_queries), shape.depth)
        table = pa.table(
            {
                "query_id": _ids("q", rows),
                "doc_id": _ids("d", pool.doc_numbers(rows, ranking.ravel())),
                "score": pa.array(scores.ravel()),
            }
        )
        _write_parquet(path, table)
        return
    per_chunk = max(1, CHUNK_ROWS // shape.depth)
    with _atomic(path) as out:
        for q0 in range(0, shape.n_queries, per_chunk):
            block = slice(q0, min(shape.n_queries, q0 + per_chunk))
            rows = np.repeat(np.arange(block.start, block.stop), shape.depth)
            rank = np.tile(np.arange(1, shape.depth + 1), block.stop - block.start)
            fields = [
                _ids("q", rows),
                pa.scalar("Q0"),
                _ids("d", pool.doc_numbers(rows, ranking[block].ravel())),
                pc.cast(pa.array(rank), pa.string()),
                pc.cast(pa.array(scores[block].ravel()), pa.string()),
                pa.scalar(tag),
            ]
            _write_lines(out, fields)


# --------------------------------------------------------------------------------------------- writing


def _ids(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(pa.scalar(prefix), pc.cast(pa.array(numbers), pa.string()), pa.scalar(""))


def _write_lines(out: object, fields: list[pa.Array | pa.Scalar]) -> None:
    """Join the fields with single spaces and write one line per row, as one buffer."""
    lines = pc.binary_join_element_wise(*fields, pa.scalar(" "))
    lines = pc.binary_join_element_wise(lines, pa.scalar(""), pa.scalar("\n"))
    lines = lines.cast(pa.large_string()) if len(lines) > 2**24 else lines
    offsets_type = np.int64 if pa.types.is_large_string(lines.type) else np.int32
    offsets = np.frombuffer(lines.buffers()[1], dtype=offsets_type)[lines.offset : lines.offset + len(lines) + 1]
    out.write(memoryview(lines.buffers()[2])[int(offsets[0]) : int(offsets[-1])])  # type: ignore[attr-defined]


def _write_parquet(path: Path, table: pa.Table) -> None:
    temporary = path.with_name(path.name + ".tmp")
    pq.write_table(table, temporary)
    os.replace(temporary, path)


class _atomic:
    """Write to ``path.tmp`` and move it into place when done, so an interrupted run leaves no half file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.temporary = path.with_name(path.name + ".tmp")

    def __enter__(self) -> object:
        self.handle = open(self.temporary, "wb", buffering=1 << 22)
        return self.handle

    def __exit__(self, kind: object, *_: object) -> None:
        self.handle.close()
        if kind is None:
            os.replace(self.temporary, self.path)
        else:
            self.temporary.unlink(missing_ok=True)


def _timed(log: bool, what: str, action: object) -> None:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    if log:
        print(f"  generated {what} in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)


def _millions(n: int) -> str:
    return f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n:,}"


def iter_shapes(spec: str) -> Iterator[Shape]:
    for name in spec.split(","):
        if name.strip():
            yield parse_shape(name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default="S", help=f"comma-separated: {', '.join(SHAPES)}, or QxD (default S)")
    parser.add_argument("--runs", type=int, default=1, help="runs per shape (default 1; phase 4 uses 10)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    for shape in iter_shapes(args.shapes):
        print(f"{shape.name}: {shape.describe()}", file=sys.stderr)
        ensure(shape, args.runs, args.data_dir)


if __name__ == "__main__":
    main()

