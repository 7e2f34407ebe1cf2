"""``ranklens trec-eval`` in its common forms without click: ``[-q] [-c] [-n] [-m MEASURE]... QRELS RUN``.

trec_eval's options are read here only in those spellings (``-q``, ``-c``, ``-n``, ``-m NAME`` or ``-mNAME``,
two file names); anything else (another option, a long spelling, combined flags, ``-`` for standard input,
``--help``) returns None and the full command line (:mod:`ranklens.cli.trec_eval_cmd`) reads the arguments,
so every message and exit status stays that command's. Both hand the same :class:`TrecEvalOptions` to the one
runner (:func:`ranklens.trec_eval.runner.run_trec_eval`); this only spares the start-up of click, which on
trec_eval's S-sized collections costs as much as the evaluation.

>>> parse(["-q", "-m", "all_trec", "-mP.5", "q.txt", "r.txt"])
TrecEvalOptions(qrels='q.txt', run='r.txt', measures=('all_trec', 'P.5'), per_query=True, complete=False, summary=True, rel_level=1, max_docs=None, judged_only=False, num_docs=0, rel_format='qrels', zscores=None, debug_query=None)
>>> parse(["-J", "q.txt", "r.txt"]) is None, parse(["q.txt", "-"]) is None, parse(["q.txt"]) is None
(True, True, True)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ranklens.trec_eval.runner import TrecEvalOptions, run_trec_eval

__all__ = ["parse", "run"]

_FLAGS = {"-q": "per_query", "-c": "complete", "-n": "no_summary"}


def parse(args: Sequence[str]) -> TrecEvalOptions | None:
    """The options of ``args`` (what follows ``trec-eval``) in the forms read here, else None."""
    flags = dict.fromkeys(_FLAGS.values(), False)
    measures: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _FLAGS:
            flags[_FLAGS[a]] = True
        elif a == "-m":
            if i + 1 == len(args):
                return None
            measures.append(args[i + 1])
            i += 1
        elif a.startswith("-m") and len(a) > 2:
            measures.append(a[2:])
        elif a.startswith("-") or not a:
            return None
        else:
            files.append(a)
        i += 1
    if len(files) != 2:
        return None
    return TrecEvalOptions(
        qrels=files[0], run=files[1], measures=tuple(measures), per_query=flags["per_query"],
        complete=flags["complete"], summary=not flags["no_summary"],
    )


def run(argv: Sequence[str]) -> int | None:
    """Run ``argv`` (``["trec-eval", ...]``) when :func:`parse` reads it: its exit status after writing
    trec_eval's output; None when the full command line must read it."""
    options = parse(argv[1:])
    if options is None:
        return None
    result = run_trec_eval(options)
    if result.stdout:
        sys.stdout.write(result.stdout)
    if result.stderr:
        sys.stdout.flush()
        sys.stderr.write(result.stderr)
    return result.status
