"""Significance tests, intervals and multiple-testing corrections, in plain numpy.

The package's modules: :mod:`.special` (erfc, normal and Student-t distributions),
:mod:`.ranks` (average ranks, AUROC), :mod:`.location` (overflow-safe medians and quantiles),
:mod:`.bootstrap` (percentile intervals and p-values), :mod:`.paired` (paired tests),
:mod:`.corrections` (multiple testing, Wilson interval), :mod:`.agreement` (Cohen's
kappa, Krippendorff's alpha). Every public name is re-exported
here.

Everything here is vectorized: the paired tests take a difference matrix of shape
``(m, n_queries)`` (one row per comparison) and test every row at once, and the resampling
methods draw their resamples as matrices and evaluate them with one matrix product. scipy is
not a runtime dependency; the tests use it as an independent oracle.

Special functions (normal and Student-t CDFs and quantiles) are computed from the regularized
incomplete gamma and beta functions (series and Lentz continued fractions, as in Numerical
Recipes), accurate to about 1e-14 relative; the tests check them against scipy.

Conventions that change a number, stated once:

* Two-sided tests throughout. A *paired* test works on ``d = a - b`` (one value per query).
* Randomization (Fisher's sign-flip) p-values use the ``+1`` rule for random resamples,
  ``p = (#{|T*| >= |T| - tol} + 1) / (B + 1)``, which counts the observed assignment as one of
  the resamples so a p-value is never 0; an exact enumeration (used automatically when
  ``2**n <= B``) counts every assignment and needs no ``+1``. ``tol = 1e-9 * mean(|d|)``
  absorbs float rounding: sums of the same numbers in another order must still tie.
* Bootstrap intervals are percentile intervals (linear interpolation, numpy's default). The
  bootstrap p-value counts a resampled mean within :data:`TIE` (1e-12) of zero as a tie, on
  both sides alike: the same resample summed in another order must not move a p-value.
"""

from __future__ import annotations

from .agreement import cohen_kappa, krippendorff_alpha
from .bootstrap import TIE, BootstrapResult, auroc_ci, bootstrap_ci, bootstrap_pvalue, median_difference_ci
from .corrections import adjust_pvalues, wilson_interval
from .location import difference, median, median_difference, quantile
from .paired import (
    RandomizationResult,
    TTestResult,
    WilcoxonResult,
    paired_bootstrap,
    paired_randomization,
    paired_t,
    sign_flips,
    wilcoxon,
)
from .ranks import auroc, rank_average
from .special import betainc, erfc, norm_cdf, norm_ppf, norm_sf, t_cdf, t_ppf, t_sf, t_two_tail

__all__ = [
    "RandomizationResult",
    "TTestResult",
    "BootstrapResult",
    "WilcoxonResult",
    "erfc",
    "norm_cdf",
    "norm_sf",
    "norm_ppf",
    "betainc",
    "t_cdf",
    "t_sf",
    "t_ppf",
    "t_two_tail",
    "sign_flips",
    "paired_randomization",
    "paired_t",
    "paired_bootstrap",
    "bootstrap_pvalue",
    "wilcoxon",
    "adjust_pvalues",
    "wilson_interval",
    "rank_average",
    "auroc",
    "bootstrap_ci",
    "auroc_ci",
    "median",
    "quantile",
    "difference",
    "median_difference",
    "median_difference_ci",
    "cohen_kappa",
    "krippendorff_alpha",
    "TIE",
]
