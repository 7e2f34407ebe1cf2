"""The ``ranklens.results`` package (issue 11): its public names, first-use imports, and ``render`` staying the
function although a module of the same name sits beside it."""

from __future__ import annotations

import json
import subprocess
import sys

import ranklens
import ranklens.results as results
from ranklens.results import core, io, render

HEAVY = ("numpy", "pyarrow", "polars", "scipy", "pandas", "rich")


def test_importing_the_package_loads_nothing_heavy() -> None:
    probe = "import sys, json\nimport ranklens.results\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert not ({name.split(".")[0] for name in json.loads(out)} & set(HEAVY))


def test_public_names_come_from_their_modules() -> None:
    assert results.__all__ == sorted(results.__all__)
    assert results.Results is core.Results is ranklens.Results
    assert results.assemble is core.assemble and results.aggregate is core.aggregate
    assert results.read_results is io.read_results is ranklens.read_results
    assert results.write_results is io.write_results and results.looks_like_results is io.looks_like_results
    assert set(results.__all__) <= set(dir(results))


def test_render_is_the_function_even_after_its_module_is_imported() -> None:
    import importlib

    module = importlib.import_module("ranklens.results.rendering")
    assert callable(render) and render is module.render is results.render
    assert results.FORMATS == module.FORMATS == ("table", "json", "csv", "tsv", "trec")


def test_unknown_name() -> None:
    import pytest

    with pytest.raises(AttributeError):
        results.no_such_name  # noqa: B018
