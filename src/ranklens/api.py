"""The Python API's entry point: :func:`ranklens.evaluate` through the one dispatcher (issue 26).

The compiled backend evaluates data in memory (pandas and polars frames and Arrow tables through their Arrow
buffers, ``{qid: {doc: value}}`` dicts walked in C: :mod:`ranklens.memory`) when
:func:`ranklens.backends.choose_backend` (``inputs="memory"``) chooses it; the reference engine
(:class:`ranklens.Evaluator`) evaluates everything else, and whatever the compiled pass declines while
reading (it then says what is wrong, if anything). Values, notes, options and id types are the reference's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ranklens.measures.language import MeasuresArg
    from ranklens.results.core import Results

__all__ = ["evaluate"]


def evaluate(qrels: Any, run: Any, measures: MeasuresArg, **options: Any) -> Results:
    """Evaluate ``run`` against ``qrels`` (paths, :class:`~ranklens.Qrels`/:class:`~ranklens.Run`, pandas or
    polars frames, Arrow tables, ``{qid: {doc: value}}`` dicts) on ``measures``; ``options`` are those of
    :class:`~ranklens.Evaluator` (``missing=``, ``judged_only=`` … or ``policy=``). The backend is the
    dispatcher's (``RANKLENS_BACKEND`` forces one, ``RANKLENS_DEBUG=1`` says which ran and why).

    >>> qrels = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}}
    >>> run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}
    >>> res = evaluate(qrels, run, ["nDCG@5", "nDCG(gain=exp)@5", "AP"])
    >>> [round(v, 6) for v in res.aggregates]
    [0.909816, 0.912943, 0.805556]

    Integer query ids come back as integers:

    >>> evaluate({7: {"a": 1}}, {7: {"a": 1.0, "b": 2.0}}, "RR").per_query("RR")
    {7: 0.5}
    """
    from ranklens.backends import choose_backend, run_compiled

    policy = _policy(options)
    if policy is not None:
        from ranklens.errors import RanklensError
        from ranklens.measures import parse_many

        try:
            wanted = [m.validate() for m in parse_many(measures, rel_level=policy.rel_level)]  # (as the Evaluator)
        except RanklensError:  # (no backend then: the reference parses them again and says what is wrong)
            wanted = []
        choice = choose_backend(wanted, policy, qrels, [run], inputs="memory")

        def compiled(why: list[str]) -> Results | None:
            from ranklens.memory import evaluate_memory

            return evaluate_memory(qrels, run, wanted, policy, why)  # type: ignore[no-any-return]

        res = run_compiled(choice, compiled)
        if res is not None:
            from ranklens.errors import warn_notes

            warn_notes(res.notes, f"{res.run}: ")  # (as the reference's Evaluator issues them)
            return res
    from ranklens.engine.evaluator import Evaluator

    return Evaluator(measures, qrels, **options)(run)


def _policy(options: dict[str, Any]) -> Any:
    """The :class:`~ranklens.engine.policy.EvalPolicy` of ``options``, or None when they are not one (an
    option that is no policy field, or ``policy=`` next to keywords: the reference says what is wrong)."""
    from ranklens.engine.policy import EvalPolicy
    from ranklens.errors import RanklensError

    if "policy" in options:
        given = options["policy"]
        return given if len(options) == 1 and isinstance(given, EvalPolicy) else None
    try:
        return EvalPolicy(**options)
    except (TypeError, ValueError, RanklensError):
        return None
