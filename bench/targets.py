"""The performance targets of issue 12, measured and checked: one table "target | measured | target value | met?".

    python -m bench.run --quick-cli [--trec-eval-src DIR]   # start-up and S: a few minutes
    python -m bench.run --targets                           # every target: M, W, Mpq from earlier runs

``--quick-cli`` times, as medians of fresh processes (default 7, interleaved), ``ranklens --help``,
``ranklens eval`` on the toy example, and on shape S ``ranklens eval -m nDCG@10`` against trec_eval
(``-m ndcg_cut.10``) and the pytrec_eval one-liner of ``bench.tools``. The printed values of S are
checked against ranklens' before any time is used. Writes ``quick_cli.md`` and ``quick_cli.json``.

``--targets`` reads what ``make bench`` measured before it (``results.json``: S, T, M; ``extra.json``:
Mpq, W; ``quick_cli.json``), times ``ranklens compare`` of two M runs against two ``ranklens eval``
calls and ``ranklens eval`` of Mpq against M as text (interleaved), and prints every target; a target whose numbers are absent is shown as "not measured".
Writes ``targets.md`` and ``targets.json``. No target is judged on a cell whose values disagree.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.agree import check, printed_value
from bench.generate import Shape, ensure, qrels_path, run_path
from bench.measure import Finished, spawn
from bench.tools import TOOLS, Ranklens, Tool

__all__ = ["Cell", "Target", "parquet_vs_text", "quick_cli", "remaining", "table"]

HELP_LIMIT = 0.15
TOY_LIMIT = 0.25
RSS_LIMIT_MB = 500.0  # 0.5 GB, in the MB (2^20 bytes) the harness reports
M_SPEEDUP = 5.0
PARQUET_RATIO = 1.2
API_RSS_RATIO = 0.5
COMPARE_RATIO = 2.0
#: issue 26: ``gate`` and ``compare`` on M at most this many times ``eval``'s time per run evaluated
FACE_RATIO = 1.2


@dataclass
class Target:
    """One row of the table."""

    target: str
    measured: str
    value: str
    met: str


@dataclass
class Cell:
    """One command timed in fresh processes."""

    name: str
    argv: list[str]
    seconds: list[float]
    rss_mb: list[float]
    failure: str | None = None
    printed: float | None = None
    agreement: str = ""
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds and not self.failure else None

    @property
    def median_cpu(self) -> float | None:
        """The median CPU seconds (user + system, the process and its children): on a loaded machine the
        wall time measures the queue, the CPU time the work."""
        return statistics.median(self.cpu) if self.cpu and not self.failure else None

    @property
    def peak_rss(self) -> float | None:
        return max(self.rss_mb) if self.rss_mb and not self.failure else None


def table(targets: Sequence[Target]) -> str:
    lines = ["| target | measured | target value | met? |", "|---|---|---|---|"]
    lines += [f"| {t.target} | {t.measured} | {t.value} | {t.met} |" for t in targets]
    return "\n".join(lines)


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _time_cells(cells: list[Cell], repeat: int, *, timeout: float, env: Mapping[str, str], cwd: str, log: Any) -> None:
    """Each cell once untimed (bytecode and page caches), then ``repeat`` interleaved fresh processes."""
    for cell in cells:
        log(f"warming up: {cell.name}")
        first = spawn(cell.argv, timeout=timeout, env=env, cwd=cwd)
        if not first.ok:
            cell.failure = first.failure()
            log(f"    FAILED: {cell.failure}")
        else:
            cell.printed = printed_value(first.stdout)
    for rep in range(repeat):
        for cell in (c for c in cells if not c.failure):
            log(f"{cell.name} ({rep + 1}/{repeat})")
            finished: Finished = spawn(cell.argv, timeout=timeout, env=env, cwd=cwd)
            if not finished.ok:
                cell.failure = finished.failure()
                log(f"    FAILED: {cell.failure}")
                continue
            cell.seconds.append(finished.seconds)
            cell.rss_mb.append(finished.peak_rss_mb)
            cell.cpu.append(finished.cpu_seconds)


def _agree(cells: Mapping[str, Cell]) -> None:
    payloads = {name: ({"printed": c.printed} if not c.failure else None) for name, c in cells.items()}
    for name, agreement in check("cli", payloads).items():
        cells[name].agreement = agreement.cell()
        if agreement.bad:
            cells[name].failure = f"disagrees: {agreement.detail}"


def _s(value: float | None) -> str:
    return f"{value:.3f} s" if value is not None else "—"


def quick_cli(
    shape: Shape,
    tools: Sequence[Tool],
    *,
    repeat: int,
    timeout: float,
    data_dir: Path,
    env: Mapping[str, str],
    repo: Path,
    missing: Mapping[str, str],
    log: Any,
) -> tuple[list[Target], list[Cell]]:
    """Time the start-up and small-collection commands; the targets they decide, and the cells."""
    ensure(shape, 1, data_dir, log=False)
    ranklens = Ranklens()
    exe = ranklens.cli("", "")[0]
    toy = ["examples/toy.qrels", "examples/toy_bm25.run"]
    cells = [
        Cell("ranklens --help", [exe, "--help"], [], []),
        Cell("ranklens eval (toy)", [exe, "eval", *toy, "-m", "nDCG@10"], [], []),
    ]
    qrels, run = str(qrels_path(shape, data_dir)), str(run_path(shape, 1, data_dir))
    peers: dict[str, Cell] = {}
    for tool in [ranklens, *(t for t in tools if t.name in ("trec_eval", "pytrec_eval"))]:
        peers[tool.name] = Cell(f"{tool.name} on {shape.name}", tool.cli(qrels, run), [], [])
    _time_cells(cells + list(peers.values()), repeat, timeout=timeout, env=env, cwd=str(repo), log=log)
    _agree(peers)
    n = f"median of {repeat}"
    help_cell, toy_cell = cells
    targets = [
        _limit("`ranklens --help`", help_cell, HELP_LIMIT, n),
        _limit("`ranklens eval` toy (`examples/toy.qrels`, 10 queries)", toy_cell, TOY_LIMIT, n),
    ]
    mine = peers["ranklens"]
    for peer, value, strict in (("trec_eval", "≤ trec_eval's wall time", False), ("pytrec_eval", "< pytrec_eval's wall time", True)):
        label = f"`ranklens eval -m nDCG@10` on {shape.name} vs {peer}"
        theirs = peers.get(peer)
        if theirs is None:
            targets.append(Target(label, f"{peer} missing ({missing.get(peer, 'not available')})", value, "n/a"))
            continue
        if mine.median is None or theirs.median is None:
            why = mine.failure or theirs.failure
            targets.append(Target(label, f"failed: {why}", value, "n/a"))
            continue
        ok = mine.median < theirs.median if strict else mine.median <= theirs.median
        ratio = mine.median / theirs.median
        measured = f"{_s(mine.median)} vs {_s(theirs.median)} ({n}; ranklens/{peer} {ratio:.2f}×)"
        targets.append(Target(label, measured, value, _yes(ok)))
    return targets, cells + list(peers.values())


def _limit(label: str, cell: Cell, limit: float, n: str) -> Target:
    value = f"≤ {limit:.2f} s"
    if cell.median is None:
        return Target(label, f"failed: {cell.failure}", value, "n/a")
    return Target(label, f"{_s(cell.median)} ({n})", value, _yes(cell.median <= limit))


def cells_markdown(cells: Sequence[Cell]) -> str:
    lines = ["| command | median s | min–max s | median CPU s | n | peak RSS MB | agreement |", "|---|---|---|---|---|---|---|"]
    for c in cells:
        spread = f"{min(c.seconds):.3f}–{max(c.seconds):.3f}" if c.seconds else "—"
        rss = f"{c.peak_rss:.0f}" if c.peak_rss is not None else "—"
        median = f"{c.median:.3f}" if c.median is not None else (c.failure or "—")
        cpu = _s(c.median_cpu)
        lines.append(f"| {c.name} | {median} | {spread} | {cpu} | {len(c.seconds)} | {rss} | {c.agreement or '—'} |")
    return "\n".join(lines)


def cells_json(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    return [{**asdict(c), "median_s": c.median, "peak_rss_mb": c.peak_rss} for c in cells]


# ----------------------------------------------------------------------------- the targets of make bench


def _rows(out_dir: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in ("results.json", "extra.json"):
        path = out_dir / name
        if path.is_file():
            rows += json.loads(path.read_text()).get("rows", [])
    return rows


def _find(rows: Sequence[Mapping[str, Any]], shape: str, phase: str, tool: str) -> Mapping[str, Any] | None:
    found = [r for r in rows if r["shape"] == shape and r["phase"] == phase and r["tool"] == tool]
    good = [r for r in found if r.get("median_s") is not None and r.get("agreement", {}).get("status") != "DISAGREE"]
    return good[-1] if good else None


def _not_measured(label: str, value: str, what: str) -> Target:
    return Target(label, f"not measured ({what})", value, "n/a")


def compare_vs_evals(shape: Shape, *, repeat: int, timeout: float, data_dir: Path, env: Mapping[str, str], repo: Path, log: Any) -> list[Cell]:
    """``ranklens compare`` of runs 1 and 2 of ``shape``, ``ranklens eval`` of each, and ``ranklens gate`` of
    run 1 (a rule it passes: its exit status is 0), interleaved in fresh processes."""
    ensure(shape, 2, data_dir, log=False)
    exe = Ranklens().cli("", "")[0]
    qrels = str(qrels_path(shape, data_dir))
    r1, r2 = (str(run_path(shape, k, data_dir)) for k in (1, 2))
    cells = [
        Cell(f"ranklens compare on {shape.name} (2 runs)", [exe, "compare", qrels, r1, r2, "-m", "nDCG@10"], [], []),
        Cell(f"ranklens eval on {shape.name} run 1", [exe, "eval", qrels, r1, "-m", "nDCG@10"], [], []),
        Cell(f"ranklens eval on {shape.name} run 2", [exe, "eval", qrels, r2, "-m", "nDCG@10"], [], []),
        Cell(f"ranklens gate on {shape.name} run 1", [exe, "gate", qrels, r1, "--min", "nDCG@10=0"], [], []),
    ]
    _time_cells(cells, repeat, timeout=timeout, env=env, cwd=str(repo), log=log)
    return cells


def parquet_vs_text(
    text: Shape, parquet: Shape, *, repeat: int, timeout: float, data_dir: Path, env: Mapping[str, str], repo: Path, log: Any
) -> list[Cell]:
    """``ranklens eval -m nDCG@10`` of run 1 of ``parquet`` (the Parquet M) and of ``text`` (M as text),
    interleaved in fresh processes of one run, so the ratio does not depend on how busy the machine was
    when each was measured (a shared 2-core machine: the Parquet path decodes on both cores)."""
    exe = Ranklens().cli("", "")[0]
    cells = []
    for shape, what in ((parquet, "Parquet"), (text, "text")):
        ensure(shape, 1, data_dir, log=False)
        argv = [exe, "eval", str(qrels_path(shape, data_dir)), str(run_path(shape, 1, data_dir)), "-m", "nDCG@10"]
        cells.append(Cell(f"ranklens eval on {shape.name} ({what})", argv, [], []))
    _time_cells(cells, repeat, timeout=timeout, env=env, cwd=str(repo), log=log)
    if all(c.printed is not None for c in cells) and cells[0].printed != cells[1].printed:
        cells[0].failure = f"prints nDCG@10 {cells[0].printed}, the text {cells[1].printed}"
    return cells


def remaining(
    out_dir: Path, roles: Mapping[str, str], compare: Sequence[Cell] | None, parquet: Sequence[Cell] | None = None
) -> list[Target]:
    """The targets of issue 12 beyond start-up, from the JSON of earlier runs (``roles``: M, W, Mpq → shape
    name); compare, and Parquet against text, from the cells timed in this run (``compare``, ``parquet``:
    :func:`compare_vs_evals`, :func:`parquet_vs_text`)."""
    rows = _rows(out_dir)
    m, w, mpq = roles["M"], roles["W"], roles["Mpq"]
    out: list[Target] = []

    label, value = f"`ranklens eval` end to end on {m} vs trec_eval", f"≥ {M_SPEEDUP:.0f}× faster"
    mine, te = _find(rows, m, "cli", "ranklens"), _find(rows, m, "cli", "trec_eval")
    if mine and te:
        speed = te["median_s"] / mine["median_s"]
        out.append(Target(label, f"{_s(mine['median_s'])} vs {_s(te['median_s'])}: {speed:.2f}× faster", value, _yes(speed >= M_SPEEDUP)))
    else:
        out.append(_not_measured(label, value, f"{m} CLI of ranklens and trec_eval"))

    for shape, what in ((m, "text"), (mpq, "Parquet")):
        label, value = f"`ranklens eval` peak RSS on {shape} ({what})", f"≤ {RSS_LIMIT_MB / 1000:.1f} GB"
        row = _find(rows, shape, "cli", "ranklens")
        if row and row.get("peak_rss_mb") is not None:
            out.append(Target(label, f"{row['peak_rss_mb']:.0f} MB", value, _yes(row["peak_rss_mb"] <= RSS_LIMIT_MB)))
        else:
            out.append(_not_measured(label, value, f"{shape} CLI"))

    label, value = f"`ranklens eval` end to end on {w}", "faster than every peer"
    mine = _find(rows, w, "cli", "ranklens")
    peers = [r for r in (_find(rows, w, "cli", t) for t in TOOLS if t != "ranklens") if r]
    if mine and peers:
        best = min(peers, key=lambda r: r["median_s"])
        ok = all(mine["median_s"] < r["median_s"] for r in peers)
        measured = f"{_s(mine['median_s'])} vs fastest peer {best['tool']} {_s(best['median_s'])} ({len(peers)} peers)"
        out.append(Target(label, measured, value, _yes(ok)))
    else:
        out.append(_not_measured(label, value, f"{w} CLI of ranklens and its peers"))

    label, value = f"`ranklens eval` on {mpq} (Parquet) vs {m} (text)", f"≤ {PARQUET_RATIO}× the text time"
    pq_row, text_row = _find(rows, mpq, "cli", "ranklens"), _find(rows, m, "cli", "ranklens")
    if parquet and all(c.median is not None for c in parquet):
        ratio = parquet[0].median / parquet[1].median  # type: ignore[operator]
        measured = f"{_s(parquet[0].median)} vs {_s(parquet[1].median)}: {ratio:.2f}× (interleaved, this run)"
        out.append(Target(label, measured, value, _yes(ratio <= PARQUET_RATIO)))
    elif pq_row and text_row:
        ratio = pq_row["median_s"] / text_row["median_s"]
        out.append(Target(label, f"{_s(pq_row['median_s'])} vs {_s(text_row['median_s'])}: {ratio:.2f}×", value, _yes(ratio <= PARQUET_RATIO)))
    else:
        out.append(_not_measured(label, value, f"ranklens CLI on {mpq} and {m}"))

    label, value = f"in-memory API (read + mean nDCG@10) peak RSS on {m} vs pytrec_eval", f"≤ {API_RSS_RATIO}× pytrec_eval's"
    mine, theirs = _find(rows, m, "ndcg", "ranklens"), _find(rows, m, "ndcg", "pytrec_eval")
    if mine and theirs and mine.get("peak_rss_mb") and theirs.get("peak_rss_mb"):
        ratio = mine["peak_rss_mb"] / theirs["peak_rss_mb"]
        measured = f"{mine['peak_rss_mb']:.0f} MB vs {theirs['peak_rss_mb']:.0f} MB: {ratio:.2f}×"
        out.append(Target(label, measured, value, _yes(ratio <= API_RSS_RATIO)))
    else:
        out.append(_not_measured(label, value, f"phase ndcg on {m}"))

    label, value = f"`ranklens compare` of two {m} runs vs two `ranklens eval`", f"≤ {COMPARE_RATIO:.0f}× the two evals"
    if compare and all(c.median is not None for c in compare):
        both = compare[1].median + compare[2].median  # type: ignore[operator]
        ratio = compare[0].median / both  # type: ignore[operator]
        measured = f"{_s(compare[0].median)} vs {_s(compare[1].median)} + {_s(compare[2].median)}: {ratio:.2f}×"
        out.append(Target(label, measured, value, _yes(ratio <= COMPARE_RATIO)))
    else:
        why = next((c.failure for c in compare or () if c.failure), None) or f"compare on {m}"
        out.append(_not_measured(label, value, why))
    return out + face_targets(m, compare)


def face_targets(m: str, cells: Sequence[Cell] | None) -> list[Target]:
    """Issue 26: ``compare`` of two runs ≤ :data:`FACE_RATIO` × the two ``eval``, ``gate`` of one run ≤
    :data:`FACE_RATIO` × its ``eval``; by median wall and by median CPU seconds, of cells timed in one run
    (:func:`compare_vs_evals`)."""
    out: list[Target] = []
    by_name = {c.name.split(" on ")[0]: c for c in cells or ()}
    compare, gate = by_name.get("ranklens compare"), by_name.get("ranklens gate")
    evals = [c for c in cells or () if c.name.startswith("ranklens eval on ")]
    for face, cell, base in (("compare", compare, evals), ("gate", gate, evals[:1])):
        label = f"`ranklens {face}` on {m} vs `ranklens eval` per run evaluated"
        value = f"≤ {FACE_RATIO}×"
        if cell is None or not base or cell.median is None or any(e.median is None for e in base):
            why = next((c.failure for c in [cell, *base] if c is not None and c.failure), None) or f"{face} on {m}"
            out.append(_not_measured(label, value, why))
            continue
        wall = cell.median / sum(e.median for e in base)  # type: ignore[misc]
        cpu = cell.median_cpu / sum(e.median_cpu for e in base)  # type: ignore[operator,misc]
        measured = (
            f"wall {_s(cell.median)} vs {' + '.join(_s(e.median) for e in base)}: {wall:.2f}×; "
            f"CPU {_s(cell.median_cpu)} vs {' + '.join(_s(e.median_cpu) for e in base)}: {cpu:.2f}×"
        )
        out.append(Target(label, measured, value, _yes(wall <= FACE_RATIO and cpu <= FACE_RATIO)))
    return out


def quick_targets(out_dir: Path) -> list[Target]:
    """The targets of the last ``--quick-cli`` run, if any."""
    path = out_dir / "quick_cli.json"
    if not path.is_file():
        return [_not_measured("start-up and S targets", "see `--quick-cli`", "no quick_cli.json")]
    return [Target(**t) for t in json.loads(path.read_text())["targets"]]
