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

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

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
from ..handoff import viz
from ..jsonable import jsonable
from .pairwise.columns import INFO_COLUMNS, cutoffs_of, metric_columns
from .pairwise.cube import EXACT_MAX_QUERIES, MIN_PAIRED_QUERIES, pair_indices, result_frames, run_test, value_cube
from .pairwise.frames import frame_dict, frame_of, restore_dtypes

__all__ = [
    "DEFAULT_METRICS",
    "EXACT_MAX_QUERIES",
    "MIN_PAIRED_QUERIES",
    "PAIRS",
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
_TEST_LABEL = {
    "randomization": "paired randomization (sign-flip) test",
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap test",
}
_ZERO_LABEL = {"wilcox": "zero differences dropped", "pratt": "Pratt's treatment of zeros",
               "zsplit": "zero differences split between the signs"}
TABLE_COLUMNS = ("system", "baseline", "metric", "mean", "baseline_mean", "delta", "ci_low",
                 "ci_high", "p_value", "p_adjusted", "significant", "n", "missing")

def _per_query(given, j, r, metrics, ks, threshold: int, gain: str, queries, negs):
    """The per-query frame holding every compared column, those columns, the systems in run order.

    ``given`` an :class:`Evaluation` (in memory, streamed or from Dask): its own per-query frame
    (a streamed run cannot be scored again), so any metric column it holds can be compared; it
    must have been made with the same threshold and negatives. Otherwise one pass of the engine
    on the frames ``j`` and ``r`` at every cutoff named, with the catalogue measures; a column of
    the other gain (``ndcg`` beside ``ndcg_linear``) takes a second pass (same rows, same order).
    """
    from ...engine.measures import parse_measure
    from ..evaluation import evaluate_frames

    if isinstance(given, Evaluation):
        if int(threshold) != given.threshold or set(negs) != set(given.negatives):
            raise ValueError(
                f"the evaluation was made at threshold={given.threshold} with "
                f"{len(given.negatives)} negatives; compare it with the same threshold and "
                "negatives, or pass the run")
        pq = given.per_query
        cols, _ = metric_columns(metrics, ks, given.gain, have=set(pq.columns) - INFO_COLUMNS)
        absent = [c for c in cols if c not in pq.columns]
        if absent:
            raise ValueError(f"the evaluation has no {', '.join(absent)} (made at k={list(given.ks)}, "
                             f"gain={given.gain!r}); compare the metrics it has, or pass the run")
        return pq, cols, [str(s) for s in given.systems]
    cols, catalogue = metric_columns(metrics, ks, gain)
    cut = cutoffs_of(cols, ks)
    ev = evaluate_frames(j, r, cut, threshold, gain, queries, negs, measures=catalogue or None)
    pq = ev.per_query
    other_gain = [c for c in cols if c not in pq.columns and c.startswith("ndcg")]
    if other_gain:
        other = evaluate_frames(j, r, cut, threshold,
                                "exponential" if gain == "linear" else "linear", queries, negs)
        pq = pq.assign(**{c: other.per_query[c].to_numpy() for c in other_gain})
    for asked in catalogue:  # a measure the engine names as it was asked for, not canonically
        names = [m.name for m in parse_measure(asked)]
        if len(names) == 1 and names[0] not in pq.columns and asked in pq.columns:
            cols = [asked if c == names[0] else c for c in cols]
    return pq, cols, [str(s) for s in ev.systems]


def _listed(ids: list[str], most: int = 10) -> str:
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _notes(missing: dict[str, int], nq: int, test: str, exact: bool, excluded, unjudged) -> list[str]:
    """The warnings of a comparison: unanswered, left-out and too few queries."""
    warnings = [f"{s} has no ranking for {n} of {nq} compared queries; they score zero for it"
                for s, n in missing.items() if n]
    if excluded:
        warnings.append(f"{len(excluded)} judged {'query' if len(excluded) == 1 else 'queries'} left out "
                        f"(no positives or expect_none): {_listed(excluded)}")
    if unjudged:
        warnings.append(f"{len(unjudged)} run {'query' if len(unjudged) == 1 else 'queries'} without "
                        f"judgments left out: {_listed(unjudged)}")
    if test == "t" and nq < 2:
        warnings.append("a t-test needs at least 2 queries: p-values are n/a")
    if nq < MIN_PAIRED_QUERIES:
        warnings.append(f"only {nq} paired {'query' if nq == 1 else 'queries'} (fewer than "
                        f"{MIN_PAIRED_QUERIES}): no row is marked significant on so few")
    if exact and test == "bootstrap":
        warnings.append(f"{nq} paired queries: the p-values are exact randomization p-values "
                        f"(all 2^{nq} sign assignments); a bootstrap cannot resolve fewer queries")
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
            j, r, queries=queries, negatives=negatives, baseline=base, threshold=threshold,
            n_resamples=min(n, 2000) if calibration == "auto" else n, seed=settings["seed"],
            confidence=settings["confidence"], correction=settings["correction"], alpha=settings["alpha"])
    except ValueError as err:
        if calibration is True:
            raise
        warnings.append(f"calibration not compared: {err}")
        return None


