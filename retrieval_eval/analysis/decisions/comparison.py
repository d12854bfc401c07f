"""The result of :func:`~retrieval_eval.analysis.decisions.compare.compare`: :class:`Comparison`.

Its tables, captions, save and reload, plots and planning; the comparison itself (which queries,
pairs, metrics and test) is :mod:`.compare`, which re-exports this class.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...engine.metrics import ID
from ..calibration.calibration_compare import CORRECTION_LABEL, CalibrationComparison
from ..handoff import viz
from ..jsonable import jsonable
from .pairwise.frames import frame_dict, frame_of, restore_dtypes

__all__ = ["TABLE_COLUMNS", "Comparison", "empty_frames"]

TABLE_COLUMNS = (
    "system",
    "baseline",
    "metric",
    "mean",
    "baseline_mean",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "n",
    "missing",
)


_TEST_LABEL = {
    "randomization": "paired randomization (sign-flip) test",
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap test",
}
_ZERO_LABEL = {
    "wilcox": "zero differences dropped",
    "pratt": "Pratt's treatment of zeros",
    "zsplit": "zero differences split between the signs",
}


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
            "baseline": self.baseline,
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "k": int(self.k),
            "ks": [int(k) for k in self.ks],
            "pairs": self.pairs,
            "test": self.test,
            "zero_method": self.zero_method,
            "correction": self.correction,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "seed": jsonable(self.seed),
            "exact": bool(self.exact),
            "missing": jsonable(self.missing),
            "excluded": list(self.excluded),
            "unjudged": list(self.unjudged),
            "warnings": list(self.warnings),
            "comparisons": jsonable(self.table.to_dict(orient="records")),
            "frames": {name: frame_dict(f) for name, f in frames.items()},
            "calibration": None
            if cal is None
            else {
                "table": frame_dict(cal.table),
                "baseline": cal.baseline,
                "systems": list(cal.systems),
                "n_resamples": cal.n_resamples,
                "confidence": cal.confidence,
                "correction": cal.correction,
                "alpha": cal.alpha,
                "warnings": list(cal.warnings),
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], per_query: pd.DataFrame | None = None) -> Comparison:
        """The comparison :meth:`to_dict` wrote (``per_query``: the per-query frame, when kept apart)."""
        frames = {name: frame_of(d) for name, d in data["frames"].items()}
        if per_query is None:
            per_query = frames.get("per_query")
        if per_query is None:
            per_query = empty_frames()[1]
        cal = data.get("calibration")
        if cal is not None:
            cal = CalibrationComparison(**{**cal, "table": frame_of(cal["table"])})
        keys = (
            "baseline",
            "systems",
            "metrics",
            "k",
            "ks",
            "pairs",
            "test",
            "zero_method",
            "correction",
            "alpha",
            "confidence",
            "n_resamples",
            "seed",
            "exact",
            "missing",
            "excluded",
            "unjudged",
            "warnings",
        )
        return cls(
            table=frames["table"],
            per_query=per_query,
            wins_ties_losses=frames["wins_ties_losses"],
            calibration=cal,
            **{k: data[k] for k in keys if k in data},
        )

    def to_parquet(self, path) -> None:
        """Write the comparison to one parquet file: the per-query frame as its rows, everything
        else (:meth:`to_dict`) as JSON in the file's metadata. :meth:`read_parquet` reads it."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pa.Table.from_pandas(self.per_query, preserve_index=False)
        meta = {
            **(t.schema.metadata or {}),
            b"retrieval_eval.comparison": json.dumps(self.to_dict(per_query=False)).encode(),
        }
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
        dtypes = {
            c["name"]: ("string" if c["pandas_type"] in ("unicode", "string", "object") else c["numpy_type"])
            for c in dtypes
        }
        return cls.from_dict(json.loads(raw), per_query=restore_dtypes(frame, dtypes))

    def test_description(self) -> str:
        """The test as a caption names it: its kind, and its resamples, exactness or variant."""
        test = _TEST_LABEL[self.test]
        if self.exact:
            test += (
                f" (exact p-values: all 2^{self.n_queries} sign assignments)"
                if self.test == "randomization"
                else f" (exact randomization p-values: all 2^{self.n_queries} sign assignments)"
            )
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
            d = pq.loc[
                (pq["system"] == r.system) & (pq["baseline_system"] == r.baseline) & (pq["metric"] == r.metric), "delta"
            ]
            rows.append(
                {
                    "system": r.system,
                    "baseline": r.baseline,
                    "metric": r.metric,
                    "paragraph": planning_paragraph(d.to_numpy(np.float64), alpha=self.alpha, power=power),
                }
            )
        return pd.DataFrame(rows, columns=["system", "baseline", "metric", "paragraph"]).astype(
            {"system": ID, "baseline": ID, "metric": ID}
        )

    def describe(self) -> str:
        """One sentence on how the numbers were made (the caption of every table)."""
        test = self.test_description()
        m = len(self.table)
        corr = CORRECTION_LABEL[self.correction]
        against = (
            f"against {self.baseline}"
            if self.pairs == "baseline"
            else f"between every pair of the {len(self.systems)} systems"
        )
        return (
            f"{test} {against} over {self.n_queries} queries with positives; "
            f"{corr} correction across {m} comparison{'s' if m != 1 else ''}, "
            f"alpha {self.alpha:g}; intervals: {self.confidence:.0%} percentile bootstrap "
            "of the mean difference."
        )

    def to_markdown(self, layout: str = "long", labels: dict[str, str] | None = None) -> str:
        """A GitHub-flavoured Markdown table with its caption line.

        ``layout="long"``: one row per comparison (system, baseline, metric). ``layout="wide"``:
        the paper's table (:func:`retrieval_eval.viz.paper_table`), a row a system and a column a
        metric, the best of each column bold, superscript letters naming the systems a value is
        significantly better than; ``labels`` maps system (and metric) names to display names.
        """
        return viz("comparison_table")(self, "markdown", layout, labels=labels)

    def to_latex(
        self,
        caption: str | None = None,
        label: str | None = None,
        layout: str = "long",
        labels: dict[str, str] | None = None,
    ) -> str:
        """A booktabs ``table`` environment (needs ``booktabs``); ``layout`` as in :meth:`to_markdown`.

        The long layout bolds significant deltas; the wide one is the paper's table, its caption
        stating the test, correction, alpha, number of queries and every nDCG's gain.
        """
        return viz("comparison_table")(self, "latex", layout, labels=labels, caption=caption, label=label)

    def _repr_html_(self) -> str:
        return viz("comparison_html")(self)

    def __repr__(self) -> str:
        n_sig = int(self.table["significant"].sum())
        return (
            f"Comparison(pairs={self.pairs!r}, baseline={self.baseline!r}, systems={self.systems}, "
            f"metrics={self.metrics}, test={self.test!r}, correction={self.correction!r}, "
            f"queries={self.n_queries}, significant={n_sig}/{len(self.table)})"
        )

    def plot(
        self,
        kind: str = "forest",
        ax=None,
        *,
        metric: str | None = None,
        system: str | None = None,
        baseline: str | None = None,
        labels: dict[str, str] | None = None,
        **kwargs,
    ):
        """Draw the comparison; returns a display with ``ax_`` and ``figure_``.

        ``kind="forest"``: every comparison's delta with its interval (:class:`ForestDisplay`;
        ``metric`` limits it to one metric; with all pairs a row is named "system - baseline").
        ``kind="per_query"``: one pair's per-query differences on one metric, sorted
        (:class:`retrieval_eval.plotting.PerQueryDeltaDisplay`; defaults: the first candidate
        against its first baseline, the first metric). ``labels`` maps system and metric names to
        the names shown, as in the tables. Never calls ``plt.show()``.
        """
        name = lambda x: (labels or {}).get(x, x)  # noqa: E731 (a display name, or the name)
        if kind == "forest":
            forest, colors = viz("ForestDisplay", "system_colors")
            if self.pairs == "baseline" and not labels:
                return forest.from_comparison(self, metric=metric).plot(ax=ax, **kwargs)
            t = self.table if metric is None else self.table[self.table["metric"] == self.metric_column(metric)]
            rows = t[["system", "metric", "delta", "ci_low", "ci_high", "significant"]].reset_index(drop=True)
            rows["metric"] = [name(m) for m in t["metric"].astype(str)]
            rows["system"] = [
                name(s) if self.pairs == "baseline" else f"{name(s)} \u2212 {name(b)}"
                for s, b in zip(t["system"].astype(str), t["baseline"].astype(str))
            ]
            palette = {name(s): c for s, c in colors(self.systems).items()}
            return forest(
                rows,
                name(self.baseline) if self.pairs == "baseline" else "each pair's baseline",
                self.describe(),
                palette,
            ).plot(ax=ax, **kwargs)
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
                sub["query_id"],
                sub["baseline"].to_numpy(np.float64),
                sub["candidate"].to_numpy(np.float64),
                name(metric),
                name(baseline),
                name(system),
                palette,
            )
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


def empty_frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The table, per-query and wins/ties/losses frames of a comparison of nothing, with their columns."""
    f0, b0, i0 = np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    s0 = pd.array([], dtype=ID)
    table = pd.DataFrame(
        {
            "system": s0,
            "baseline": s0,
            "metric": s0,
            **{c: f0 for c in TABLE_COLUMNS[3:10]},
            "significant": b0,
            "n": i0,
            "missing": i0,
        }
    )
    per_query = pd.DataFrame(
        {
            **{c: s0 for c in ("system", "baseline_system", "metric", "query_id", "stratum")},
            **{c: f0 for c in ("baseline", "candidate", "delta")},
            "missing": b0,
            "baseline_missing": b0,
        }
    )
    wtl = pd.DataFrame({"system": s0, "baseline": s0, "metric": s0, **{c: i0 for c in ("wins", "ties", "losses")}})
    return table, per_query, wtl
