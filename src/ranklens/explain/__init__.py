"""The worked computation of one measure for one query, the way a textbook shows it: :func:`explain`.

Which backend computes it is the one dispatcher's choice (:func:`ranklens.backends.choose_backend` with
``needs="intermediates"``): the compiled pass when it declares the measure, policy and inputs (it records
the query's intermediates while it evaluates: :mod:`ranklens.explain.compiled`), else the reference engine's
kernels (:mod:`ranklens.explain.reference`). Both give the same :class:`Explanation`
(``tests/cli/test_explain_backends.py``).
"""

from __future__ import annotations

from ranklens.explain.model import Explanation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ranklens.measures.base import Measure

__all__ = ["Explanation", "explain"]


def explain(qrels: Any, run: Any, query: str, measure: Measure | str, **options: Any) -> Explanation:
    """Explain ``measure`` for ``query``: the per-rank table, the ideal ordering and the final value.
    ``options`` are the :class:`~ranklens.engine.evaluator.Evaluator`'s (``policy=`` among them).

    >>> qrels = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}}
    >>> run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}
    >>> e = explain(qrels, run, "q1", "nDCG@5")
    >>> round(e.dcg, 3), round(e.idcg, 3), round(e.value, 3)
    (5.361, 5.893, 0.91)

    Raises:
        InputError: a measure that is not one, a query the run or the qrels lack.
    """
    from ranklens.backends import choose_backend, run_compiled
    from ranklens.errors import InputError
    from ranklens.explain.compiled import compiled_explanation
    from ranklens.measures import parse_many

    measures = parse_many([measure])
    if len(measures) != 1:
        raise InputError(f"explain takes one measure; '{measure}' gives {len(measures)}")
    policy = options.get("policy")
    keywords = {k: v for k, v in options.items() if k != "policy"}
    if keywords and policy is None:  # (the Evaluator's keywords: the policy they make, or the reference says why not)
        from ranklens.engine.policy import EvalPolicy

        policy = EvalPolicy(**keywords)
    files = isinstance(qrels, str) and isinstance(run, str)
    choice = choose_backend(measures, policy, qrels, [run], needs="intermediates", inputs="files" if files else "memory")
    done = run_compiled(choice, lambda why: compiled_explanation(qrels, run, query, measures[0], why, policy))
    if done is not None:
        return done
    from ranklens.explain.reference import reference_explanation

    return reference_explanation(qrels, run, query, measure, **options)
