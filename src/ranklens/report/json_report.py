"""The JSON report: :meth:`Comparison.to_json_dict` as text."""

from __future__ import annotations

import json

from ranklens.comparison import Comparison

__all__ = ["render_json"]


def render_json(comparison: Comparison, *, indent: int | None = 2) -> str:
    """The comparison as JSON: ``{"ranklens_version", "options", "systems", "measures", "baseline",
    "segments", "rows", "summary", "pareto", "notes"}``. Each row has ``baseline, system, measure, segment,
    n, mean_baseline, mean_system, diff, rel_diff, ci_low, ci_high, ci_method, p_value, p_value_adjusted,
    test, effect_size, wins, ties, losses, significant``; numbers that are not finite are ``null``."""
    return json.dumps(comparison.to_json_dict(), indent=indent, allow_nan=False, ensure_ascii=False) + "\n"
