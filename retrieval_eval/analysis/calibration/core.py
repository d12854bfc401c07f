"""Out-of-distribution calibration from absolute relevance scores (SPEC B2).

A retrieval engine never abstains: an off-topic query still gets a rank-1 document, so rank
order says nothing about whether the engine *knows* it has no answer. The signal is the
absolute relevance score of the top hit (a cosine, a cross-encoder score): covered queries
score high, out-of-distribution (OOD) queries score low, and the gap is the robustness
measure. This module turns that gap into numbers a report can gate on:

* :func:`score_rows` (:mod:`.calibration_input`) — the deduplicated run with each hit's grade
  and its query's kind (``positive``, ``negative``, ``no_positives``, ``unjudged``), stratum
  and text;
* :func:`calibrate` — per system: a cutoff ``C`` (the ``q``-quantile of the positives' top-1
  scores, or the fixed cutoff production uses), negative satisfaction, positive retention,
  separation margin, AUROC, AUPR-in/out, FPR at 95% TPR, with intervals; and an honesty check
  that refuses to report a confident separation from rank-based scores (RRF); the result is a
  :class:`Calibration` (:mod:`.calibration_result`, its frames laid out by :mod:`.tables`),
  the figures come from :mod:`.separation` and the honesty check from :mod:`.rank_based`;
* :func:`calibrate_scores` — the same calibration of bare (label, top-1 score) pairs;
* :func:`apply_cutoff` and :func:`cutoff_sweep` (:mod:`.cutoffs`) — the run as a production
  consumer that drops hits below the cutoff would see it, and the trade-off (risk, coverage,
  recall) per cutoff.

Order and duplicates come from :func:`retrieval_eval.engine.metrics.dedupe_run` (the one place
they are defined): ``top1`` of a query is its rank-1 row there. Recall after a cutoff comes
from :func:`retrieval_eval.engine.metrics.compute`; nothing here computes a ranking metric of
its own.

Decisions stated once:

* A query (positive or negative) that a system did not rank, or whose top hit has no score,
  has no ``top1``. It is left out of that system's calibration figures and listed
  (``missing_positives``, ``missing_negatives``, and a warning), never counted: counting a
  missing negative as satisfied would let an empty run score 1.0, and counting a missing
  positive as an abstention would invent a score. The ranking metrics (``evaluate``) already
  score a missing positive zero, so the loss is visible there.
* Queries without any label at the threshold and not marked ``expect_none`` (``no_positives``)
  and queries nobody judged (``unjudged``) are neither class: calibration ignores them.
* ``negative_satisfaction`` is strict (``top1 < C``) and ``positive_retention`` is not
  (``top1 >= C``): a production cutoff keeps a hit whose score equals it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ...model import ID
from ..evaluation.heads import run_of
from ..jsonable import jsonable
from .calibration_input import (
    KINDS,
    check_negatives,
    judgments_frame,
    negative_ids,
    no_scores_message,
    queries_frame,
    query_table,
    run_frame,
    score_rows,
    scored_rows,
)
from .calibration_result import MIN_SAMPLES, SUMMARY_COLUMNS, Calibration
from .cutoffs import apply_cutoff, cutoff_for, cutoff_sweep, fixed_systems
from .guarantee import Guarantee, as_guarantee, conformal_cutoff, guarantee_table, query_cutoffs
from .rank_based import RANK_BASED_ATTR, rank_reasons
from .separation import pairwise_wins, separation_figures
from .tables import interval_rows, per_stratum_table, summary_frames, top1_table

__all__ = [
    "Calibration",
    "KINDS",
    "MIN_SAMPLES",
    "SUMMARY_COLUMNS",
    "apply_cutoff",
    "calibrate",
    "calibrate_scores",
    "check_negatives",
    "cutoff_sweep",
    "negative_ids",
    "score_rows",
]


class _Warnings:
    """The warnings of a calibration, in order, and each system's share of them."""

    def __init__(self, systems: list[str]) -> None:
        self.all: list[str] = []
        self.by_system: dict[str, list[str]] = {s: [] for s in systems}

    def warn(self, system: str | None, text: str) -> None:
        """Record a warning; one about no system in particular concerns every system."""
        self.all.append(text)
        for name in [system] if system is not None else list(self.by_system):
            self.by_system[name].append(text)


