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

from ranklens._lazy import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:  # the names below are imported on first use (PEP 562), so importing the package stays light
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

#: public name → the module that defines it (imported when the name is first used)
_LAZY = {
    "TIE_RTOL": "ranklens.stats._common",
    "Seed": "ranklens.stats._common",
    "aggregate_bootstrap_interval": "ranklens.stats.aggregate_diff",
    "aggregate_of": "ranklens.stats.aggregate_diff",
    "aggregate_randomisation_test": "ranklens.stats.aggregate_diff",
    "ALPHA_LEVELS": "ranklens.stats.agreement",
    "KAPPA_WEIGHTS": "ranklens.stats.agreement",
    "Confusion": "ranklens.stats.agreement",
    "cohen_kappa": "ranklens.stats.agreement",
    "confusion_matrix": "ranklens.stats.agreement",
    "kappa_interval": "ranklens.stats.agreement",
    "krippendorff_alpha": "ranklens.stats.agreement",
    "bootstrap_interval": "ranklens.stats.bootstrap",
    "bootstrap_means": "ranklens.stats.bootstrap",
    "bootstrap_test": "ranklens.stats.bootstrap",
    "CORRECTIONS": "ranklens.stats.corrections",
    "adjust_p_values": "ranklens.stats.corrections",
    "benjamini_hochberg": "ranklens.stats.corrections",
    "bonferroni": "ranklens.stats.corrections",
    "canonical_correction": "ranklens.stats.corrections",
    "holm": "ranklens.stats.corrections",
    "cohens_d_paired": "ranklens.stats.effect",
    "ALL_PAIRS_TESTS": "ranklens.stats.paired",
    "INTERVALS": "ranklens.stats.paired",
    "PAIRED_TESTS": "ranklens.stats.paired",
    "canonical_interval": "ranklens.stats.paired",
    "canonical_test": "ranklens.stats.paired",
    "confidence_interval": "ranklens.stats.paired",
    "paired_test": "ranklens.stats.paired",
    "dominators": "ranklens.stats.pareto",
    "front": "ranklens.stats.pareto",
    "minimum_detectable_effect": "ranklens.stats.power",
    "sample_size": "ranklens.stats.power",
    "t_power": "ranklens.stats.power",
    "MeanEstimate": "ranklens.stats.ppi",
    "normal_mean": "ranklens.stats.ppi",
    "ppi_mean": "ranklens.stats.ppi",
    "ppi_paired_difference": "ranklens.stats.ppi",
    "EXACT_MAX_N": "ranklens.stats.randomisation",
    "randomisation_test": "ranklens.stats.randomisation",
    "kendall_tau": "ranklens.stats.rank_agreement",
    "tau_ap": "ranklens.stats.rank_agreement",
    "sign_test": "ranklens.stats.rank_tests",
    "wilcoxon_test": "ranklens.stats.rank_tests",
    "win_tie_loss": "ranklens.stats.rank_tests",
    "SequentialResult": "ranklens.stats.sequential",
    "msprt": "ranklens.stats.sequential",
    "msprt_path": "ranklens.stats.sequential",
    "SrmResult": "ranklens.stats.srm",
    "srm_test": "ranklens.stats.srm",
    "paired_t_test": "ranklens.stats.ttest",
    "t_interval": "ranklens.stats.ttest",
    "AnovaTable": "ranklens.stats.tukey",
    "PairResult": "ranklens.stats.tukey",
    "TukeyResult": "ranklens.stats.tukey",
    "blocked_anova": "ranklens.stats.tukey",
    "randomised_tukey_hsd": "ranklens.stats.tukey",
    "tukey_hsd": "ranklens.stats.tukey",
    "Interval": "ranklens.stats.types",
    "TestResult": "ranklens.stats.types",
    "bootstrap_unpaired": "ranklens.stats.unpaired",
    "mann_whitney_test": "ranklens.stats.unpaired",
    "relative_lift": "ranklens.stats.unpaired",
    "welch_interval": "ranklens.stats.unpaired",
    "welch_test": "ranklens.stats.unpaired",
    "CupedResult": "ranklens.stats.variance_reduction",
    "cuped": "ranklens.stats.variance_reduction",
}

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

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
