"""Compare systems: paired significance tests, intervals, one correction over every row.

:func:`compare` scores every system with the engine (:func:`retrieval_eval.evaluation.evaluate`,
one pass per gain), takes the per-query metric values of the queries with positives, and tests
every (pair, metric) difference at once: the differences form one matrix, one row per
comparison, and every test in :mod:`retrieval_eval.stats` is vectorized over its rows (the
randomization test is one sign matrix times the difference matrix). The pairs are every
system against a baseline (``pairs="baseline"``), or every pair of systems (``pairs="all"``,
the paper's table); the metrics are any mix of the spec's metrics at any cutoffs and the
catalogue's measures. The correction for multiple testing then runs over every row of the
call, because that is the family a reader scans for "significant" results.

:func:`compare_calibration` does the same for the OOD figures of :func:`retrieval_eval.calibration.calibrate`
(AUROC, negative satisfaction), by a paired bootstrap over queries.

The rules of :func:`compare`:

* Which queries: only queries with positives (a query without positives has no defined recall
  or nDCG); ``expect_none`` queries are left out too, and so are run queries without
  judgments; ``excluded``, ``unjudged`` and a warning list them, nothing is dropped silently. A
  judged query a system did not answer scores zero for it, as in every average of this package,
  and ``missing`` says how many.
* Which pairs: ``pairs="baseline"`` tests each system against ``baseline`` (the first system
  unless named); ``pairs="all"`` every pair (the earlier in run order, or the named baseline, is
  a row's ``baseline``): the paper's table, ``Comparison.to_latex(layout="wide")``.
* Which metrics: a spec metric's bare name (``ndcg``) at every cutoff of ``k``; a spec metric
  with its own cutoff (``map@100``) at that cutoff; any catalogue measure (``nDCG@10``, ``P_5``,
  ``P.5,10``), all in one call; with an ``Evaluation``, any metric column of its per-query frame
  (an LLM-judged ``faithfulness`` too). The gain follows from the name: ``ndcg_linear`` and the
  catalogue's ``nDCG`` are trec_eval's linear gain; ``gain`` decides a bare ``ndcg``.
* Which test: ``"randomization"`` (default; Fisher's sign-flip test with the +1 rule, which
  assumes nothing about the shape of the differences: bounded, tied, skewed IR metrics need
  that), ``"t"``, ``"wilcoxon"`` (two-sided signed-rank, as scipy's; ``zero_method`` as scipy's:
  ``"wilcox"``, the default, drops zero differences, ``"pratt"`` ranks then drops them,
  ``"zsplit"`` splits their ranks between the signs) or ``"bootstrap"``. With at most
  :data:`EXACT_MAX_QUERIES` (16) queries the resampling tests give the exact randomization
  p-value (all ``2**n`` sign assignments); with fewer than :data:`MIN_PAIRED_QUERIES` (5) no
  row is marked significant. The correction runs once over every (pair, metric) row of the call.
  Intervals are percentile bootstrap intervals of the mean difference, seeded by ``seed``.
* ``calibration="auto"`` also compares the out-of-distribution figures against the baseline
  (:func:`compare_calibration`, at most 2,000 resamples) when negatives are declared and the run
  has scores, a failure becoming a warning; ``True`` requires it, ``False`` skips it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...engine.metrics import ID, check_ks
from .. import stats
from ..calibration.calibration_compare import (
    CORRECTION_LABEL,
    CalibrationComparison,
    check_choice,
    compare_calibration,
    pick_baseline,
    systems_in_order,
)
from ..evaluation.result import Evaluation, coerce
from ..evaluation.ties import public
from ..handoff import viz  # noqa: F401 (the old module path analysis.compare had it)
from .comparison import TABLE_COLUMNS, Comparison, empty_frames
from .pairwise.columns import INFO_COLUMNS, cutoffs_of, metric_columns
from .pairwise.cube import EXACT_MAX_QUERIES, MIN_PAIRED_QUERIES, pair_indices, result_frames, run_test, value_cube

__all__ = [
    "DEFAULT_METRICS",
    "EXACT_MAX_QUERIES",
    "MIN_PAIRED_QUERIES",
    "PAIRS",
    "TABLE_COLUMNS",
    "TESTS",
    "ZERO_METHODS",
    "Comparison",
    "CalibrationComparison",
    "compare",
    "compare_calibration",
]

#: The spec's six metrics, in the order a comparison table lists them.
DEFAULT_METRICS = ("ndcg", "recall", "precision", "mrr", "map", "hit_rate")
#: Paired tests :func:`compare` can run.
TESTS = ("randomization", "t", "wilcoxon", "bootstrap")
#: Which pairs :func:`compare` tests: each system against the baseline, or every pair.
PAIRS = ("baseline", "all")
#: How the Wilcoxon test treats a zero difference (scipy's names): dropped before ranking
#: (``wilcox``, scipy's default), ranked then dropped (``pratt``), or ranked and split between
#: the signs (``zsplit``).
ZERO_METHODS = ("wilcox", "pratt", "zsplit")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "none")  # stats.adjust_pvalues' methods


_EMPTY_RUN = "the run is empty: nothing to compare"
_NO_POSITIVES = "no judged query has a positive label: nothing to compare"


def _per_query(given, j, r, metrics, ks, threshold: int, gain: str, queries, negs):
    """The per-query frame holding every compared column, those columns, the systems in run order.

    ``given`` an :class:`Evaluation` (in memory, streamed or from Dask): its own per-query frame
    (a streamed run cannot be scored again), so any metric column it holds can be compared; it
    must have been made with the same threshold and negatives. Otherwise one pass of the engine
    on the frames ``j`` and ``r`` at every cutoff named, with the catalogue measures; a column of
    the other gain (``ndcg`` beside ``ndcg_linear``) takes a second pass (same rows, same order).
    """
    from ..evaluation import evaluate_frames

    if isinstance(given, Evaluation):
        if int(threshold) != given.threshold or set(negs) != set(given.negatives):
            raise ValueError(
                f"the evaluation was made at threshold={given.threshold} with "
                f"{len(given.negatives)} negatives; compare it with the same threshold and "
                "negatives, or pass the run"
            )
        pq = given.per_query
        cols, _ = metric_columns(metrics, ks, given.gain, have=set(pq.columns) - INFO_COLUMNS)
        absent = [c for c in cols if c not in pq.columns]
        if absent:
            raise ValueError(
                f"the evaluation has no {', '.join(absent)} (made at k={list(given.ks)}, "
                f"gain={given.gain!r}); compare the metrics it has, or pass the run"
            )
        return pq, cols, [str(s) for s in given.systems]
    cols, catalogue = metric_columns(metrics, ks, gain)
    cut = cutoffs_of(cols, ks)
    ev = evaluate_frames(j, r, cut, threshold, gain, queries, negs, measures=catalogue or None)
    pq = ev.per_query
    # A catalogue measure's column carries the name asked for (ev.catalogue: asked -> canonical):
    # rename before looking for columns of the other gain, or nDCG@10's ndcg_cut_10 looks missing.
    asked_as: dict[str, str] = {}
    for asked, canonical in ev.catalogue.items():
        asked_as.setdefault(canonical, asked)
    cols = list(dict.fromkeys(c if c in pq.columns else asked_as.get(c, c) for c in cols))
    other_gain = [c for c in cols if c not in pq.columns and c.startswith("ndcg")]
    if other_gain:
        other = evaluate_frames(j, r, cut, threshold, "exponential" if gain == "linear" else "linear", queries, negs)
        pq = pq.assign(**{c: other.per_query[c].to_numpy() for c in other_gain})
    return pq, cols, [str(s) for s in ev.systems]


def _listed(ids: list[str], most: int = 10) -> str:
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _notes(missing: dict[str, int], nq: int, test: str, exact: bool, excluded, unjudged) -> list[str]:
    """The warnings of a comparison: unanswered, left-out and too few queries."""
    warnings = [
        f"{s} has no ranking for {n} of {nq} compared queries; they score zero for it" for s, n in missing.items() if n
    ]
    if excluded:
        warnings.append(
            f"{len(excluded)} judged {'query' if len(excluded) == 1 else 'queries'} left out "
            f"(no positives or expect_none): {_listed(excluded)}"
        )
    if unjudged:
        warnings.append(
            f"{len(unjudged)} run {'query' if len(unjudged) == 1 else 'queries'} without "
            f"judgments left out: {_listed(unjudged)}"
        )
    if test == "t" and nq < 2:
        warnings.append("a t-test needs at least 2 queries: p-values are n/a")
    if nq < MIN_PAIRED_QUERIES:
        warnings.append(
            f"only {nq} paired {'query' if nq == 1 else 'queries'} (fewer than "
            f"{MIN_PAIRED_QUERIES}): no row is marked significant on so few"
        )
    if exact and test == "bootstrap":
        warnings.append(
            f"{nq} paired queries: the p-values are exact randomization p-values "
            f"(all 2^{nq} sign assignments); a bootstrap cannot resolve fewer queries"
        )
    return warnings


def _calibration(calibration, j, r, negs, base, settings, queries, negatives, threshold, warnings):
    """:func:`compare_calibration` when asked (or, ``"auto"``, when it can be), else None."""
    if calibration not in ("auto", True, False):
        raise ValueError(f"calibration must be 'auto', True or False, got {calibration!r}")
    if not (calibration is True or (calibration == "auto" and negs and bool(r["score"].notna().any()))):
        return None
    n = settings["n_resamples"]
    try:
        return compare_calibration(
            j,
            r,
            queries=queries,
            negatives=negatives,
            baseline=base,
            threshold=threshold,
            n_resamples=min(n, 2000) if calibration == "auto" else n,
            seed=settings["seed"],
            confidence=settings["confidence"],
            correction=settings["correction"],
            alpha=settings["alpha"],
        )
    except ValueError as err:
        if calibration is True:
            raise
        warnings.append(f"calibration not compared: {err}")
        return None


def _empty(baseline, systems, cols, excluded, warnings, settings) -> Comparison:
    """A comparison of nothing: every frame empty with its documented columns."""
    table, per_query, wtl = empty_frames()
    return Comparison(
        table=table,
        per_query=per_query,
        wins_ties_losses=wtl,
        baseline=baseline if settings["pairs"] == "baseline" else None,
        systems=list(systems),
        metrics=cols,
        missing=dict.fromkeys(systems, 0),
        excluded=excluded,
        warnings=warnings,
        **settings,
    )


def _settings(k, test, correction, alpha, confidence, n_resamples, seed, pairs, zero_method) -> dict:
    """The checked options of :func:`compare` (raises on a bad one), as the Comparison keeps them."""
    check_choice("test", test, TESTS)
    check_choice("correction", correction, tuple(CORRECTION_LABEL))
    check_choice("pairs", pairs, PAIRS)
    check_choice("zero_method", zero_method, ZERO_METHODS)
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be >= 1")
    ks = list(check_ks((k,) if isinstance(k, (int, np.integer)) else tuple(k)))
    return {
        "k": ks[0],
        "ks": ks,
        "test": test,
        "correction": correction,
        "alpha": float(alpha),
        "confidence": float(confidence),
        "n_resamples": int(n_resamples),
        "seed": seed,
        "pairs": pairs,
        "zero_method": zero_method,
    }


def _tested(scored, qids, systems, cols, pairs_, settings):
    """The frames of a comparison of the queries ``qids``, the missing mask, whether p is exact."""
    cube, miss = value_cube(scored, qids, systems, cols)
    diff = (cube[[p[0] for p in pairs_]] - cube[[p[1] for p in pairs_]]).reshape(len(pairs_) * len(cols), len(qids))
    pvals, boot, exact = run_test(
        diff,
        settings["test"],
        settings["n_resamples"],
        settings["seed"],
        settings["confidence"],
        settings["zero_method"],
    )
    padj = stats.adjust_pvalues(pvals, settings["correction"])
    strata = scored.drop_duplicates("query_id").set_index("query_id")["stratum"].reindex(qids)
    frames = result_frames(cube, miss, pairs_, systems, cols, qids, strata, diff, pvals, padj, boot, settings["alpha"])
    return frames, miss, exact


@public
def compare(
    judgments,
    run,
    baseline: str | None = None,
    k: int | Sequence[int] = 10,
    metrics: Sequence[str] | str = DEFAULT_METRICS,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed=0,
    queries=None,
    negatives=None,
    threshold: int = 1,
    gain: str = "exponential",
    confidence: float = 0.95,
    calibration: bool | str = "auto",
    pairs: str = "baseline",
    zero_method: str = "wilcox",
) -> Comparison:
    """Compare the systems of ``run`` pairwise on ``metrics``, every row tested: a :class:`Comparison`.

    The rules (which queries, which pairs, which names, which tests) are the module's, above.

    Parameters
    ----------
    judgments : DataFrame, list of dict or path
    run : DataFrame, path, mapping or Evaluation
        ``{name: run}``, a run frame with a ``system`` column, or an ``Evaluation`` (its
        per-query frame is compared: any metric column it holds can be named).
    baseline : str, optional
        The system the others are compared with (default the first); with ``pairs="all"``, the
        system listed first.
    k : int or sequence of int, default 10
        The cutoffs of a bare metric name.
    metrics : str or sequence of str
        Spec metrics (``ndcg``, ``map@100``, ``ndcg_linear@10``) and catalogue measures
        (``nDCG@10``, ``P_5``), in any mix.
    test : {"randomization", "t", "wilcoxon", "bootstrap"}
    correction : {"holm", "bonferroni", "fdr_bh", "none"}
        Run once over every row.
    alpha, n_resamples, seed, confidence
        Significance level; resamples, seed and level of the resampling tests and intervals.
    queries, negatives, threshold, gain
        ``expect_none`` queries (left out), least relevant grade, a bare ``ndcg``'s gain.
    calibration : {"auto", True, False}
    pairs : {"baseline", "all"}
    zero_method : {"wilcox", "pratt", "zsplit"}
        The Wilcoxon test's treatment of a zero difference (scipy's names).

    Returns
    -------
    Comparison
        Empty (its frames with their columns, a warning) for an empty run or no positives.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> c = rev.compare(demo.judgments, demo.runs, metrics=["ndcg_linear@10", "map@100"],
    ...                 pairs="all", n_resamples=200)
    >>> c.table[["system", "baseline", "metric"]].head(2).to_numpy().tolist()
    [['bm25', 'dense', 'ndcg_linear@10'], ['bm25', 'dense', 'map@100']]
    """
    settings = _settings(k, test, correction, alpha, confidence, n_resamples, seed, pairs, zero_method)
    j, r = coerce(judgments, run)
    systems = systems_in_order(r)
    if not systems:  # an empty run: an empty comparison, not an error
        return _empty(baseline, [], metric_columns(metrics, settings["ks"], gain)[0], [], [_EMPTY_RUN], settings)
    base = pick_baseline(systems, baseline)
    negs = _checked_negatives(j, queries, negatives, threshold)
    pq, cols, systems = _per_query(run, j, r, metrics, settings["ks"], threshold, gain, queries, negs)
    scored, qids, excluded, unjudged = _which_queries(pq, j, r, negs)
    if len(qids) == 0:  # nothing judged, or nothing at the threshold: nothing to compare
        return _empty(base, systems, cols, excluded, [_NO_POSITIVES], settings)
    pairs_ = pair_indices(systems, base, pairs, baseline is not None)
    c = _tested_comparison(scored, qids, systems, cols, pairs_, base, excluded, unjudged, settings)
    c.calibration = _calibration(calibration, j, r, negs, base, settings, queries, negatives, threshold, c.warnings)
    return c


def _tested_comparison(scored, qids, systems, cols, pairs_, base, excluded, unjudged, settings) -> Comparison:
    """The :class:`Comparison` of the compared rows ``scored`` (queries ``qids``): every pair
    tested (:func:`_tested`), its unanswered queries counted and its warnings written."""
    (table, per_query, wtl), miss, exact = _tested(scored, qids, systems, cols, pairs_, settings)
    missing = {s: int(miss[i].sum()) for i, s in enumerate(systems)}
    return Comparison(
        table=table,
        per_query=per_query,
        wins_ties_losses=wtl,
        baseline=base if settings["pairs"] == "baseline" else None,
        systems=systems,
        metrics=cols,
        missing=missing,
        excluded=excluded,
        unjudged=unjudged,
        warnings=_notes(missing, len(qids), settings["test"], exact, excluded, unjudged),
        exact=exact,
        **settings,
    )


def _checked_negatives(j: pd.DataFrame, queries, negatives, threshold: int) -> list[str]:
    """The ``expect_none`` query ids, refused (as score and calibrate do) when one has a positive."""
    from ..calibration.core import check_negatives, negative_ids

    negs = negative_ids(queries, negatives)
    check_negatives(j, negs, threshold)
    return negs


def _which_queries(pq: pd.DataFrame, j: pd.DataFrame, r: pd.DataFrame, negs):
    """The compared rows (queries with positives, not ``expect_none``), their query ids, the
    judged queries left out and the run queries without judgments (left out too)."""
    excluded_mask = (pq["no_positives"] | pq["negative"]).to_numpy(bool)
    excluded = [str(q) for q in pd.unique(pq.loc[excluded_mask, "query_id"])]
    unjudged = sorted(set(r["query_id"].astype(str)) - set(j["query_id"].astype(str)) - set(negs))
    scored = pq.loc[~excluded_mask]
    qids = pd.Index(pd.unique(scored["query_id"].astype(ID)), dtype=ID)
    return scored, qids, excluded, unjudged