def calibrate(
    judgments,
    run,
    queries=None,
    negatives=None,
    quantile: float = 0.10,
    cutoff=None,
    threshold: int = 1,
    n_resamples: int = 1000,
    seed=0,
    guarantee=None,
    by: str | None = None,
) -> Calibration:
    """Calibrate a relevance cutoff per system and measure how well it rejects OOD queries.

    For each system with scores, ``top1`` of a query is the score of its rank-1 row in
    :func:`retrieval_eval.engine.metrics.dedupe_run`, and the cutoff is the ``quantile`` of the
    positives' top1 (linear interpolation): no absolute number is hard-coded, so the rule
    travels between embedders. See SPEC B2 for every figure's definition.

    An empty run gives an empty result (no system, empty frames, a warning): a gate over it is
    INDETERMINATE. Systems whose scores look rank-based (RRF) are flagged, warned about, and
    their measurements marked indeterminate, as are all measurements over fewer than
    :data:`MIN_SAMPLES` positives or negatives.

    Parameters
    ----------
    judgments, run, queries
        Frames in the data model's shape, lists of wire-format dicts or paths.
    negatives : list of str, optional
        ``expect_none`` query ids, in addition to those the queries table marks.
    quantile : float
        The share of positives the calibrated cutoff may refuse (default 0.10).
    cutoff : float or dict, optional
        A fixed cutoff (a number, or ``{system: number}``; systems not in the mapping are
        calibrated) replaces the quantile one: the figures are then what production does with
        its cutoff, and ``quantile`` is NaN.
    threshold : int
        The grade that makes a judged query a positive.
    n_resamples, seed
        The seeded percentile bootstrap of AUROC and the separation margin.
    guarantee : float, dict or Guarantee, optional
        alpha, ``{"alpha": .., "delta": ..}`` or a :class:`Guarantee`: the split-conformal
        cutoff (:mod:`.guarantee`) replaces the quantile cutoff of every calibrated system, so
        that a new positive query keeps its answer with probability >= 1 - alpha;
        ``.guarantee`` then reports alpha, n, the coverage interval and a Clopper-Pearson lower
        bound on the negatives refused (``docs/ood-calibration.md``). With too few positives
        (n + 1 < 1/alpha) the cutoff is NaN and a warning says so.
    by : "stratum", optional
        One cutoff per stratum of the positives (Mondrian calibration; a stratum too small
        falls back to the pooled cutoff), used by ``top1["above_cutoff"]``, ``per_stratum``
        and :func:`apply_cutoff`; ``summary`` stays the pooled cutoff's.

    Returns
    -------
    Calibration
        Summary per system, per-query top-1 table, per-stratum shares, intervals, warnings.

    Raises
    ------
    FormatError
        A negative carries a relevant label.
    ValueError
        No system has scores (a score-less system next to scored ones is left out with a
        warning), or a bad ``quantile``/``n_resamples``/``by``.

    Examples
    --------
    >>> from retrieval_eval import load_demo
    >>> demo = load_demo()
    >>> cal = calibrate(demo.judgments, demo.runs, demo.queries)
    >>> list(cal.summary.columns[:4])
    ['cutoff', 'quantile', 'n_positive', 'n_negative']
    """
    rows, qt, systems, scored, notes, g = _calibration_inputs(
        judgments, run, queries, negatives, quantile, threshold, n_resamples, by, guarantee
    )
    top1 = top1_table(rows, qt, systems, scored)
    per = _calibrate_systems(top1, rows, scored, cutoff, float(quantile), g, int(n_resamples), seed, notes.warn)
    return _calibration_result(top1, rows, per, notes, g, by, cutoff, quantile, threshold, n_resamples, seed)


