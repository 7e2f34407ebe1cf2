"""Time ranklens side by side with ranx, pytrec_eval, ir_measures (and the trec_eval binary) in one run.

    python -m bench.run --shapes S,T,M --repeat 3          # the table in docs/benchmarks.md
    python -m bench.run --quick                            # S only, one repetition
    python -m bench.run --scaling                          # 1M..20M lines, plot to docs/benchmarks_scaling.png
    python -m bench.run --quick-cli                        # start-up and S targets of issue 12 (bench/targets.py)
    python -m bench.run --targets                          # every target of issue 12, from the runs above
    python -m bench.run --faces --repeat 5                 # issue 26: every face on the toy collection (bench/faces.py)

``--trec-eval-src DIR`` builds trec_eval from its source tree (bench/trec_eval_build.py) and measures it.

Phases: ``load`` (read qrels and run files), ``ndcg`` (mean nDCG@10 on loaded data), ``four``
(nDCG@10+AP+R@100+RR with per-query values on loaded data), ``many`` (ten runs against the same
qrels, each read then evaluated), ``cli`` (a fresh process: import, read, compute, print). Every cell
is a fresh process per tool and repetition, repetitions interleave the tools, and the first
repetition's values are checked against ranklens before any time is shown. Writes
``bench/out/results.md`` and ``results.json`` (``scaling.*`` in scaling mode).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.agree import check, printed_value
from bench.generate import (
    DATA_DIR,
    SCALING,
    Shape,
    ensure,
    iter_shapes,
    qrels_path,
    run_path,
)
from bench.measure import Finished, exact_rss, spawn
from bench.report import PHASE_TITLES, Row, machine, markdown, to_json
from bench.tools import Tool, available_tools

__all__ = ["main", "measure_shape"]

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = Path(__file__).resolve().parent / "out"
PHASES = tuple(PHASE_TITLES)
RSS_UPPER_BOUND = "peak RSS from wait4, an upper bound that includes the harness's own RSS (no /usr/bin/time)"
_PHASE_NUMBERS = {str(i): p for i, p in enumerate(PHASES, 1)}
TIES_NOTE = "ranx breaks score ties its own way (the others: docid descending, as trec_eval)"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # measure what a user's installation does: byte code cached after the untimed first run (a shell or CI
    # that sets PYTHONDONTWRITEBYTECODE would otherwise make every timed process compile its sources)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def _supports(tool: Tool, phase: str, shape: Shape) -> bool:
    if tool.name == "trec_eval":
        return phase == "cli" and shape.format == "trec"
    return True


def run_once(tool: Tool, phase: str, qrels: str, runs: Sequence[str], timeout: float, scratch: str) -> tuple[Finished, dict[str, Any] | None]:
    """One fresh process: the tool's CLI (phase ``cli``) or ``bench.worker``. Returns what it produced."""
    if phase == "cli":
        finished = spawn(tool.cli(qrels, runs[0]), timeout=timeout, env=_env(), cwd=str(REPO))
        if not finished.ok:
            return finished, None
        return finished, {"seconds": finished.seconds, "printed": printed_value(finished.stdout)}
    out = os.path.join(scratch, f"{tool.name}-{phase}.json")
    argv = [sys.executable, "-m", "bench.worker", tool.name, phase, out, qrels, *(runs if phase == "many" else runs[:1])]
    finished = spawn(argv, timeout=timeout, env=_env(), cwd=str(REPO))
    if not finished.ok:
        return finished, None
    with open(out) as handle:
        return finished, json.load(handle)


