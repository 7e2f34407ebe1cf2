"""A byte-identical re-implementation of trec_eval 10.0's command line on the ranklens engine.

``ranklens trec-eval [-q] [-c] [-n] [-l LEVEL] [-M N] [-J] [-N N] [-R FORMAT] [-Z FILE] [-D LEVEL[.QID]]
[-m MEASURE]... QRELS RUN`` prints what ``trec_eval`` 10.0 prints for the same arguments: every measure of
its table (qrels, ``-R qrels_jg``, ``-R prefs``, ``-R qrels_prefs``) with any parameters, ``-Z`` z-scores,
the run read from standard input with ``-``.

=========================  =====================================================================
module                     job
=========================  =====================================================================
:mod:`.table`              the measure table: print order, formats, aggregation, nicknames
:mod:`.select`             ``-m`` arguments → printed columns and ranklens measures
:mod:`.inputs`             reading the files; the run id; the placeholder ranking of ``-c``
:mod:`.compute`            per-query values (one alignment, kernels per measure, ``-c`` resets)
:mod:`.output`             trec_eval's line formats and summary values
:mod:`.rel_formats`        the main loop for ``-R qrels_jg``, ``prefs``, ``qrels_prefs``
:mod:`.judgment_groups`    ``-R qrels_jg``: reader and map_avgjg, P_avgjg, Rprec_mult_avgjg, yaap
:mod:`.prefs`              ``-R prefs`` / ``qrels_prefs``: reader and the 14 preference measures
:mod:`.zscores`            ``-Z``: reference means and deviations, standardised values
:mod:`.c_numbers`          numbers read like C's ``atol`` (cutoffs, option values)
:mod:`.runner`             one invocation: options → stdout, stderr, exit status
=========================  =====================================================================

Deliberate differences from the C program (README, "trec-eval"): ``rbp`` follows the spec (trec_eval 10.0
reads two uninitialised variables there), inputs trec_eval would misread are refused with the line
(fractional, hexadecimal or non-numeric labels, non-numeric or NaN scores), a UTF-8 byte-order mark is
dropped, ``-D`` prints no debug trace, and fractional ndcg gains are sorted exactly (trec_eval's
comparator truncates gain differences to int).
"""

from ranklens._lazy import lazy_names

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing: trec-eval's express form stays light)

if TYPE_CHECKING:
    from ranklens.trec_eval.runner import TrecEvalOptions, TrecEvalResult, run_trec_eval

__all__ = ["TrecEvalOptions", "TrecEvalResult", "run_trec_eval"]


# the runner is imported on first use, so ``trec-eval --help`` (which reads only the table) stays light
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, "ranklens.trec_eval.runner"), globals())
