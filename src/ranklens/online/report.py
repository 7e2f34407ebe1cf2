"""Reports of an :class:`~ranklens.online.experiment.ABResult`: terminal text, Markdown and JSON. A sample-ratio
mismatch is the first line of every one of them."""

from __future__ import annotations

from typing import Any

from ranklens.errors import InputError
from ranklens.online.experiment import ABResult
from ranklens.report._format import num, pct, pval, signed

__all__ = ["AB_FORMATS", "render_ab"]

AB_FORMATS = ("table", "markdown", "json")
_TEST = {"welch": "Welch's t-test", "mannwhitney": "Mann–Whitney U", "bootstrap": "bootstrap (Welch statistic)"}
_CORR = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini–Hochberg", "none": "no"}


def render_ab(result: ABResult, fmt: str = "table") -> str:
    """The report of ``result`` in ``fmt`` (``table``, ``markdown`` or ``json``).

    >>> qc = {"u1": {"a": 1}, "u2": {"a": 1}, "u3": {"b": 1}}
    >>> rc = {"u1": {"a": 2.0, "b": 1.0}, "u2": {"b": 2.0, "a": 1.0}, "u3": {"a": 2.0, "b": 1.0}}
    >>> qt = {"u4": {"a": 1}, "u5": {"b": 1}, "u6": {"a": 1}}
    >>> rt = {"u4": {"a": 2.0, "b": 1.0}, "u5": {"b": 2.0, "a": 1.0}, "u6": {"b": 2.0, "a": 1.0}}
    >>> from ranklens.online import ab
    >>> r = ab(qc, rc, qt, rt, ["P@1"], samples=100, names=("c", "t"))
    >>> render_ab(r, "markdown").splitlines()[0]
    '# A/B test: t vs c'
    """
    key = fmt.lower()
    if key == "json":
        return result.to_json() + "\n"
    if key in ("markdown", "md"):
        return _markdown(result)
    if key in ("table", "txt"):
        return _table(result)
    raise InputError(f"unknown A/B report format {fmt!r}; expected one of {', '.join(AB_FORMATS)}")


def legend(result: ABResult) -> str:
    """One sentence: the design, the test, the correction, alpha and the interval."""
    o = result.options
    level = round(100 * (1 - float(o["alpha"])), 2)
    return (
        f"between-subjects (each user saw one arm); {_TEST[o['test']]}, {_CORR[o['correction']]} correction over "
        f"the measures, α = {o['alpha']:g}; {level:g}% {o['ci']} interval of treatment − control; relative lift "
        "by the delta method"
    )


def _rows(result: ABResult) -> list[tuple[str, str | None, dict[str, Any]]]:
    out: list[tuple[str, str | None, dict[str, Any]]] = []
    for m, row in result.measures.items():
        if "p" in row:
            out.append((m, None, row))
        for seg, srow in row.get("segments", {}).items():
            out.append((m, seg, srow))
    return out


def _cells(result: ABResult, m: str, seg: str | None, r: dict[str, Any]) -> list[str]:
    c, t = r["control"], r["treatment"]
    lo, hi = r["ci"]
    llo, lhi = r["relative_lift_ci"]
    mark = ("▲" if r["difference"] > 0 else "▼") if r.get("significant") else ""
    return [
        m if seg is None else f"{m} [{seg}]",
        f"{c['n']}", f"{num(c['mean'])} ± {num(c['sd'], 3)}",
        f"{t['n']}", f"{num(t['mean'])} ± {num(t['sd'], 3)}",
        signed(r["difference"]), f"[{signed(lo)}, {signed(hi)}]",
        f"{pct(r['relative_lift'])} [{pct(llo)}, {pct(lhi)}]",
        pval(r["p"]["welch"]), pval(r["p"]["mannwhitney"]), pval(r["p"]["bootstrap"]),
        pval(r.get("p_adjusted", float("nan"))) + (f" {mark}" if mark else ""),
    ]