def measure_shape(
    shape: Shape,
    phases: Sequence[str],
    tools: Sequence[Tool],
    *,
    repeat: int,
    timeout: float,
    data_dir: Path,
    log: bool = True,
) -> list[Row]:
    """Every requested phase of one shape for every tool; rows carry times, memory and agreement."""
    n_runs = 10 if "many" in phases else 1
    ensure(shape, n_runs, data_dir, log=log)
    qrels = str(qrels_path(shape, data_dir))
    runs = [str(run_path(shape, k, data_dir)) for k in range(1, n_runs + 1)]
    expected = {"ranx": TIES_NOTE} if shape.ties else {}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ranklens-bench-") as scratch:
        for phase in phases:
            group = {t.name: Row(shape.name, phase, t.name) for t in tools if _supports(t, phase, shape)}
            payloads: dict[str, dict[str, Any] | None] = {}
            for rep in range(repeat):
                for tool in (t for t in tools if t.name in group and not group[t.name].failure):
                    _say(log, f"[{shape.name}] {PHASE_TITLES[phase]}: {tool.name} ({rep + 1}/{repeat})")
                    finished, payload = run_once(tool, phase, qrels, runs, timeout, scratch)
                    row = group[tool.name]
                    if payload is None:
                        row.failure = finished.failure()
                        _say(log, f"    FAILED: {row.failure}")
                        continue
                    row.seconds.append(float(payload["seconds"]))
                    row.rss_mb.append(finished.peak_rss_mb)
                    if rep == 0:
                        payloads[tool.name] = payload
                if rep == 0:  # agreement first: no time is shown for a cell before its values are checked
                    for name, agreement in check(phase, {n: payloads.get(n) for n in group}, expected=expected).items():
                        group[name].agreement = agreement
                        if agreement.bad:
                            _loud(f"{shape.name} / {PHASE_TITLES[phase]}: {name} DISAGREES: {agreement.detail}")
            rows.extend(group.values())
            for row in group.values():
                seconds = f"{row.median:.3f} s" if row.median is not None else row.failure
                rss = f"{row.peak_rss:.0f} MB" if row.peak_rss is not None else "—"
                _say(log, f"  = {row.tool:12s} {seconds}  peak {rss}  {row.agreement.cell()}")
    return rows


def warm_up(tools: Sequence[Tool], data_dir: Path, timeout: float, log: bool) -> None:
    """Run every tool once on a tiny collection, untimed, so that on-disk caches (numba's, for ranx)
    are filled before anything is measured: the measured processes then pay loading, not compiling."""
    shape = Shape("warmup", 20, 10, qrels_per_query=30)
    ensure(shape, 1, data_dir, log=False)
    qrels, runs = str(qrels_path(shape, data_dir)), [str(run_path(shape, 1, data_dir))]
    with tempfile.TemporaryDirectory(prefix="ranklens-bench-") as scratch:
        for tool in tools:
            _say(log, f"warming up {tool.name}")
            for phase in ("four", "cli") if tool.name != "trec_eval" else ("cli",):
                finished, _ = run_once(tool, phase, qrels, runs, timeout, scratch)
                if not finished.ok:
                    _say(log, f"    warm-up of {tool.name} failed: {finished.failure()}")


def _say(log: bool, text: str) -> None:
    if log:
        print(text, file=sys.stderr, flush=True)


def _loud(text: str) -> None:
    bar = "!" * 100
    print(f"\n{bar}\n!!! {text}\n{bar}\n", file=sys.stderr, flush=True)


def _phases(spec: str) -> list[str]:
    chosen = [_PHASE_NUMBERS.get(p.strip(), p.strip()) for p in spec.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in PHASES]
    if unknown:
        raise SystemExit(f"unknown phase(s) {', '.join(unknown)}; choose from {', '.join(PHASES)} (or 1-5)")
    return chosen


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", help="comma-separated shapes: S, M, W, T (ties), Mpq (Parquet M), or QxD (default S,T,M)")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"comma-separated: {', '.join(PHASES)} or 1-5 (default all)")
    parser.add_argument("--tools", help="comma-separated subset of ranklens, pytrec_eval, ranx, ir_measures, trec_eval")
    parser.add_argument("--repeat", type=int, help="repetitions per cell; the median is reported (default 3)")
    parser.add_argument("--quick", action="store_true", help="shape S, one repetition (unless given)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per process (default 3600)")
    parser.add_argument("--scaling", action="store_true", help="time ranklens and one peer over 1M..20M lines and plot")
    parser.add_argument("--scaling-peer", default="pytrec_eval", help="the peer of the scaling series (default pytrec_eval)")
    parser.add_argument("--plot", type=Path, default=REPO / "docs" / "benchmarks_scaling.png", help="where the scaling plot goes")
    parser.add_argument("--name", default="results", help="output file stem in --out-dir (default results; scaling in scaling mode)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up (fills numba's cache for ranx)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--trec-eval-src", type=Path, metavar="DIR", help="build trec_eval from this source tree (usnistgov/trec_eval) and use it")
    parser.add_argument("--quick-cli", action="store_true", help="issue 12's start-up targets: --help, toy eval, S vs trec_eval and pytrec_eval (--shapes: the S stand-in)")
    parser.add_argument("--faces", action="store_true", help="issue 26: every face on the toy collection, wall and CPU, and trec-eval on S (--shapes: the S stand-in, 'none' to skip)")
    parser.add_argument("--targets", action="store_true", help="every target of issue 12 from earlier runs in --out-dir, timing compare on M (--shapes: the M,W,Mpq stand-ins)")
    return parser


