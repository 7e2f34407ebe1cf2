"""One spelling of the confidence level: ``--alpha A`` (as in ``compare`` and ``gate``), the intervals
then at 1 − A confidence. Commands that spelled it ``--confidence 0.95`` or ``--level 0.95`` still accept
the old name, with a note.

>>> confidence_level(None, None, "--confidence"), confidence_level(0.1, None, "--confidence")
(0.95, 0.9)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from ranklens.errors import InputError

__all__ = ["alpha_options", "confidence_level"]

_OPEN = click.FloatRange(0, 1, min_open=True, max_open=True)


def alpha_options(legacy: str) -> Callable[[Any], Any]:
    """``--alpha`` and, hidden, the command's old spelling ``legacy`` of the confidence level (passed as
    ``alpha`` and ``legacy_level``; combine them with :func:`confidence_level`)."""

    def decorate(f: Any) -> Any:
        f = click.option(legacy, "legacy_level", type=_OPEN, default=None, hidden=True)(f)
        return click.option(
            "--alpha", type=_OPEN, default=None,
            help=f"Intervals at 1 − ALPHA confidence (default 0.05: 95%), as in every command ({legacy} C is the old "
            "spelling of --alpha 1−C).",
        )(f)

    return decorate


def confidence_level(alpha: float | None, legacy_level: float | None, legacy: str) -> float:
    """The confidence level of ``--alpha`` (default 0.95), or of the old option, said in a note."""
    from ranklens.cli._common import echo_note

    if legacy_level is None:
        return 0.95 if alpha is None else 1.0 - alpha
    if alpha is not None and not math.isclose(alpha, 1.0 - legacy_level, abs_tol=1e-12):
        raise InputError(f"{legacy} {legacy_level:g} and --alpha {alpha:g} disagree; give --alpha only")
    echo_note(f"{legacy} {legacy_level:g} is spelled --alpha {1.0 - legacy_level:.10g} in every command; {legacy} will go")
    return legacy_level