_HEAD = [
    "measure", "n ctrl", "control mean ± sd", "n treat", "treatment mean ± sd", "Δ", "CI", "lift [CI]",
    "p Welch", "p MW", "p boot", "p adj.",
]


def _extras(result: ABResult) -> list[str]:
    lines = []
    for m, seg, r in _rows(result):
        name = m if seg is None else f"{m} [{seg}]"
        if "cuped" in r:
            cu = r["cuped"]
            lines.append(
                f"CUPED {name}: Δ {signed(cu['difference'])} [{signed(cu['ci'][0])}, {signed(cu['ci'][1])}], "
                f"p {pval(cu['p'])}, variance reduced by {100 * cu['variance_reduction']:.1f}% "
                f"(users without a pre-period value: {cu['users_without_pre']['control']} control, "
                f"{cu['users_without_pre']['treatment']} treatment; {cu['missing_pre']})"
            )
        if "sequential" in r:
            sq = r["sequential"]
            lines.append(
                f"sequential {name}: always-valid p {pval(sq['p'])}, confidence sequence "
                f"[{signed(sq['ci'][0])}, {signed(sq['ci'][1])}] after {sq['looks']} look(s), τ = {sq['tau']:.4g}"
            )
    if any("sequential" in r for _, _, r in _rows(result)):
        lines.append(f"(the sequential p-value is an {next(r['sequential']['kind'] for _, _, r in _rows(result) if 'sequential' in r)})")
    return lines


def _srm_line(result: ABResult) -> str:
    s = result.srm
    counts = ", ".join(f"{k} {v}" for k, v in s["counts"].items())
    return f"sample ratio: {counts} (planned {s['expected_split'][0]:g}:{s['expected_split'][1]:g}, from {s['source']}): χ² p = {pval(s['p'])}" + (
        " — MISMATCH" if s["mismatch"] else " — no mismatch"
    )


def _table(result: ABResult) -> str:
    out = [f"!!! {w}" for w in result.warnings]
    out.append(f"A/B test: {result.arms['treatment']} (treatment) vs {result.arms['control']} (control)")
    out.append(legend(result))
    out.append(_srm_line(result))
    rows = [_HEAD] + [_cells(result, m, seg, r) for m, seg, r in _rows(result)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEAD))]
    out.append("")
    for i, row in enumerate(rows):
        out.append("  ".join(cell.ljust(w) if j == 0 else cell.rjust(w) for j, (cell, w) in enumerate(zip(row, widths))).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    extras = _extras(result)
    if extras:
        out += ["", *extras]
    counts = "; ".join(
        f"{arm}: {c['users']} users analysed, {c['unlabelled']} shown a list without any engagement label"
        for arm, c in result.counts.items()
    )
    out += ["", counts + f" (--missing {result.options.get('missing')})"]
    return "\n".join(out) + "\n"


def _markdown(result: ABResult) -> str:
    out = [f"> **Warning: {w}**\n" for w in result.warnings]
    out += [f"# A/B test: {result.arms['treatment']} vs {result.arms['control']}", "", f"_{legend(result)}._", ""]
    out += [f"- {_srm_line(result)}"]
    out += [
        f"- {arm}: {c['users']} users analysed, {c['unlabelled']} shown a list without any engagement label "
        f"(missing={result.options.get('missing')})"
        for arm, c in result.counts.items()
    ]
    out += ["", "| " + " | ".join(_HEAD) + " |", "|" + "|".join("---" for _ in _HEAD) + "|"]
    out += ["| " + " | ".join(_cells(result, m, seg, r)) + " |" for m, seg, r in _rows(result)]
    extras = _extras(result)
    if extras:
        out += ["", *[f"- {e}" for e in extras]]
    if result.notes:
        out += ["", "Notes:", "", *[f"- {n}" for n in result.notes]]
    return "\n".join(out) + "\n"
