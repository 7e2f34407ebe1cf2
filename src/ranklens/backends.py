"""Which backend evaluates: the providers and the one dispatcher (issue 26).

A backend is a provider: it declares what it supports — measures with their parameter values, the
evaluation policy, the kinds of input — and gives a reason when it declines. :func:`choose_backend` asks
them in order and is the only place that chooses; ``ranklens eval`` (both its express form and the full
one), ``compare``, ``gate`` and :func:`ranklens.evaluation.evaluate_files` all call it.

* ``compiled``: the one compiled pass of :mod:`ranklens.express` (``_cexpress.c``). Its declaration lives
  next to the C code (:data:`ranklens.express.SUPPORTED_MEASURES`, :data:`ranklens.express.SUPPORTED_POLICY`)
  and is compared with each measure's *resolved* parameters, so a changed registry default declines
  instead of printing other numbers. It takes local files only (not standard input, not ``stream=True``); what
  it finds while reading (a compressed file, a line it does not read beyond doubt, a run not grouped by
  query) is a late decline, said the same way.
* ``reference``: the numpy engine (:class:`~ranklens.engine.evaluator.Evaluator`); it takes everything.
* ``spark``: chosen only when asked (``--engine spark``), imported on use.

``RANKLENS_BACKEND=reference|compiled`` forces one; forcing one that declines is an :class:`InputError`
(exit 2) saying why. ``RANKLENS_DEBUG=1`` writes one line to standard error saying which backend ran and why.

>>> import os
>>> saved = os.environ.pop(ENV, None)
>>> from ranklens.measures import parse_many
>>> choice = choose_backend(parse_many(["nDCG(gain=exp)@10"]), None, "q.txt", ["r.txt"])
>>> choice.name, choice.declined
('reference', (('compiled', 'nDCG(gain=exp)@10: gain=exp; the compiled pass implements gain=linear'),))
>>> os.environ.update({ENV: saved} if saved else {})
"""

from __future__ import annotations

import os
import sys

from ranklens.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: the express form of `ranklens eval` imports this module)
    from collections.abc import Callable, Sequence
    from typing import TypeVar

    T = TypeVar("T")

__all__ = ["BACKENDS", "ENV", "Choice", "choose_backend", "compiled_declines", "debug_note", "forced", "run_compiled"]

#: the environment variable that forces a backend
ENV = "RANKLENS_BACKEND"

#: the backends a user may force, in the order the dispatcher tries them
BACKENDS = ("compiled", "reference")


class Choice:
    """What :func:`choose_backend` chose: the backend's ``name``, the ``reason`` it was taken, and the
    ``(backend, reason)`` of each one that declined before it."""

    __slots__ = ("name", "reason", "declined")

    def __init__(self, name: str, reason: str, declined: tuple[tuple[str, str], ...] = ()) -> None:
        self.name, self.reason, self.declined = name, reason, declined

    def __repr__(self) -> str:
        return f"Choice({self.name!r}, {self.reason!r}, {self.declined!r})"

    def said(self) -> str:
        """One line: which backend runs and why.

        >>> Choice("reference", "the first that takes these inputs", (("compiled", "policy missing='zero'"),)).said()
        "backend reference: the first that takes these inputs (compiled declined: policy missing='zero')"
        """
        why = "; ".join(f"{name} declined: {reason}" for name, reason in self.declined)
        return f"backend {self.name}: {self.reason}" + (f" ({why})" if why else "")


def forced() -> str | None:
    """The backend ``RANKLENS_BACKEND`` forces (None: unset or empty); any other value is an :class:`InputError`."""
    value = os.environ.get(ENV, "")
    if not value:
        return None
    if value not in BACKENDS:
        raise InputError(f"{ENV} must be one of {', '.join(BACKENDS)}; got {value!r}")
    return value


