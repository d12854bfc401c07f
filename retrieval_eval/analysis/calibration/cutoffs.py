"""Cutoff rules, and the run after a cutoff: what production sees, and the trade-off it makes.

* :func:`cutoff_for` is the one rule that sets a system's cutoff (the fixed one production
  uses, else the ``quantile`` of the positives' top-1 scores); :func:`fixed_systems` says which
  systems were given theirs.
* :func:`apply_cutoff` drops the hits a production consumer with that cutoff would drop.
* :func:`cutoff_sweep` gives, per cutoff, the trade-off (risk, coverage, recall) it makes.
  Recall after a cutoff comes from :func:`retrieval_eval.engine.metrics.compute`; nothing here
  computes a ranking metric of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import cast

import numpy as np
import pandas as pd

from ...engine.metrics import aggregate, compute, relevance_table
from ...model import ID
from ..stats import quantile as safe_quantile
from .calibration_input import (
    check_negatives,
    judgments_frame,
    negative_ids,
    no_scores_message,
    queries_frame,
    query_table,
    run_frame,
    scored_rows,
)
from .calibration_result import Calibration
from .guarantee import stratum_limits

__all__ = ["apply_cutoff", "cutoff_for", "cutoff_sweep", "fixed_systems"]

_SEP = "\x1f"


def cutoff_for(system: str, cutoff, quantile: float, pos: np.ndarray) -> tuple[float, float]:
    """``(cutoff, quantile)`` for a system: the fixed one when given, else the ``quantile``.

    The one rule that sets a calibrated cutoff: the linear-interpolated ``quantile`` of the
    positives' top-1 scores (overflow-safe, :func:`retrieval_eval.analysis.stats.quantile`), so
    no absolute number is hard-coded; a fixed cutoff (production's) replaces it, and its
    quantile is NaN.

    Parameters
    ----------
    system : str
        The system.
    cutoff : float, dict or None
        A fixed cutoff for every system, ``{system: cutoff}``, or None.
    quantile : float
        The share of positives the calibrated cutoff may refuse.
    pos : ndarray
        The system's positives' top-1 scores.

    Returns
    -------
    tuple of float
        ``(cutoff, quantile)``; the cutoff is NaN without positives.

    Raises
    ------
    ValueError
        A fixed cutoff that is not a finite number.

    Examples
    --------
    >>> cutoff_for("s", None, 0.5, np.array([0.2, 0.4, 0.9]))
    (0.4, 0.5)
    """
    fixed = cutoff.get(system) if isinstance(cutoff, Mapping) else cutoff
    if fixed is not None:
        fixed = float(fixed)
        if not math.isfinite(fixed):
            raise ValueError(f"cutoff for {system!r} must be a finite number, got {fixed}")
        return fixed, math.nan
    if pos.size == 0:
        return math.nan, quantile
    return float(safe_quantile(pos, quantile)), quantile


def fixed_systems(cutoff, systems: list[str]) -> set[str]:
    """The systems whose cutoff was given (``cutoff=``), not calibrated.

    Parameters
    ----------
    cutoff : float, dict or None
        As in :func:`cutoff_for`.
    systems : list of str
        Every calibrated system.

    Returns
    -------
    set of str

    Examples
    --------
    >>> fixed_systems({"a": 0.5}, ["a", "b"])
    {'a'}
    """
    if cutoff is None:
        return set()
    if isinstance(cutoff, Mapping):
        return {str(k) for k in cutoff}
    return set(systems)


def apply_cutoff(run, cutoff) -> pd.DataFrame:
    """The run as a production consumer with a relevance cutoff sees it: hits scoring below
    the cutoff removed (a hit exactly at the cutoff stays).

    Every system of the run must have a cutoff and scores; a hit without a score is removed too
    (nothing to compare). Rows keep their columns and their ``rank`` as written (the engine
    orders by it, so gaps do not matter); a query whose every hit is removed has no rows left,
    and ``evaluate`` then treats it as missing and scores it zero: that is what an abstention
    costs on a covered query.

    Parameters
    ----------
    run : DataFrame, list of dicts or path
        The run.
    cutoff : float, dict or Calibration
        A number (every system), a mapping ``{system: cutoff}`` or a :class:`Calibration`
        (each system's own cutoff; with ``by="stratum"`` each query's stratum's cutoff, the
        pooled one for queries and strata it has none for).

    Returns
    -------
    DataFrame
        The kept rows of the run, in run order.

    Raises
    ------
    ValueError
        A system without a cutoff or without scores.

    Examples
    --------
    >>> run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "rank": [1, 2, 1],
    ...                     "doc_id": ["a", "b", "c"], "score": [0.9, 0.4, 0.3]})
    >>> apply_cutoff(run, 0.4)["doc_id"].tolist()
    ['a', 'b']
    """
    r = run_frame(run)
    systems = r["system"].astype(ID)
    if isinstance(cutoff, Calibration):
        mapping = {s: cutoff.cutoff(s) for s in cutoff.systems}
    elif isinstance(cutoff, Mapping):
        mapping = {str(k): float(v) for k, v in cutoff.items()}
    else:
        value = float(cutoff)
        mapping = {str(s): value for s in pd.unique(systems)}
    present = [str(s) for s in pd.unique(systems)]
    lacking = [s for s in present if s not in mapping or not math.isfinite(mapping[s])]
    if lacking:
        raise ValueError(f"no cutoff for system(s) {', '.join(map(repr, lacking))}")
    has = r["score"].notna().groupby(systems, sort=False).any()
    scoreless = [s for s in present if not has[s]]
    if scoreless:
        raise ValueError("; ".join(no_scores_message(s) for s in scoreless))
    limit = systems.map(mapping).to_numpy(np.float64)
    if isinstance(cutoff, Calibration) and cutoff.settings.get("by") is not None:
        assert cutoff.guarantee is not None  # a calibration by stratum has its table
        limit = stratum_limits(cutoff.guarantee, cutoff.top1, systems, r["query_id"], limit)
    keep = r["score"].to_numpy(np.float64) >= limit
    return r[keep].reset_index(drop=True)


def _default_cutoffs(top: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Every distinct top-1 score (a 101-point quantile grid when there are more than 99),
    plus both ends: the lowest score (keeps everything) and just above the highest (keeps
    nothing)."""
    top = top[np.isfinite(top)]
    scores = scores[np.isfinite(scores)]
    if scores.size == 0:
        return np.zeros(0)
    inner = np.unique(top)
    if inner.size > 99:
        inner = safe_quantile(top, np.linspace(0.0, 1.0, 101))
    with np.errstate(over="ignore"):  # above the largest double is inf: it keeps nothing too
        ends = [float(scores.min()), float(np.nextafter(scores.max(), np.inf))]
    return np.unique(np.r_[inner, ends])


