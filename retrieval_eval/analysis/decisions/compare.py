"""Compare systems against a baseline: paired significance tests, intervals, corrections.

:func:`compare` scores every system with the engine (:func:`retrieval_eval.evaluation.evaluate`,
one pass), takes the per-query metric values of the queries with positives, and tests every
(system, metric) difference against the baseline at once: the differences form one matrix,
one row per comparison, and every test in :mod:`retrieval_eval.stats` is vectorized over its
rows (the randomization test is one sign matrix times the difference matrix). The correction
for multiple testing then runs over every comparison of the call, because that is the family
a reader scans for "significant" results.

:func:`compare_calibration` does the same for the out-of-distribution figures of
:func:`retrieval_eval.calibration.calibrate` (AUROC, negative satisfaction), by a paired
bootstrap over queries.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ...engine.measures.seed import parse_metric
from ...engine.metrics import ID, metric_name
from ..calibration.calibration_compare import (CORRECTION_LABEL, CalibrationComparison, check_choice,
                                  compare_calibration, pick_baseline, systems_in_order)
from ..handoff import viz
from ..evaluation.result import Evaluation, coerce
from ...engine.metrics import check_ks

__all__ = [
    "DEFAULT_METRICS",
    "TESTS",
    "Comparison",
    "CalibrationComparison",
    "compare",
    "compare_calibration",
]

#: The spec's six metrics, in the order a comparison table lists them.
DEFAULT_METRICS = ("ndcg", "recall", "precision", "mrr", "map", "hit_rate")
#: Paired tests :func:`compare` can run.
TESTS = ("randomization", "t", "wilcoxon", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "none")  # stats.adjust_pvalues' methods
_TEST_LABEL = {
    "randomization": "paired randomization (sign-flip) test",
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap test",
}
TABLE_COLUMNS = ("system", "metric", "mean", "baseline_mean", "delta", "ci_low", "ci_high",
                 "p_value", "p_adjusted", "significant", "n", "missing")
#: Up to this many paired queries, a resampling test's p-value (randomization or bootstrap) is
#: the exact randomization one, every one of the 2**n sign assignments enumerated (65,536 at
#: 16): with so few queries resampling cannot resolve a p-value below 1/2**n, and a bootstrap
#: p-value smaller than that is an artefact of the resampling, not evidence.
EXACT_MAX_QUERIES = 16
#: With fewer paired queries than this, a row carries a warning and is never significant on its
#: own: no test has the power to tell a difference from noise on four queries.
MIN_PAIRED_QUERIES = 5


def _empty_comparison(baseline, systems, cols, excluded, warnings, **settings) -> "Comparison":
    """A comparison of nothing: every frame empty with its documented columns."""
    table = pd.DataFrame({
        "system": pd.array([], dtype=ID), "metric": pd.array([], dtype=ID),
        **{c: np.zeros(0) for c in ("mean", "baseline_mean", "delta", "ci_low", "ci_high",
                                     "p_value", "p_adjusted")},
        "significant": np.zeros(0, dtype=bool), "n": np.zeros(0, dtype=np.int64),
        "missing": np.zeros(0, dtype=np.int64),
    })
    per_query = pd.DataFrame({
        **{c: pd.array([], dtype=ID) for c in ("system", "metric", "query_id", "stratum")},
        **{c: np.zeros(0) for c in ("baseline", "candidate", "delta")},
        "missing": np.zeros(0, dtype=bool), "baseline_missing": np.zeros(0, dtype=bool),
    })
    wtl = pd.DataFrame({"system": pd.array([], dtype=ID), "metric": pd.array([], dtype=ID),
                        **{c: np.zeros(0, dtype=np.int64) for c in ("wins", "ties", "losses")}})
    return Comparison(table=table, per_query=per_query, wins_ties_losses=wtl, baseline=baseline,
                      systems=list(systems), metrics=cols, missing={s: 0 for s in systems},
                      excluded=excluded, warnings=warnings, **settings)


def _metric_columns(metrics, k: int, gain: str) -> list[str]:
    if isinstance(metrics, str):
        metrics = (metrics,)
    cols = []
    for m in metrics:
        base, at, g = parse_metric(m)
        if at is not None and at != k:
            raise ValueError(f"metric {m!r} names cutoff {at} but the comparison is at k={k}; "
                             "pass k= or the bare metric name")
        cols.append(metric_name(base, k, g or gain))
    if not cols:
        raise ValueError("name at least one metric")
    return list(dict.fromkeys(cols))


def _per_query(given, j, r, cols, k: int, threshold: int, gain: str, queries, negs):
    """The engine's per-query frame with the compared columns, and the systems in run order.

    ``given`` an :class:`Evaluation` (in memory, streamed or from Dask): its own per-query
    frame, which must have been made at this cutoff, threshold and negatives (a streamed run
    cannot be scored again). Otherwise one pass of the engine on the frames ``j`` and ``r``;
    ``ndcg`` and ``ndcg_linear`` side by side take a second pass for the other gain (the gain
    follows from each metric's name; same rows, same order).
    """
    from ..evaluation.core import evaluate_frames

    if isinstance(given, Evaluation):
        if k not in given.ks or int(threshold) != given.threshold or set(negs) != set(given.negatives):
            raise ValueError(
                f"the evaluation was made at k={list(given.ks)}, threshold={given.threshold} with "
                f"{len(given.negatives)} negatives; compare it at one of those cutoffs with the "
                "same threshold and negatives, or pass the run")
        pq = given.per_query
        absent = [c for c in cols if c not in pq.columns]
        if absent:
            raise ValueError(f"the evaluation has no {', '.join(absent)} (gain={given.gain!r}); "
                             "compare the metrics it has, or pass the run")
        return pq, [str(s) for s in given.systems]
    ev = evaluate_frames(j, r, (k,), threshold, gain, queries, negs)
    pq = ev.per_query
    other_gain = [c for c in cols if c not in pq.columns]
    if other_gain:
        other = evaluate_frames(j, r, (k,), threshold,
                                "exponential" if gain == "linear" else "linear", queries, negs)
        pq = pq.assign(**{c: other.per_query[c].to_numpy() for c in other_gain})
    return pq, [str(s) for s in ev.systems]


# --------------------------------------------------------------------------------------------
# The comparison of metrics.


@dataclass
class Comparison:
    """The result of :func:`compare`.

    * ``table``: one row per (system, metric) comparison against the baseline, in run order
      then metric order: ``mean`` (the system's macro mean over the compared queries),
      ``baseline_mean``, ``delta`` (their difference = the mean per-query difference),
      ``ci_low``/``ci_high`` (percentile bootstrap interval of the mean delta), ``p_value``
      (the chosen paired test, two-sided), ``p_adjusted`` (corrected across every row),
      ``significant`` (``p_adjusted <= alpha``), ``n`` (queries compared), ``missing``
      (compared queries the system did not answer: scored zero, never dropped).
    * ``per_query``: one row per (system, metric, query): ``baseline``, ``candidate``,
      ``delta``, ``stratum``, ``missing`` / ``baseline_missing``.
    * ``wins_ties_losses``: (system, metric): queries where the system beats, ties or loses
      to the baseline. A mean can hide many small losses behind a few large wins.
    * ``missing``: per system (baseline included), how many compared queries it had no
      ranking for; ``excluded``: judged queries left out (no positives or ``expect_none``).
    * ``calibration``: a :class:`CalibrationComparison` when computed, else None.
    """

    table: pd.DataFrame
    per_query: pd.DataFrame
    wins_ties_losses: pd.DataFrame
    baseline: str
    systems: list[str]
    metrics: list[str]
    k: int
    test: str
    correction: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: Any
    missing: dict[str, int]
    excluded: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    calibration: CalibrationComparison | None = None
    #: Whether the p-values are exact (every sign assignment enumerated).
    exact: bool = False

    @property
    def candidates(self) -> list[str]:
        """The systems compared against the baseline, in run order."""
        return [s for s in self.systems if s != self.baseline]

    @property
    def candidate(self) -> str | None:
        """The one candidate when there is exactly one (for two-system plots), else None."""
        c = self.candidates
        return c[0] if len(c) == 1 else None

    @property
    def metric(self) -> str:
        """The first compared metric (the default of plots)."""
        return self.metrics[0]

    @property
    def n_queries(self) -> int:
        return int(self.table["n"].iloc[0]) if len(self.table) else 0

    def significant(self) -> pd.DataFrame:
        """The rows of ``table`` that are significant after correction."""
        return self.table[self.table["significant"]].reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for rec in self.table.to_dict(orient="records"):
            rows.append({k: (None if isinstance(v, float) and math.isnan(v) else
                             (bool(v) if isinstance(v, (bool, np.bool_)) else
                              (int(v) if isinstance(v, (np.integer,)) else
                               (float(v) if isinstance(v, np.floating) else v))))
                         for k, v in rec.items()})
        return {
            "baseline": self.baseline, "systems": list(self.systems), "metrics": list(self.metrics),
            "k": self.k, "test": self.test, "correction": self.correction, "alpha": self.alpha,
            "confidence": self.confidence, "n_resamples": self.n_resamples,
            "missing": dict(self.missing), "excluded": list(self.excluded),
            "warnings": list(self.warnings), "comparisons": rows,
        }

    def describe(self) -> str:
        """One sentence on how the numbers were made (the caption of every table)."""
        test = _TEST_LABEL[self.test]
        if self.exact:
            test += (f" (exact p-values: all 2^{self.n_queries} sign assignments)"
                     if self.test == "randomization" else
                     f" (exact randomization p-values: all 2^{self.n_queries} sign assignments)")
        elif self.test in ("randomization", "bootstrap"):
            test += f" ({self.n_resamples:,} resamples)"
        m = len(self.table)
        corr = CORRECTION_LABEL[self.correction]
        return (f"{test} against {self.baseline} over {self.n_queries} queries with positives; "
                f"{corr} correction across {m} comparison{'s' if m != 1 else ''}, "
                f"alpha {self.alpha:g}; intervals: {self.confidence:.0%} percentile bootstrap "
                "of the mean difference.")

    def _display_rows(self, p_digits: int = 3) -> list[list[str]]:
        rows = []
        r: Any  # itertuples' rows: namedtuples whose fields the stubs cannot know
        for r in self.table.itertuples(index=False):
            rows.append([
                str(r.system), str(r.metric), f"{r.mean:.4f}", f"{r.baseline_mean:.4f}",
                f"{r.delta:+.4f}", f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]", _fmt_p(r.p_value),
                _fmt_p(r.p_adjusted), "yes" if r.significant else "no", str(int(r.n)),
            ])
        return rows

    def _headers(self) -> list[str]:
        corr = {"holm": "Holm", "bonferroni": "Bonf.", "fdr_bh": "BH", "none": "adj."}[self.correction]
        return ["system", "metric", "mean", f"baseline ({self.baseline})", "delta",
                f"{self.confidence:.0%} CI", "p", f"p ({corr})", "significant", "n"]

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table (:mod:`retrieval_eval.tables`), with a caption line."""
        markdown = viz("markdown")

        return markdown(self._headers(), self._display_rows(), align="llrrrrrrcr", caption=self.describe())

    def to_latex(self, caption: str | None = None, label: str | None = None) -> str:
        """A booktabs ``table`` environment; significant deltas in bold. Needs ``booktabs``."""
        headers = ["System", "Metric", "Mean", "Baseline", r"$\Delta$",
                   rf"{self.confidence:.0%} CI".replace("%", r"\%"), "$p$",
                   r"$p_{\mathrm{adj}}$", "$n$"]
        latex, _tex = viz("latex", "tex")  # one escaping rule for every table
        body = []
        r: Any  # itertuples' rows: namedtuples whose fields the stubs cannot know
        for r in self.table.itertuples(index=False):
            delta = f"{r.delta:+.4f}"
            if r.significant:
                delta = rf"\textbf{{{delta}}}"
            body.append([
                _tex(r.system), _tex(r.metric), f"{r.mean:.4f}", f"{r.baseline_mean:.4f}", delta,
                f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]", _tex(_fmt_p(r.p_value)),
                _tex(_fmt_p(r.p_adjusted)), str(int(r.n)),
            ])
        cap = caption if caption is not None else (
            self.describe() + " Bold: significant after correction.")
        return latex(headers, body, align="llrrrcrrr", caption=cap, label=label, escape=False)

    def _repr_html_(self) -> str:
        box, esc, warnings_html = viz("box", "esc", "warnings_html")

        headers = self._headers()
        head = "".join(f"<th>{esc(h)}</th>" for h in headers)
        body = []
        for row, sig in zip(self._display_rows(), self.table["significant"]):
            cells = "".join(
                f"<td><b>{esc(c)}</b></td>" if (sig and i == 4) else f"<td>{esc(c)}</td>"
                for i, c in enumerate(row))
            body.append(f"<tr>{cells}</tr>")
        missing = {s: n for s, n in self.missing.items() if n}
        notes = [f"<p>{esc(self.describe())}</p>"]
        if missing:
            notes.append("<p>Queries scored zero because the system had no ranking: "
                         + esc(", ".join(f"{s}: {n}" for s, n in missing.items())) + "</p>")
        if self.excluded:
            notes.append(f"<p>{len(self.excluded)} judged queries excluded "
                         "(no positives or expect_none).</p>")
        html = (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
                + "".join(notes) + warnings_html(self.warnings))
        if self.calibration is not None:
            html += self.calibration._body_html()
        return box(f"Comparison against {esc(self.baseline)} at k={self.k}", html)

    def __repr__(self) -> str:
        n_sig = int(self.table["significant"].sum())
        return (f"Comparison(baseline={self.baseline!r}, candidates={self.candidates}, "
                f"metrics={self.metrics}, test={self.test!r}, correction={self.correction!r}, "
                f"queries={self.n_queries}, significant={n_sig}/{len(self.table)})")

    def plot(self, kind: str = "forest", ax=None, *, metric: str | None = None,
             system: str | None = None, **kwargs):
        """Draw the comparison; returns a display with ``ax_`` and ``figure_``.

        ``kind="forest"``: every (system, metric) delta with its interval
        (:class:`ForestDisplay`; ``metric`` limits it to one metric). ``kind="per_query"``:
        one system's per-query differences on one metric, sorted
        (:class:`retrieval_eval.plotting.PerQueryDeltaDisplay`; defaults: the first candidate,
        the first metric). Never calls ``plt.show()``.
        """
        if kind == "forest":
            forest = viz("ForestDisplay")
            return forest.from_comparison(self, metric=metric).plot(ax=ax, **kwargs)
        if kind == "per_query":
            PerQueryDeltaDisplay = viz("PerQueryDeltaDisplay")

            metric = self.metric_column(metric)
            system = system or self.candidates[0]
            if system not in self.candidates:
                raise ValueError(f"no candidate {system!r}; candidates: {', '.join(self.candidates)}")
            pq = self.per_query
            sub = pq[(pq["system"] == system) & (pq["metric"] == metric)]
            disp = PerQueryDeltaDisplay.from_values(
                sub["query_id"], sub["baseline"].to_numpy(np.float64),
                sub["candidate"].to_numpy(np.float64), metric, self.baseline, system)
            return disp.plot(ax=ax, **kwargs)
        raise ValueError(f"kind must be 'forest' or 'per_query', got {kind!r}")

    def metric_column(self, metric: str | None) -> str:
        """The compared metric ``metric`` names (``"recall"`` or ``"recall@10"``; None: the
        first compared), as it appears in :attr:`table`; raises when it was not compared."""
        if metric is None:
            return self.metrics[0]
        if metric in self.metrics:
            return metric
        named = f"{metric}@{self.k}"
        if named in self.metrics:
            return named
        raise ValueError(f"metric {metric!r} was not compared; compared: {', '.join(self.metrics)}")


def _fmt_p(p: float) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    if p < 1e-4:
        return "<0.0001"
    return f"{p:.4f}"


def compare(  # long: one vectorized pass over the (system, metric, query) cube, read top to bottom
    judgments,
    run,
    baseline: str | None = None,
    k: int = 10,
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
) -> Comparison:
    """Compare every system of ``run`` with ``baseline`` on ``metrics`` at cutoff ``k``.

    ``run``: a mapping ``{name: run}``, or a run frame (or anything
    :func:`retrieval_eval.formats.as_run` reads) with a ``system`` column. The baseline is the
    first system unless named. Only queries with positives are compared (a query without
    positives has no defined recall or nDCG); ``expect_none`` queries (``queries``,
    ``negatives``) are excluded too. A judged query a system did not answer scores zero for
    that system, as in every average of this package, and ``missing`` says how many.

    ``test``: ``"randomization"`` (default; Fisher's sign-flip test, exact when
    ``2**n <= n_resamples``, else ``n_resamples`` random flips with the +1 rule; it assumes
    nothing about the shape of the differences, which for bounded, tied, skewed IR metrics
    matters), ``"t"``, ``"wilcoxon"`` or ``"bootstrap"`` (see :mod:`retrieval_eval.stats`).
    With at most :data:`EXACT_MAX_QUERIES` (16) compared queries, both resampling tests give
    the exact randomization p-value (all ``2**n`` sign assignments): resampling cannot resolve
    a p-value below ``1/2**n``. With fewer than :data:`MIN_PAIRED_QUERIES` (5) queries, no row
    is marked significant and a warning says why. ``correction`` (``"holm"``,
    ``"bonferroni"``, ``"fdr_bh"``, ``"none"``) runs across all (system, metric) rows.
    Intervals are percentile bootstrap intervals of the mean difference (``confidence``),
    whatever the test. Everything is seeded by ``seed``.

    ``metrics`` are bare names (``ndcg``) or names with the comparison's cutoff; the gain
    follows from the name: ``ndcg_linear`` is trec_eval's linear gain whatever ``gain`` says
    (``gain`` decides a bare ``ndcg``), so ``ndcg`` and ``ndcg_linear`` can sit side by side.

    Returns a :class:`Comparison`; an empty run, or no judged query with a positive label,
    gives an empty one (empty frames with their columns, a warning), not an error.

    ``calibration="auto"`` also compares the out-of-distribution figures
    (:func:`compare_calibration`, at most 2,000 resamples) when negatives are declared and
    the run has scores, and turns a failure into a warning; ``True`` requires it (with
    ``n_resamples`` resamples, errors raised), ``False`` skips it.

    Parameters
    ----------
    judgments : DataFrame, list of dict or path
        The labels.
    run : DataFrame, path, mapping or Evaluation
        The systems' rankings, or an :class:`~retrieval_eval.analysis.result.Evaluation` of
        them (in memory, streamed or Dask: its per-query frame is used, so it must have been
        made at cutoff ``k`` with the same ``threshold`` and negatives).
    baseline, k, metrics, test, correction, alpha, n_resamples, seed
        As described above.
    queries, negatives, threshold, gain, confidence, calibration
        As described above.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> c = rev.compare(demo.judgments, demo.runs, baseline="bm25", metrics=["ndcg"],
    ...                 n_resamples=200)
    >>> list(c.table["metric"].unique())
    ['ndcg@10']
    """
    from ..calibration.core import check_negatives, negative_ids

    check_choice("test", test, TESTS)
    check_choice("correction", correction, tuple(CORRECTION_LABEL))
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    (k,) = check_ks((k,))
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be >= 1")
    j, r = coerce(judgments, run)
    systems = systems_in_order(r)
    cols = _metric_columns(metrics, int(k), gain)
    settings = dict(k=int(k), test=test, correction=correction, alpha=float(alpha),
                    confidence=float(confidence), n_resamples=int(n_resamples), seed=seed)
    if not systems:  # an empty run: an empty comparison, not an error
        return _empty_comparison(baseline, [], cols, [], ["the run is empty: nothing to compare"],
                                 **settings)
    base = pick_baseline(systems, baseline)
    negs = negative_ids(queries, negatives)
    check_negatives(j, negs, threshold)  # as score and calibrate: an expect_none query with a positive is a contradiction
    pq, systems = _per_query(run, j, r, cols, k, threshold, gain, queries, negs)
    excluded_mask = (pq["no_positives"] | pq["negative"]).to_numpy(bool)
    excluded = [str(q) for q in pd.unique(pq.loc[excluded_mask, "query_id"])]
    scored = pq.loc[~excluded_mask]
    qids = pd.Index(pd.unique(scored["query_id"].astype(ID)), dtype=ID)
    if len(qids) == 0:  # nothing judged, or nothing at the threshold: nothing to compare
        return _empty_comparison(base, systems, cols, excluded,
                                 ["no judged query has a positive label: nothing to compare"],
                                 **settings)
    wide = scored.pivot(index="query_id", columns="system", values=cols + ["missing"])
    wide = wide.reindex(qids)
    nq, nm = len(qids), len(cols)
    # cube[s, m, q]: system s, metric m, query q (a query absent for a system scores zero).
    cube = np.stack([np.stack([wide[(c, s)].to_numpy(np.float64, na_value=np.nan) for c in cols])
                     for s in systems])
    miss = np.stack([wide[("missing", s)].to_numpy(bool, na_value=True) for s in systems])
    absent = np.isnan(cube)
    cube = np.where(absent, 0.0, cube)
    miss |= absent.any(axis=1)
    bi = systems.index(base)
    cands = [s for s in systems if s != base]
    ci = np.array([systems.index(s) for s in cands])
    diff = (cube[ci] - cube[bi][None]).reshape(len(cands) * nm, nq)

    exact = test in ("randomization", "bootstrap") and nq <= EXACT_MAX_QUERIES
    if exact:  # every sign assignment, enumerated in one vectorized pass
        pvals = np.atleast_1d(stats.paired_randomization(diff, exact=True).pvalue)
    elif test == "randomization":
        pvals = np.atleast_1d(stats.paired_randomization(diff, n_resamples=n_resamples, seed=seed).pvalue)
    elif test == "t":
        pvals = (np.atleast_1d(stats.paired_t(diff).pvalue) if nq >= 2
                 else np.full(diff.shape[0], np.nan))
    elif test == "wilcoxon":
        pvals = np.atleast_1d(stats.wilcoxon(diff).pvalue)
    boot = stats.paired_bootstrap(diff, n_resamples=n_resamples, seed=seed, confidence=confidence)
    if test == "bootstrap" and not exact:
        pvals = np.atleast_1d(boot.pvalue)
    padj = stats.adjust_pvalues(pvals, correction)

    sys_col = np.repeat(np.array(cands, dtype=object), nm)
    met_col = np.tile(np.array(cols, dtype=object), len(cands))
    cand_means = cube[ci].mean(axis=2).reshape(-1)
    base_means = np.tile(cube[bi].mean(axis=1), len(cands))
    cand_missing = np.repeat(miss[ci].sum(axis=1), nm)
    table = pd.DataFrame({
        "system": pd.array(sys_col, dtype=ID),
        "metric": pd.array(met_col, dtype=ID),
        "mean": cand_means,
        "baseline_mean": base_means,
        "delta": diff.mean(axis=1),
        "ci_low": np.atleast_1d(boot.ci_low).astype(np.float64),
        "ci_high": np.atleast_1d(boot.ci_high).astype(np.float64),
        "p_value": pvals.astype(np.float64),
        "p_adjusted": padj.astype(np.float64),
        "significant": (np.asarray(padj <= alpha, dtype=bool) & ~np.isnan(padj)
                        & (nq >= MIN_PAIRED_QUERIES)),
        "n": np.full(len(sys_col), nq, dtype=np.int64),
        "missing": cand_missing.astype(np.int64),
    })

    strata = scored.drop_duplicates("query_id").set_index("query_id")["stratum"].reindex(qids)
    nrows = len(cands) * nm * nq
    per_query = pd.DataFrame({
        "system": pd.array(np.repeat(np.array(cands, dtype=object), nm * nq), dtype=ID),
        "metric": pd.array(np.tile(np.repeat(np.array(cols, dtype=object), nq), len(cands)), dtype=ID),
        "query_id": pd.array(np.tile(qids.to_numpy(dtype=object), len(cands) * nm), dtype=ID),
        "stratum": pd.array(np.tile(strata.to_numpy(dtype=object), len(cands) * nm), dtype=ID),
        "baseline": np.tile(cube[bi].reshape(-1), len(cands)),
        "candidate": cube[ci].reshape(-1),
        "delta": diff.reshape(-1),
        "missing": np.repeat(miss[ci], nm, axis=0).reshape(-1),
        "baseline_missing": np.tile(miss[bi], len(cands) * nm),
    })
    assert len(per_query) == nrows
    wtl = pd.DataFrame({
        "system": table["system"], "metric": table["metric"],
        "wins": (diff > 0).sum(axis=1).astype(np.int64),
        "ties": (diff == 0).sum(axis=1).astype(np.int64),
        "losses": (diff < 0).sum(axis=1).astype(np.int64),
    })
    missing = {s: int(miss[i].sum()) for i, s in enumerate(systems)}
    warnings = []
    for s, n in missing.items():
        if n:
            warnings.append(f"{s} has no ranking for {n} of {nq} compared queries; "
                            "they score zero for it")
    if test == "t" and nq < 2:
        warnings.append("a t-test needs at least 2 queries: p-values are n/a")
    if nq < MIN_PAIRED_QUERIES:
        warnings.append(f"only {nq} paired {'query' if nq == 1 else 'queries'} (fewer than "
                        f"{MIN_PAIRED_QUERIES}): no row is marked significant on so few")
    if exact and test == "bootstrap":
        warnings.append(f"{nq} paired queries: the p-values are exact randomization p-values "
                        f"(all 2^{nq} sign assignments); a bootstrap cannot resolve fewer queries")

    cal = None
    if calibration not in ("auto", True, False):
        raise ValueError(f"calibration must be 'auto', True or False, got {calibration!r}")
    if calibration is True or (calibration == "auto" and negs
                               and bool(r["score"].notna().any())):
        try:
            cal = compare_calibration(j, r, queries=queries, negatives=negatives, baseline=base,
                                      threshold=threshold, n_resamples=min(int(n_resamples), 2000)
                                      if calibration == "auto" else int(n_resamples),
                                      seed=seed, confidence=confidence, correction=correction,
                                      alpha=alpha)
        except ValueError as err:
            if calibration is True:
                raise
            warnings.append(f"calibration not compared: {err}")

    return Comparison(
        table=table, per_query=per_query, wins_ties_losses=wtl, baseline=base, systems=systems,
        metrics=cols, missing=missing, excluded=excluded, warnings=warnings, calibration=cal,
        exact=exact, **settings,
    )
