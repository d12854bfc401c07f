"""The tables of a calibration: who ranked what at rank 1, the summary and its intervals, and
the shares per stratum.

:func:`retrieval_eval.analysis.calibration.core.calibrate` reads its inputs, calibrates each
system's cutoff and hands the figures here to be laid out as the frames of a
:class:`~retrieval_eval.analysis.calibration.calibration_result.Calibration`: one place for
their columns, dtypes and row order. Nothing here decides a cutoff or computes a figure; the
Wilson intervals of the shares are computed here, for every share at once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...model import ID
from ..stats import wilson_interval
from .calibration_result import SUMMARY_COLUMNS
from .separation import separation_intervals

__all__ = ["interval_rows", "per_stratum_table", "summary_frames", "top1_table"]


def top1_table(rows: pd.DataFrame, qt: pd.DataFrame, systems: list, scored: list) -> pd.DataFrame:
    """The rank-1 row of every ranking, plus a row for each positive/negative not ranked
    (``missing``), for the scored systems; ``above_cutoff`` and ``pairwise_win`` to fill."""
    first = rows[rows["rank"] == 1]
    present = first[["system", "query_id"]]
    wanted_ids = qt.index[qt["kind"].isin(["positive", "negative"])]
    grid = pd.DataFrame(
        {
            "system": pd.array(np.repeat(np.asarray(systems, dtype=object), len(wanted_ids)), dtype=ID),
            "query_id": pd.array(np.tile(wanted_ids.to_numpy(dtype=object), len(systems)), dtype=ID),
        }
    )
    absent = grid.merge(present, on=["system", "query_id"], how="left", indicator=True)
    absent = absent[absent["_merge"] == "left_only"].drop(columns="_merge")
    absent = absent.merge(qt.reset_index(), on="query_id", how="left")
    top1 = pd.concat(
        [
            pd.DataFrame(
                {
                    "system": first["system"].to_numpy(),
                    "query_id": first["query_id"].to_numpy(),
                    "kind": first["kind"].to_numpy(),
                    "stratum": first["stratum"].to_numpy(),
                    "query": first["query"].to_numpy(),
                    "top1_doc_id": first["doc_id"].to_numpy(),
                    "top1_score": first["score"].to_numpy(np.float64),
                }
            ),
            pd.DataFrame(
                {
                    "system": absent["system"].to_numpy(),
                    "query_id": absent["query_id"].to_numpy(),
                    "kind": absent["kind"].to_numpy(),
                    "stratum": absent["stratum"].to_numpy(),
                    "query": absent["query"].to_numpy(),
                    "top1_doc_id": pd.array([pd.NA] * len(absent), dtype=ID),
                    "top1_score": np.full(len(absent), np.nan),
                }
            ),
        ],
        ignore_index=True,
    )
    for c in ("system", "query_id", "kind", "stratum", "query", "top1_doc_id"):
        top1[c] = top1[c].astype(ID)
    top1["missing"] = ~np.isfinite(top1["top1_score"].to_numpy(np.float64))
    top1 = top1[top1["system"].isin(scored)].reset_index(drop=True)
    top1["above_cutoff"] = pd.array([pd.NA] * len(top1), dtype="boolean")
    top1["pairwise_win"] = np.nan
    return top1


def summary_frames(records: list[dict], interval_rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The summary (one row per system) and the intervals (one row per system and figure)."""
    summary = pd.DataFrame.from_records(records, columns=["system", *SUMMARY_COLUMNS])
    summary["system"] = summary["system"].astype(ID)
    summary = summary.set_index("system")
    summary["n_positive"] = summary["n_positive"].astype(np.int64)
    summary["n_negative"] = summary["n_negative"].astype(np.int64)
    summary["rank_based"] = summary["rank_based"].astype(bool)
    intervals = pd.DataFrame.from_records(
        interval_rows, columns=["system", "metric", "value", "n", "ci_low", "ci_high", "interval", "hits"]
    )
    # Wilson intervals for every share at once (one normal quantile, not one per share).
    wil = ((intervals["hits"] >= 0) & (intervals["n"] > 0) & intervals["value"].notna()).to_numpy()
    if wil.any():
        lo, hi = wilson_interval(
            intervals.loc[wil, "hits"].to_numpy(np.float64), intervals.loc[wil, "n"].to_numpy(np.float64)
        )
        intervals.loc[wil, "ci_low"], intervals.loc[wil, "ci_high"] = lo, hi
    intervals = intervals.drop(columns="hits")
    intervals["system"] = intervals["system"].astype(ID)
    intervals["metric"] = intervals["metric"].astype(ID)
    intervals["n"] = intervals["n"].astype(np.int64)
    return summary, intervals


