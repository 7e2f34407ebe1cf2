"""Names of a package imported on first use (PEP 562), so importing the package stays light.

A package lists ``{public name: defining module}`` and installs the two hooks::

    __getattr__, __dir__ = lazy_names(__name__, {"Results": "ranklens.results.core"}, globals())

The first lookup imports the module and stores the value in the package, so later lookups are plain
attribute reads, and a submodule imported later can never replace the name.

>>> import types
>>> ns = {"__all__": ["sqrt"]}
>>> getattr_, dir_ = lazy_names("pkg", {"sqrt": "math"}, ns)
>>> getattr_("sqrt")(9.0), "sqrt" in ns, dir_()
(3.0, True, ['sqrt'])
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: importing typing costs more than a small evaluation)
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for the lazily imported names of ``where``."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(namespace.get("__all__", where))  # the public names, loaded or not

    return __getattr__, __dir__
