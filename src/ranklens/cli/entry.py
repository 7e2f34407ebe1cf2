"""The ``ranklens`` console script: ``ranklens eval`` of a small TREC collection goes the express way
(:mod:`ranklens.cli.express`: no click, numpy, pyarrow or rich to import), and so do ``ranklens trec-eval`` in
its common forms (:mod:`ranklens.cli.trec_eval_express`), plain ``ranklens gate`` and ``ranklens compare``
command lines (:mod:`ranklens.cli.express_gate`, :mod:`ranklens.cli.express_compare`) and ``ranklens explain``
of a measure the compiled pass records (:mod:`ranklens.cli.express_explain`): no click; everything else, and
whatever those do not take, goes to the full command line interface (:mod:`ranklens.cli.main`)."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Console-script entry point."""
    if len(sys.argv) > 2 and sys.argv[1] == "eval":
        from ranklens.cli.express import run

        status = run(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    if len(sys.argv) > 3 and sys.argv[1] == "trec-eval":  # (its common forms without click)
        from ranklens.cli.trec_eval_express import run as trec_eval

        status = trec_eval(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    if len(sys.argv) > 2 and sys.argv[1] == "explain":
        from ranklens.cli.express_explain import run as run_explain

        status = run_explain(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    if len(sys.argv) > 2 and sys.argv[1] == "gate":
        from ranklens.cli.express_gate import run as run_gate

        status = run_gate(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    if len(sys.argv) > 2 and sys.argv[1] == "compare":
        from ranklens.cli.express_compare import run as run_compare

        status = run_compare(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    from ranklens.cli.main import main as full

    full()
