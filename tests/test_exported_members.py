"""The public surface: ``ranklens.__all__`` is sorted, complete and importable (httpx habit), and every
subpackage's ``__all__`` resolves."""

from __future__ import annotations

import pytest

import ranklens


def test_all_is_sorted_and_complete() -> None:
    assert ranklens.__all__ == sorted(ranklens.__all__)
    public = {name for name in dir(ranklens) if not name.startswith("_") and not _is_module(getattr(ranklens, name))}
    assert public | {"__version__"} == set(ranklens.__all__)


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