def main(argv: Sequence[str] | None = None) -> list[Row]:
    args = _parser().parse_args(argv)
    if threading.current_thread() is threading.main_thread():  # SIGTERM stops the measured process too
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.trec_eval_src is not None:
        from bench import tools as tools_module
        from bench.trec_eval_build import build

        tools_module.TREC_EVAL_OVERRIDE = build(args.trec_eval_src, log=not args.quiet)
    if args.faces:
        return _faces_mode(args, argv)
    if args.quick_cli or args.targets:
        return _targets_mode(args, argv)
    repeat = args.repeat or (1 if args.quick else 3)
    tool_names: list[str] | None
    if args.scaling:
        tool_names = ["ranklens", args.scaling_peer]
        shape_spec, phases, stem = ",".join(SCALING), ["load", "ndcg", "cli"], "scaling"
    else:
        tool_names = args.tools.split(",") if args.tools else None
        shape_spec, phases, stem = args.shapes or ("S" if args.quick else "S,T,M"), _phases(args.phases), args.name
    tools, skipped = available_tools(tool_names)
    _skipped(skipped, args.quiet)
    shapes = list(iter_shapes(shape_spec))
    if not args.no_warmup:
        warm_up(tools, args.data_dir, args.timeout, not args.quiet)
    rows: list[Row] = []
    for shape in shapes:
        _say(not args.quiet, f"== {shape.name}: {shape.describe()}")
        rows += measure_shape(shape, phases, tools, repeat=repeat, timeout=args.timeout, data_dir=args.data_dir, log=not args.quiet)
    meta = {
        "machine": machine(),
        "versions": {t.name: t.version() for t in tools},
        "command": "python -m bench.run " + shlex.join(list(sys.argv[1:] if argv is None else argv)),
        "repeat": repeat,
        "skipped": skipped,
        "rss": "peak RSS of each process alone (/usr/bin/time -f %M)" if exact_rss else RSS_UPPER_BOUND,
    }
    described = {s.name: s.describe() for s in shapes}
    report = markdown(rows, shapes=described, meta=meta)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{stem}.md").write_text(report)
    (args.out_dir / f"{stem}.json").write_text(json.dumps(to_json(rows, shapes=described, meta=meta), indent=1) + "\n")
    if args.scaling:
        from bench.scaling import plot

        plot(rows, {s.name: s.lines for s in shapes}, args.plot)
        _say(not args.quiet, f"plot written to {args.plot}")
    if not args.quiet:
        print(report)
    bad = [r for r in rows if r.agreement.bad]
    if bad:
        _loud(f"{len(bad)} cell(s) disagree with ranklens: see the table")
    return rows


def _skipped(skipped: Sequence[str], quiet: bool) -> None:
    for note in skipped:
        if note.startswith("trec_eval"):
            print(note, file=sys.stderr, flush=True)  # one line, even with --quiet: the peer that matters most
        else:
            _say(not quiet, f"skipping {note}")


def _machine_line(m: dict[str, str]) -> str:
    return f"{m['cpu']}, {m['cores']} cores, {m['memory']} RAM, {m['os']}, Python {m['python']} ({m['date']})"


def _tree() -> str:
    """The commit measured, and whether the work tree has uncommitted changes."""
    import subprocess

    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"{rev} plus uncommitted work" if dirty else rev