def cutoff_sweep(
    judgments, run, queries=None, negatives=None, cutoffs=None, k: int = 10, threshold: int = 1
) -> pd.DataFrame:
    """The trade-off a cutoff makes, per system and cutoff: one tidy row each.

    Parameters
    ----------
    judgments, run, queries, negatives
        As in :func:`~retrieval_eval.analysis.calibration.calibrate` (frames, lists of
        wire-format dicts or paths; ``negatives`` a list of query ids).
    cutoffs : list of float, dict or None
        A list of numbers (every system), ``{system: list}``, or None (every distinct top-1
        score plus both ends, or a 101-point quantile grid when there are many).
    k : int
        The cutoff of ``recall@k``.
    threshold : int
        The grade that counts as relevant.

    Returns
    -------
    DataFrame
        Columns ``system``, ``cutoff``, ``n_positive``, ``n_negative`` (queries with a top-1
        score, as in ``calibrate``), ``negative_satisfaction`` (negatives with top1 < cutoff),
        ``positive_retention`` (positives with top1 >= cutoff), ``abstain_rate`` (positives
        with nothing left after :func:`apply_cutoff`), ``recall@k`` after the cutoff (the
        metric engine's: :func:`retrieval_eval.engine.metrics.compute` and ``aggregate`` on
        the cut run, every judged positive counted, a query left empty scoring zero),
        ``risk`` (share of answered positives and negatives that are negatives: OOD queries
        that still get an answer) and ``coverage`` (share of positives and negatives
        answered at all).

    Raises
    ------
    ValueError
        A system of the run has no scores.

    Examples
    --------
    >>> from retrieval_eval import load_demo
    >>> demo = load_demo()
    >>> sweep = cutoff_sweep(demo.judgments, demo.runs, demo.queries, cutoffs=[0.5])
    >>> list(sweep.columns[:4])
    ['system', 'cutoff', 'n_positive', 'n_negative']
    """
    j, r, q = judgments_frame(judgments), run_frame(run), queries_frame(queries)
    negs = negative_ids(q, negatives)
    check_negatives(j, negs, threshold)
    qt = query_table(j, q, negs, threshold)
    rows = scored_rows(r, j, qt, threshold)
    systems = [str(s) for s in pd.unique(rows["system"])]
    has = rows.groupby("system", sort=False)["score"].apply(lambda s: s.notna().any())
    scoreless = [s for s in systems if not has[s]]
    if scoreless:
        raise ValueError("; ".join(no_scores_message(s) for s in scoreless))
    pieces, runs = [], []
    for s in systems:  # per system; each vectorized over queries x cutoffs
        mine = rows[rows["system"] == s]
        if cutoffs is None:
            grid = None
        elif isinstance(cutoffs, Mapping):
            grid = np.asarray(cutoffs.get(s, []), dtype=np.float64)
        else:
            grid = np.asarray(list(cutoffs), dtype=np.float64)
        frame, cut_run = _sweep_system(s, mine, grid, int(k))
        pieces.append(frame)
        runs.append(cut_run)
    return _with_recall(
        pd.concat(pieces, ignore_index=True), pd.concat(runs, ignore_index=True), j, negs, int(k), threshold
    )


