"""The face imports nothing heavy (DESIGN.md "Start-up is part of speed"; issue 11, 12): ``import ranklens`` and
``ranklens --help`` load no numeric or service library; each command imports what it uses when it runs.
Also issue 11's V2: the package's function ``compare`` is not shadowed by a module of the same name."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pyarrow", "polars", "scipy", "pandas", "plotly", "sqlalchemy", "fastapi", "rich")


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nimport json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}


@pytest.mark.parametrize(
    "code",
    [
        "import ranklens",
        "import ranklens.errors",
        "from ranklens.cli.main import cli\ntry:\n    cli(['--help'])\nexcept SystemExit:\n    pass",
        "from ranklens.cli.main import cli\ntry:\n    cli(['trec-eval', '--help'])\nexcept SystemExit:\n    pass",
    ],
)
def test_nothing_heavy_is_imported(code: str) -> None:
    assert not (_loaded_after(code) & set(HEAVY))


def test_public_names_resolve_on_first_use() -> None:
    import ranklens

    assert callable(ranklens.evaluate) and ranklens.Qrels.__name__ == "Qrels"
    with pytest.raises(AttributeError):
        ranklens.no_such_name  # noqa: B018


def test_compare_is_the_function_even_after_its_module_is_imported() -> None:
    import ranklens
    import ranklens.comparison as module

    assert hasattr(module, "load_segments") and hasattr(module, "Comparison")
    assert ranklens.compare is module.compare and callable(ranklens.compare)


EVAL_TOY = (
    "from ranklens.cli.main import cli\ntry:\n    cli(['eval', 'examples/toy.qrels', 'examples/toy_bm25.run', "
    "'-m', 'nDCG@10', 'AP', '-q', '--quiet'])\nexcept SystemExit:\n    pass"
)


def test_a_small_evaluation_imports_no_dataframe_library() -> None:
    """Issue 12: pyarrow's own numpy conversions import pandas (~0.3 s) and the id hashing imported Polars
    (~0.15 s); a small collection needs neither (``data/_arrow.py``, ``data/_hashing.HASH_FROM_ROWS``)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    probe = f"import os, sys\nos.chdir({str(root)!r})\n{EVAL_TOY}\nimport json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}
    assert "numpy" in loaded  # it did evaluate
    assert not loaded & {"pandas", "polars", "scipy", "plotly", "sqlalchemy", "fastapi"}


def test_no_public_name_shadows_a_submodule() -> None:
    """Issue 11 (V2 and its kind): ``import ranklens.x.y as m`` binds the package's attribute ``y``, so a public
    function named like its submodule would replace the module (``ranklens.compare`` was the example)."""
    import importlib
    import pkgutil

    import ranklens

    found = []
    packages = [ranklens] + [
        importlib.import_module(m.name)
        for m in pkgutil.walk_packages(ranklens.__path__, "ranklens.")
        if m.ispkg and not m.name.startswith("ranklens.monitor.migrations")
    ]
    for package in packages:
        modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
        found += [f"{package.__name__}.{name}" for name in getattr(package, "__all__", ()) if name in modules]
    assert not found, f"public names that are also submodule names: {found}"
