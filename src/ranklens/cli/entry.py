"""The ``ranklens`` console script: ``ranklens eval`` of a small TREC collection goes the express way
(:mod:`ranklens.cli.express`: no click, numpy, pyarrow or rich to import), and so do ``ranklens trec-eval`` in
its common forms (:mod:`ranklens.cli.trec_eval_express`), plain ``ranklens gate`` and ``ranklens compare``
command lines (:mod:`ranklens.cli.express_gate`, :mod:`ranklens.cli.express_compare`) and ``ranklens explain``
of a measure the compiled pass records (:mod:`ranklens.cli.express_explain`): no click; everything else, and
whatever those do not take, goes to the full command line interface (:mod:`ranklens.cli.main`)."""

from __future__ import annotations

import sys

__all__ = ["main"]

#: the commands with an express form: the module whose ``run(argv)`` takes them before click (None: not taken,
#: nothing printed), and how many words after the program name they need at least
EXPRESS = {
    "eval": ("ranklens.cli.express", 2),
    "trec-eval": ("ranklens.cli.trec_eval_express", 3),
    "explain": ("ranklens.cli.express_explain", 2),
    "gate": ("ranklens.cli.express_gate", 2),
    "compare": ("ranklens.cli.express_compare", 2),
}


def main() -> None:
    """Console-script entry point."""
    express = EXPRESS.get(sys.argv[1]) if len(sys.argv) > 1 else None
    if express is not None and len(sys.argv) > express[1]:
        module = __import__(express[0], fromlist=["run"])
        status = module.run(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    from ranklens.cli.main import main as full

    full()
