"""Where a rule is checked: the one meaning of a rule's segment, for ``ranklens gate`` and the monitor.

* A rule written for one segment (``segment=books``) checks that segment only.
* A rule without a segment checks all queries and, where the results are split into segments, every
  segment as well (the team's expectation of ``nDCG@10 >= 0.85`` with a categories file: every category).
* In a segment that has its own rule of the same kind and measure, that rule replaces the general one.

``ranklens gate --segments`` (:func:`ranklens.gates.check_rules`) and the monitor's rule checks
(:func:`ranklens.monitor.rules.evaluate_rules`) both expand rules with :func:`rule_scopes`.

>>> from ranklens.gates import parse_rule
>>> rules = [parse_rule("nDCG@10 >= 0.85"), parse_rule("nDCG@10 >= 0.9 segment=books")]
>>> [(str(r), s) for r, s in rule_scopes(rules, ["books", "toys"], key=scope_key)]
[('nDCG@10 >= 0.85', None), ('nDCG@10 >= 0.85', 'toys'), ('nDCG@10 >= 0.9 segment=books', 'books')]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = ["rule_scopes", "scope_key"]


def scope_key(rule: Any) -> tuple[str, str]:
    """What makes a segment's own rule replace a general one: its kind (``min``, ``max``, ``max_drop``)
    and its measure."""
    return (str(rule.kind), str(rule.measure))


def rule_scopes(
    rules: Sequence[T],
    segments: Sequence[str],
    *,
    key: Callable[[T], Hashable] = scope_key,
    segment_of: Callable[[T], str | None] = lambda r: getattr(r, "segment", None) or None,
) -> list[tuple[T, str | None]]:
    """Every (rule, scope) to check, in rule order: ``None`` is all queries, else a segment name.
    ``segments`` are the segments the results have (none: rules without a segment check all queries
    only). ``key`` says which rules are "the same rule" for the replacement in a segment."""
    specific = {(key(r), segment_of(r)) for r in rules if segment_of(r) is not None}
    out: list[tuple[T, str | None]] = []
    for r in rules:
        own = segment_of(r)
        if own is not None:
            out.append((r, own))
            continue
        out.append((r, None))
        out.extend((r, s) for s in segments if (key(r), s) not in specific)
    return out
