"""The public surface: ``ranklens.__all__`` is sorted, complete and importable (httpx habit)."""

from __future__ import annotations

import ranklens


def test_all_is_sorted_and_complete() -> None:
    assert ranklens.__all__ == sorted(ranklens.__all__)
    public = {name for name in dir(ranklens) if not name.startswith("_") and not _is_module(getattr(ranklens, name))}
    assert public | {"__version__"} == set(ranklens.__all__)


def _is_module(obj: object) -> bool:
    import types

    return isinstance(obj, types.ModuleType)