def _empty(baseline, systems, cols, excluded, warnings, settings) -> Comparison:
    """A comparison of nothing: every frame empty with its documented columns."""
    f0, b0, i0 = np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    s0 = pd.array([], dtype=ID)
    table = pd.DataFrame({"system": s0, "baseline": s0, "metric": s0,
                          **{c: f0 for c in TABLE_COLUMNS[3:10]}, "significant": b0, "n": i0, "missing": i0})
    per_query = pd.DataFrame({
        **{c: s0 for c in ("system", "baseline_system", "metric", "query_id", "stratum")},
        **{c: f0 for c in ("baseline", "candidate", "delta")}, "missing": b0, "baseline_missing": b0})
    wtl = pd.DataFrame({"system": s0, "baseline": s0, "metric": s0,
                        **{c: i0 for c in ("wins", "ties", "losses")}})
    return Comparison(table=table, per_query=per_query, wins_ties_losses=wtl,
                      baseline=baseline if settings["pairs"] == "baseline" else None,
                      systems=list(systems), metrics=cols, missing=dict.fromkeys(systems, 0),
                      excluded=excluded, warnings=warnings, **settings)


# --------------------------------------------------------------------------------------------
# The comparison of metrics.


@dataclass
class Comparison:
    """The result of :func:`compare`.

    * ``table``: one row per (system, baseline, metric) comparison, pairs in order then metrics:
      ``system`` and ``baseline`` (the two systems compared), ``mean`` (the system's macro mean
      over the compared queries), ``baseline_mean``, ``delta`` (their difference = the mean
      per-query difference), ``ci_low``/``ci_high`` (percentile bootstrap interval of the mean
      delta), ``p_value`` (the chosen paired test, two-sided), ``p_adjusted`` (corrected across
      every row), ``significant`` (``p_adjusted <= alpha``), ``n`` (queries compared),
      ``missing`` (compared queries the system did not answer: scored zero, never dropped).
    * ``per_query``: one row per (system, baseline_system, metric, query): ``baseline``,
      ``candidate`` (the two values), ``delta``, ``stratum``, ``missing`` / ``baseline_missing``.
    * ``wins_ties_losses``: (system, baseline, metric): queries where the system beats, ties or
      loses to the baseline. A mean can hide many small losses behind a few large wins.
    * ``baseline``: the one baseline (``pairs="baseline"``), None for all pairs; ``ks``: the
      cutoffs of bare metric names (``k`` the first); ``missing``: per system, how many compared
      queries it had no ranking for; ``excluded``: judged queries left out (no positives or
      ``expect_none``); ``unjudged``: run queries without judgments, left out.
    * ``calibration``: a :class:`CalibrationComparison` when computed, else None.
    """

    table: pd.DataFrame
    per_query: pd.DataFrame
    wins_ties_losses: pd.DataFrame
    baseline: str | None
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
    ks: list[int] = field(default_factory=list)
    pairs: str = "baseline"
    zero_method: str = "wilcox"
    unjudged: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ks = list(self.ks) or [int(self.k)]

    @property
    def candidates(self) -> list[str]:
        """The systems compared with a baseline (every system but the first of all pairs), in order."""
        if len(self.table):
            return list(dict.fromkeys(self.table["system"].astype(str)))
        first = self.baseline if self.baseline is not None else (self.systems[0] if self.systems else "")
        return [s for s in self.systems if s != first]

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

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        """Everything the comparison holds, JSON-safe (NaN as None); :meth:`from_dict` reads it back.

        ``comparisons``: the table's rows as records (what the CLI's ``--json`` prints);
        ``frames``: the three frames column by column with their dtypes, so a reloaded
        comparison is the same frame for frame (``per_query=False`` leaves the per-query one out).
        """
        frames = {"table": self.table, "wins_ties_losses": self.wins_ties_losses}
        if per_query:
            frames["per_query"] = self.per_query
        cal = self.calibration
        return {
            "baseline": self.baseline, "systems": list(self.systems), "metrics": list(self.metrics),
            "k": int(self.k), "ks": [int(k) for k in self.ks], "pairs": self.pairs, "test": self.test,
            "zero_method": self.zero_method, "correction": self.correction, "alpha": self.alpha,
            "confidence": self.confidence, "n_resamples": self.n_resamples, "seed": jsonable(self.seed),
            "exact": bool(self.exact), "missing": jsonable(self.missing), "excluded": list(self.excluded),
            "unjudged": list(self.unjudged), "warnings": list(self.warnings),
            "comparisons": jsonable(self.table.to_dict(orient="records")),
            "frames": {name: frame_dict(f) for name, f in frames.items()},
            "calibration": None if cal is None else {
                "table": frame_dict(cal.table), "baseline": cal.baseline, "systems": list(cal.systems),
                "n_resamples": cal.n_resamples, "confidence": cal.confidence,
                "correction": cal.correction, "alpha": cal.alpha, "warnings": list(cal.warnings)},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], per_query: pd.DataFrame | None = None) -> Comparison:
        """The comparison :meth:`to_dict` wrote (``per_query``: the per-query frame, when kept apart)."""
        frames = {name: frame_of(d) for name, d in data["frames"].items()}
        if per_query is None:
            per_query = frames.get("per_query")
        if per_query is None:
            per_query = _empty(None, [], [], [], [], dict(_settings(10, "t", "none", .05, .95, 1, 0,
                                                                     "baseline", "wilcox"))).per_query
        cal = data.get("calibration")
        if cal is not None:
            cal = CalibrationComparison(**{**cal, "table": frame_of(cal["table"])})
        keys = ("baseline", "systems", "metrics", "k", "ks", "pairs", "test", "zero_method",
                "correction", "alpha", "confidence", "n_resamples", "seed", "exact", "missing",
                "excluded", "unjudged", "warnings")
        return cls(table=frames["table"], per_query=per_query,
                   wins_ties_losses=frames["wins_ties_losses"], calibration=cal,
                   **{k: data[k] for k in keys if k in data})

    def to_parquet(self, path) -> None:
        """Write the comparison to one parquet file: the per-query frame as its rows, everything
        else (:meth:`to_dict`) as JSON in the file's metadata. :meth:`read_parquet` reads it."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pa.Table.from_pandas(self.per_query, preserve_index=False)
        meta = {**(t.schema.metadata or {}), b"retrieval_eval.comparison":
                json.dumps(self.to_dict(per_query=False)).encode()}
        pq.write_table(t.replace_schema_metadata(meta), str(path))

    @classmethod
    def read_parquet(cls, path) -> Comparison:
        """The comparison :meth:`to_parquet` wrote to ``path``."""
        import pyarrow.parquet as pq

        t = pq.read_table(str(path))
        raw = (t.schema.metadata or {}).get(b"retrieval_eval.comparison")
        if raw is None:
            raise ValueError(f"{path}: not a comparison written by Comparison.to_parquet")
        dtypes = json.loads(t.schema.metadata[b"pandas"])["columns"]
        frame = t.to_pandas()
        dtypes = {c["name"]: ("string" if c["pandas_type"] in ("unicode", "string", "object")
                              else c["numpy_type"]) for c in dtypes}
        return cls.from_dict(json.loads(raw), per_query=restore_dtypes(frame, dtypes))

    def test_description(self) -> str:
        """The test as a caption names it: its kind, and its resamples, exactness or variant."""
        test = _TEST_LABEL[self.test]
        if self.exact:
            test += (f" (exact p-values: all 2^{self.n_queries} sign assignments)"
                     if self.test == "randomization" else
                     f" (exact randomization p-values: all 2^{self.n_queries} sign assignments)")
        elif self.test in ("randomization", "bootstrap"):
            test += f" ({self.n_resamples:,} resamples)"
        elif self.test == "wilcoxon":
            test += f" (two-sided, {_ZERO_LABEL[self.zero_method]})"
        return test

    def planning(self, power: float = 0.8) -> pd.DataFrame:
        """For each difference that is not significant, how many queries it would take.

        From the row's own per-query differences (their variance and mean), at the
        comparison's alpha and ``power``: the paired sample size of
        :func:`retrieval_eval.analysis.judged.planning_paragraph`, which says so in a sentence
        ("with this noise you would need about N queries ..."). Columns ``system``,
        ``baseline``, ``metric``, ``paragraph``; empty when every difference is significant.
        """
        from ..judged.planning import planning_paragraph

        pq, rows = self.per_query, []
        for r in self.table[~self.table["significant"].astype(bool)].itertuples(index=False):
            d = pq.loc[(pq["system"] == r.system) & (pq["baseline_system"] == r.baseline)
                       & (pq["metric"] == r.metric), "delta"]
            rows.append({"system": r.system, "baseline": r.baseline, "metric": r.metric,
                         "paragraph": planning_paragraph(d.to_numpy(np.float64), alpha=self.alpha,
                                                         power=power)})
        return pd.DataFrame(rows, columns=["system", "baseline", "metric", "paragraph"]).astype(
            {"system": ID, "baseline": ID, "metric": ID})

    def describe(self) -> str:
        """One sentence on how the numbers were made (the caption of every table)."""
        test = self.test_description()
        m = len(self.table)
        corr = CORRECTION_LABEL[self.correction]
        against = (f"against {self.baseline}" if self.pairs == "baseline" else
                   f"between every pair of the {len(self.systems)} systems")
        return (f"{test} {against} over {self.n_queries} queries with positives; "
                f"{corr} correction across {m} comparison{'s' if m != 1 else ''}, "
                f"alpha {self.alpha:g}; intervals: {self.confidence:.0%} percentile bootstrap "
                "of the mean difference.")

    def to_markdown(self, layout: str = "long", labels: dict[str, str] | None = None) -> str:
        """A GitHub-flavoured Markdown table with its caption line.

        ``layout="long"``: one row per comparison (system, baseline, metric). ``layout="wide"``:
        the paper's table (:func:`retrieval_eval.viz.paper_table`), a row a system and a column a
        metric, the best of each column bold, superscript letters naming the systems a value is
        significantly better than; ``labels`` maps system (and metric) names to display names.
        """
        return viz("comparison_table")(self, "markdown", layout, labels=labels)

    def to_latex(self, caption: str | None = None, label: str | None = None, layout: str = "long",
                 labels: dict[str, str] | None = None) -> str:
        """A booktabs ``table`` environment (needs ``booktabs``); ``layout`` as in :meth:`to_markdown`.

        The long layout bolds significant deltas; the wide one is the paper's table, its caption
        stating the test, correction, alpha, number of queries and every nDCG's gain.
        """
        return viz("comparison_table")(self, "latex", layout, labels=labels, caption=caption, label=label)

    def _repr_html_(self) -> str:
        return viz("comparison_html")(self)

    def __repr__(self) -> str:
        n_sig = int(self.table["significant"].sum())
        return (f"Comparison(pairs={self.pairs!r}, baseline={self.baseline!r}, systems={self.systems}, "
                f"metrics={self.metrics}, test={self.test!r}, correction={self.correction!r}, "
                f"queries={self.n_queries}, significant={n_sig}/{len(self.table)})")

    def plot(self, kind: str = "forest", ax=None, *, metric: str | None = None,
             system: str | None = None, baseline: str | None = None,
             labels: dict[str, str] | None = None, **kwargs):
        """Draw the comparison; returns a display with ``ax_`` and ``figure_``.

        ``kind="forest"``: every comparison's delta with its interval (:class:`ForestDisplay`;
        ``metric`` limits it to one metric; with all pairs a row is named "system - baseline").
        ``kind="per_query"``: one pair's per-query differences on one metric, sorted
        (:class:`retrieval_eval.plotting.PerQueryDeltaDisplay`; defaults: the first candidate
        against its first baseline, the first metric). ``labels`` maps system and metric names to
        the names shown, as in the tables. Never calls ``plt.show()``.
        """
        name = (lambda x: (labels or {}).get(x, x))  # noqa: E731 (a display name, or the name)
        if kind == "forest":
            forest, colors = viz("ForestDisplay", "system_colors")
            if self.pairs == "baseline" and not labels:
                return forest.from_comparison(self, metric=metric).plot(ax=ax, **kwargs)
            t = self.table if metric is None else self.table[self.table["metric"] == self.metric_column(metric)]
            rows = t[["system", "metric", "delta", "ci_low", "ci_high", "significant"]].reset_index(drop=True)
            rows["metric"] = [name(m) for m in t["metric"].astype(str)]
            rows["system"] = [name(s) if self.pairs == "baseline" else f"{name(s)} \u2212 {name(b)}"
                              for s, b in zip(t["system"].astype(str), t["baseline"].astype(str))]
            palette = {name(s): c for s, c in colors(self.systems).items()}
            return forest(rows, name(self.baseline) if self.pairs == "baseline" else "each pair's baseline",
                          self.describe(), palette).plot(ax=ax, **kwargs)
        if kind == "per_query":
            metric = self.metric_column(metric)
            system = system or self.candidates[0]
            if system not in self.candidates:
                raise ValueError(f"no candidate {system!r}; candidates: {', '.join(self.candidates)}")
            pq = self.per_query
            sub = pq[(pq["system"] == system) & (pq["metric"] == metric)]
            baseline = baseline or str(sub["baseline_system"].iloc[0])
            sub = sub[sub["baseline_system"] == baseline]
            palette = {name(s): c for s, c in viz("system_colors")(self.systems).items()}  # one colour per system
            disp = viz("PerQueryDeltaDisplay").from_values(
                sub["query_id"], sub["baseline"].to_numpy(np.float64),
                sub["candidate"].to_numpy(np.float64), name(metric), name(baseline), name(system), palette)
            return disp.plot(ax=ax, **kwargs)
        raise ValueError(f"kind must be 'forest' or 'per_query', got {kind!r}")

    def metric_column(self, metric: str | None) -> str:
        """The compared metric ``metric`` names (``"recall"`` or ``"recall@10"``; None: the
        first compared), as it appears in :attr:`table`; raises when it was not compared."""
        if metric is None:
            return self.metrics[0]
        if metric in self.metrics:
            return metric
        for k in self.ks:
            if f"{metric}@{k}" in self.metrics:
                return f"{metric}@{k}"
        raise ValueError(f"metric {metric!r} was not compared; compared: {', '.join(self.metrics)}")


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
    return {"k": ks[0], "ks": ks, "test": test, "correction": correction, "alpha": float(alpha),
            "confidence": float(confidence), "n_resamples": int(n_resamples), "seed": seed, "pairs": pairs,
            "zero_method": zero_method}


def _tested(scored, qids, systems, cols, pairs_, settings):
    """The frames of a comparison of the queries ``qids``, the missing mask, whether p is exact."""
    cube, miss = value_cube(scored, qids, systems, cols)
    diff = (cube[[p[0] for p in pairs_]] - cube[[p[1] for p in pairs_]]).reshape(len(pairs_) * len(cols), len(qids))
    pvals, boot, exact = run_test(diff, settings["test"], settings["n_resamples"], settings["seed"],
                                  settings["confidence"], settings["zero_method"])
    padj = stats.adjust_pvalues(pvals, settings["correction"])
    strata = scored.drop_duplicates("query_id").set_index("query_id")["stratum"].reindex(qids)
    frames = result_frames(cube, miss, pairs_, systems, cols, qids, strata, diff, pvals, padj, boot,
                           settings["alpha"])
    return frames, miss, exact


def compare(judgments, run, baseline: str | None = None, k: int | Sequence[int] = 10,
            metrics: Sequence[str] | str = DEFAULT_METRICS, test: str = "randomization",
            correction: str = "holm", alpha: float = 0.05, n_resamples: int = 10_000, seed=0,
            queries=None, negatives=None, threshold: int = 1, gain: str = "exponential",
            confidence: float = 0.95, calibration: bool | str = "auto", pairs: str = "baseline",
            zero_method: str = "wilcox") -> Comparison:
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
    from ..calibration.core import check_negatives, negative_ids

    settings = _settings(k, test, correction, alpha, confidence, n_resamples, seed, pairs, zero_method)
    j, r = coerce(judgments, run)
    systems = systems_in_order(r)
    if not systems:  # an empty run: an empty comparison, not an error
        cols = metric_columns(metrics, settings["ks"], gain)[0]
        return _empty(baseline, [], cols, [], ["the run is empty: nothing to compare"], settings)
    base = pick_baseline(systems, baseline)
    negs = negative_ids(queries, negatives)
    check_negatives(j, negs, threshold)  # as score and calibrate: a positive on an expect_none query
    pq, cols, systems = _per_query(run, j, r, metrics, settings["ks"], threshold, gain, queries, negs)
    excluded_mask = (pq["no_positives"] | pq["negative"]).to_numpy(bool)
    excluded = [str(q) for q in pd.unique(pq.loc[excluded_mask, "query_id"])]
    unjudged = sorted(set(r["query_id"].astype(str)) - set(j["query_id"].astype(str)) - set(negs))
    scored = pq.loc[~excluded_mask]
    qids = pd.Index(pd.unique(scored["query_id"].astype(ID)), dtype=ID)
    if len(qids) == 0:  # nothing judged, or nothing at the threshold: nothing to compare
        return _empty(base, systems, cols, excluded,
                      ["no judged query has a positive label: nothing to compare"], settings)
    pairs_ = pair_indices(systems, base, pairs, baseline is not None)
    (table, per_query, wtl), miss, exact = _tested(scored, qids, systems, cols, pairs_, settings)
    missing = {s: int(miss[i].sum()) for i, s in enumerate(systems)}
    warnings = _notes(missing, len(qids), test, exact, excluded, unjudged)
    cal = _calibration(calibration, j, r, negs, base, settings, queries, negatives, threshold, warnings)
    return Comparison(table=table, per_query=per_query, wins_ties_losses=wtl,
                      baseline=base if pairs == "baseline" else None, systems=systems, metrics=cols,
                      missing=missing, excluded=excluded, unjudged=unjudged, warnings=warnings,
                      calibration=cal, exact=exact, **settings)
