"""The layers of ``docs/architecture.md``, made executable (issues 11 and 26).

The table between ``<!-- layers:start -->`` and ``<!-- layers:end -->`` in ``docs/architecture.md`` gives each
package its floor (core, features, faces), its tier and the same-tier packages it may import. Every module of
``src/ranklens`` is imported, and every ``import`` in it (top level, inside a function, or for annotations only) is
checked: no edge up a floor or a tier, no undeclared sideways edge between two packages of one tier, nothing but a
face imports a face, kernels import only their primitives, and no import cycle (a submodule importing a name its
own package re-exports is not counted). A failure names the edge or the cycle.

There is no allow-list: no known cycle, no engine module doing file I/O. The checker's own tests put the two
cycles that existed back (behind function-local imports, where they hid) and file I/O into the engine, and
see it fail.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
FLOORS = {"core": 0, "features": 1, "faces": 2}

@dataclass(frozen=True)
class Layer:
    """One row of the layers table."""

    package: str
    floor: str
    tier: int
    sideways: frozenset[str]


def read_layers(text: str) -> dict[str, Layer]:
    """The layers table of ``docs/architecture.md``: package → :class:`Layer`."""
    block = text.split("<!-- layers:start -->", 1)[1].split("<!-- layers:end -->", 1)[0]
    layers = {}
    for line in block.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        package, floor, tier, sideways = cells[0], cells[1], int(cells[2]), cells[3]
        assert floor in FLOORS, f"docs/architecture.md: unknown floor {floor!r} for {package}"
        layers[package] = Layer(package, floor, tier, frozenset(s.strip() for s in sideways.split(",") if s.strip()))
    return layers


LAYERS = read_layers(ARCHITECTURE.read_text(encoding="utf-8"))


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "ranklens").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()
#: names of the top-level package that are modules below it, not the package itself
ALIASES = {"__version__": "ranklens._version", "_cexpress": "ranklens.express"}


def layer_of(module: str, layers: dict[str, Layer] = LAYERS) -> Layer:
    """The layer of a module: the longest package of the table that contains it; the top package and every
    ``__main__`` module are faces."""
    if module == "ranklens" or module.endswith(".__main__"):
        return Layer("ranklens", "faces", 9, frozenset())
    name = module.removeprefix("ranklens.")
    for package in sorted(layers, key=len, reverse=True):
        if name == package or name.startswith(package + "."):
            return layers[package]
    raise AssertionError(f"{module} belongs to no package of docs/architecture.md's layers table: add a row")


def imports_of(path: Path, module: str) -> set[str]:
    """Every ``ranklens`` module that ``module`` (at ``path``) imports, anywhere in the file."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ranklens"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if not target.startswith("ranklens"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if target == "ranklens" and alias.name in ALIASES:
                    found.add(ALIASES[alias.name])
                else:
                    found.add(sub if sub in MODULES else target)
    return found


def forbidden(importer: str, imported: str, layers: dict[str, Layer] = LAYERS) -> bool:
    """Whether the edge ``importer → imported`` breaks the layers."""
    a, b = layer_of(importer, layers), layer_of(imported, layers)
    if importer.startswith("ranklens.engine.kernels"):
        allowed = ("ranklens.engine.kernels", "ranklens.engine.ranked", "ranklens.measures", "ranklens.errors")
        return not imported.startswith(allowed)
    if a.package == b.package or a.floor == "faces":
        return False
    if b.floor == "faces":
        return True
    rank_a, rank_b = (FLOORS[a.floor], a.tier), (FLOORS[b.floor], b.tier)
    if rank_b > rank_a:
        return True
    return rank_b == rank_a and b.package not in a.sideways


def _graph() -> dict[str, set[str]]:
    return {m: {t for t in imports_of(p, m) if t in MODULES and not m.startswith(t + ".")} for m, p in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith("__main__")))
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_edge_breaks_the_layers() -> None:
    bad = sorted((m, t) for m, p in MODULES.items() for t in imports_of(p, m) if forbidden(m, t))
    assert not bad, "forbidden import edges: " + "; ".join(f"{a} -> {b}" for a, b in bad)


def test_no_import_cycle() -> None:
    found = cycles(_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)


_OPENING = re.compile(r"\bopen_input\(|\bopen\(|\.read_bytes\(|\.read_text\(|\bgzip\.|\bmmap\.")


