"""A byte-identical re-implementation of trec_eval 10.0's command line on the ranklens engine.

``ranklens trec-eval [-q] [-c] [-n] [-l LEVEL] [-M N] [-J] [-N N] [-m MEASURE]... QRELS RUN`` prints what
``trec_eval`` 10.0 prints for the same arguments, for the ``official`` (default), ``set`` and ``all_trec``
measures with any parameters.

=====================  =====================================================================
module                 job
=====================  =====================================================================
:mod:`.table`          the measure table: print order, formats, aggregation, nicknames
:mod:`.select`         ``-m`` arguments → printed columns and ranklens measures
:mod:`.inputs`         reading the files; the run id; the placeholder ranking of ``-c``
:mod:`.compute`        per-query values (one alignment, kernels per measure, ``-c`` resets)
:mod:`.output`         trec_eval's line formats and summary values
:mod:`.runner`         one invocation: options → stdout, stderr, exit status
=====================  =====================================================================

Known differences from the C program (see the module docs): ``rbp`` follows the spec (trec_eval 10.0
reads two uninitialised variables there), ``-M`` below 1, ``-D``, ``-Z`` and the preference formats
(``-R prefs``) are not supported, and fractional ndcg gains are sorted exactly (trec_eval's comparator
truncates gain differences to int).
"""

from ranklens.trec_eval.runner import TrecEvalOptions, TrecEvalResult, run_trec_eval

__all__ = ["TrecEvalOptions", "TrecEvalResult", "run_trec_eval"]
