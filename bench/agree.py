"""Do the tools agree? Compare every tool's answer with the reference (ranklens) before any time is shown.

A *payload* is what one tool produced in one phase: ``counts`` (load), ``means`` and ``per_query``
(compute phases), ``many`` (ten means), or ``printed`` (the number a CLI printed).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["TOLERANCE", "Agreement", "check", "printed_value"]

TOLERANCE = 1e-9  # computed values: the tools are exact up to floating-point summation order
PRINT_TOLERANCE = 5e-5 + 1e-9  # printed values: ranklens' table and trec_eval print four decimals
_DECIMAL = re.compile(r"(?<![\w@.])-?\d+\.\d+(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Agreement:
    status: str  # "reference", "ok", "DISAGREE", "expected", "n/a"
    detail: str = ""
    max_diff: float = 0.0

    @property
    def bad(self) -> bool:
        return self.status == "DISAGREE"

    def cell(self) -> str:
        if self.status == "ok":
            return f"ok (max diff {self.max_diff:.0e})" if self.max_diff else "ok (exact)"
        if self.status in ("DISAGREE", "expected"):
            return f"**{self.status}**: {self.detail}" if self.status == "DISAGREE" else f"differs, expected: {self.detail}"
        return self.status if not self.detail else f"{self.status}: {self.detail}"


def printed_value(stdout: str) -> float | None:
    """The last decimal number a CLI printed (its mean nDCG@10)."""
    found = _DECIMAL.findall(stdout)
    return float(found[-1]) if found else None


def check(
    phase: str, payloads: Mapping[str, Mapping[str, Any] | None], *, expected: Mapping[str, str] | None = None
) -> dict[str, Agreement]:
    """Compare each tool with the reference; ``expected`` maps a tool to why it may differ (ties)."""
    expected = expected or {}
    usable = {tool: p for tool, p in payloads.items() if p}
    reference = "ranklens" if "ranklens" in usable else next(iter(usable), None)
    out = {tool: Agreement("n/a", "failed") for tool, p in payloads.items() if not p}
    if reference is None:
        return out
    out[reference] = Agreement("reference")
    for tool, payload in usable.items():
        if tool == reference:
            continue
        problem, diff = _compare(phase, usable[reference], payload)
        if problem and tool in expected:
            out[tool] = Agreement("expected", f"{expected[tool]}; {'; '.join(problem.split('; ')[:2])}", diff)
        elif problem:
            out[tool] = Agreement("DISAGREE", f"{problem} (vs {reference})", diff)
        else:
            out[tool] = Agreement("ok", "", diff)
    return out


def _compare(phase: str, ref: Mapping[str, Any], other: Mapping[str, Any]) -> tuple[str, float]:
    """``(problem or "", max abs difference)``."""
    if phase == "load":
        wrong = [f"{k} {other['counts'].get(k)} ≠ {v}" for k, v in ref["counts"].items() if other["counts"].get(k) != v]
        return "; ".join(wrong), 0.0
    if phase == "cli":
        a, b = ref.get("printed"), other.get("printed")
        if a is None or b is None:
            return "no number printed", math.inf
        diff = abs(a - b)
        return (f"printed {b} vs {a}" if diff > PRINT_TOLERANCE else ""), diff
    if phase == "many":
        a, b = ref["many"], other["many"]
        if len(a) != len(b):
            return f"{len(b)} runs vs {len(a)}", math.inf
        diff = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
        return (f"max |Δ mean| {diff:.1e} over {len(a)} runs" if diff > TOLERANCE else ""), diff
    return _compare_values(ref, other)


def _compare_values(ref: Mapping[str, Any], other: Mapping[str, Any]) -> tuple[str, float]:
    problems: list[str] = []
    worst = 0.0
    for measure, value in ref["means"].items():
        diff = abs(value - other["means"].get(measure, math.nan))
        diff = math.inf if math.isnan(diff) else diff
        worst = max(worst, diff)
        if diff > TOLERANCE:
            problems.append(f"mean {measure} Δ {diff:.1e}")
    for measure, values in ref.get("per_query", {}).items():
        theirs = other.get("per_query", {}).get(measure)
        if theirs is None:
            continue  # the tool gives no per-query values in this phase (ir_measures' aggregate call)
        if set(theirs) != set(values):
            problems.append(f"{measure}: query sets differ ({len(theirs)} vs {len(values)})")
            continue
        diff = max((abs(v - theirs[q]) for q, v in values.items()), default=0.0)
        worst = max(worst, diff)
        if diff > TOLERANCE:
            bad = sum(abs(v - theirs[q]) > TOLERANCE for q, v in values.items())
            problems.append(f"{measure}: {bad} queries differ, max Δ {diff:.1e}")
    return "; ".join(problems), worst
