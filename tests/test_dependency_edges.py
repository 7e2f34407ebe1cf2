"""DESIGN.md's "dependencies flow downward", made executable (issue 11).

Every module of ``src/ranklens`` is imported, and every ``import`` in it (top level or inside a function) is
checked against the floors: **core** (``data``, ``measures``, ``engine``, ``results``, ``stats``, ``errors``)
imports no feature and no face; a **feature** (``comparison``, ``report``, ``trec_eval``, ``monitor``, ``labels``,
``unbiased``, ``diversity``, ``rag``, ``explain``, ``plugins``) imports no face (``cli``, the monitor's web app and
``__main__`` modules); **kernels** (``engine.kernels``) import only their own primitives, ``engine.ranked``, the
measure definitions and ``errors``. A failure names the edge.

``KNOWN`` lists the edges that exist today and are scheduled to go in issue 11's restructuring; the test also
fails when one of them disappears, so the list cannot go stale.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
CORE = {"data", "measures", "engine", "results", "stats", "errors", "_version", "_lazy"}
FACE_MODULES = {"ranklens.monitor.app", "ranklens.monitor.__main__"}

#: (importer, imported) → why it is still there
KNOWN = {
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "ranklens").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _floor(module: str) -> str:
    if module in FACE_MODULES or module.endswith(".__main__") or module.split(".")[1:2] == ["cli"]:
        return "face"
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in CORE:
        return "core"
    return "feature"


def _imports(path: Path, module: str) -> set[str]:
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
            if target == "ranklens":  # from ranklens import stats: the submodule, or a lazy public name
                found.update(f"ranklens.{a.name}" if f"ranklens.{a.name}" in MODULES else "ranklens" for a in node.names)
            else:
                found.add(target)
    return found


MODULES = _modules()
ORDER = {"core": 0, "feature": 1, "face": 2}


def _forbidden(importer: str, imported: str) -> bool:
    if imported == "ranklens" or imported == "ranklens.errors":
        return imported == "ranklens" and _floor(importer) == "core"
    if ORDER[_floor(imported)] > ORDER[_floor(importer)]:
        return True
    if importer.startswith("ranklens.engine.kernels"):
        allowed = ("ranklens.engine.kernels", "ranklens.engine.ranked", "ranklens.measures")
        return not imported.startswith(allowed)
    return False


def _edges() -> set[tuple[str, str]]:
    return {(m, t) for m, path in MODULES.items() for t in _imports(path, m) if _forbidden(m, t)}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith("__main__")))
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_no_new_upward_edge() -> None:
    new = sorted(_edges() - set(KNOWN))
    assert not new, "forbidden import edges: " + "; ".join(f"{a} -> {b}" for a, b in new)


def test_the_known_edges_are_still_there() -> None:
    gone = sorted(set(KNOWN) - _edges())
    assert not gone, f"remove these from KNOWN, they are fixed: {gone}"


def test_the_checker_sees_an_upward_edge(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from ranklens.cli.main import cli\n\ndef f():\n    from ranklens.comparison import compare\n")
    edges = {t for t in _imports(bad, "ranklens.engine.bad") if _forbidden("ranklens.engine.bad", t)}
    assert edges == {"ranklens.cli.main", "ranklens.comparison"}
