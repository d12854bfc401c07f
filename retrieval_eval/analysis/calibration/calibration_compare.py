"""Compare the out-of-distribution calibration of systems against a baseline.

:func:`compare_calibration` compares the figures of
:func:`retrieval_eval.calibration.calibrate` (AUROC, negative satisfaction) by a paired
bootstrap over queries. The choices every comparison checks (``correction``, the baseline,
the systems in run order) live here too; :mod:`.compare` uses them for the metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...engine.metrics import ID
from .. import stats
from ..evaluation.result import coerce
from ..handoff import viz

CORRECTION_LABEL = {"holm": "Holm", "bonferroni": "Bonferroni", "fdr_bh": "Benjamini-Hochberg", "none": "no"}


def check_choice(name: str, value: str, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def systems_in_order(run: pd.DataFrame) -> list[str]:
    return [str(s) for s in pd.unique(run["system"].astype(ID))]


def pick_baseline(systems: list[str], baseline: str | None) -> str:
    if len(systems) < 2:
        raise ValueError(
            f"comparing needs at least two systems; the run has {len(systems)}"
            + (f" ({systems[0]})" if systems else "")
        )
    if baseline is None:
        return systems[0]
    if baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not a system of the run; it has {', '.join(systems)}")
    return baseline


@dataclass
class CalibrationComparison:
    """The result of :func:`compare_calibration`.

    ``table``: one row per (system, metric) with ``value`` (the system's figure on the
    queries both it and the baseline scored), ``baseline_value``, ``delta``, ``ci_low`` /
    ``ci_high`` (percentile bootstrap of the delta), ``p_value`` (bootstrap, two-sided, +1
    rule), ``p_adjusted`` (corrected across the table), ``significant``, ``n_positive``,
    ``n_negative``, ``rank_based`` (either system's scores look rank-based: the figures do
    not mean what they claim).
    """

    table: pd.DataFrame
    baseline: str
    systems: list[str]
    n_resamples: int
    confidence: float
    correction: str
    alpha: float
    warnings: list[str] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def _body_html(self) -> str:
        esc, table, warnings_html = viz("esc", "table", "warnings_html")

        shown = self.table.set_index(["system", "metric"])[
            ["value", "baseline_value", "delta", "ci_low", "ci_high", "p_adjusted", "n_positive", "n_negative"]
        ]
        return (
            f"<p><b>Out-of-distribution calibration</b> against {esc(self.baseline)} "
            f"({self.confidence:.0%} paired bootstrap, {self.n_resamples:,} resamples)</p>"
            + table(shown)
            + warnings_html(self.warnings)
        )

    def _repr_html_(self) -> str:
        box = viz("box")

        return box("Calibration comparison", self._body_html())

    def __repr__(self) -> str:
        return f"CalibrationComparison(baseline={self.baseline!r}, systems={self.systems}, rows={len(self.table)})"


def _quantile_rows(x: np.ndarray, q: float) -> np.ndarray:
    return np.quantile(x, q, axis=-1, method="linear")


def compare_calibration(
    judgments,
    run,
    queries=None,
    negatives=None,
    baseline: str | None = None,
    quantile: float = 0.10,
    cutoff=None,
    threshold: int = 1,
    n_resamples: int = 2000,
    seed=0,
    confidence: float = 0.95,
    correction: str = "holm",
    alpha: float = 0.05,
) -> CalibrationComparison:
    """Compare AUROC and negative satisfaction of each scored system with the baseline.

    Uses :func:`retrieval_eval.calibration.calibrate` for the top-1 scores and cutoffs. The
    comparison is paired: only positives and negatives that both systems scored enter, and
    each bootstrap resample draws the same positive and negative queries for both systems
    (positives and negatives resampled separately, their counts fixed by the design). The
    cutoff is re-estimated in every resample (the ``quantile`` of the resampled positives)
    unless a fixed ``cutoff`` is given, so its uncertainty is in the interval.

    Parameters
    ----------
    judgments : DataFrame, list of dict or path
        The labels.
    run : DataFrame, path, mapping or Evaluation
        The run (several systems), or an :class:`~retrieval_eval.analysis.result.Evaluation`
        of it, streamed and Dask ones included (the same numbers: :mod:`.heads`).
    queries, negatives
        Declare the ``expect_none`` queries (the negatives).
    baseline : str, optional
        Default: the first system.
    quantile, cutoff, threshold
        As for :func:`~retrieval_eval.analysis.calibration.calibrate`.
    n_resamples, seed, confidence, correction, alpha
        The bootstrap and the correction across the table.

    Returns
    -------
    CalibrationComparison

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> c = rev.compare_calibration(demo.judgments, demo.runs, queries=demo.queries,
    ...                             n_resamples=200)
    >>> sorted(set(c.table["metric"]))
    ['auroc', 'negative_satisfaction']
    """
    check_choice("correction", correction, tuple(CORRECTION_LABEL))
    systems, base, cal = _calibrated(judgments, run, queries, negatives, baseline, quantile, cutoff, threshold, seed)
    warnings = list(cal.warnings)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rows = _candidate_rows(cal, systems, base, rng, cutoff, quantile, n_resamples, confidence, warnings)
    table = _comparison_table(rows, correction, alpha)
    return CalibrationComparison(
        table=table,
        baseline=base,
        systems=systems,
        n_resamples=int(n_resamples),
        confidence=float(confidence),
        correction=correction,
        alpha=float(alpha),
        warnings=warnings,
    )


def _calibrated(judgments, run, queries, negatives, baseline, quantile, cutoff, threshold, seed):
    """The systems in run order, the baseline and the calibration (top-1 scores, cutoffs) that
    the comparison reads."""
    from .core import calibrate

    j, r = coerce(judgments, run)
    systems = systems_in_order(r)
    base = pick_baseline(systems, baseline)
    cal = calibrate(
        j,
        r,
        queries=queries,
        negatives=negatives,
        quantile=quantile,
        cutoff=cutoff,
        threshold=threshold,
        n_resamples=1,
        seed=seed,
    )
    if base not in cal.systems:
        raise ValueError(f"the baseline {base!r} has no scores: calibration cannot be compared")
    return systems, base, cal


def _candidate_rows(cal, systems, base, rng, cutoff, quantile, n_resamples, confidence, warnings) -> list[dict]:
    """Each candidate's two rows (AUROC, negative satisfaction) against the baseline, from one
    paired bootstrap per candidate; a candidate that cannot be compared adds a warning."""
    top = cal.top1
    top = top[~top["missing"].to_numpy(bool)]

    def scores(system: str, kind: str) -> pd.Series:
        t = top[(top["system"] == system) & (top["kind"] == kind)]
        return pd.Series(t["top1_score"].to_numpy(np.float64), index=t["query_id"].to_numpy())

    def cutoff_of(system: str):
        fixed = cutoff.get(system) if isinstance(cutoff, Mapping) else cutoff
        return None if fixed is None else float(fixed)

    rows = []
    alpha_ci = 1.0 - confidence
    rank_based = cal.summary["rank_based"].astype(bool)
    for s in systems:
        if s == base:
            continue
        if s not in cal.systems:
            warnings.append(f"{s} has no scores: left out of the calibration comparison")
            continue
        pb, pc = scores(base, "positive"), scores(s, "positive")
        nb, nc = scores(base, "negative"), scores(s, "negative")
        pos_ids = pb.index.intersection(pc.index, sort=False)
        neg_ids = nb.index.intersection(nc.index, sort=False)
        npos, nneg = len(pos_ids), len(neg_ids)
        P = np.stack([pb.reindex(pos_ids).to_numpy(), pc.reindex(pos_ids).to_numpy()])
        N = np.stack([nb.reindex(neg_ids).to_numpy(), nc.reindex(neg_ids).to_numpy()])
        if npos == 0 or nneg == 0:
            warnings.append(f"{s}: no positive or negative scored by both systems; calibration not compared")
            continue
        ip = rng.integers(0, npos, size=(n_resamples, npos))
        ineg = rng.integers(0, nneg, size=(n_resamples, nneg))
        figures = {}
        for which, system in ((0, base), (1, s)):
            pos, neg = P[which], N[which]
            pos_b, neg_b = pos[ip], neg[ineg]
            fixed = cutoff_of(system)
            c_obs = fixed if fixed is not None else float(_quantile_rows(pos, quantile))
            c_b = np.full(n_resamples, fixed) if fixed is not None else _quantile_rows(pos_b, quantile)
            figures[which] = {
                "auroc": (float(stats.auroc(pos, neg)), stats.auroc(pos_b, neg_b)),
                "negative_satisfaction": (float(np.mean(neg < c_obs)), np.mean(neg_b < c_b[:, None], axis=1)),
            }
        for metric in ("auroc", "negative_satisfaction"):
            vb, db = figures[0][metric]
            vc, dc = figures[1][metric]
            dist = dc - db
            lo, hi = np.quantile(dist, [alpha_ci / 2, 1 - alpha_ci / 2])
            p = stats.bootstrap_pvalue(dist)  # ties within 1e-12 of 0 count on both sides
            rows.append(
                {
                    "system": s,
                    "metric": metric,
                    "value": vc,
                    "baseline_value": vb,
                    "delta": vc - vb,
                    "ci_low": float(lo),
                    "ci_high": float(hi),
                    "p_value": p,
                    "n_positive": npos,
                    "n_negative": nneg,
                    "rank_based": bool(rank_based.get(s, False) or rank_based.get(base, False)),
                }
            )
    return rows


def _comparison_table(rows: list[dict], correction: str, alpha: float) -> pd.DataFrame:
    """The rows as the comparison's table: adjusted p-values, significance, explicit dtypes."""
    table = pd.DataFrame(
        rows,
        columns=[
            "system",
            "metric",
            "value",
            "baseline_value",
            "delta",
            "ci_low",
            "ci_high",
            "p_value",
            "n_positive",
            "n_negative",
            "rank_based",
        ],
    )
    padj = stats.adjust_pvalues(table["p_value"].to_numpy(np.float64), correction)
    table.insert(table.columns.get_loc("p_value") + 1, "p_adjusted", padj)
    table.insert(table.columns.get_loc("p_adjusted") + 1, "significant", np.asarray(padj <= alpha, dtype=bool))
    table = table.astype(
        {
            "system": ID,
            "metric": ID,
            "value": np.float64,
            "baseline_value": np.float64,
            "delta": np.float64,
            "ci_low": np.float64,
            "ci_high": np.float64,
            "p_value": np.float64,
            "p_adjusted": np.float64,
            "significant": bool,
            "n_positive": np.int64,
            "n_negative": np.int64,
            "rank_based": bool,
        }
    )
    return table
