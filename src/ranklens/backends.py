"""Which backend evaluates: the providers and the one dispatcher (issue 26).

A backend is a provider: it declares what it supports — measures with their parameter values, the
evaluation policy, the kinds of input — and gives a reason when it declines. :func:`choose_backend` asks
them in order and is the only place that chooses; ``ranklens eval`` (both its express form and the full
one), ``compare``, ``gate``, ``trec-eval`` (for the measures the compiled pass declares; the rest on the
reference), ``explain`` (``needs="intermediates"``: the backend records what it computes on the way to the
values of the query asked) and :func:`ranklens.evaluation.evaluate_files` all call it.

* ``compiled``: the one compiled pass of :mod:`ranklens.express` (``_cexpress.c``). Its declaration lives
  next to the C code (:data:`ranklens.express.SUPPORTED_MEASURES`, :data:`ranklens.express.SUPPORTED_POLICY`:
  ``missing`` ``"skip"`` and ``"zero"``, the qrels queries a run lacks then added as 0, trec_eval ``-c``)
  and is compared with each measure's *resolved* parameters, so a changed registry default declines
  instead of printing other numbers. It takes local files only (not standard input, not ``stream=True``); what
  it finds while reading (a compressed file, a line it does not read beyond doubt, a run not grouped by
  query) is a late decline, said the same way.
* ``compiled`` on data in memory (``inputs="memory"``, the Python API): the same pass and declaration, on
  pandas/polars frames and Arrow tables (their Arrow buffers in place) and ``{qid: {doc: value}}`` dicts
  (walked in C); :func:`ranklens.memory.inputs_declined` says which inputs it takes.
* ``reference``: the numpy engine (:class:`~ranklens.engine.evaluator.Evaluator`); it takes everything.
* ``spark``: chosen only when asked (``--engine spark``), imported on use.
* ``duckdb``: chosen only when asked (``--engine duckdb``); it declares what the one SQL formulation
  expresses (:data:`ranklens.sql.SQL_MEASURES`, :data:`ranklens.sql.POLICY`) and declines the rest with the
  reason, an :class:`InputError` (exit 2): asked for by name, it never falls back to another engine.

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
    from typing import Any, TypeVar

    from ranklens.engine.policy import EvalPolicy
    from ranklens.hooks import ProgressHook
    from ranklens.results.core import Results

    T = TypeVar("T")

__all__ = [
    "BACKENDS", "ENGINES", "ENV", "Choice", "choose_backend", "compiled_declines", "compiled_results",
    "debug_note", "duckdb_declines", "forced",
    "run_compiled",
]

#: the environment variable that forces a backend
ENV = "RANKLENS_BACKEND"

#: the backends a user may force, in the order the dispatcher tries them
BACKENDS = ("compiled", "reference")

#: the engines a command may ask for by name (``--engine``)
ENGINES = ("memory", "spark", "duckdb")


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
    inputs: str = "files",
) -> str | None:
    """Why the compiled provider does not take these inputs (None: it takes them, unless reading says
    otherwise): its availability, the measures' resolved parameters, the policy, the kinds of input:
    ``inputs="files"`` (paths), ``"memory"`` (frames, Arrow tables and dicts,
    :func:`ranklens.memory.inputs_declined`) or ``"columns"`` (Arrow columns in memory, a Spark bucket's rows
    read by ``_cexpress.evaluate_columns``; ``qrels`` and ``runs`` are then not looked at). Only a qrels file
    lets the pass add the queries a run lacks (``_cexpress.qrels_query_ids``), so ``missing="zero"`` is
    declined on any other input."""
    from ranklens import express

    reason = express.measures_declined(measures) or express.policy_declined(policy)  # type: ignore[arg-type]
    reason = reason or express.unavailable()
    if reason is None and inputs != "files" and getattr(policy, "missing", None) == "zero":
        reason = f"policy missing='zero' on {inputs} (the pass adds absent queries only when reading a qrels file)"
    if inputs == "columns":
        return reason
    if inputs == "memory":
        from ranklens.memory import inputs_declined

        return reason or inputs_declined(qrels, runs, policy)
    if reason is None and stream is not None:
        reason = f"stream={stream} asked for (the compiled pass chooses how it reads)"
    if reason is None and not isinstance(qrels, str):
        reason = f"qrels given as {type(qrels).__name__}, not a file path"
    if reason is None:
        from ranklens.data.datasets import is_dataset

        named = next((p for p in (qrels, *runs) if isinstance(p, str) and p != "-" and is_dataset(p)), None)
        if named is not None:
            reason = f"{named} is a Parquet dataset (a directory or a glob); the compiled pass reads one file"
    if reason is None and not runs:
        reason = "no run file"
    if reason is None:
        bad = next((r for r in runs if not isinstance(r, str) or r == "-"), None)
        if bad is not None:
            reason = "a run read from standard input" if bad == "-" else f"a run given as {type(bad).__name__}"
    return reason


def duckdb_declines(measures: Sequence[object], policy: object) -> str | None:
    """Why the DuckDB provider does not take these measures and policy (None: it takes them): its
    availability, then what the SQL formulation expresses.

    >>> from ranklens.measures import parse_many
    >>> duckdb_declines(parse_many(["ERR@10"]), None)  # doctest: +ELLIPSIS
    'ERR@10: the SQL formulation expresses nDCG, DCG, P, R, AP, RR, Success, Rprec, Judged only'
    """
    import importlib.util

    from ranklens import sql

    reason = sql.measures_declined(measures) or sql.policy_declined(policy)  # type: ignore[arg-type]
    if reason is None and importlib.util.find_spec("duckdb") is None:
        reason = "duckdb is not installed: pip install 'ranklens[duckdb]'"
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
    inputs: str = "files",
    needs: str = "values",
) -> Choice:
    """The backend that evaluates ``runs`` against ``qrels`` with ``measures`` under ``policy`` (an
    :class:`~ranklens.engine.policy.EvalPolicy`, None: the default): Spark when ``engine="spark"``, else the
    first provider of :data:`BACKENDS` that does not decline (``RANKLENS_BACKEND`` forces one); DuckDB when
    ``engine="duckdb"`` and it takes the measures and policy (else an :class:`InputError` with its reason). ``note``:
    write the debug note (``RANKLENS_DEBUG``) of a backend other than the compiled one now (the compiled
    one may still decline while reading: :func:`run_compiled` writes its note). ``needs="intermediates"``
    (``explain``: the kernel's per-rank gains, discounts, DCG and ideal DCG): the compiled pass records them
    for the families it declares (:func:`ranklens.express.intermediates_declined`; files only). ``inputs``: ``"files"`` (paths) or ``"memory"`` (the Python
    API's frames, Arrow tables and dicts: :mod:`ranklens.memory`) or ``"columns"`` (the Spark engine's buckets:
    :func:`compiled_declines`).

    Raises:
        InputError: the forced backend declines, or ``RANKLENS_BACKEND`` names no backend.
    """
    want = forced()
    if engine not in ENGINES:
        raise InputError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    if engine in ("spark", "duckdb"):
        if want is not None:
            raise InputError(f"{ENV}={want} and --engine {engine} ask for two backends; choose one")
        if engine == "duckdb":
            reason = duckdb_declines(measures, policy)
            if reason is not None:
                raise InputError(f"--engine duckdb declines: {reason}")
        choice = Choice(engine, f"asked for (engine={engine!r})")
    elif want == "reference":
        choice = Choice("reference", f"forced by {ENV}=reference")
    else:
        reason = compiled_declines(measures, policy, qrels, runs, stream, inputs)
        if reason is None and needs == "intermediates":
            from ranklens.express import intermediates_declined

            reason = intermediates_declined(measures, inputs)  # type: ignore[arg-type]
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


def compiled_results(
    qrels: str, named: Sequence[tuple[str | None, str]], wanted: Sequence[Any], policy: EvalPolicy,
    progress: ProgressHook | None, why: list[str],
) -> tuple[list[Results], list[str]] | None:
    """The Results of the compiled backend (:mod:`ranklens.express`, chosen by
    :func:`ranklens.backends.choose_backend`) and the runs it found not grouped by query, or None when it
    declines while reading (what it found appended to ``why``). Values, notes and options are the reference's
    (``tests/test_express.py``, ``tests/engine/test_backend_parity.py``); only the time differs."""
    from ranklens.express import evaluate_express

    paths = [path for _, path in named]
    quick = evaluate_express(
        qrels, paths, wanted, names=[name for name, _ in named], progress=progress, why=why, missing=policy.missing
    )
    if quick is None:
        return None
    from ranklens.results.core import assemble

    options = {**policy.options(labels="int"), "streamed": True}
    not_grouped = [path for path, r in zip(paths, quick) if not r.grouped]
    return [  # (the values stay as the pass held them, in pure Python: numpy only for a caller who asks)
        assemble(r.run, wanted, r.query_ids, r.stored_values(), r.notes, options if r.grouped else policy.options(labels="int"))
        for r in quick
    ], not_grouped
