"""The values the statistical functions return: a test outcome and a confidence interval."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Interval", "TestResult"]


@dataclass(frozen=True)
class TestResult:
    """The outcome of one paired significance test.

    Attributes:
        test: the test's canonical name (``t``, ``randomisation``, ``bootstrap``, ``wilcoxon``, ``sign``).
        statistic: the test statistic (t; the mean difference; the studentised t; W; the number of wins).
        p_value: the two-sided p-value.
        n: the number of paired queries.
        samples: Monte Carlo samples drawn, or ``None`` when the p-value is exact or analytic.
    """

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    n: int
    samples: int | None = None


@dataclass(frozen=True)
class Interval:
    """A confidence interval of a mean paired difference.

    Attributes:
        low, high: the bounds.
        level: the coverage (0.95 for a 95% interval).
        method: ``t`` (Student) or ``bootstrap`` (percentile).
    """

    low: float
    high: float
    level: float
    method: str

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high
