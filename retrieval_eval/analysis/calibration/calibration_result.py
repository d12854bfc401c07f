"""The result of a calibration: :class:`Calibration`, its figures, measurements and displays."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..handoff import viz
from ..jsonable import jsonable

__all__ = ["Calibration", "MIN_SAMPLES", "SUMMARY_COLUMNS"]

#: Fewer positives or negatives than this makes every calibration measurement indeterminate.
MIN_SAMPLES = 10
#: Summary columns, in table order.
SUMMARY_COLUMNS = (
    "cutoff",
    "quantile",
    "n_positive",
    "n_negative",
    "negative_satisfaction",
    "positive_retention",
    "separation_margin",
    "auroc",
    "aupr_in",
    "aupr_out",
    "fpr@95tpr",
    "threshold@95tpr",
    "rank_based",
)


def _r12(x: float) -> float:
    return float(round(float(x), 12))


@dataclass
class Calibration:
    """The result of :func:`calibrate`.

    * ``summary``: one row per calibrated system (index ``system``) with :data:`SUMMARY_COLUMNS`.
    * ``top1``: one row per (system, query_id) for every ranked query and every missing
      positive or negative: ``kind``, ``stratum``, ``query``, ``top1_doc_id``, ``top1_score``,
      ``missing`` (no ranking or no score: left out), ``above_cutoff`` and ``pairwise_win``
      (share of the other class this query is correctly ordered against, ties 1/2; its mean
      over either class is the AUROC).
    * ``per_stratum``: one row per (system, kind, stratum) of positives and negatives: ``n``,
      ``cutoff`` (the system's), ``share`` with its Wilson interval (``share_ci_low``,
      ``share_ci_high``) — the negative satisfaction of a negatives' stratum, the positive
      retention of a positives' stratum — ``auroc`` of the stratum's queries against the
      whole other class, and ``median_top1``.
    * ``intervals``: one row per (system, metric): ``value``, ``n``, ``ci_low``, ``ci_high``,
      ``interval`` (how it was computed).
    * ``warnings``: everything a reader must know before trusting the numbers.
    * ``missing_negatives`` / ``missing_positives``: per system, query ids without a top-1 score.
    """

    summary: pd.DataFrame
    top1: pd.DataFrame
    per_stratum: pd.DataFrame
    intervals: pd.DataFrame
    warnings: list[str]
    missing_negatives: dict[str, list[str]]
    missing_positives: dict[str, list[str]]
    settings: dict[str, Any]
    system_warnings: dict[str, list[str]] = field(default_factory=dict)
    rows: pd.DataFrame | None = field(default=None, repr=False)
    #: With ``guarantee=`` or ``by="stratum"``: :func:`retrieval_eval.guarantee.guarantee_table`.
    guarantee: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def systems(self) -> list[str]:
        """The calibrated systems (those with scores), in run order."""
        return [str(s) for s in self.summary.index]

    def cutoff(self, system: str) -> float:
        """The system's cutoff (calibrated or fixed)."""
        return float(self._row(system)["cutoff"])

    def _row(self, system: str) -> pd.Series:
        if system not in self.systems:
            why = next((w for w in self.system_warnings.get(system, []) if "no scores" in w), None)
            raise KeyError(why or f"no calibrated system {system!r}; calibrated: {', '.join(self.systems)}")
        return self.summary.loc[system]

    def _indeterminate(self, system: str) -> str | None:
        row = self._row(system)
        reasons = []
        for label, n in (("negatives", int(row["n_negative"])), ("positives", int(row["n_positive"]))):
            if n < MIN_SAMPLES:
                reasons.append(f"only {n} {label} with a top-1 score (fewer than {MIN_SAMPLES})")
        if bool(row["rank_based"]):
            why = self.settings.get("rank_reasons", {}).get(system, [])
            reasons.append(f"scores look rank-based ({'; '.join(why)})")
        return "; ".join(reasons) or None

    def metrics(self, system: str) -> dict[str, dict[str, Any]]:
        """Report measurements for ``system``: name -> ``{"value", "n", "ci", "deterministic"}``.

        ``negative_satisfaction`` (n = negatives) and ``positive_retention`` (n = positives)
        carry a Wilson 95% interval; ``auroc`` and ``separation_margin`` (n = both classes)
        a seeded percentile bootstrap interval; ``aupr_in``, ``aupr_out`` and ``fpr@95tpr``
        none. Values and bounds are rounded to 12 decimals. When fewer than
        :data:`MIN_SAMPLES` negatives or positives were scored, or the scores look rank-based,
        every measurement carries ``"indeterminate": "<reason>"``: a gate on it must not
        PASS. A figure that cannot be computed (no negatives) is absent, not NaN.
        """
        self._row(system)
        why = self._indeterminate(system)
        table = self.intervals[self.intervals["system"] == system]
        out: dict[str, dict[str, Any]] = {}
        for rec in table.itertuples(index=False):  # seven metrics, not queries
            if not math.isfinite(rec.value):
                continue
            m: dict[str, Any] = {"value": _r12(rec.value), "n": int(rec.n)}
            if math.isfinite(rec.ci_low) and math.isfinite(rec.ci_high):
                m["ci"] = [_r12(rec.ci_low), _r12(rec.ci_high)]
                m["interval"] = rec.interval
            m["deterministic"] = True
            if why:
                m["indeterminate"] = why
            out[rec.metric] = m
        return out

    def report_block(self, system: str) -> dict[str, Any]:
        """The report's ``calibration`` block for ``system`` (JSON-able)."""
        row = self._row(system)
        fixed = math.isnan(float(row["quantile"]))
        conformal = "method" in row.index and row["method"] == "conformal"
        extra = {}
        if self.guarantee is not None:
            mine = self.guarantee[self.guarantee["system"] == system]
            extra["guarantee"] = mine.drop(columns="system").to_dict(orient="records")
        return jsonable(
            {
                "system": system,
                "cutoff": float(row["cutoff"]),
                "method": "conformal" if conformal else "fixed" if fixed else "quantile",
                "quantile": None if fixed else float(row["quantile"]),
                "n_positive": int(row["n_positive"]),
                "n_negative": int(row["n_negative"]),
                "missing_negatives": list(self.missing_negatives.get(system, [])),
                "rank_based": bool(row["rank_based"]),
                "warnings": list(self.system_warnings.get(system, [])),
                **extra,
            }
        )

    def to_frame(self) -> pd.DataFrame:
        """The summary table (a copy)."""
        return self.summary.copy()

    def to_markdown(self) -> str:
        """The summary table as Markdown (:mod:`retrieval_eval.tables`: base install only)."""
        frame_markdown = viz("frame_markdown")

        return frame_markdown(self.summary)

    def to_latex(self, caption: str | None = None, label: str | None = None) -> str:
        """The summary table as a booktabs LaTeX ``table`` (no jinja2)."""
        frame_latex = viz("frame_latex")

        return frame_latex(self.summary, caption=caption, label=label)

    #: The frames a saved calibration holds (``rows``, the scored run, only when asked for).
    FRAMES = ("summary", "top1", "per_stratum", "intervals", "guarantee", "rows")

    def to_dict(self, rows: bool = False) -> dict[str, Any]:
        """The report-style figures (``settings``, ``summary``, ``metrics``, ``per_stratum``,
        ``warnings``, missing queries), JSON-able (NaN -> None), and under ``frames`` every
        frame with its dtypes, so that :meth:`from_dict` gives back a calibration that renders
        and plots the same. ``rows=True`` adds the scored run (large, and read by no display)."""
        from ..evaluation.persist import FORMAT_VERSION, frame_to_dict

        frames = {n: frame_to_dict(getattr(self, n)) for n in self.FRAMES if rows or n != "rows"}
        return {
            **self._report_dict(),
            "kind": "Calibration",
            "version": FORMAT_VERSION,
            "rank_reasons": jsonable(self.settings.get("rank_reasons", {})),
            "system_warnings": jsonable(self.system_warnings),
            "frames": frames,
        }

    def _meta(self) -> dict[str, Any]:
        return {
            "settings": jsonable(self.settings),
            "warnings": list(self.warnings),
            "missing_negatives": jsonable(self.missing_negatives),
            "missing_positives": jsonable(self.missing_positives),
            "system_warnings": jsonable(self.system_warnings),
        }

    @classmethod
    def _rebuild(cls, meta: dict[str, Any], frames: dict[str, Any]) -> Calibration:
        return cls(
            frames["summary"],
            frames["top1"],
            frames["per_stratum"],
            frames["intervals"],
            list(meta["warnings"]),
            dict(meta["missing_negatives"]),
            dict(meta["missing_positives"]),
            dict(meta["settings"]),
            dict(meta.get("system_warnings") or {}),
            frames.get("rows"),
            frames.get("guarantee"),
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Calibration:
        """The calibration :meth:`to_dict` wrote (raises ValueError for another kind of dict)."""
        from ..evaluation.persist import FORMAT_VERSION, frame_from_dict

        if d.get("kind") != "Calibration" or int(d.get("version", 0)) > FORMAT_VERSION:
            raise ValueError("not a dict written by Calibration.to_dict()")
        settings = {**d["settings"], "rank_reasons": d.get("rank_reasons", {})}
        meta = {**d, "settings": settings}
        return cls._rebuild(meta, {n: frame_from_dict(f) for n, f in d["frames"].items()})

    def to_parquet(self, path) -> None:
        """Save this calibration to the folder ``path`` (every frame, ``rows`` included, as
        parquet; settings and warnings in ``result.json``), each file written atomically."""
        from ..evaluation.persist import write_result

        write_result("Calibration", self._meta(), {n: getattr(self, n) for n in self.FRAMES}, path)

    @classmethod
    def read_parquet(cls, path) -> Calibration:
        """The calibration :meth:`to_parquet` saved in the folder ``path``."""
        from ..evaluation.persist import read_result

        meta, frames = read_result(path, "Calibration")
        return cls._rebuild(meta, frames)

    def _report_dict(self) -> dict[str, Any]:
        summary = self.summary.reset_index()
        return jsonable(
            {
                "settings": {k: v for k, v in self.settings.items() if k != "rank_reasons"},
                "summary": summary.to_dict(orient="records"),
                "metrics": {s: self.metrics(s) for s in self.systems},
                "per_stratum": self.per_stratum.to_dict(orient="records"),
                "warnings": list(self.warnings),
                "missing_negatives": self.missing_negatives,
                "missing_positives": self.missing_positives,
                **({} if self.guarantee is None else {"guarantee": self.guarantee.to_dict(orient="records")}),
            }
        )

    def plot(self, kind: str = "distribution", ax=None, system=None, **kwargs):
        """Draw this calibration: ``"distribution"`` (top-1 scores with the cutoff), ``"roc"``,
        ``"pr"`` or ``"tradeoff"``. Returns the display; never calls ``plt.show()``."""
        plot_calibration = viz("plot_calibration")

        return plot_calibration(self, kind=kind, ax=ax, system=system, **kwargs)

    def _repr_html_(self) -> str:
        box, esc, table, warnings_html = viz("box", "esc", "table", "warnings_html")

        s = self.settings
        how = (
            f"cutoff = {s['quantile']:.0%} quantile of the positives' top-1 scores"
            if s.get("cutoff") is None
            else "fixed cutoff (production behaviour)"
        )
        if self.guarantee is not None:
            how += f"; {_guarantee_text(s)}"
        body = (
            table(self.summary, max_rows=20)
            + ("" if self.guarantee is None else table(self.guarantee.set_index(["system", "stratum"]), max_rows=40))
            + warnings_html(self.warnings)
            + f"<div>{esc(how)}; intervals: Wilson 95% for shares, percentile bootstrap "
            f"({s['n_resamples']} resamples, seed {s['seed']}) for auroc and margin. "
            "Details: .top1, .per_stratum, .intervals</div>"
        )
        return box("Calibration (out-of-distribution queries)", body)

    def __repr__(self) -> str:
        return f"Calibration(systems={self.systems}, warnings={len(self.warnings)})\n" + self.summary.to_string()


def _guarantee_text(settings: Mapping[str, Any]) -> str:
    g, by = settings.get("guarantee"), settings.get("by")
    text = (
        ""
        if g is None
        else f"split-conformal cutoff: retention >= {1 - g['alpha']:.0%} "
        f"for a new positive, bounds at {1 - g['delta']:.0%} confidence"
    )
    if by is not None:
        text += ("; " if text else "") + f"one cutoff per {by} (Mondrian)"
    return text
