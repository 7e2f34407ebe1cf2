"""The measure catalogue as Markdown (for the README) and as rows (for ``ranklens measures``)."""

from __future__ import annotations

from ranklens.measures.base import JUDGED_ONLY, Family, Param
from ranklens.measures.registry import families

__all__ = ["catalog_rows", "markdown_measures", "markdown_parameters"]

_CUTOFF = {"none": "no", "optional": "optional", "required": "required"}


def catalog_rows() -> list[tuple[str, str, str, str, str]]:
    """(name, parameters, cutoff, aggregate, description) per registered family."""
    rows: list[tuple[str, str, str, str, str]] = []
    for f in families():
        params = ", ".join(p.name for p in f.params) or "—"
        rows.append((f.name, params, _CUTOFF[f.cutoff], str(f.aggregate), _describe(f)))
    return rows


def _describe(f: Family) -> str:
    text = f.doc
    if f.example:
        text += f" Example: `{f.example}`."
    if f.aliases:
        text += " Also: " + ", ".join(f"`{a}`" for a in f.aliases) + "."
    if f.reference:
        text += f" ({f.reference})"
    return text


def markdown_measures() -> str:
    """The Markdown table of every measure family."""
    lines = ["| measure | parameters | cutoff `@k` | aggregate | definition |", "|---|---|---|---|---|"]
    for name, params, cutoff, agg, desc in catalog_rows():
        lines.append(f"| `{name}` | {params} | {cutoff} | {agg} | {_cell(desc)} |")
    return "\n".join(lines) + "\n"


def markdown_parameters() -> str:
    """The Markdown table of every parameter (name, default, meaning, used by)."""
    seen: dict[tuple[str, str], tuple[Param, list[str]]] = {}
    for f in families():
        for p in f.params:
            key = (p.name, p.doc)
            seen.setdefault(key, (p, []))[1].append(f.name)
    lines = ["| parameter | default | meaning | measures |", "|---|---|---|---|"]
    for (name, _), (p, users) in seen.items():
        default = p.format(p.default)
        if p.choices:
            default += " (" + " \\| ".join(p.choices) + ")"
        lines.append(f"| `{name}` | {default} | {_cell(p.doc)} | {', '.join(users)} |")
    lines.append(f"| `{JUDGED_ONLY.name}` | {JUDGED_ONLY.format(False)} | {_cell(JUDGED_ONLY.doc)} | every measure |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def update_readme(path: str) -> bool:
    """Rewrite the generated blocks (``<!-- measures:start -->`` …) of ``path``; True if it changed."""
    import re
    from pathlib import Path

    file = Path(path)
    text = file.read_text(encoding="utf-8")
    new = text
    for name, body in (("measures", markdown_measures()), ("parameters", markdown_parameters())):
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", flags=re.S)
        new = pattern.sub(
            lambda m, body=body: str(m.group(1)) + body + str(m.group(2)),  # type: ignore[misc]
            new,
        )
    if new != text:
        file.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    import sys

    print("updated" if update_readme(sys.argv[1] if len(sys.argv) > 1 else "README.md") else "up to date")