def _targets_mode(args: argparse.Namespace, argv: Sequence[str] | None) -> list[Row]:
    """``--quick-cli`` and ``--targets`` (bench/targets.py): a table of targets instead of phase tables."""
    from bench import targets as tg

    log = (lambda text: None) if args.quiet else (lambda text: _say(True, text))
    command = "python -m bench.run " + shlex.join(list(sys.argv[1:] if argv is None else argv))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    host = machine()
    meta: dict[str, Any] = {"machine": host, "command": command, "tree": _tree()}
    if args.quick_cli:
        shapes = list(iter_shapes(args.shapes or "S"))
        if len(shapes) != 1:
            raise SystemExit("--quick-cli takes one shape (the stand-in for S)")
        tools, skipped = available_tools(args.tools.split(",") if args.tools else ["ranklens", "pytrec_eval", "trec_eval"])
        _skipped(skipped, args.quiet)
        missing = {note.split(":")[0]: note.split(":", 1)[1].strip() for note in skipped}
        repeat = args.repeat or 7
        targets, cells = tg.quick_cli(
            shapes[0], tools, repeat=repeat, timeout=args.timeout, data_dir=args.data_dir, env=_env(), repo=REPO, missing=missing, log=log
        )
        meta |= {"repeat": repeat, "versions": {t.name: t.version() for t in tools}, "shape": shapes[0].describe()}
        stem, details = "quick_cli", tg.cells_markdown(cells)
    else:
        roles = dict(zip(("M", "W", "Mpq"), (s.strip() for s in (args.shapes or "M,W,Mpq").split(","))))
        if len(roles) != 3:
            raise SystemExit("--targets --shapes takes three shapes: the M, W and Mpq stand-ins")
        repeat = args.repeat or 5
        cells = tg.compare_vs_evals(
            next(iter_shapes(roles["M"])), repeat=repeat, timeout=args.timeout, data_dir=args.data_dir, env=_env(), repo=REPO, log=log
        )
        parquet = [] if roles["Mpq"] == "none" else tg.parquet_vs_text(  # (none: not measured)
            next(iter_shapes(roles["M"])), next(iter_shapes(roles["Mpq"])), repeat=repeat, timeout=args.timeout,
            data_dir=args.data_dir, env=_env(), repo=REPO, log=log,
        )
        targets = tg.quick_targets(args.out_dir) + tg.remaining(args.out_dir, roles, cells, parquet)
        cells = cells + parquet
        meta |= {"repeat": repeat, "roles": roles}
        stem, details = "targets", tg.cells_markdown(cells)
    text = f"{tg.table(targets)}\n\n{details}\n"
    (args.out_dir / f"{stem}.md").write_text(f"Command: `{command}`; tree: {meta['tree']}; {_machine_line(host)}\n\n{text}")
    data = {"meta": meta, "targets": [vars(t) for t in targets], "cells": tg.cells_json(cells)}
    (args.out_dir / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n")
    print(text)
    return []


def _faces_mode(args: argparse.Namespace, argv: Sequence[str] | None) -> list[Row]:
    """``--faces`` (bench/faces.py): every face on the toy collection, and trec-eval on S against trec_eval."""
    from bench.faces import faces, faces_markdown
    from bench.tools import trec_eval_binary

    log = (lambda text: None) if args.quiet else (lambda text: _say(True, text))
    command = "python -m bench.run " + shlex.join(list(sys.argv[1:] if argv is None else argv))
    spec = args.shapes or "S"
    shape = None if spec == "none" else next(iter(iter_shapes(spec)))
    repeat = args.repeat or 5
    cells = faces(shape, repeat=repeat, timeout=args.timeout, data_dir=args.data_dir, env=_env(), repo=REPO, log=log)
    note = "" if trec_eval_binary() or shape is None else (
        "trec_eval: no binary here (build one with --trec-eval-src DIR or set $TREC_EVAL); its rows are not measured."
    )
    host = machine()
    text = faces_markdown(cells, note)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    header = f"Command: `{command}`; tree: {_tree()}; {_machine_line(host)}; median of {repeat} fresh processes\n\n"
    (args.out_dir / "faces.md").write_text(header + text + "\n")
    data = {
        "meta": {"machine": host, "command": command, "repeat": repeat},
        "cells": [{"name": c.name, "argv": c.argv, "wall": c.wall, "cpu": c.cpu, "failure": c.failure} for c in cells],
    }
    (args.out_dir / "faces.json").write_text(json.dumps(data, indent=1) + "\n")
    print(text)
    return []


if __name__ == "__main__":
    sys.exit(1 if any(r.agreement.bad for r in main()) else 0)
