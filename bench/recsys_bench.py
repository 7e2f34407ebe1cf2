"""The ``recsys`` scenario (issues 16 and 30): every recommender measure against nDCG@10 alone, time and memory.

    python -m bench.recsys_bench --users 100000                 # streamed from Parquet files in /tmp
    python -m bench.recsys_bench --users 1000000 --list 100     # issue 30's size (target: peak RSS ≤ 2 GB)
    python -m bench.recsys_bench --users 50000 --mode memory    # the run read whole (Evaluator(...)(run))

Data (seeded): ``users`` users with a ranked list of ``list`` items each over a catalog of ``items`` items (Zipf
popularity, a genre and 8 numeric features each), ``train`` training interactions per user and 5 test items per
user (graded 0–2). It is generated once, a block of users at a time, into Parquet files under ``--data`` (default
``/tmp/ranklens_recsys/…``; never in the repository) by a separate process, so the measured processes hold no
generated table.

Each evaluation runs in a fresh process (so its peak is its own): build the Evaluator (qrels, the training data
and the catalog read there, once) and evaluate the run file: ``--mode stream`` (default) reads it by Parquet
row batches and evaluates users a block at a time (``evaluate_run_file(..., stream=True)``); ``--mode memory``
reads it whole first (``read_run`` then ``Evaluator(...)(run)``, which blocks users above 50k). Printed per
process: wall time, and the peak RSS twice: ``getrusage(RUSAGE_SELF).ru_maxrss`` in the child and the
kernel's ``VmHWM`` (``/proc/self/status``), which must agree (checked), and the parent's
``getrusage(RUSAGE_CHILDREN)`` high-water mark. The all-measures set is nDCG@10, Novelty@10, ARP@10, ILD@10,
Serendipity@10, F1@10, FallOut@10, AUC, AUC(pooled=true), Coverage@10, EntropyCoverage@10, Gini@10 and
Personalization@10 with ``train=``, ``items=`` and ``exclude_seen=True``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ALL = [
    "nDCG@10", "Novelty@10", "ARP@10", "ILD@10", "Serendipity@10", "F1@10", "FallOut@10", "AUC", "AUC(pooled=true)",
    "Coverage@10", "EntropyCoverage@10", "Gini@10", "Personalization@10",
]
CHUNK_USERS = 50_000


def data_dir(args: argparse.Namespace) -> str:
    return args.data or f"/tmp/ranklens_recsys/u{args.users}_l{args.list}_i{args.items}_t{args.train}"


def generate(path: str, users: int, length: int, items: int, train_per_user: int, seed: int = 16) -> None:
    """Write run.parquet, qrels.parquet, train.parquet and items.parquet under ``path``, CHUNK_USERS users at a
    time (rows grouped by user, as a recommender writes them)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(path, exist_ok=True)
    pop = 1.0 / np.arange(1, items + 1) ** 0.8
    pop /= pop.sum()
    item_ids = pa.array(np.char.add("i", np.arange(items).astype(str)))
    coprime = np.array([s for s in (1, 3, 7, 11, 13, 17, 19, 23, 29, 31) if np.gcd(s, items) == 1], dtype=np.int32)
    writers: dict[str, pq.ParquetWriter] = {}

    def write(name: str, table: pa.Table) -> None:
        if name not in writers:
            writers[name] = pq.ParquetWriter(os.path.join(path, f"{name}.parquet"), table.schema)
        writers[name].write_table(table, row_group_size=1 << 20)

    for lo in range(0, users, CHUNK_USERS):
        n_users = min(CHUNK_USERS, users - lo)
        rng = np.random.default_rng([seed, lo])
        user_ids = pa.array(np.char.add("u", np.arange(lo, lo + n_users).astype(str)))

        def lists(n: int) -> pa.Array:
            # n distinct items per user: a start drawn by popularity, then a stride coprime with the catalog size
            starts = rng.choice(items, size=n_users, p=pop).astype(np.int32)  # noqa: B023
            strides = rng.choice(coprime, size=n_users)  # noqa: B023
            codes = strides[:, None] * np.arange(n, dtype=np.int32)[None, :]
            codes += starts[:, None]
            codes %= np.int32(items)
            return item_ids.take(pa.array(codes.reshape(-1)))

        def owners(n: int) -> pa.Array:
            return user_ids.take(pa.array(np.repeat(np.arange(n_users, dtype=np.int32), n)))  # noqa: B023

        write("run", pa.table({"user": owners(length), "item": lists(length), "score": pa.array(rng.random(n_users * length))}))
        write("qrels", pa.table({"user": owners(5), "item": lists(5), "rel": pa.array(rng.integers(0, 3, n_users * 5))}))
        write("train", pa.table({"user": owners(train_per_user), "item": lists(train_per_user)}))
    for w in writers.values():
        w.close()
    rng = np.random.default_rng(seed)
    catalog = {"item": item_ids, "genre": pa.array(np.char.add("g", (np.arange(items) % 18).astype(str)))}
    catalog.update({f"f{j}": pa.array(rng.random(items)) for j in range(8)})
    pq.write_table(pa.table(catalog), os.path.join(path, "items.parquet"))


