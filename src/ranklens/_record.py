"""A ``typing.NamedTuple`` class made without importing :mod:`typing` (a few milliseconds of the start-up of
every face that returns one: ``tests/test_face_imports.py`` counts it).

A module writes its record as a NamedTuple for the type checker, and as a plain class with the same
annotations at run time, which :func:`record` turns into a :func:`collections.namedtuple` of those fields::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        NamedTuple = object

    @record
    class Pair(NamedTuple):
        \"\"\"Two numbers.\"\"\"

        a: int
        b: int

>>> class Pair:
...     \"\"\"Two numbers.\"\"\"
...     a: int
...     b: int
>>> Pair = record(Pair)
>>> p = Pair(1, b=2)
>>> p, p._fields, tuple(p), Pair.__doc__
(Pair(a=1, b=2), ('a', 'b'), (1, 2), 'Two numbers.')
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

__all__ = ["record"]


def record(cls: T) -> T:
    """The named tuple of the fields ``cls`` annotates (in order), with its name, module and docstring; a
    ``typing.NamedTuple`` class (when the type checker reads the module) is returned as it is."""
    if isinstance(cls, type) and issubclass(cls, tuple):
        return cls  # type: ignore[return-value]
    c: type = cls  # type: ignore[assignment]
    made = collections.namedtuple(c.__name__, list(c.__dict__.get("__annotations__", {})))  # type: ignore[misc]
    made.__doc__, made.__module__, made.__qualname__ = c.__doc__, c.__module__, c.__qualname__
    return made  # type: ignore[return-value]