def engine_file_io(sources: dict[str, str]) -> set[str]:
    """The engine modules (of ``{module: source}``) that open or read files."""
    return {m for m, text in sources.items() if m.startswith("ranklens.engine") and _OPENING.search(text)}


def test_the_engine_opens_no_file() -> None:
    doing = engine_file_io({m: p.read_text(encoding="utf-8") for m, p in MODULES.items()})
    assert not doing, f"engine modules doing file I/O: {sorted(doing)} (the data layer reads files: data/blocks.py)"


def render_layers(layers: dict[str, Layer]) -> str:
    """The README's architecture block, drawn from the table: floors top down, tiers top down in each."""
    lines = []
    for floor in sorted(FLOORS, key=FLOORS.__getitem__, reverse=True):
        tiers = sorted({layer.tier for layer in layers.values() if layer.floor == floor}, reverse=True)
        for i, tier in enumerate(tiers):
            names = sorted(
                p + (f" (+{', '.join(sorted(layer.sideways))})" if layer.sideways else "")
                for p, layer in layers.items()
                if layer.floor == floor and layer.tier == tier
            )
            lines.append(f"{floor if i == 0 else '':<9} {tier}  " + "  ".join(names))
    return "\n".join(lines)


def test_the_readme_draws_the_same_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### Architecture", 1)[1].split("```", 2)[1].strip("\n")
    expected = render_layers(LAYERS)
    assert block == expected, "README's architecture block is not drawn from docs/architecture.md; it should be:\n" + expected


# ---- the checker itself fails where it should (seeded mutations) ----

def test_the_checker_sees_an_upward_edge(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from ranklens.cli.main import cli\n\ndef f():\n    from ranklens.comparison import compare\n")
    edges = {t for t in imports_of(bad, "ranklens.engine.bad") if forbidden("ranklens.engine.bad", t)}
    assert edges == {"ranklens.cli.main", "ranklens.comparison"}


def test_the_checker_sees_an_undeclared_sideways_edge() -> None:
    assert forbidden("ranklens.judges.runner", "ranklens.rag.context")  # both tier 1, not declared
    assert not forbidden("ranklens.evaluation", "ranklens.spark.files")  # declared in the table
    mutated = dict(LAYERS, evaluation=Layer("evaluation", "features", 4, frozenset()))
    assert forbidden("ranklens.evaluation", "ranklens.spark.files", mutated)


def test_the_checker_sees_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == {frozenset({"a", "b", "c"})}
    assert cycles({"a": {"b"}, "b": set()}) == set()


def test_the_table_is_read() -> None:
    assert LAYERS["engine"].floor == "core" and LAYERS["gates"].tier > LAYERS["comparison"].tier
    assert layer_of("ranklens.monitor.app").floor == "faces" and layer_of("ranklens.monitor.rules").floor == "features"


def test_the_checker_sees_the_former_cycles_put_back(tmp_path: Path) -> None:
    """Issue 26's two cycles, put back where they hid (function-local imports in the real modules), are seen."""
    graph = _graph()
    for a, b, line in (
        ("ranklens.spark.files", "ranklens.evaluation", "from ranklens.evaluation import label_runs"),
        ("ranklens.monitor.rules", "ranklens.monitor.service", "from ranklens.monitor.service import Monitor"),
    ):
        mutated = tmp_path / f"{a.rsplit('.', 1)[1]}.py"
        mutated.write_text(MODULES[a].read_text(encoding="utf-8") + f"\n\ndef _back():\n    {line}\n", encoding="utf-8")
        edges = {t for t in imports_of(mutated, a) if t in MODULES and not a.startswith(t + ".")}
        assert b in edges
        assert frozenset({a, b}) <= next(iter(c for c in cycles({**graph, a: edges}) if a in c))


def test_the_checker_sees_file_io_in_the_engine() -> None:
    source = MODULES["ranklens.engine.stream"].read_text(encoding="utf-8")
    assert engine_file_io({"ranklens.engine.stream": source}) == set()
    mutated = source + "\n\ndef _peek(path):\n    with open(path, 'rb') as f:\n        return f.read(4)\n"
    assert engine_file_io({"ranklens.engine.stream": mutated}) == {"ranklens.engine.stream"}