def _sweep_system(s: str, mine: pd.DataFrame, grid: np.ndarray | None, k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One system's sweep rows (all but recall) and its cut runs, one synthetic system per
    cutoff, for one call of the engine."""
    # top = the rank-1 score (as in calibrate); best = the highest score of the ranking,
    # which decides whether anything is left after the cutoff.
    first = mine[(mine["rank"] == 1).to_numpy()]
    per_q = pd.DataFrame(
        {
            "kind": first["kind"].to_numpy(),
            "top": first["score"].to_numpy(np.float64),
            "best": mine.groupby("query_id", sort=False)["score"].max().reindex(first["query_id"]).to_numpy(np.float64),
        }
    )
    per_q = per_q[per_q["kind"].isin(["positive", "negative"]).to_numpy() & np.isfinite(per_q["top"].to_numpy())]
    if grid is None:
        grid = _default_cutoffs(per_q["top"].to_numpy(np.float64), mine["score"].to_numpy(np.float64))
    grid = np.unique(grid)
    is_neg = (per_q["kind"] == "negative").to_numpy()
    top = per_q["top"].to_numpy(np.float64)
    best = per_q["best"].to_numpy(np.float64)
    c = grid[:, None]
    answered = best[None, :] >= c
    npos, nneg = int((~is_neg).sum()), int(is_neg.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        n_answered = answered.sum(axis=1)
        frame = pd.DataFrame(
            {
                "system": s,
                "cutoff": grid,
                "n_positive": npos,
                "n_negative": nneg,
                "negative_satisfaction": (top[None, is_neg] < c).sum(axis=1) / nneg if nneg else np.nan,
                "positive_retention": (top[None, ~is_neg] >= c).sum(axis=1) / npos if npos else np.nan,
                "abstain_rate": (~answered[:, ~is_neg]).sum(axis=1) / npos if npos else np.nan,
                "risk": np.where(n_answered > 0, answered[:, is_neg].sum(axis=1) / np.maximum(n_answered, 1), np.nan),
                "coverage": n_answered / (npos + nneg) if npos + nneg else np.nan,
            }
        )
    # Only the positives' rankings can change recall. When every ranking's scores are
    # non-increasing, a cutoff removes a suffix, so the first k rows are all that can
    # reach the top k: the rest are left out (exactly the same recall, far fewer rows).
    src = mine[(mine["kind"] == "positive").to_numpy()]
    score = src["score"].to_numpy(np.float64)
    qcodes = pd.factorize(src["query_id"])[0]
    same = qcodes[1:] == qcodes[:-1]
    if not np.any(same & (score[1:] > score[:-1])):
        keep = (src["rank"] <= k).to_numpy()
        src, score = src[keep], score[keep]
    ci, ri = np.nonzero(score[None, :] >= c)
    cut_run = pd.DataFrame(
        {
            "system": pd.array([f"{s}{_SEP}{i}" for i in range(len(grid))], dtype=ID).take(ci),
            "query_id": src["query_id"].array.take(ri),
            "rank": src["rank"].to_numpy(np.int64)[ri],
            "doc_id": src["doc_id"].array.take(ri),
            "score": score[ri],
        }
    )
    return frame, cut_run


def _with_recall(
    out: pd.DataFrame, cut: pd.DataFrame, j: pd.DataFrame, negs: list[str], k: int, threshold: int
) -> pd.DataFrame:
    """The sweep rows with ``recall@k`` of every cut run (one engine call for all of them)."""
    recall_name = f"recall@{k}"
    for col in ("query_id", "doc_id"):
        cut[col] = cut[col].astype(ID)
    per_query = compute(j, cut, k=(k,), threshold=threshold)
    per_query = per_query[~per_query["query_id"].isin(pd.Index(negs, dtype=ID))]
    means = aggregate(per_query)
    labels = out["system"] + _SEP + out.groupby("system", sort=False).cumcount().astype(str)
    if len(means):
        recall = means[recall_name].reindex(labels.to_numpy()).to_numpy(np.float64)
    else:
        recall = np.full(len(out), np.nan)
    if bool((relevance_table(j)["relevance"] >= threshold).any()):
        # A cutoff that removed every hit leaves its synthetic system out of the run: every
        # positive is then missing and scores zero.
        recall = np.where(np.isnan(recall), 0.0, recall)
    out.insert(cast(int, out.columns.get_loc("abstain_rate")) + 1, recall_name, recall)
    out["system"] = out["system"].astype(ID)
    out["n_positive"] = out["n_positive"].astype(np.int64)
    out["n_negative"] = out["n_negative"].astype(np.int64)
    return out
