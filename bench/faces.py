"""Issue 26's start-up targets: every face of ranklens on the bundled toy collection, and ``trec-eval`` on S.

    python -m bench.run --faces [--repeat 5] [--shapes S] [--trec-eval-src DIR]

Each command runs in fresh processes (one untimed run first, for the byte-code and page caches, then
``--repeat`` interleaved runs; default 5) and is reported as the median wall time **and** the median CPU time
(user + system, of the process and its children, from ``wait4``): on a loaded machine the wall time measures
the queue, the CPU time the work. ``trec-eval`` on S runs trec_eval's default measures and ``-q -m all_trec``
against the trec_eval binary (``bench.tools.trec_eval_binary``) when there is one, its output compared with
ranklens' line by line before a time is used. Writes ``faces.md`` and ``faces.json`` in ``bench/out``.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.generate import Shape, ensure, qrels_path, run_path
from bench.measure import spawn
from bench.tools import Ranklens, trec_eval_binary

__all__ = ["UNDEFINED", "FaceCell", "agreement", "faces", "faces_markdown"]

#: issue 26: every command on the toy collection
TOY_LIMIT = 0.10
TOY = ("examples/toy.qrels", "examples/toy_bm25.run", "examples/toy_dense.run")


@dataclass
class FaceCell:
    """One command timed in fresh processes: wall and CPU seconds of each run."""

    name: str
    argv: list[str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    failure: str | None = None
    stdout: str = ""
    agreement: str = ""

    @property
    def median_wall(self) -> float | None:
        return statistics.median(self.wall) if self.wall and not self.failure else None

    @property
    def median_cpu(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu and not self.failure else None


def _time(cells: list[FaceCell], repeat: int, *, timeout: float, env: Mapping[str, str], cwd: str, log: Any) -> None:
    for cell in cells:
        log(f"warming up: {cell.name}")
        first = spawn(cell.argv, timeout=timeout, env=env, cwd=cwd)
        if first.returncode not in (0, 1) or first.timed_out:  # (a gate that fails its rule exits 1)
            cell.failure = first.failure()
        cell.stdout = first.stdout
    for rep in range(repeat):
        for cell in (c for c in cells if not c.failure):
            log(f"{cell.name} ({rep + 1}/{repeat})")
            done = spawn(cell.argv, timeout=timeout, env=env, cwd=cwd)
            if done.returncode not in (0, 1) or done.timed_out:
                cell.failure = done.failure()
                continue
            cell.wall.append(done.seconds)
            cell.cpu.append(done.cpu_seconds)


def faces(
    shape: Shape | None, *, repeat: int, timeout: float, data_dir: Path, env: Mapping[str, str], repo: Path, log: Any
) -> list[FaceCell]:
    """Time every face on the toy collection, and ``trec-eval`` on ``shape`` against trec_eval if present."""
    exe = Ranklens().cli("", "")[0]
    qrels, bm25, dense = TOY
    cells = [
        FaceCell("eval", [exe, "eval", qrels, bm25, dense, "-m", "nDCG@10", "AP"]),
        FaceCell("trec-eval (official)", [exe, "trec-eval", qrels, bm25]),
        FaceCell("trec-eval (compiled measures)", [exe, "trec-eval", "-m", "ndcg_cut.10", "-m", "map", "-m", "P.5", qrels, bm25]),
        FaceCell("compare", [exe, "compare", qrels, bm25, dense, "-m", "nDCG@10", "AP"]),
        FaceCell("gate", [exe, "gate", qrels, bm25, "--min", "nDCG@10=0.1"]),
        FaceCell("gate (baseline, --alpha)", [exe, "gate", qrels, bm25, "--baseline", dense, "--max-drop", "nDCG@10=0.5",
                                               "--alpha", "0.05"]),
        FaceCell("explain", [exe, "explain", qrels, dense, "--query", "q3", "-m", "nDCG@5"]),
    ]
    peers: list[tuple[FaceCell, FaceCell]] = []
    if shape is not None:
        ensure(shape, 1, data_dir, log=False)
        q, r = str(qrels_path(shape, data_dir)), str(run_path(shape, 1, data_dir))
        binary = trec_eval_binary()
        for label, opts in (("default", []), ("-q -m all_trec", ["-q", "-m", "all_trec"])):
            mine = FaceCell(f"trec-eval {label} on {shape.name}", [exe, "trec-eval", *opts, q, r])
            cells.append(mine)
            if binary is not None:
                theirs = FaceCell(f"trec_eval {label} on {shape.name}", [binary, *opts, q, r])
                cells.append(theirs)
                peers.append((mine, theirs))
    _time(cells, repeat, timeout=timeout, env=env, cwd=str(repo), log=log)
    for mine, theirs in peers:  # (the same bytes, or no time is used)
        if not mine.failure and not theirs.failure:
            mine.agreement = theirs.agreement = agreement(mine.stdout, theirs.stdout)
            if mine.agreement.startswith("**"):
                mine.failure = "output differs from trec_eval"
    return cells


#: trec_eval 10.0's te_calc_rbp reads two uninitialised variables (min, max): what an optimised build prints for
#: ``rbp`` is undefined (tests/trec_eval/test_golden.py; ranklens prints the formula with min/max over the gain
#: table, the golden outputs' values)
UNDEFINED = ("rbp ",)


def agreement(mine: str, theirs: str) -> str:
    """``same output`` when the two outputs are the same bytes; ``same output but N rbp lines`` when they
    differ only on the lines trec_eval computes from uninitialised memory (:data:`UNDEFINED`); else
    ``**output differs**`` with the first differing line.

    >>> agreement("a\\t1\\n", "a\\t1\\n"), agreement("rbp   \\tq1\\t0.3\\n", "rbp   \\tq1\\t0.1\\n")
    ('same output', 'same output but 1 rbp lines (trec_eval reads uninitialised memory there)')
    """
    if mine == theirs:
        return "same output"
    a, b = mine.splitlines(), theirs.splitlines()
    if len(a) != len(b):
        return f"**output differs** ({len(a)} lines vs {len(b)})"
    undefined = 0
    for x, y in zip(a, b):
        if x != y:
            if not (x.startswith(UNDEFINED) and x.split("\t")[:2] == y.split("\t")[:2]):
                return f"**output differs** ({x!r} vs {y!r})"
            undefined += 1
    return f"same output but {undefined} rbp lines (trec_eval reads uninitialised memory there)"


def _s(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "—"


def faces_markdown(cells: list[FaceCell], trec_eval_note: str) -> str:
    """The table: command, median wall and CPU seconds, the toy target and whether it is met."""
    lines = ["| command | median wall s | median CPU s | n | target | met? | note |", "|---|---|---|---|---|---|---|"]
    by_name = {c.name: c for c in cells}
    for c in cells:
        toy = " on " not in c.name
        target, met = (f"≤ {TOY_LIMIT:.2f} s", "—") if toy else ("", "")
        if toy and c.median_wall is not None:
            met = "yes" if c.median_wall <= TOY_LIMIT else "**no**"
        if c.name.startswith("trec-eval ") and " on " in c.name:
            peer = by_name.get(c.name.replace("trec-eval", "trec_eval", 1))
            if peer is not None and peer.median_wall and c.median_wall and peer.median_cpu and c.median_cpu:
                ratio, cpu = c.median_wall / peer.median_wall, c.median_cpu / peer.median_cpu
                limit = 1.0 if "all_trec" not in c.name else 2.0
                target = f"≤ {limit:g}× trec_eval"
                met = ("yes" if ratio <= limit else "**no**") + f" (wall {ratio:.2f}×, CPU {cpu:.2f}×)"
        note = c.failure or c.agreement
        lines.append(f"| `{c.name}` | {_s(c.median_wall)} | {_s(c.median_cpu)} | {len(c.wall)} | {target} | {met} | {note} |")
    if trec_eval_note:
        lines.append("")
        lines.append(trec_eval_note)
    return "\n".join(lines)
