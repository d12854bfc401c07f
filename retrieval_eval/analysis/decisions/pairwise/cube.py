"""A comparison's numbers: the (system, metric, query) cube, the pairs, the tests, the frames.

Every (pair, metric) difference is a row of one matrix, and every test of
:mod:`retrieval_eval.analysis.stats` runs over its rows at once: no loop over queries or pairs.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from ....engine.metrics import ID
from ... import stats

__all__ = ["EXACT_MAX_QUERIES", "MIN_PAIRED_QUERIES", "pair_indices", "result_frames", "run_test", "value_cube"]

#: Up to this many paired queries, a resampling test's p-value (randomization or bootstrap) is
#: the exact randomization one, every one of the 2**n sign assignments enumerated (65,536 at
#: 16): with so few queries resampling cannot resolve a p-value below 1/2**n, and a bootstrap
#: p-value smaller than that is an artefact of the resampling, not evidence.
EXACT_MAX_QUERIES = 16
#: With fewer paired queries than this, a row carries a warning and is never significant on its
#: own: no test has the power to tell a difference from noise on four queries.
MIN_PAIRED_QUERIES = 5


def pair_indices(systems: list[str], base: str, pairs: str, named: bool) -> list[tuple[int, int]]:
    """(system, baseline) index pairs: each system against ``base``, or every pair (the earlier
    system in run order the baseline, a named ``base`` first)."""
    bi = systems.index(base)
    if pairs == "baseline":
        return [(i, bi) for i in range(len(systems)) if i != bi]
    order = ([bi] + [i for i in range(len(systems)) if i != bi]) if named else list(range(len(systems)))
    return [(later, earlier) for earlier, later in combinations(order, 2)]


def value_cube(scored: pd.DataFrame, qids: pd.Index, systems: list[str], cols: list[str]):
    """``cube[s, m, q]`` (system, metric, query; a query a system did not answer scores zero)
    and ``miss[s, q]`` (the system had no ranking for the query)."""
    wide = scored.pivot(index="query_id", columns="system", values=cols + ["missing"]).reindex(qids)
    cube = np.stack([np.stack([wide[(c, s)].to_numpy(np.float64, na_value=np.nan) for c in cols]) for s in systems])
    miss = np.stack([wide[("missing", s)].to_numpy(bool, na_value=True) for s in systems])
    absent = np.isnan(cube)
    return np.where(absent, 0.0, cube), miss | absent.any(axis=1)


def run_test(diff: np.ndarray, test: str, n_resamples: int, seed, confidence: float, zero_method: str):
    """Every row's p-value, the bootstrap intervals, and whether the p-values are exact."""
    nq = diff.shape[1]
    exact = test in ("randomization", "bootstrap") and nq <= EXACT_MAX_QUERIES
    boot = stats.paired_bootstrap(diff, n_resamples=n_resamples, seed=seed, confidence=confidence)
    if exact:  # every sign assignment, enumerated in one vectorized pass
        p = stats.paired_randomization(diff, exact=True).pvalue
    elif test == "randomization":
        p = stats.paired_randomization(diff, n_resamples=n_resamples, seed=seed).pvalue
    elif test == "t":
        p = stats.paired_t(diff).pvalue if nq >= 2 else np.full(diff.shape[0], np.nan)
    elif test == "wilcoxon":
        p = stats.wilcoxon(diff, zero_method=zero_method).pvalue
    else:
        p = boot.pvalue
    return np.atleast_1d(p).astype(np.float64), boot, exact


def result_frames(cube, miss, pairs, systems, cols, qids, strata, diff, pvals, padj, boot, alpha):
    """The comparison's ``table``, ``per_query`` and ``wins_ties_losses`` frames."""
    nm, nq = len(cols), len(qids)
    si = np.array([p[0] for p in pairs], dtype=np.int64)
    bi = np.array([p[1] for p in pairs], dtype=np.int64)
    names = np.array(systems, dtype=object)
    row_sys, row_base = np.repeat(names[si], nm), np.repeat(names[bi], nm)
    row_met = np.tile(np.array(cols, dtype=object), len(pairs))
    table = pd.DataFrame(
        {
            "system": pd.array(row_sys, dtype=ID),
            "baseline": pd.array(row_base, dtype=ID),
            "metric": pd.array(row_met, dtype=ID),
            "mean": cube[si].mean(axis=2).reshape(-1),
            "baseline_mean": cube[bi].mean(axis=2).reshape(-1),
            "delta": diff.mean(axis=1),
            "ci_low": np.atleast_1d(boot.ci_low).astype(np.float64),
            "ci_high": np.atleast_1d(boot.ci_high).astype(np.float64),
            "p_value": pvals,
            "p_adjusted": padj.astype(np.float64),
            "significant": (np.asarray(padj <= alpha, dtype=bool) & ~np.isnan(padj) & (nq >= MIN_PAIRED_QUERIES)),
            "n": np.full(len(row_sys), nq, dtype=np.int64),
            "missing": np.repeat(miss[si].sum(axis=1), nm).astype(np.int64),
        }
    )
    per_query = pd.DataFrame(
        {
            "system": pd.array(np.repeat(row_sys, nq), dtype=ID),
            "baseline_system": pd.array(np.repeat(row_base, nq), dtype=ID),
            "metric": pd.array(np.repeat(row_met, nq), dtype=ID),
            "query_id": pd.array(np.tile(qids.to_numpy(dtype=object), len(row_sys)), dtype=ID),
            "stratum": pd.array(np.tile(strata.to_numpy(dtype=object), len(row_sys)), dtype=ID),
            "baseline": cube[bi].reshape(-1),
            "candidate": cube[si].reshape(-1),
            "delta": diff.reshape(-1),
            "missing": np.repeat(miss[si], nm, axis=0).reshape(-1),
            "baseline_missing": np.repeat(miss[bi], nm, axis=0).reshape(-1),
        }
    )
    wtl = pd.DataFrame(
        {
            "system": table["system"],
            "baseline": table["baseline"],
            "metric": table["metric"],
            "wins": (diff > 0).sum(axis=1).astype(np.int64),
            "ties": (diff == 0).sum(axis=1).astype(np.int64),
            "losses": (diff < 0).sum(axis=1).astype(np.int64),
        }
    )
    return table, per_query, wtl
