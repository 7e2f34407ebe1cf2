"""The express form of ``ranklens gate``: the plain command lines recognised before click is imported, run by
the same :func:`ranklens.cli.gate_run.run_gate` as the full command (the same backends, checks, report and exit
status), printed without click.

It takes ``gate QRELS RUN`` with ``--min``/``--max``/``--max-drop MEASURE=VALUE`` (repeatable), ``--baseline``/``-b
FILE``, ``--alpha A`` (0 < A < 1), ``--test NAME``, ``-f``/``--format table|json|text`` and ``--quiet``; every
file an existing regular file, the other options at their defaults (so the policy is the gate's default:
``missing="zero"``, integer labels). Any other command line, a terminal that would show progress, an output that is not UTF-8,
or a gate that raises (bad input) returns None with nothing printed: the full interface then runs and says
what it says (one line, exit status 2).

>>> run(["gate", "--help"]) is None
True
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ranklens.engine.policy import EvalPolicy

__all__ = ["run"]

_RULES = {"--min": "mins", "--max": "maxes", "--max-drop": "max_drops"}
_FORMATS = ("table", "json", "text")


def _parse(args: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments of :func:`~ranklens.cli.gate_run.run_gate` of a plain gate command line, or None."""
    files: list[str] = []
    got: dict[str, Any] = {"mins": [], "maxes": [], "max_drops": [], "fmt": "table", "quiet": False}
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok == "--quiet":
            got["quiet"] = True
            continue
        if tok not in (*_RULES, "--baseline", "-b", "--alpha", "--test", "-f", "--format"):
            if tok.startswith("-") or not os.path.isfile(tok):
                return None
            files.append(tok)
            continue
        if i >= len(args) or args[i].startswith("-"):
            return None
        value = args[i]
        i += 1
        if tok in _RULES:
            got[_RULES[tok]].append(value)
        elif tok in ("--baseline", "-b"):
            if "baseline" in got or not os.path.isfile(value):
                return None
            got["baseline"] = value
        elif tok == "--alpha":
            try:
                alpha = float(value)
            except ValueError:
                return None
            if not 0.0 < alpha < 1.0:
                return None
            got["alpha"] = alpha
        elif tok == "--test":
            got["test"] = value
        elif value in _FORMATS:
            got["fmt"] = value
        else:
            return None
    return {**got, "qrels": files[0], "run": files[1]} if len(files) == 2 else None


def default_policy() -> EvalPolicy:
    """The policy of ``ranklens gate`` without policy options: ``missing="zero"``, integer labels
    (``tests/cli/test_express_gate.py`` checks it against the full command's defaults)."""
    from ranklens.engine.policy import EvalPolicy

    return EvalPolicy(missing="zero", labels="int")


def run(argv: Sequence[str]) -> int | None:
    """Run ``argv`` (without the program name) the express way and return the exit status, or None when
    the express form does not take it (nothing has been printed then)."""
    if not argv or argv[0] != "gate":
        return None
    parsed = _parse(argv[1:])
    if parsed is None:
        return None
    if not parsed["quiet"] and sys.stderr.isatty():
        return None  # (a person at a terminal: the full interface shows the progress of a long evaluation)
    if (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        return None  # (the report's ≥ and ≤: let the full interface decide what this output gets)
    import warnings

    from ranklens.cli.gate_run import run_gate
    from ranklens.errors import RanklensWarning

    out: list[str] = []
    err: list[str] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RanklensWarning)  # (as the full interface: notes are printed, not warned)
            status = run_gate(**parsed, policy=default_policy(), out=out.append, err=err.append)
    except Exception:  # noqa: BLE001 (nothing printed yet: the full interface runs again and says what went wrong)
        return None
    from ranklens.cli._emit import emit

    emit("".join(line + "\n" for line in out), err)
    return status
