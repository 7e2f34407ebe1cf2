"""The registry of measure families, looked up case-insensitively by name or alias."""

from __future__ import annotations

from ranklens.errors import MeasureError, did_you_mean
from ranklens.measures.base import Family

__all__ = ["families", "get_family", "register"]

_FAMILIES: dict[str, Family] = {}
_LOOKUP: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add a measure family; its name and aliases must be new (case-insensitively)."""
    for key in (family.name, *family.aliases):
        low = key.lower()
        if low in _LOOKUP and _LOOKUP[low] is not family:
            raise MeasureError(f"measure name '{key}' is already registered")
    _FAMILIES[family.name] = family
    for key in (family.name, *family.aliases):
        _LOOKUP[key.lower()] = family
    return family


def get_family(name: str) -> Family:
    """The family called ``name`` (or one of its aliases), case-insensitive."""
    try:
        return _LOOKUP[name.lower()]
    except KeyError:
        raise MeasureError(f"unknown measure '{name}'{did_you_mean(name, list(_FAMILIES))}") from None


def families() -> tuple[Family, ...]:
    """Every registered family, in registration order."""
    return tuple(_FAMILIES.values())
