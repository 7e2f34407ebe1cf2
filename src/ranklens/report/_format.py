"""Number formatting, system letters and significance markers shared by the renderers."""

from __future__ import annotations

import math

from ranklens.comparison import Comparison, ComparisonRow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "best",
    "better_than",
    "ci_text",
    "legend",
    "letters",
    "marker",
    "num",
    "pct",
    "pval",
    "row_heads",
    "signed",
    "summary_word",
]

UP, DOWN = "▲", "▼"  # significant after correction
UP_RAW, DOWN_RAW = "△", "▽"  # significant before correction only


def num(v: float, digits: int = 4) -> str:
    """``0.1234``; ``—`` for NaN; ``±inf`` spelled out."""
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}f}"


def signed(v: float, digits: int = 4) -> str:
    """``+0.1234`` / ``-0.1234``."""
    return "—" if math.isnan(v) else (f"{v:+.{digits}f}" if math.isfinite(v) else num(v))


def pct(v: float) -> str:
    """A relative difference as ``+12.3%``."""
    return "—" if not math.isfinite(v) else f"{100 * v:+.1f}%"


def pval(p: float) -> str:
    """A p-value: 4 decimals, ``<0.0001`` below that."""
    if math.isnan(p):
        return "—"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def ci_text(row: ComparisonRow) -> str:
    """``[+0.0123, +0.0456]``."""
    return f"[{signed(row.ci_low)}, {signed(row.ci_high)}]"


def marker(row: ComparisonRow, alpha: float) -> str:
    """▲/▼ when the system is significantly better/worse than the baseline after correction; △/▽ when only
    the uncorrected p-value is below alpha; nothing otherwise."""
    if row.significant:
        return UP if row.diff > 0 else DOWN if row.diff < 0 else ""
    if row.p_value <= alpha:  # False for NaN
        return UP_RAW if row.diff > 0 else DOWN_RAW if row.diff < 0 else ""
    return ""


_ABC = "abcdefghijklmnopqrstuvwxyz"  # (string.ascii_lowercase, without importing string)


def letters(comparison: Comparison) -> dict[str, str]:
    """A letter per system (a, b, c, …; aa, ab … beyond 26), in order."""
    out = {}
    for i, s in enumerate(comparison.systems):
        out[s] = _ABC[i] if i < 26 else _ABC[i // 26 - 1] + _ABC[i % 26]
    return out


def better_than(comparison: Comparison, measure: str, segment: str | None) -> dict[str, list[str]]:
    """For each system, the systems it beats significantly (after correction) on ``measure``."""
    out: dict[str, list[str]] = {s: [] for s in comparison.systems}
    for r in comparison.rows:
        if r.measure != measure or r.segment != segment or not r.significant:
            continue
        if r.diff > 0:
            out[r.system].append(r.baseline)
        elif r.diff < 0:
            out[r.baseline].append(r.system)
    return out


def legend(comparison: Comparison) -> str:
    """One sentence naming the test, the correction, alpha and the interval."""
    o = comparison.options
    level = round(100 * (1 - comparison.alpha), 2)
    corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini–Hochberg", "none": "no"}.get(
        o.get("correction", ""), str(o.get("correction"))
    )
    test = {
        "t": "paired t-test",
        "randomisation": "paired randomisation test",
        "bootstrap": "paired bootstrap test",
        "wilcoxon": "Wilcoxon signed-rank test",
        "sign": "sign test",
        "tukey": "blocked Tukey HSD",
        "randomised-tukey": "randomised Tukey HSD",
    }.get(o.get("test", ""), str(o.get("test")))
    if o.get("test") in ("tukey", "randomised-tukey"):  # its p-values already cover every pair of the family
        corr = "family-wise over all pairs, no further" if corr != "no" else corr
    aggregated = _aggregated(comparison)
    paired = [m for m in getattr(comparison, "measures", ()) if not _is_system(m)]
    if aggregated and len(aggregated) == len(paired):  # every paired row compares a median or percentile
        kinds = sorted(set(aggregated.values()))
        what = "medians" if kinds == ["median"] else f"aggregates ({', '.join(kinds)})"
        return (
            f"paired randomisation test of the difference of the {what}, "
            f"{corr} correction, α = {comparison.alpha:g}; {level:g}% bootstrap percentile intervals of that "
            "difference (system − baseline)"
        )
    text = (
        f"{test}, {corr} correction, α = {comparison.alpha:g}; "
        f"{level:g}% {o.get('ci', 't')} confidence intervals of the difference (system − baseline)"
    )
    if aggregated:
        text += (f"; {', '.join(aggregated)}: paired randomisation test and {level:g}% bootstrap percentile "
                 "interval of the difference of that aggregate")
    return text


def _is_system(measure: str) -> bool:
    from ranklens.comparison.rows import is_system

    return is_system(measure)


def _aggregated(comparison: Comparison) -> dict[str, str]:
    """The measures compared by a median, percentile, minimum or maximum, with that aggregate."""
    from ranklens.comparison.rows import aggregate_name

    out = {}
    for m in getattr(comparison, "measures", ()):
        if not _is_system(m) and aggregate_name(m) != "mean":
            out[m] = aggregate_name(m)
    return out


def best(values: list[float]) -> set[int]:
    """Indices of the highest finite value(s)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return set()
    top = max(finite)
    return {i for i, v in enumerate(values) if math.isfinite(v) and abs(v - top) <= 1e-12 * max(1.0, abs(top))}


def stat_cells(r: Any, alpha: float) -> list[str]:
    """The formatted statistics of one comparison row, in table order: n, mean baseline, mean system,
    Δ, Δ%, CI, p, adjusted p, effect size, wins/ties/losses, significance marker."""
    return [
        str(r.n),
        num(r.mean_baseline),
        num(r.mean_system),
        signed(r.diff),
        pct(r.rel_diff),
        ci_text(r),
        pval(r.p_value),
        pval(r.p_value_adjusted),
        num(r.effect_size, 2),
        f"{r.wins}/{r.ties}/{r.losses}",
        marker(r, alpha),
    ]


def summary_word(comparison: Comparison) -> str:
    """How the summary tables combine queries: ``Mean``, ``Median`` when every measure is a median, or
    ``Mean (median for nDCG(agg=median)@10)`` when some are aggregated otherwise.

    A measure compared by its median shows each system's median in the summary, never its mean.
    """
    aggregated = _aggregated(comparison)
    paired = [m for m in comparison.measures if not _is_system(m)]
    if aggregated and len(aggregated) == len(paired) and set(aggregated.values()) == {"median"}:
        return "Median"
    if aggregated:
        return "Mean (" + ", ".join(f"{a} for {m}" for m, a in aggregated.items()) + ")"
    return "Mean"


def row_heads(rows: list[ComparisonRow]) -> tuple[str, str]:
    """The headers of the two systems' values in a pairwise table: ``mean base``/``mean sys``, or with the
    rows' own aggregate (``median base``/``median sys``) when every row compares one."""
    kinds = {getattr(r, "aggregate", "mean") for r in rows}
    agg = kinds.pop() if len(kinds) == 1 else "mean"
    return f"{agg} base", f"{agg} sys"
