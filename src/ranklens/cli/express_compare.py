"""The express form of ``ranklens compare``: the plain command lines recognised before click is imported, run by
the same :func:`ranklens.cli.compare_run.run_compare` as the full command (the same backends, tests, report and
exit status), printed without click.

It takes ``compare QRELS RUN RUN [RUN ...]`` with ``-m``/``--measure`` (several measures after one ``-m``, as
:mod:`ranklens.cli._measure_args` reads them), ``-b``/``--baseline``, ``-t``/``--test``, ``--alpha A``
(0 < A < 1), ``-f``/``--format table|markdown|latex|json`` and ``--quiet``; every file an existing regular
file, the other options at their defaults. Any other command line, plugins, a terminal (progress and the
table's fitting), an output that is not UTF-8, or a comparison that raises (bad input) returns None with
nothing printed: the full interface then runs and says what it says.

>>> run(["compare", "--help"]) is None
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

__all__ = ["default_options", "default_policy", "run"]

_VALUED = ("-b", "--baseline", "-t", "--test", "--alpha", "-f", "--format")
_FORMATS = ("table", "markdown", "latex", "json")


def default_policy() -> EvalPolicy:
    """The policy of ``ranklens compare`` without policy options: integer labels (``tests/cli/
    test_express_compare.py`` checks it against the full command's defaults)."""
    from ranklens.engine.policy import EvalPolicy

    return EvalPolicy(labels="int")


def default_options() -> dict[str, Any]:
    """The options of ``ranklens compare`` at their defaults, as its command hands them to
    :func:`~ranklens.cli.compare_run.run_compare` (checked against the full command by the same test)."""
    return dict(
        measures=(), quiet=False, baseline=None, fmt=None, output=None, worst=None, test="t", correction="holm",
        ci="t", segments=None, alpha=0.05, samples=10_000, seed=0, costs=None, engine="memory",
        spark_master="local[2]", explain_diff=None, memory_limit=None,
    )


def _parse(args: Sequence[str]) -> tuple[list[str], dict[str, Any]] | None:
    """``(files, options)`` of a plain compare command line, or None."""
    files: list[str] = []
    got = default_options()
    measures: list[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok in ("-m", "--measure"):
            if i >= len(args) or args[i].startswith("-"):
                return None
            measures.append(args[i])
            i += 1
            while i < len(args) and not args[i].startswith("-") and not os.path.exists(args[i]):
                measures.append(args[i])  # (a word that is no measure: the measure language refuses it, and the full interface says why)
                i += 1
        elif tok == "--quiet":
            got["quiet"] = True
        elif tok in _VALUED:
            if i >= len(args) or args[i].startswith("-"):
                return None
            value = args[i]
            i += 1
            if tok in ("-b", "--baseline"):
                got["baseline"] = value
            elif tok in ("-t", "--test"):
                got["test"] = value
            elif tok == "--alpha":
                try:
                    got["alpha"] = float(value)
                except ValueError:
                    return None
                if not 0.0 < got["alpha"] < 1.0:
                    return None
            elif value in _FORMATS:
                got["fmt"] = value
            else:
                return None
        elif tok.startswith("-") or not os.path.isfile(tok):
            return None
        else:
            files.append(tok)
    got["measures"] = tuple(measures)
    return (files, got) if len(files) >= 3 else None


def run(argv: Sequence[str]) -> int | None:
    """Run ``argv`` (without the program name) the express way and return the exit status, or None when
    the express form does not take it (nothing has been printed then)."""
    if not argv or argv[0] != "compare" or os.environ.get("RANKLENS_PLUGINS"):
        return None
    parsed = _parse(argv[1:])
    if parsed is None:
        return None
    files, options = parsed
    if sys.stderr.isatty() or sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return None  # (a person at a terminal: progress, and a table fitted to its width)
    if (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        return None  # (the report's Δ, ▲ and —: let the full interface decide what this output gets)
    import warnings

    from ranklens.cli._runs import named_runs
    from ranklens.cli.compare_run import run_compare
    from ranklens.errors import RanklensWarning

    out: list[str] = []
    err: list[str] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RanklensWarning)  # (as the full interface: notes are printed, not warned)
            run_compare(
                files[0], named_runs(files[1:], ()), {**options, "policy": default_policy()}, progress=None,
                show=False, on_note=lambda note: err.append(f"ranklens: note: {note}"), out=out.append,
                err=err.append,
            )
    except Exception:  # noqa: BLE001 (nothing printed yet: the full interface runs again and says what went wrong)
        return None
    from ranklens.cli._emit import emit

    emit("".join(text if text.endswith("\n") else text + "\n" for text in out), err)
    return 0