def peak_mb() -> tuple[float, float]:
    """(ru_maxrss, VmHWM) of this process in MB."""
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    hwm = float("nan")
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024.0
    return ru, hwm


def child(path: str, measures: list[str], mode: str, side: bool) -> None:
    """One evaluation in this (fresh) process; prints one JSON line."""
    start = time.perf_counter()
    import ranklens
    from ranklens.evaluation import evaluate_run_file

    qrels = ranklens.read_qrels(os.path.join(path, "qrels.parquet"))
    extra = dict(train=os.path.join(path, "train.parquet"), items=os.path.join(path, "items.parquet"), exclude_seen=True) if side else {}
    ev = ranklens.Evaluator(measures, qrels, **extra)
    built = time.perf_counter()
    run_path = os.path.join(path, "run.parquet")
    if mode == "stream":
        res = evaluate_run_file(ev, run_path, stream=True)
    else:
        res = ev(ranklens.read_run(run_path), warn=False)
    done = time.perf_counter()
    ru, hwm = peak_mb()
    print(json.dumps({
        "measures": len(measures), "mode": mode, "build_s": round(built - start, 2), "eval_s": round(done - built, 2),
        "total_s": round(done - start, 2), "ru_maxrss_mb": round(ru, 1), "vmhwm_mb": round(hwm, 1),
        "users": len(res.query_ids), "values": {str(m): v for m, v in zip(res.measures, res.aggregates)},
    }))


def run_child(path: str, measures: list[str], mode: str, side: bool) -> dict[str, object]:
    cmd = [sys.executable, "-m", "bench.recsys_bench", "--child", path, "--mode", mode, "--measures", ",".join(measures)]
    if side:
        cmd.append("--side")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    result["children_maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0, 1)
    ru, hwm = float(result["ru_maxrss_mb"]), float(result["vmhwm_mb"])  # type: ignore[arg-type]
    result["rss_agree"] = abs(ru - hwm) <= 0.01 * max(ru, hwm) + 1.0
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--list", type=int, default=100, help="items per user's ranked list")
    ap.add_argument("--items", type=int, default=5_000, help="catalog size")
    ap.add_argument("--train", type=int, default=20, help="training interactions per user")
    ap.add_argument("--data", help="where the generated Parquet files are (made when absent)")
    ap.add_argument("--mode", choices=("stream", "memory"), default="stream")
    ap.add_argument("--only-all", action="store_true", help="skip the nDCG@10-alone process")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--measures", help=argparse.SUPPRESS)
    ap.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.measures.split(","), args.mode, args.side)
        return
    path = data_dir(args)
    if not os.path.exists(os.path.join(path, "items.parquet")):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", (
            "import sys; from bench.recsys_bench import generate; "
            f"generate({path!r}, {args.users}, {args.list}, {args.items}, {args.train})"
        )], check=True)
        print(f"generated {path} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    report: dict[str, object] = {
        "scenario": "recsys", "users": args.users, "list": args.list, "items": args.items, "train_per_user": args.train,
        "rows": args.users * args.list, "mode": args.mode, "data": path, "exclude_seen": True,
    }
    if not args.only_all:
        report["nDCG@10"] = run_child(path, ["nDCG@10"], args.mode, False)
    report["all"] = run_child(path, ALL, args.mode, True)
    if not args.only_all:
        report["ratio"] = round(report["all"]["total_s"] / report["nDCG@10"]["total_s"], 2)  # type: ignore[index]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