def interval_rows(
    s: str, fig: dict[str, float], pos: np.ndarray, neg: np.ndarray, c: float, n_resamples: int, seed
) -> list[dict[str, Any]]:
    """One row per reported figure of system ``s``: its value, n and interval (a share's
    Wilson interval is filled in later, for every share at once, from ``hits``)."""
    boot = separation_intervals(pos, neg, n_resamples, seed)
    ns = int(np.count_nonzero(neg < c)) if not math.isnan(c) else 0
    ps = int(np.count_nonzero(pos >= c)) if not math.isnan(c) else 0
    boot_label = f"percentile bootstrap 95% ({n_resamples} resamples, seed {seed})"
    out = []
    for name, value, n, ci, hits, how in (
        ("negative_satisfaction", fig["negative_satisfaction"], neg.size, None, ns, "wilson 95%"),
        ("positive_retention", fig["positive_retention"], pos.size, None, ps, "wilson 95%"),
        ("auroc", fig["auroc"], pos.size + neg.size, boot["auroc"], 0, boot_label),
        ("separation_margin", fig["separation_margin"], pos.size + neg.size, boot["separation_margin"], 0, boot_label),
        ("aupr_in", fig["aupr_in"], pos.size + neg.size, (math.nan, math.nan), 0, ""),
        ("aupr_out", fig["aupr_out"], pos.size + neg.size, (math.nan, math.nan), 0, ""),
        ("fpr@95tpr", fig["fpr@95tpr"], neg.size, (math.nan, math.nan), 0, ""),
    ):
        lo, hi = ci if ci is not None else (math.nan, math.nan)
        out.append(
            {
                "system": s,
                "metric": name,
                "value": value,
                "n": int(n),
                "ci_low": lo,
                "ci_high": hi,
                "interval": how,
                "hits": hits if ci is None else -1,
            }
        )
    return out


def per_stratum_table(top1: pd.DataFrame, cutoffs: dict[str, float], limits: np.ndarray | None = None) -> pd.DataFrame:
    """(system, kind, stratum) rows for positives and negatives with a top-1 score;
    ``limits`` (one per ``top1`` row) replaces the system's cutoff with per-query ones."""
    keep = (~top1["missing"] & top1["kind"].isin(["positive", "negative"])).to_numpy(bool)
    t = top1[keep]
    cut = (
        t["system"].map(cutoffs).to_numpy(np.float64) if limits is None else np.asarray(limits, dtype=np.float64)[keep]
    )
    score = t["top1_score"].to_numpy(np.float64)
    neg = (t["kind"] == "negative").to_numpy()
    success = np.where(neg, score < cut, score >= cut).astype(np.float64)
    success[np.isnan(cut)] = np.nan
    frame = pd.DataFrame(
        {
            "system": t["system"].to_numpy(),
            "kind": t["kind"].to_numpy(),
            "stratum": t["stratum"].to_numpy(),
            "success": success,
            "win": t["pairwise_win"].to_numpy(np.float64),
            "score": score,
        }
    )
    g = frame.groupby(["system", "kind", "stratum"], sort=False, observed=True)
    out = pd.DataFrame(
        {
            "n": g.size(),
            "hits": g["success"].sum(min_count=1),
            "share": g["success"].mean(),
            "auroc": g["win"].mean(),
            "median_top1": g["score"].median(),
        }
    ).reset_index()
    if limits is None:
        out["cutoff"] = out["system"].map(cutoffs).astype(np.float64)
    else:
        out["cutoff"] = (
            pd.DataFrame(
                {
                    "system": t["system"].to_numpy(),
                    "kind": t["kind"].to_numpy(),
                    "stratum": t["stratum"].to_numpy(),
                    "cut": cut,
                }
            )
            .groupby(["system", "kind", "stratum"], sort=False)["cut"]
            .first()
            .reindex(pd.MultiIndex.from_frame(out[["system", "kind", "stratum"]]))
            .to_numpy(np.float64)
        )
    ok = out["share"].notna().to_numpy()
    lo = np.full(len(out), np.nan)
    hi = np.full(len(out), np.nan)
    if ok.any():
        lo[ok], hi[ok] = wilson_interval(out.loc[ok, "hits"].to_numpy(), out.loc[ok, "n"].to_numpy())
    out["share_ci_low"], out["share_ci_high"] = lo, hi
    out["figure"] = np.where(out["kind"] == "negative", "negative_satisfaction", "positive_retention")
    order = {s: i for i, s in enumerate(cutoffs)}  # systems in run order
    out = out.sort_values(
        ["system", "kind", "stratum"], kind="stable", key=lambda c: c.map(order) if c.name == "system" else c
    )
    cols = [
        "system",
        "stratum",
        "kind",
        "n",
        "cutoff",
        "figure",
        "share",
        "share_ci_low",
        "share_ci_high",
        "auroc",
        "median_top1",
    ]
    out = out[cols].reset_index(drop=True)
    for c in ("system", "stratum", "kind", "figure"):
        out[c] = out[c].astype(ID)
    out["n"] = out["n"].astype(np.int64)
    return out
