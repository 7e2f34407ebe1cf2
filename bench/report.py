"""The results: measured rows, the machine they ran on, and their Markdown and JSON forms."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.agree import Agreement

__all__ = ["PHASE_TITLES", "Row", "machine", "markdown", "to_json"]

PHASE_TITLES = {
    "load": "1 load qrels + run",
    "ndcg": "2 mean nDCG@10",
    "four": "3 nDCG@10+AP+R@100+RR, per query",
    "many": "4 ten runs, same qrels",
    "cli": "5 CLI end to end",
}


@dataclass
class Row:
    """One tool in one phase of one shape: its repetitions and whether it agreed."""

    shape: str
    phase: str
    tool: str
    seconds: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    failure: str | None = None
    agreement: Agreement = field(default_factory=lambda: Agreement("n/a"))

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds and not self.failure else None

    @property
    def peak_rss(self) -> float | None:
        return max(self.rss_mb) if self.rss_mb and not self.failure else None

    def to_json(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "phase": self.phase,
            "tool": self.tool,
            "median_s": self.median,
            "seconds": self.seconds,
            "peak_rss_mb": self.peak_rss,
            "rss_mb": self.rss_mb,
            "failure": self.failure,
            "agreement": {"status": self.agreement.status, "detail": self.agreement.detail, "max_diff": self.agreement.max_diff},
        }


def machine() -> dict[str, str]:
    """CPU model, clock and cache, cores, memory, OS and Python: from /proc/cpuinfo, nproc and free -g."""
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    cpu = info.get("model name", "unknown CPU")
    if "cpu MHz" in info:
        cpu += f" @ {float(info['cpu MHz']) / 1000:.1f} GHz"
    if "cache size" in info:
        cpu += f", {info['cache size']} cache"
    memory = "?"
    try:
        free = subprocess.run(["free", "-g"], capture_output=True, text=True, check=True).stdout.splitlines()
        memory = next(line.split()[1] for line in free if line.startswith("Mem:")) + " GB"
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
    }


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _ratio(ours: float | None, theirs: float | None) -> str:
    """``ranklens / peer``, with the speed-up it means."""
    if not ours or not theirs:
        return "—"
    ratio = ours / theirs
    return f"{ratio:.2f} ({theirs / ours:.1f}× faster)" if ratio < 1 else f"{ratio:.2f} ({ratio:.1f}× slower)"


def _mem_ratio(ours: float | None, theirs: float | None) -> str:
    return f"{ours / theirs:.2f}" if ours and theirs else "—"


def markdown(rows: Sequence[Row], *, shapes: dict[str, str], meta: dict[str, Any]) -> str:
    """The full report: a table per shape, then ranklens against the fastest peer in each phase."""
    m = meta["machine"]
    lines = [
        "# ranklens benchmark results",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory']} RAM, {m['os']}, Python {m['python']} ({m['date']}).  ",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".  ",
        (
            f"Command: `{meta['command']}`; {meta['repeat']} repetitions per cell, each a fresh process; "
            f"times are medians; memory is the {meta.get('rss', 'peak RSS')}, largest of the repetitions."
        ),
        "",
        (
            "Ratio columns are ranklens ÷ tool (below 1: ranklens is faster / leaner). Every value was checked "
            "against ranklens before any time was reported (max abs difference of means and per-query values; "
            "the CLI phase compares the printed number)."
        ),
    ]
    if meta.get("skipped"):
        lines += ["", "Not measured: " + "; ".join(meta["skipped"]) + "."]
    for shape, description in shapes.items():
        lines += ["", f"## {shape}: {description}", "", *_shape_table(rows, shape)]
    lines += ["", "## ranklens against the fastest and the leanest peer", ""]
    lines += ["| shape | phase | ranklens s | fastest peer | its s | ranklens/fastest | ranklens RSS / leanest peer RSS |"]
    lines += ["|---|---|--:|---|--:|---|---|"]
    lines += [line for shape in shapes for phase in PHASE_TITLES for line in _summary_row(rows, shape, phase)]
    bad = [r for r in rows if r.agreement.bad]
    if bad:
        lines += ["", "## ⚠ Disagreements", ""]
        lines += [f"- {r.shape} / {PHASE_TITLES[r.phase]} / {r.tool}: {r.agreement.detail}" for r in bad]
    return "\n".join(lines) + "\n"


def _shape_table(rows: Sequence[Row], shape: str) -> list[str]:
    lines = ["| phase | tool | median s | peak RSS MB | time ranklens/tool | RSS ranklens/tool | agreement |"]
    lines += ["|---|---|--:|--:|---|--:|---|"]
    for phase, title in PHASE_TITLES.items():
        group = [r for r in rows if r.shape == shape and r.phase == phase]
        ours = next((r for r in group if r.tool == "ranklens"), None)
        for r in group:
            peer = ours if ours is not None and r.tool != "ranklens" else None
            time_ratio = _ratio(peer.median, r.median) if peer else "—"
            rss_ratio = _mem_ratio(peer.peak_rss, r.peak_rss) if peer else "—"
            rss = f"{r.peak_rss:.0f}" if r.peak_rss is not None else "—"
            lines.append(
                f"| {title} | {r.tool} | {r.failure or _seconds(r.median)} | {rss} | "
                f"{time_ratio} | {rss_ratio} | {r.agreement.cell()} |"
            )
    return lines


def _summary_row(rows: Sequence[Row], shape: str, phase: str) -> list[str]:
    """ranklens against the fastest (and the leanest) peer that agreed, or nothing."""
    group = [r for r in rows if r.shape == shape and r.phase == phase]
    ours = next((r for r in group if r.tool == "ranklens" and r.median is not None), None)
    peers = [r for r in group if r.tool != "ranklens" and r.median is not None and not r.agreement.bad]
    if not ours or not peers:
        return []
    fastest = min(peers, key=lambda r: r.median or 0.0)
    leanest = min((r for r in peers if r.peak_rss), key=lambda r: r.peak_rss or 0.0, default=None)
    lean = f"{_mem_ratio(ours.peak_rss, leanest.peak_rss)} ({leanest.tool})" if leanest else "—"
    row = (
        f"| {shape} | {PHASE_TITLES[phase]} | {_seconds(ours.median)} | {fastest.tool} | "
        f"{_seconds(fastest.median)} | {_ratio(ours.median, fastest.median)} | {lean} |"
    )
    return [row]


def to_json(rows: Sequence[Row], *, shapes: dict[str, str], meta: dict[str, Any]) -> dict[str, Any]:
    return {"meta": meta, "shapes": shapes, "rows": [r.to_json() for r in rows], "argv": sys.argv}


def from_json(data: dict[str, Any]) -> list[Row]:
    """The rows of a ``results.json``."""
    return [
        Row(r["shape"], r["phase"], r["tool"], r["seconds"], r["rss_mb"], r["failure"], Agreement(**r["agreement"]))
        for r in data["rows"]
    ]


def embed(report: str, document: str, section: str = "results") -> str:
    """``document`` with the text between its ``<!-- bench:SECTION -->`` and ``<!-- /bench:SECTION -->``
    markers replaced by ``report`` (its title dropped, headings one level down)."""
    start, end = f"<!-- bench:{section} -->", f"<!-- /bench:{section} -->"
    if start not in document or end not in document:
        raise SystemExit(f"the document has no {start} … {end} markers")
    body = [("#" + line if line.startswith("#") else line) for line in report.splitlines()[1:]]
    head, rest = document.split(start, 1)
    return head + start + "\n" + "\n".join(body).strip("\n") + "\n" + end + rest.split(end, 1)[1]


def main(argv: Sequence[str] | None = None) -> None:
    """Re-render saved results as Markdown:

        python -m bench.report RESULTS.json [MORE.json ...]                  # print
        python -m bench.report --into DOC.md[:SECTION] RESULTS.json [...]    # update DOC.md in place

    With ``--into``, the tables replace the text between ``<!-- bench:SECTION -->`` and
    ``<!-- /bench:SECTION -->`` (SECTION defaults to ``results``).
    """
    paths = list(sys.argv[1:] if argv is None else argv)
    into = None
    if paths[:1] == ["--into"] and len(paths) > 1:
        into, paths = paths[1], paths[2:]
    if not paths or paths[0] in ("-h", "--help"):
        raise SystemExit(main.__doc__)
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise SystemExit(f"python -m bench.report: no such results file: {missing[0]} (bench/out/*.json are written by python -m bench.run)")
    rows: list[Row] = []
    shapes: dict[str, str] = {}
    meta: dict[str, Any] = {}
    for path in paths:
        with open(path) as handle:
            data = json.load(handle)
        rows += from_json(data)
        shapes.update(data["shapes"])
        if meta:  # several result files: list every command and every tool version
            meta["command"] += f"` and `{data['meta']['command']}"
            meta["versions"].update(data["meta"]["versions"])
        else:
            meta = data["meta"]
    report = markdown(rows, shapes=shapes, meta=meta)
    if into is None:
        print(report, end="")
        return
    target, _, section = into.partition(":")
    with open(target) as handle:
        document = handle.read()
    with open(target, "w") as handle:
        handle.write(embed(report, document, section or "results"))
    print(f"updated {target} ({section or 'results'})", file=sys.stderr)


if __name__ == "__main__":
    main()
