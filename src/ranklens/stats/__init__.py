"""Paired significance tests, confidence intervals, multiple-comparison corrections and effect sizes for
comparing retrieval systems over the same queries (METRICS.md §8).

Every two-system function takes per-query scores ``a`` and ``b`` aligned on the same queries and works on
the differences ``a - b``; every Monte Carlo procedure takes a ``seed`` for ``numpy.random.default_rng``.

>>> from ranklens import stats
>>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
>>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
>>> round(stats.paired_t_test(a, b).p_value, 6), stats.randomisation_test(a, b).p_value * 1024
(0.004232, 10.0)
"""

from ranklens.stats._common import TIE_RTOL, Seed
from ranklens.stats.aggregate_diff import aggregate_bootstrap_interval, aggregate_of, aggregate_randomisation_test
from ranklens.stats.agreement import (
    ALPHA_LEVELS,
    KAPPA_WEIGHTS,
    Confusion,
    cohen_kappa,
    confusion_matrix,
    kappa_interval,
    krippendorff_alpha,
)
from ranklens.stats.bootstrap import bootstrap_interval, bootstrap_means, bootstrap_test
from ranklens.stats.corrections import (
    CORRECTIONS,
    adjust_p_values,
    benjamini_hochberg,
    bonferroni,
    canonical_correction,
    holm,
)
from ranklens.stats.effect import cohens_d_paired
from ranklens.stats.paired import (
    ALL_PAIRS_TESTS,
    INTERVALS,
    PAIRED_TESTS,
    canonical_interval,
    canonical_test,
    confidence_interval,
    paired_test,
)
from ranklens.stats.pareto import dominators, front
from ranklens.stats.power import minimum_detectable_effect, sample_size, t_power
from ranklens.stats.ppi import MeanEstimate, normal_mean, ppi_mean, ppi_paired_difference
from ranklens.stats.randomisation import EXACT_MAX_N, randomisation_test
from ranklens.stats.rank_agreement import kendall_tau, tau_ap
from ranklens.stats.rank_tests import sign_test, wilcoxon_test, win_tie_loss
from ranklens.stats.sequential import SequentialResult, msprt, msprt_path
from ranklens.stats.srm import SrmResult, srm_test
from ranklens.stats.ttest import paired_t_test, t_interval
from ranklens.stats.tukey import AnovaTable, PairResult, TukeyResult, blocked_anova, randomised_tukey_hsd, tukey_hsd
from ranklens.stats.types import Interval, TestResult
from ranklens.stats.unpaired import bootstrap_unpaired, mann_whitney_test, relative_lift, welch_interval, welch_test
from ranklens.stats.variance_reduction import CupedResult, cuped

__all__ = [
    "ALL_PAIRS_TESTS",
    "ALPHA_LEVELS",
    "CORRECTIONS",
    "EXACT_MAX_N",
    "INTERVALS",
    "KAPPA_WEIGHTS",
    "PAIRED_TESTS",
    "TIE_RTOL",
    "AnovaTable",
    "Confusion",
    "CupedResult",
    "Interval",
    "MeanEstimate",
    "PairResult",
    "Seed",
    "SequentialResult",
    "SrmResult",
    "TestResult",
    "TukeyResult",
    "adjust_p_values",
    "aggregate_bootstrap_interval",
    "aggregate_of",
    "aggregate_randomisation_test",
    "benjamini_hochberg",
    "blocked_anova",
    "bonferroni",
    "bootstrap_interval",
    "bootstrap_means",
    "bootstrap_test",
    "bootstrap_unpaired",
    "canonical_correction",
    "canonical_interval",
    "canonical_test",
    "cohen_kappa",
    "cohens_d_paired",
    "confidence_interval",
    "confusion_matrix",
    "cuped",
    "dominators",
    "front",
    "holm",
    "kappa_interval",
    "kendall_tau",
    "krippendorff_alpha",
    "mann_whitney_test",
    "minimum_detectable_effect",
    "msprt",
    "msprt_path",
    "normal_mean",
    "paired_t_test",
    "paired_test",
    "ppi_mean",
    "ppi_paired_difference",
    "randomisation_test",
    "randomised_tukey_hsd",
    "relative_lift",
    "sample_size",
    "sign_test",
    "srm_test",
    "t_interval",
    "t_power",
    "tau_ap",
    "tukey_hsd",
    "welch_interval",
    "welch_test",
    "wilcoxon_test",
    "win_tie_loss",
]