def _calibration_inputs(judgments, run, queries, negatives, quantile, threshold, n_resamples, by, guarantee):
    """Check the settings, read the inputs and start the warnings: the scored rows, the query
    table, the systems (all, and those with scores), the warnings so far and the guarantee."""
    run = run_of(run)  # an Evaluation stands in for its run (streamed or Dask: its heads)
    g = as_guarantee(guarantee)
    if by not in (None, "stratum"):
        raise ValueError(f"by must be None or 'stratum', got {by!r}")
    if not 0.0 <= float(quantile) <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be >= 1")
    j, r, q = judgments_frame(judgments), run_frame(run), queries_frame(queries)
    negs = negative_ids(q, negatives)
    check_negatives(j, negs, threshold)
    qt = query_table(j, q, negs, threshold)
    rows = scored_rows(r, j, qt, threshold)
    rows.attrs[RANK_BASED_ATTR] = dict(r.attrs.get(RANK_BASED_ATTR) or {})  # systems fused by rank
    systems = list(pd.unique(rows["system"]))
    has_scores = rows.groupby("system", sort=False)["score"].apply(lambda s: s.notna().any())
    scoreless = [s for s in systems if not has_scores[s]]
    scored = [s for s in systems if has_scores[s]]
    if scoreless and not scored:
        raise ValueError("; ".join(no_scores_message(s) for s in scoreless))

    notes = _Warnings(systems)
    for s in scoreless:
        notes.warn(s, no_scores_message(s) + "; it is left out")
    if not systems:  # an empty run is an empty result, not an error (nothing was ranked)
        notes.warn(None, "the run is empty: no system to calibrate")
    if not negs:
        notes.warn(
            None,
            "no negatives: mark out-of-distribution queries with expect_none: true "
            "in a queries file (or pass negatives=[...]) to measure OOD rejection",
        )
    return rows, qt, systems, scored, notes, g


def _calibration_result(top1, rows, per, notes, g, by, cutoff, quantile, threshold, n_resamples, seed) -> Calibration:
    """The :class:`Calibration` of the per-system figures: summary, intervals, per-stratum
    shares, the settings that made them and, with a guarantee or ``by``, the guarantee table."""
    summary, intervals = summary_frames(per["records"], per["intervals"])
    per_stratum = per_stratum_table(top1, per["cutoffs"])
    settings = {
        "quantile": float(quantile),
        "cutoff": jsonable(cutoff) if cutoff is not None else None,
        "threshold": int(threshold),
        "n_resamples": int(n_resamples),
        "seed": seed if isinstance(seed, (int, np.integer)) or seed is None else repr(seed),
        "min_samples": MIN_SAMPLES,
        "rank_reasons": per["rank_reasons"],
    }
    if g is None and by is None:
        return Calibration(
            summary,
            top1,
            per_stratum,
            intervals,
            notes.all,
            per["missing_negatives"],
            per["missing_positives"],
            settings,
            dict(notes.by_system),
            rows,
        )
    gtable, per_stratum = _guaranteed(
        top1, summary, settings, per_stratum, per["cutoffs"], g, by, cutoff, float(quantile), notes.warn
    )
    return Calibration(
        summary,
        top1,
        per_stratum,
        intervals,
        notes.all,
        per["missing_negatives"],
        per["missing_positives"],
        settings,
        dict(notes.by_system),
        rows,
        gtable,
    )