def compiled_declines(
    measures: Sequence[object], policy: object, qrels: object, runs: Sequence[object], stream: bool | None = None,
    *, columns: bool = False,
) -> str | None:
    """Why the compiled provider does not take these inputs (None: it takes them, unless reading says
    otherwise): its availability, the measures' resolved parameters, the policy, the kinds of input.
    ``columns``: the inputs are Arrow columns in memory (a Spark bucket's rows, read by
    ``_cexpress.evaluate_columns``), not files; ``qrels`` and ``runs`` are then not looked at."""
    from ranklens import express

    reason = express.measures_declined(measures) or express.policy_declined(policy)  # type: ignore[arg-type]
    reason = reason or express.unavailable()
    if reason is None and columns:
        return None
    if reason is None and stream is not None:
        reason = f"stream={stream} asked for (the compiled pass chooses how it reads)"
    if reason is None and not isinstance(qrels, str):
        reason = f"qrels given as {type(qrels).__name__}, not a file path"
    if reason is None and not runs:
        reason = "no run file"
    if reason is None:
        bad = next((r for r in runs if not isinstance(r, str) or r == "-"), None)
        if bad is not None:
            reason = "a run read from standard input" if bad == "-" else f"a run given as {type(bad).__name__}"
    return reason


def choose_backend(
    measures: Sequence[object],
    policy: object,
    qrels: object,
    runs: Sequence[object],
    *,
    stream: bool | None = None,
    engine: str = "memory",
    note: bool = True,
    columns: bool = False,
) -> Choice:
    """The backend that evaluates ``runs`` against ``qrels`` with ``measures`` under ``policy`` (an
    :class:`~ranklens.engine.policy.EvalPolicy`, None: the default): Spark when ``engine="spark"``, else the
    first provider of :data:`BACKENDS` that does not decline (``RANKLENS_BACKEND`` forces one). ``note``:
    write the debug note (``RANKLENS_DEBUG``) of a backend other than the compiled one now (the compiled
    one may still decline while reading: :func:`run_compiled` writes its note). ``columns``: the inputs are
    Arrow columns (the Spark engine's buckets: :func:`compiled_declines`).

    Raises:
        InputError: the forced backend declines, or ``RANKLENS_BACKEND`` names no backend.
    """
    want = forced()
    if engine == "spark":
        if want is not None:
            raise InputError(f"{ENV}={want} and --engine spark ask for two backends; choose one")
        choice = Choice("spark", "asked for (engine='spark')")
    elif want == "reference":
        choice = Choice("reference", f"forced by {ENV}=reference")
    else:
        reason = compiled_declines(measures, policy, qrels, runs, stream, columns=columns)
        if reason is None:
            choice = Choice("compiled", f"forced by {ENV}=compiled" if want else "it declares these measures, policy and inputs")
        elif want == "compiled":
            raise InputError(f"{ENV}=compiled: the compiled backend declines: {reason}")
        else:
            choice = Choice("reference", "it takes everything", (("compiled", reason),))
    if note and choice.name != "compiled":  # (the compiled one may still decline: run_compiled says)
        debug_note(choice)
    return choice


def run_compiled(choice: Choice, evaluate: Callable[[list[str]], T | None]) -> T | None:
    """``evaluate(why)`` when ``choice`` is the compiled backend, and its result; None when it declines while
    reading (it appends what it found to ``why``) or another backend was chosen. Writes the debug note of the
    backend that ends up running; a late decline of a forced compiled backend is an :class:`InputError`."""
    if choice.name != "compiled":
        return None
    why: list[str] = []
    out = evaluate(why)
    if out is not None:
        debug_note(choice)
        return out
    reason = "; ".join(why) or "it declined while reading"
    if forced() == "compiled":
        raise InputError(f"{ENV}=compiled: the compiled backend declines: {reason}")
    debug_note(Choice("reference", "it takes everything", (*choice.declined, ("compiled", reason))))
    return None


def debug_note(choice: Choice) -> None:
    """Write ``ranklens: debug: <choice>`` to standard error when ``RANKLENS_DEBUG`` is set (not ``0``)."""
    if os.environ.get("RANKLENS_DEBUG", "") not in ("", "0"):
        sys.stderr.write(f"ranklens: debug: {choice.said()}\n")
