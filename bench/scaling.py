"""The scaling plot: time and peak memory against run lines (1M..20M), with a linear reference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.report import Row

__all__ = ["plot"]

_STYLE = {"cli": ("-", "o", "CLI end to end"), "load": ("--", "s", "load"), "ndcg": (":", "^", "mean nDCG@10 (loaded)")}


def plot(rows: Sequence[Row], lines: Mapping[str, int], path: Path) -> None:
    """Save a two-panel PNG (matplotlib, headless): seconds and peak RSS of each tool and phase."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_time, ax_mem) = plt.subplots(1, 2, figsize=(11, 5.2))
    tools = list(dict.fromkeys(r.tool for r in rows))
    colours = {tool: f"C{i}" for i, tool in enumerate(tools)}
    for tool in tools:
        for phase, (dash, marker, label) in _STYLE.items():
            points = sorted(
                (lines[r.shape] / 1e6, r.median, r.peak_rss or 0.0)
                for r in rows
                if r.tool == tool and r.phase == phase and r.median is not None and r.shape in lines
            )
            if not points:
                continue
            x = [p[0] for p in points]
            ax_time.plot(x, [p[1] for p in points], dash, marker=marker, color=colours[tool], label=f"{tool}: {label}")
            if phase == "cli":
                ax_mem.plot(x, [p[2] / 1024 for p in points], dash, marker=marker, color=colours[tool], label=tool)
                first_x, first_y = points[0][0], points[0][1]
                ax_time.plot(x, [first_y * xi / first_x for xi in x], color=colours[tool], alpha=0.25, linewidth=4)
    ticks = sorted({n / 1e6 for n in lines.values()})
    ax_time.set(xscale="log", yscale="log", xlabel="run lines (millions)", ylabel="seconds (median)")
    ax_time.set_title("time; faint band = linear growth from the 1M point", fontsize=10)
    ax_mem.set(xscale="log", xlabel="run lines (millions)", ylabel="peak RSS of the CLI process (GB)", ylim=(0, None))
    ax_mem.set_title("memory, CLI end to end", fontsize=10)
    for ax in (ax_time, ax_mem):
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.grid(True, which="major", alpha=0.3)
    ax_time.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    ax_mem.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    """Redraw the plot from saved results: ``python -m bench.scaling bench/out/scaling.json [PNG]``."""
    import json
    import sys

    from bench.generate import parse_shape
    from bench.report import from_json

    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit(main.__doc__)
    with open(args[0]) as handle:
        data = json.load(handle)
    target = Path(args[1]) if len(args) > 1 else Path(__file__).resolve().parent.parent / "docs" / "benchmarks_scaling.png"
    plot(from_json(data), {name: parse_shape(name).lines for name in data["shapes"]}, target)


if __name__ == "__main__":
    main()