def calibrate_scores(
    y_true, y_score, *, cutoff=None, quantile: float = 0.10, name: str = "system", n_resamples: int = 1000, seed=0
) -> Calibration:
    """A :class:`Calibration` of bare (label, top-1 score) pairs, one per query.

    For scores that come from outside a run (a classifier's confidence, a notebook's arrays):
    each pair becomes a one-hit ranking of its own query, a positive (labelled relevant) or an
    ``expect_none`` negative, and goes through :func:`calibrate`, so every figure (cutoff,
    AUROC, AUPR, the rank-based check) comes from the same code as for a real run. The
    ``from_predictions`` constructors of the calibration displays call it.

    Parameters
    ----------
    y_true : array_like of bool
        True for an in-distribution (positive) query, False for an ``expect_none`` one.
    y_score : array_like of float
        The query's top-1 score, finite.
    cutoff : float, optional
        A fixed cutoff, as in :func:`calibrate`; default the ``quantile`` of the positives.
    quantile : float
        As in :func:`calibrate`.
    name : str
        The system's name in the result.
    n_resamples, seed
        The bootstrap of AUROC and the margin, as in :func:`calibrate` (a display that draws
        no interval can pass ``n_resamples=1``).

    Returns
    -------
    Calibration
        Of one system, ``name``; query ids ``q0``, ``q1``, ... in input order.

    Raises
    ------
    ValueError
        ``y_true`` and ``y_score`` differ in length, or a score is not finite.

    Examples
    --------
    >>> cal = calibrate_scores([True, True, False], [0.9, 0.8, 0.2], cutoff=0.5)
    >>> float(cal.summary.loc["system", "auroc"])
    1.0
    """
    y = np.asarray(y_true, dtype=bool).ravel()
    s = np.asarray(y_score, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ValueError(f"y_true has {y.size} values but y_score has {s.size}")
    if not np.all(np.isfinite(s)):
        raise ValueError("y_score must be finite numbers")
    n = y.size
    qids = np.char.add("q", np.arange(n).astype(str)).astype(object)
    docs = np.char.add("d", np.arange(n).astype(str)).astype(object)
    run = pd.DataFrame(
        {
            "system": pd.array([name] * n, dtype=ID),
            "query_id": pd.array(qids, dtype=ID),
            "rank": np.ones(n, dtype=np.int64),
            "doc_id": pd.array(docs, dtype=ID),
            "score": s,
        }
    )
    npos = int(y.sum())
    judgments = pd.DataFrame(
        {
            "query_id": pd.array(qids[y], dtype=ID),
            "doc_uri": pd.array(docs[y], dtype=ID),
            "chunk_id": pd.array([pd.NA] * npos, dtype=ID),
            "relevance": np.ones(npos, dtype=np.int64),
            "stratum": pd.array([pd.NA] * npos, dtype=ID),
            "query": pd.array([pd.NA] * npos, dtype=ID),
            "line": np.zeros(npos, dtype=np.int64),
        }
    )
    return calibrate(
        judgments, run, negatives=list(qids[~y]), quantile=quantile, cutoff=cutoff, n_resamples=n_resamples, seed=seed
    )


def _calibrate_systems(
    top1: pd.DataFrame,
    rows: pd.DataFrame,
    scored: list,
    cutoff,
    quantile: float,
    g: Guarantee | None,
    n_resamples: int,
    seed,
    warn: Callable[[str | None, str], None],
) -> dict[str, Any]:
    """Per scored system: its cutoff, figures, interval rows, missing queries and rank
    reasons; fills ``top1``'s ``above_cutoff`` and ``pairwise_win``. One pass per system,
    everything inside vectorized over queries."""
    out: dict[str, Any] = {
        "records": [],
        "intervals": [],
        "missing_negatives": {},
        "missing_positives": {},
        "rank_reasons": {},
        "cutoffs": {},
    }
    sys_col = top1["system"].to_numpy(dtype=object)
    kind_col = top1["kind"].to_numpy(dtype=object)
    miss_col = top1["missing"].to_numpy()
    score_col = top1["top1_score"].to_numpy(np.float64)
    qid_col = top1["query_id"].to_numpy(dtype=object)
    above = np.full(len(top1), -1, dtype=np.int8)
    win = np.full(len(top1), np.nan)
    for s in scored:
        mine = sys_col == s
        is_pos, is_neg = mine & (kind_col == "positive"), mine & (kind_col == "negative")
        for key, label, m in (("missing_negatives", "negative", is_neg), ("missing_positives", "positive", is_pos)):
            out[key][s] = [str(x) for x in qid_col[m & miss_col]]
            if out[key][s]:
                warn(
                    s,
                    f"system {s!r}: {len(out[key][s])} {label}(s) have no top-1 score (not "
                    f"in the run or unscored) and are left out: {_names(out[key][s])}",
                )
        pos_m, neg_m = is_pos & ~miss_col, is_neg & ~miss_col
        pos, neg = score_col[pos_m], score_col[neg_m]
        c, qv = _system_cutoff(s, cutoff, quantile, g, pos, warn)
        out["cutoffs"][s] = c
        fig = separation_figures(pos, neg, c)
        reasons = rank_reasons(rows[rows["system"] == s], score_col[mine & ~miss_col])
        out["rank_reasons"][s] = reasons
        _warn_doubts(s, reasons, int(np.count_nonzero(mine & ~miss_col)), pos.size, neg.size, warn)
        if not math.isnan(c):
            above[mine & ~miss_col] = (score_col[mine & ~miss_col] >= c).astype(np.int8)
        win[pos_m] = pairwise_wins(pos, np.sort(neg), True)
        win[neg_m] = pairwise_wins(neg, np.sort(pos), False)
        out["records"].append(
            {
                "system": s,
                "cutoff": c,
                "quantile": qv,
                "n_positive": int(pos.size),
                "n_negative": int(neg.size),
                **fig,
                "rank_based": bool(reasons),
            }
        )
        out["intervals"].extend(interval_rows(s, fig, pos, neg, c, n_resamples, seed))
    top1["above_cutoff"] = pd.array(np.where(above < 0, None, above == 1), dtype="boolean")  # type: ignore[call-overload]
    top1["pairwise_win"] = win
    return out


def _system_cutoff(
    s: str, cutoff, quantile: float, g: Guarantee | None, pos: np.ndarray, warn: Callable[[str | None, str], None]
) -> tuple[float, float]:
    """System ``s``'s cutoff and the quantile that set it (NaN when given or conformal): the
    fixed one if given, else the conformal one with a guarantee, else the positives' quantile."""
    c, qv = cutoff_for(s, cutoff, quantile, pos)
    if g is not None and not math.isnan(qv):  # calibrated (not fixed): the conformal cutoff
        c, qv = conformal_cutoff(pos, g.alpha), math.nan
    if math.isnan(c) and (g is None or pos.size == 0):
        warn(s, f"system {s!r}: no positive has a top-1 score, so no cutoff can be calibrated")
    return c, qv


def _warn_doubts(
    s: str, reasons: list[str], n_q: int, n_pos: int, n_neg: int, warn: Callable[[str | None, str], None]
) -> None:
    """Warn when system ``s``'s figures cannot be trusted: scores that look rank-based (the
    ``reasons``, over its ``n_q`` scored queries), fewer than :data:`MIN_SAMPLES` of a class."""
    if reasons:
        warn(
            s,
            f"system {s!r}: {'; '.join(reasons)}; scores look determined by rank (RRF?), "
            "so they carry no absolute relevance and cannot separate OOD queries "
            f"({n_q} queries)",
        )
    for label, n in (("negatives", n_neg), ("positives", n_pos)):
        if n < MIN_SAMPLES:
            warn(
                s,
                f"system {s!r}: only {n} {label} with a top-1 score (fewer than "
                f"{MIN_SAMPLES}): calibration figures are indeterminate",
            )


def _guaranteed(
    top1: pd.DataFrame,
    summary: pd.DataFrame,
    settings: dict[str, Any],
    per_stratum: pd.DataFrame,
    cutoffs: dict[str, float],
    g: Guarantee | None,
    by: str | None,
    cutoff,
    quantile: float,
    warn: Callable[[str | None, str], None],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """With ``guarantee=`` or ``by=``: the guarantee table and the per-stratum table under it;
    records the settings and each system's method, and each query's stratum cutoff in
    ``top1["above_cutoff"]``."""
    settings["guarantee"] = None if g is None else {"alpha": g.alpha, "delta": g.delta}
    settings["by"] = by
    given = frozenset(fixed_systems(cutoff, list(cutoffs)))
    if g is not None:  # how each system's cutoff was set (plots name it)
        summary["method"] = pd.array(["fixed" if str(x) in given else "conformal" for x in summary.index], dtype=ID)
    gtable, notes = guarantee_table(top1, g, by, cutoffs, quantile, MIN_SAMPLES, given)
    for s, text in notes:
        warn(s, text)
    if by is not None:  # each query meets its stratum's cutoff
        limit = query_cutoffs(gtable, top1, cutoffs)
        score = top1["top1_score"].to_numpy(np.float64)
        ok = np.isfinite(score) & np.isfinite(limit)
        top1["above_cutoff"] = pd.array(np.where(ok, score >= limit, None), dtype="boolean")  # type: ignore[call-overload]
        per_stratum = per_stratum_table(top1, cutoffs, limit)
    return gtable, per_stratum


def _names(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")
