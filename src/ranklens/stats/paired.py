"""Choose a paired test or a confidence interval by name."""

from __future__ import annotations

from ranklens.errors import InputError, did_you_mean

TYPE_CHECKING = False
if TYPE_CHECKING:  # (numpy is imported by the Monte Carlo tests and scipy's, when one is asked for)
    from numpy.typing import ArrayLike

    from ranklens.stats._common import Seed
    from ranklens.stats.types import Interval, TestResult  # (the tests' modules: when a test runs, not to name one)

__all__ = [
    "ALL_PAIRS_TESTS",
    "INTERVALS",
    "PAIRED_TESTS",
    "canonical_interval",
    "canonical_test",
    "confidence_interval",
    "paired_test",
]

#: Tests of one pair of systems.
PAIRED_TESTS = ("t", "randomisation", "bootstrap", "wilcoxon", "sign")
#: Tests of all pairs of many systems at once; their p-values already control the family-wise error.
ALL_PAIRS_TESTS = ("tukey", "randomised-tukey")
#: Confidence-interval methods.
INTERVALS = ("t", "bootstrap")

_ALIASES = {
    "student": "t",
    "ttest": "t",
    "t-test": "t",
    "paired-t": "t",
    "randomization": "randomisation",
    "permutation": "randomisation",
    "fisher": "randomisation",
    "signed-rank": "wilcoxon",
    "binomial": "sign",
    "tukey-hsd": "tukey",
    "hsd": "tukey",
    "randomized-tukey": "randomised-tukey",
    "randomised_tukey": "randomised-tukey",
    "randomized_tukey": "randomised-tukey",
    "percentile": "bootstrap",
}


def canonical_test(name: str) -> str:
    """The canonical name of a test (``t``, ``randomisation``, ``bootstrap``, ``wilcoxon``, ``sign``,
    ``tukey``, ``randomised-tukey``); common aliases (``student``, ``fisher``, ``permutation``) accepted.

    >>> canonical_test("Fisher")
    'randomisation'
    """
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    known = PAIRED_TESTS + ALL_PAIRS_TESTS
    if key not in known:
        raise InputError(
            f"unknown test {name!r}; expected one of {', '.join(known)}" + did_you_mean(name, [*known, *_ALIASES])
        )
    return key


def canonical_interval(name: str) -> str:
    """The canonical name of a confidence-interval method: ``t`` or ``bootstrap``."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in INTERVALS:
        raise InputError(
            f"unknown confidence interval {name!r}; expected t or bootstrap" + did_you_mean(name, INTERVALS)
        )
    return key


def paired_test(a: ArrayLike, b: ArrayLike, test: str = "t", *, samples: int = 10_000, seed: Seed = 0) -> TestResult:
    """Run the paired test ``test`` on per-query scores ``a`` and ``b`` (difference ``a - b``).

    ``samples`` and ``seed`` serve the Monte Carlo tests (randomisation beyond 20 queries, bootstrap).

    >>> paired_test([0.5, 0.7, 0.9], [0.5, 0.7, 0.9], "wilcoxon").p_value
    1.0
    """
    key = canonical_test(test)
    if key == "t":
        from ranklens.stats.ttest import paired_t_test

        return paired_t_test(a, b)
    if key == "randomisation":
        from ranklens.stats.randomisation import randomisation_test

        return randomisation_test(a, b, samples=samples, seed=seed)
    if key == "bootstrap":
        from ranklens.stats.bootstrap import bootstrap_test

        return bootstrap_test(a, b, samples=samples, seed=seed)
    if key == "wilcoxon":
        from ranklens.stats.rank_tests import wilcoxon_test

        return wilcoxon_test(a, b)
    if key == "sign":
        from ranklens.stats.rank_tests import sign_test

        return sign_test(a, b)
    raise InputError(f"{key!r} compares all systems at once; it is not a test of one pair")


def confidence_interval(
    a: ArrayLike, b: ArrayLike, method: str = "t", *, level: float = 0.95, samples: int = 10_000, seed: Seed = 0
) -> Interval:
    """The ``method`` (``t`` or ``bootstrap`` percentile) confidence interval of the mean of ``a - b``.

    >>> ci = confidence_interval([0.5, 0.7, 0.9], [0.4, 0.5, 0.9])
    >>> ci.method, round(ci.low, 4) < 0.1 < round(ci.high, 4)
    ('t', True)
    """
    key = canonical_interval(method)
    if key == "bootstrap":
        from ranklens.stats.bootstrap import bootstrap_interval

        return bootstrap_interval(a, b, level=level, samples=samples, seed=seed)
    from ranklens.stats.ttest import t_interval

    return t_interval(a, b, level=level)
