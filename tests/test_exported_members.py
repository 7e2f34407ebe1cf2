"""The public surface: ``ranklens.__all__`` is sorted, complete and importable (httpx habit), and every
subpackage's ``__all__`` resolves."""

from __future__ import annotations

import pytest

import ranklens

#: the public API of ``import ranklens``: a contract (scripts call these names); dropping one is a breaking change
PUBLIC_API = {
    "Comparison", "EvalPolicy", "Evaluator", "FormatError", "InputError", "Measure", "MeasureError", "Qrels",
    "RankedLists", "RanklensError", "RanklensWarning", "Results", "Run", "__version__", "compare", "evaluate",
    "evaluate_arrays", "parse", "read_qrels", "read_results", "read_run", "read_segments",
}


def provided_names(namespace: dict[str, object], lazy: dict[str, str]) -> set[str]:
    """The public names a package really provides: those bound in its namespace (modules aside) and those its
    ``__getattr__`` imports on first use — found without calling ``dir()``, which returns ``__all__`` itself."""
    bound = {n for n, v in namespace.items() if not n.startswith("_") and not _is_module(v)}
    return (bound - {"TYPE_CHECKING", "annotations"}) | set(lazy)


def test_all_is_sorted_and_complete() -> None:
    assert ranklens.__all__ == sorted(ranklens.__all__)
    provided = provided_names(vars(ranklens), ranklens._LAZY)
    assert provided | {"__version__"} == set(ranklens.__all__), (
        f"not in __all__: {sorted(provided - set(ranklens.__all__))}; "
        f"in __all__ but not provided: {sorted(set(ranklens.__all__) - provided - {'__version__'})}"
    )
    assert PUBLIC_API <= set(ranklens.__all__), f"public names dropped: {sorted(PUBLIC_API - set(ranklens.__all__))}"


def test_the_export_check_fails_when_a_name_is_dropped() -> None:
    """The check above is not circular: a package whose ``__all__`` lacks a name it provides fails it."""
    namespace = {"Results": object(), "evaluate": object(), "__all__": ["evaluate"]}
    assert provided_names(namespace, {"compare": "ranklens.comparison"}) == {"Results", "evaluate", "compare"}
    assert provided_names(namespace, {}) != set(namespace["__all__"])  # type: ignore[arg-type]


def _is_module(obj: object) -> bool:
    import types

    return isinstance(obj, types.ModuleType)


def _packages() -> list[str]:
    import pkgutil

    return sorted(
        m.name
        for m in pkgutil.walk_packages(ranklens.__path__, "ranklens.")
        if m.ispkg and not m.name.startswith("ranklens.monitor.migrations")
    )



@pytest.mark.parametrize("package", _packages())
def test_every_subpackage_exports_what_it_lists(package: str) -> None:
    """Issue 11: each subpackage with an ``__all__`` lists names that exist (lazily imported ones resolve) and
    no name twice; a subpackage without ``__all__`` is only a namespace of modules."""
    import importlib

    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    if names is None:
        public = [n for n in vars(module) if not n.startswith("_") and not _is_module(getattr(module, n))]
        assert not [n for n in public if n not in ("annotations", "TYPE_CHECKING", "Any")], (
            f"{package} defines public names {public} but no __all__"
        )
        return
    assert len(names) == len(set(names)), f"{package}.__all__ repeats a name"
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{package}.__all__ lists names that do not resolve: {missing}"
