"""User-defined measures: a :class:`~ranklens.measures.Family` (name, parameters, docs) plus a kernel over
the engine's :class:`~ranklens.RankedLists`, registered under a name. A registered measure works wherever a
built-in does: the measure language, :func:`ranklens.evaluate`, ``ranklens eval``/``explain``/``compare``,
reports and monitoring.

A plugin is a Python module that registers measures when imported::

    from ranklens.plugins import Param, measure

    @measure("GoodAt", doc="Fraction of the top k with label ≥ good.", cutoff="required",
             params=(Param("good", "int", 2, "the label that counts as good"),))
    def good_at(lists, m):
        hit = (lists.labels >= m.get("good")) & (lists.rank0 < m.cutoff)
        return lists.per_query_sum(hit.astype(float)) / m.cutoff

Load it in the command line with ``--plugin my_module`` (a dotted module name on ``sys.path``) or
``--plugin path/to/file.py``, or with the environment variable ``RANKLENS_PLUGINS`` (comma-separated);
in Python just import it, or call :func:`load_plugins`.

A kernel receives the ranked lists of every evaluated query (flat arrays in rank order with per-query
offsets; ``labels`` uses −1 for documents not in the qrels and −2 for "pooled but unjudged") and the
:class:`~ranklens.Measure` (its ``cutoff`` and ``get(param)``), and returns one float per query. Write it
with numpy over the flat arrays (``rank0``, ``row_query``, ``per_query_sum``, ``ideal_labels`` …), not with
a Python loop per query.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, Literal

import numpy as np

from ranklens.engine.kernels import register_kernel
from ranklens.engine.ranked import RankedLists
from ranklens.errors import InputError, MeasureError
from ranklens.measures.base import Family, Measure, Param
from ranklens.measures.registry import get_family, register

__all__ = [
    "ENV_VAR",
    "Family",
    "Kernel",
    "Measure",
    "Param",
    "RankedLists",
    "load_plugins",
    "measure",
    "plugin_specs_in_args",
    "preload_plugins",
    "register_measure",
]

Kernel = Callable[[RankedLists, Measure], np.ndarray]

#: environment variable listing plugin modules to load in every command (comma-separated)
ENV_VAR = "RANKLENS_PLUGINS"


def register_measure(family: Family, kernel: Kernel) -> Family:
    """Register ``family`` in the measure language and ``kernel`` as its computation.

    Registering an equal family again (the same module imported twice) only replaces the kernel; a
    different family under a taken name is an error. Example (not run here: it would register a
    measure for the whole process)::

        fam = Family("DocsAtK", "Number of documents retrieved within k.", cutoff="required")
        register_measure(fam, lambda lists, m: lists.per_query_sum((lists.rank0 < m.cutoff).astype(float)))
        ranklens.evaluate(qrels, run, "DocsAtK@5")
    """
    if not isinstance(family, Family):
        raise MeasureError(f"register_measure needs a Family, got {type(family).__name__}")
    if not callable(kernel):
        raise MeasureError(f"the kernel of {family.name} must be callable")
    try:
        existing = get_family(family.name)
    except MeasureError:
        existing = None
    if existing is None:
        register(family)
    elif existing != family:
        raise MeasureError(f"measure name '{family.name}' is already registered by another definition")
    register_kernel(family.name, kernel)
    return family


def measure(
    name: str,
    *,
    doc: str,
    params: Sequence[Param] = (),
    cutoff: Literal["none", "optional", "required"] = "optional",
    aggregate: Literal["mean", "sum", "gmean", "first", "nanmean"] = "mean",
    aliases: Sequence[str] = (),
    reference: str = "",
    example: str = "",
    check: Callable[[Measure], None] | None = None,
) -> Callable[[Kernel], Kernel]:
    """Decorator: register the decorated kernel as measure ``name`` (see the module docstring)."""

    def decorate(kernel: Kernel) -> Kernel:
        family = Family(
            name, doc, tuple(params), cutoff, aggregate, tuple(aliases), reference, example or f"{name}@10", check
        )
        register_measure(family, kernel)
        return kernel

    return decorate


def load_plugins(specs: Iterable[str]) -> list[ModuleType]:
    """Import plugin modules: dotted names (``my_pkg.measures``) or paths to ``.py`` files.

    A module is imported once per process; loading it again returns the same module.
    """
    modules = []
    for spec in specs:
        spec = spec.strip()
        if not spec:
            continue
        modules.append(_load_one(spec))
    return modules


def _load_one(spec: str) -> ModuleType:
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        path = os.path.abspath(spec)
        if not os.path.isfile(path):
            raise InputError(f"plugin {spec}: no such file")
        stem = os.path.splitext(os.path.basename(path))[0]
        name = f"ranklens_plugin_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:8]}"
        if name in sys.modules:
            return sys.modules[name]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise InputError(f"plugin {spec}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as e:
            del sys.modules[name]
            if isinstance(e, MeasureError):
                raise
            raise InputError(f"plugin {spec} failed to load: {type(e).__name__}: {e}") from e
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as e:
        if e.name and spec.startswith(e.name):
            raise InputError(f"plugin '{spec}': no module named '{e.name}' (is it on PYTHONPATH? a file path also works)") from None
        raise InputError(f"plugin '{spec}' failed to load: {e}") from e


def plugin_specs_in_args(args: Sequence[str]) -> list[str]:
    """The values of ``--plugin X`` / ``--plugin=X`` in a command line, and of ``RANKLENS_PLUGINS``.

    >>> plugin_specs_in_args(["q.txt", "r.txt", "--plugin", "a.py", "--plugin=b", "-m", "AP"])
    ['a.py', 'b']
    """
    out = [s for s in os.environ.get(ENV_VAR, "").split(",") if s.strip()]
    for i, tok in enumerate(args):
        if tok == "--plugin" and i + 1 < len(args):
            out.append(args[i + 1])
        elif tok.startswith("--plugin="):
            out.append(tok.split("=", 1)[1])
    return out


def preload_plugins(args: Sequence[str]) -> None:
    """Load the plugins a command line names before its measures are read (for ``-m A B C`` expansion)."""
    load_plugins(plugin_specs_in_args(args))


def cli_callback(ctx: Any, param: Any, value: Sequence[str]) -> None:
    """click callback of ``--plugin``: load the modules (and ``RANKLENS_PLUGINS``) before any measure is parsed."""
    env = [s for s in os.environ.get(ENV_VAR, "").split(",") if s.strip()]
    load_plugins([*env, *(value or ())])
