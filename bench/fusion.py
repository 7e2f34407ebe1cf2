"""Fusion speed against ranx: ``python -m bench.fusion --queries 1000 --docs 1000 --repeat 3 --methods rrf,wsum --check``.

Three generated runs of ``queries × docs`` (each run retrieves ``docs`` documents per query out of a pool of
``1.5 × docs``, so documents are missing from some runs). Each library fuses its own in-memory runs (ranx's
``Run``, ranklens's ``Run``; building them is not timed), min-max normalisation; ranx's numba kernels are
warmed on a small fusion first. Prints the best of ``--repeat`` times and the ratio; ``--check`` prints the
largest absolute difference between the two fused runs' scores.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def generate(queries: int, docs: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    pool = int(docs * 1.5)
    doc = np.argsort(rng.random((queries, pool)), axis=1)[:, :docs]
    score = rng.random((queries, docs))
    query = np.repeat(np.arange(queries), docs)
    return query, doc.ravel(), score.ravel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--methods", default="rrf,wsum")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import pyarrow as pa
    import ranx

    from ranklens.data import Run
    from ranklens.fusion import fuse

    qids = np.array([f"q{i}" for i in range(args.queries)])
    dids = np.array([f"d{i}" for i in range(int(args.docs * 1.5))])
    ours, theirs = [], []
    for seed in range(3):
        q, d, s = generate(args.queries, args.docs, seed)
        ours.append(Run.from_arrays(pa.array(qids[q]), pa.array(dids[d]), s, name=f"r{seed}"))
        as_dict: dict[str, dict[str, float]] = {}
        for qi in range(args.queries):
            rows = slice(qi * args.docs, (qi + 1) * args.docs)
            as_dict[str(qids[qi])] = dict(zip(dids[d[rows]].tolist(), s[rows].tolist()))
        theirs.append(ranx.Run(as_dict, name=f"r{seed}"))
    small = [ranx.Run({"q": {"a": 1.0, "b": 0.5}}), ranx.Run({"q": {"b": 1.0, "c": 0.5}})]
    print(f"3 runs × {args.queries} queries × {args.docs} docs, min-max, best of {args.repeat}")
    for method in args.methods.split(","):
        params = {"weights": [0.5, 0.3, 0.2]} if method == "wsum" else {}
        ranx.fuse(small, norm="min-max", method=method, params={"weights": [0.5, 0.5]} if method == "wsum" else {})  # (numba warm-up)
        times_ranx, times_ours = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            want = ranx.fuse(theirs, norm="min-max", method=method, params=params)
            times_ranx.append(time.perf_counter() - t)
            t = time.perf_counter()
            got = fuse(ours, method, norm="min-max", weights=params.get("weights"))
            times_ours.append(time.perf_counter() - t)
        line = f"{method:6s} ranx {min(times_ranx):8.3f} s  ranklens {min(times_ours):8.3f} s  ({min(times_ranx) / min(times_ours):.1f}× faster)"
        if args.check:
            mine = got.run.to_dict()
            diff = max(abs(mine[q][doc] - v) for q, r in want.to_dict().items() for doc, v in r.items())
            line += f"  max score difference {diff:.1e}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
