"""Out-of-distribution calibration from absolute relevance scores (SPEC B2).

A retrieval engine never abstains: an off-topic query still gets a rank-1 document, so rank
order says nothing about whether the engine *knows* it has no answer. The signal is the
absolute relevance score of the top hit (a cosine, a cross-encoder score): covered queries
score high, out-of-distribution (OOD) queries score low, and the gap is the robustness
measure. This module turns that gap into numbers a report can gate on:

* :func:`score_rows` — the deduplicated run with each hit's grade and its query's kind
  (``positive``, ``negative``, ``no_positives``, ``unjudged``), stratum and text;
* :func:`calibrate` — per system: a cutoff ``C`` (the ``q``-quantile of the positives' top-1
  scores, or the fixed cutoff production uses), negative satisfaction, positive retention,
  separation margin, AUROC, AUPR-in/out, FPR at 95% TPR, with intervals; and an honesty check
  that refuses to report a confident separation from rank-based scores (RRF);
* :func:`apply_cutoff` and :func:`cutoff_sweep` — the run as a production consumer that drops
  hits below the cutoff would see it, and the trade-off (risk, coverage, recall) per cutoff.

Order and duplicates come from :func:`retrieval_eval.metrics.dedupe_run` (the one place they
are defined): ``top1`` of a query is its rank-1 row there. Recall after a cutoff comes from
:func:`retrieval_eval.metrics.compute`; nothing here computes a ranking metric of its own.

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

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from .jsonable import jsonable
from ..errors import FormatError
from ..engine.metrics import (ID, UNSTRATIFIED, _query_strata, aggregate, compute, dedupe_run,
                      relevance_table)
from .handoff import viz

__all__ = [
    "Calibration",
    "KINDS",
    "MIN_SAMPLES",
    "apply_cutoff",
    "calibrate",
    "check_negatives",
    "cutoff_sweep",
    "negative_ids",
    "score_rows",
]

#: Query kinds in :func:`score_rows`, in table order.
KINDS = ("positive", "negative", "no_positives", "unjudged")
#: Fewer positives or negatives than this makes every calibration measurement indeterminate.
MIN_SAMPLES = 10
#: Summary columns, in table order.
SUMMARY_COLUMNS = (
    "cutoff", "quantile", "n_positive", "n_negative", "negative_satisfaction",
    "positive_retention", "separation_margin", "auroc", "aupr_in", "aupr_out", "fpr@95tpr",
    "threshold@95tpr", "rank_based",
)
_SEP = "\x1f"


# --------------------------------------------------------------------------------------------
# Input coercion: frames, lists of wire-format dicts or paths, through the formats module.


def _na_strings(n: int) -> pd.arrays.ArrowStringArray:
    return pd.array([pd.NA] * n, dtype=ID)


def _as_judgments(judgments) -> pd.DataFrame:
    """A judgments frame. A frame already in the data model's shape is used as is (optional
    columns added as NA); anything else goes through :func:`retrieval_eval.formats.as_judgments`."""
    from ..io.absent import judgments_meaning

    from ..io import as_judgments, refuse_swapped

    if not isinstance(judgments, pd.DataFrame):
        return judgments_meaning(as_judgments(judgments))
    refuse_swapped(judgments, "labels", "judgments")
    missing = [c for c in ("query_id", "doc_uri", "relevance") if c not in judgments.columns]
    if missing:
        raise ValueError(f"judgments need columns {', '.join(missing)} (docs/data-model.md)")
    add: dict[str, Any] = {c: _na_strings(len(judgments))
                           for c in ("chunk_id", "stratum", "query") if c not in judgments.columns}
    if "line" not in judgments.columns:
        add["line"] = np.zeros(len(judgments), dtype=np.int64)
    return judgments_meaning(judgments.assign(**add) if add else judgments)


def _as_run(run) -> pd.DataFrame:
    """A run frame (system defaults to ``"run"``, score to NaN); non-frames go through
    :func:`retrieval_eval.formats.as_run`."""
    from ..io import as_run, refuse_swapped

    if not isinstance(run, pd.DataFrame):
        return as_run(run)
    refuse_swapped(run, "run", "run")
    missing = [c for c in ("query_id", "rank", "doc_id") if c not in run.columns]
    if missing:
        raise ValueError(f"a run needs columns {', '.join(missing)} (docs/data-model.md)")
    add: dict[str, Any] = {}
    if "system" not in run.columns:
        add["system"] = pd.array(["run"] * len(run), dtype=ID)
    if "score" not in run.columns:
        add["score"] = np.full(len(run), np.nan)
    return run.assign(**add) if add else run


def _as_queries(queries) -> pd.DataFrame | None:
    if queries is None:
        return None
    from ..io.absent import queries_meaning
    from ..io import as_queries

    return queries_meaning(as_queries(queries))


# --------------------------------------------------------------------------------------------
# Negatives.


def negative_ids(queries=None, negatives=None) -> list[str]:
    """The ids of the ``expect_none`` (out-of-distribution) queries, each once.

    ``queries`` is a queries table (DataFrame, list of dicts, or a JSONL path) whose
    ``expect_none`` column marks negatives; ``negatives`` is an explicit list of query ids.
    Both may be given: the union is returned, queries-file order first. These queries have no
    answer in the corpus, so they never enter the positive metrics' averages; calibration
    measures them by their top-1 score instead.
    """
    ids: list[str] = []
    q = _as_queries(queries)
    if q is not None:
        ids.extend(q.loc[q["expect_none"], "query_id"].astype(str).tolist())
    if negatives is not None:
        if isinstance(negatives, str):
            raise TypeError("negatives must be a list of query ids, not one string")
        ids.extend(str(x) for x in negatives)
    return list(dict.fromkeys(ids))


def check_negatives(judgments, negatives: Iterable[str], threshold: int = 1, label: str = "judgments",
                    negatives_label: str | None = None) -> None:
    """Raise :class:`FormatError` when a negative has a label at or above ``threshold``.

    A query marked ``expect_none`` claims the corpus holds nothing for it; a relevant label
    says the opposite. One of the two is wrong, and scoring either way would hide it, so the
    message names the query, the label's file (``label``) and line, its document, the file
    that marked the query (``negatives_label``, when known) and what to fix.
    """
    j = _as_judgments(judgments)
    negs = pd.Index(list(negatives), dtype=ID)
    if len(negs) == 0 or len(j) == 0:
        return
    bad = j[j["query_id"].astype(ID).isin(negs) & (j["relevance"].to_numpy() >= threshold)]
    if bad.empty:
        return
    first = bad.iloc[0]
    key = first["chunk_id"] if pd.notna(first["chunk_id"]) else first["doc_uri"]
    others = list(dict.fromkeys(bad["query_id"].astype(str)))[1:]
    more = ""
    if others:
        more = f" (also {', '.join(repr(o) for o in others[:5])}{', ...' * (len(others) > 5)})"
    line = int(first["line"]) if int(first["line"]) > 0 else None
    where = f" in {negatives_label}" if negatives_label else ""
    raise FormatError(
        label, line,
        f"query {str(first['query_id'])!r} is marked expect_none{where} but has a label with relevance "
        f"{int(first['relevance'])} >= threshold {threshold} on {str(key)!r}{more}; "
        "remove the label or the expect_none mark",
    )


# --------------------------------------------------------------------------------------------
# Rows.


def _query_table(j: pd.DataFrame, q: pd.DataFrame | None, negs: list[str],
                 threshold: int) -> pd.DataFrame:
    """One row per known query: kind, stratum, query text.

    Stratum: the judgments' (the engine's rule: a query's first label), else the queries
    file's, else ``_unstratified``. Query text: the first labelled one, else the queries file's.
    """
    rel = relevance_table(j)
    judged = pd.Index(pd.unique(j["query_id"].astype(ID)), dtype=ID)
    n_rel = (rel["relevance"] >= threshold).groupby(rel["query_id"], sort=False).sum()
    ids = list(judged) + list(negs) + ([] if q is None else list(q["query_id"]))
    ids = pd.Index(list(dict.fromkeys(ids)), dtype=ID, name="query_id")
    table = pd.DataFrame(index=ids)
    nr = n_rel.reindex(ids).fillna(0).astype(np.int64).to_numpy()
    is_judged = ids.isin(judged)
    kind = np.where(is_judged & (nr > 0), "positive",
                    np.where(is_judged, "no_positives", "unjudged"))
    kind = np.where(ids.isin(pd.Index(negs, dtype=ID)), "negative", kind)
    table["kind"] = pd.array(kind, dtype=ID)
    strata = pd.Series(_query_strata(j, judged), index=judged.to_numpy(), dtype=ID)
    stratum = strata.reindex(ids.to_numpy())
    text = j["query"].astype(ID)
    text = text[text.notna()].groupby(j["query_id"].astype(ID)[text.notna()], sort=False).first()
    query = text.reindex(ids.to_numpy())
    if q is not None:
        qq = q.drop_duplicates("query_id", keep="first").set_index("query_id")
        stratum = stratum.mask(stratum.isna() | (stratum == UNSTRATIFIED),
                               qq["stratum"].reindex(ids.to_numpy()).to_numpy())
        query = query.fillna(qq["query"].reindex(ids.to_numpy()))
    table["stratum"] = pd.array(stratum.fillna(UNSTRATIFIED).to_numpy(), dtype=ID)
    table["query"] = pd.array(query.to_numpy(), dtype=ID)
    return table


def _rows(r: pd.DataFrame, j: pd.DataFrame, qt: pd.DataFrame, threshold: int) -> pd.DataFrame:
    d = dedupe_run(r)[["system", "query_id", "rank", "doc_id", "score"]]
    d = d.astype({"system": ID, "query_id": ID, "doc_id": ID, "rank": np.int64,
                  "score": np.float64})
    rel = relevance_table(j).rename(columns={"key": "doc_id"})
    rel["relevance"] = rel["relevance"].astype(np.float64)
    out = d.merge(rel, on=["query_id", "doc_id"], how="left", sort=False)
    out["relevance"] = out["relevance"].astype(np.float64)
    out["relevant"] = (out["relevance"] >= threshold).to_numpy(bool)
    info = qt.reset_index()
    out = out.merge(info, on="query_id", how="left", sort=False)
    out["kind"] = out["kind"].fillna("unjudged").astype(ID)
    out["stratum"] = out["stratum"].fillna(UNSTRATIFIED).astype(ID)
    out["query"] = out["query"].astype(ID)
    return out[["system", "query_id", "rank", "doc_id", "score", "relevance", "relevant", "kind",
                "stratum", "query"]]


def score_rows(judgments, run, queries=None, threshold: int = 1, negatives=None) -> pd.DataFrame:
    """The deduplicated run, one row per (system, query_id, rank), with what calibration needs.

    Columns: ``system``, ``query_id``, ``rank`` (position in the deduplicated ranking),
    ``doc_id``, ``score``, ``relevance`` (the hit's grade, NaN when unjudged), ``relevant``
    (grade >= ``threshold``), ``kind`` (``positive``: judged with a grade >= threshold;
    ``negative``: ``expect_none``; ``no_positives``: judged, nothing at the threshold;
    ``unjudged``), ``stratum`` (judgments, else the queries file, else ``_unstratified``) and
    ``query`` (text when known). Raises when a negative carries a relevant label.
    """
    j, r, q = _as_judgments(judgments), _as_run(run), _as_queries(queries)
    negs = negative_ids(q, negatives)
    check_negatives(j, negs, threshold)
    return _rows(r, j, _query_table(j, q, negs, threshold), threshold)


# --------------------------------------------------------------------------------------------
# Figures.


def _average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    """Step-wise average precision, scikit-learn's ``average_precision_score`` definition:
    ``sum_n (R_n - R_{n-1}) P_n`` over the distinct score thresholds, ties grouped."""
    if labels.sum() == 0 or labels.all():
        return math.nan
    order = np.argsort(-scores, kind="mergesort")
    s, y = scores[order], labels[order]
    last = np.r_[s[1:] != s[:-1], True]
    tp = np.cumsum(y)[last].astype(np.float64)
    fp = np.cumsum(~y)[last].astype(np.float64)
    precision = tp / (tp + fp)
    recall = tp / tp[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def _threshold_95(pos: np.ndarray) -> float:
    """The largest ``t`` with share of positives ``>= t`` at least 0.95 (integer arithmetic:
    the m-th largest positive, m = ceil(0.95 n))."""
    if pos.size == 0:
        return math.nan
    m = (95 * pos.size + 99) // 100
    return float(np.sort(pos)[::-1][m - 1])


def _wins(values: np.ndarray, other_sorted: np.ndarray, positive: bool) -> np.ndarray:
    """Per query: share of the other class it is correctly ordered against, ties 1/2.

    For a positive: share of negatives scoring below it; for a negative: share of positives
    scoring above it. The mean over either class is the AUROC.
    """
    if other_sorted.size == 0:
        return np.full(values.size, np.nan)
    lo = np.searchsorted(other_sorted, values, side="left")
    hi = np.searchsorted(other_sorted, values, side="right")
    if positive:
        return (lo + 0.5 * (hi - lo)) / other_sorted.size
    return (other_sorted.size - hi + 0.5 * (hi - lo)) / other_sorted.size


# Scores are any finite doubles, up to +-1.8e308. A median or an interpolated quantile adds two
# of them, which overflows near the top of that range; halving first (exact: a power of two)
# and doubling after gives the same double for every normal score and never overflows. A
# difference of two medians that does not fit in a double is inf, silently: the figure is then
# absent from the report (not computed), never a numpy warning on stderr.


def _median(x: np.ndarray, axis=None) -> Any:
    """``np.median``, without overflow for scores near the largest double."""
    return np.median(np.asarray(x, dtype=np.float64) * 0.5, axis=axis) * 2.0


def _quantile(x: np.ndarray, q) -> Any:
    """``np.quantile(x, q, method="linear")``, without overflow for scores near the largest double."""
    return np.quantile(np.asarray(x, dtype=np.float64) * 0.5, q, method="linear") * 2.0


def _difference(a, b) -> Any:
    """``a - b``; inf (no warning) when the difference is beyond the largest double."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.subtract(a, b)


def _figures(pos: np.ndarray, neg: np.ndarray, cutoff: float) -> dict[str, float]:
    npos, nneg = pos.size, neg.size
    neg_sorted = np.sort(neg)
    t95 = _threshold_95(pos)
    scores = np.r_[pos, neg]
    labels = np.r_[np.ones(npos, bool), np.zeros(nneg, bool)]
    both = npos > 0 and nneg > 0
    has_cut = not math.isnan(cutoff)
    return {
        "negative_satisfaction": float(np.mean(neg < cutoff)) if nneg and has_cut else math.nan,
        "positive_retention": float(np.mean(pos >= cutoff)) if npos and has_cut else math.nan,
        "separation_margin": float(_difference(_median(pos), _median(neg))) if both else math.nan,
        "auroc": float(_wins(pos, neg_sorted, True).mean()) if both else math.nan,
        "aupr_in": _average_precision(scores, labels) if both else math.nan,
        "aupr_out": _average_precision(-scores, ~labels) if both else math.nan,
        "fpr@95tpr": float(np.mean(neg >= t95)) if both else math.nan,
        "threshold@95tpr": t95,
    }


def _median_difference(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    return _difference(_median(pos, axis=-1), _median(neg, axis=-1))


#: Cells of a (resamples x distinct scores) count matrix built at once; larger jobs go in blocks.
_BLOCK = 1 << 22


def _coded_auroc(n_values: int):
    """A batched AUROC over *codes* (positions in the sorted distinct scores), without sorting.

    For each resample row, the resampled negatives are counted per distinct score
    (``np.bincount``); a positive with code ``v`` beats the negatives below ``v`` and ties
    with those at ``v`` (1/2 each). O(B * (n + V)) instead of a sort of every row, and the
    same number as :func:`retrieval_eval.stats.auroc` on the scores themselves.
    """

    def statistic(pos_codes: np.ndarray, neg_codes: np.ndarray) -> np.ndarray:
        pc = np.asarray(pos_codes).astype(np.int64)
        nc = np.asarray(neg_codes).astype(np.int64)
        rows, npos, nneg = pc.shape[0], pc.shape[1], nc.shape[1]
        out = np.empty(rows)
        step = max(1, _BLOCK // max(n_values, 1))
        for lo in range(0, rows, step):  # blocks of resamples, each one vectorized
            hi = min(rows, lo + step)
            b = hi - lo
            flat = (np.arange(b)[:, None] * n_values + nc[lo:hi]).ravel()
            counts = np.bincount(flat, minlength=b * n_values).reshape(b, n_values)
            below = np.cumsum(counts, axis=1) - counts
            credit = below + 0.5 * counts
            out[lo:hi] = np.take_along_axis(credit, pc[lo:hi], axis=1).sum(axis=1) / (npos * nneg)
        return out

    return statistic


def _bootstrap(pos: np.ndarray, neg: np.ndarray, n_resamples: int,
               seed) -> dict[str, tuple[float, float]]:
    """Seeded percentile intervals for AUROC and the separation margin.

    Positives and negatives are resampled separately (the design fixes how many of each were
    asked), each sorted by score and then resampled with one ``(n_resamples, n)`` index
    matrix drawn by
    :func:`retrieval_eval.stats.bootstrap_ci` from ``default_rng(seed)``, positives first;
    the same seed gives the same interval on every machine. AUROC resamples are evaluated
    on score codes (:func:`_coded_auroc`), which draws the same indices as resampling the
    scores.
    """
    from .stats import bootstrap_ci

    if pos.size == 0 or neg.size == 0:
        return {"auroc": (math.nan, math.nan), "separation_margin": (math.nan, math.nan)}
    # Sorted first, so the interval depends on the scores, not on the order rows came in.
    pos, neg = np.sort(pos), np.sort(neg)
    values, codes = np.unique(np.r_[pos, neg], return_inverse=True)
    codes = codes.astype(np.float64)
    a = bootstrap_ci(_coded_auroc(values.size), codes[:pos.size], codes[pos.size:],
                     n_resamples=n_resamples, seed=seed)
    with np.errstate(invalid="ignore"):  # an inf margin (see _difference) has no interval
        m = bootstrap_ci(_median_difference, pos, neg, n_resamples=n_resamples, seed=seed)
    return {"auroc": (float(a.ci_low), float(a.ci_high)),
            "separation_margin": (float(m.ci_low), float(m.ci_high))}


# --------------------------------------------------------------------------------------------
# Honesty: rank-based scores.

#: RRF constants tried by the fusion-pattern check, and the deepest source rank considered.
_RRF_CONSTANTS = np.arange(0, 101)
_RRF_DEPTH = 100


def _decimals(values: np.ndarray) -> int | None:
    """The fewest decimals (0..9) every value is written with, or None (full precision)."""
    for d in range(0, 10):
        scaled = values * 10.0 ** d
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return d
    return None


@functools.lru_cache(maxsize=None)
def _rrf_table(c: int) -> np.ndarray:
    a = np.arange(1, _RRF_DEPTH + 1, dtype=np.float64)
    single = 1.0 / (c + a)
    ii, jj = np.triu_indices(_RRF_DEPTH)
    return np.unique(np.r_[single, single[ii] + single[jj]])


def _rrf_match(scores: np.ndarray) -> tuple[int, float, bool] | None:
    """The RRF constant ``c`` for which (nearly) every score is ``1/(c+a)`` or
    ``1/(c+a) + 1/(c+b)`` (one or two fused lists, source ranks up to 100), possibly divided
    by the best possible score ``m/(c+1)`` (normalized RRF, m = 1 or 2 lists). Returns
    ``(c, share of scores that match, normalized)``, or None when no constant explains 95%
    of them. Coarsely rounded scores (4 decimals or fewer) are not tested: too many sums
    would match by chance."""
    scores = scores[np.isfinite(scores)]
    if scores.size < 10 or np.any(scores <= 0) or np.any(scores > 2.0):
        return None
    d = _decimals(scores)
    if d is not None and d <= 4:
        return None
    if d is not None:
        tol = 0.5 * 10.0 ** -d + 1e-12
    else:
        tol = 1e-9 * max(1.0, float(np.max(np.abs(scores))))
    normalizable = float(scores.max()) <= 1.0 + tol
    best: tuple[int, float, bool] | None = None
    # Largest constant first: 1/(0 + 61) is also 1/(60 + 1), and the conventional k = 60
    # (not "c = 0 with source ranks from 61") is the explanation worth naming.
    for c in _RRF_CONSTANTS[::-1]:  # a hundred constants, each one vectorized over every score
        table = _rrf_table(int(c))
        factors = (1.0,) + ((1.0 / (c + 1), 2.0 / (c + 1)) if normalizable else ())
        for factor in factors:
            raw, raw_tol = scores * factor, tol * factor
            if raw.max() > table[-1] + raw_tol or raw.min() < table[0] - raw_tol:
                continue
            at = np.clip(np.searchsorted(table, raw), 1, table.size - 1)
            gap = np.minimum(np.abs(table[at] - raw), np.abs(table[at - 1] - raw))
            share = float(np.mean(gap <= raw_tol))
            if share >= 0.95 and (best is None or share > best[1]):
                best = (int(c), share, factor != 1.0)
                if share == 1.0:
                    return best
    return best


def _distinct(values: np.ndarray) -> int:
    """Distinct values: neighbours (sorted) closer than 1e-9 of the larger of the two count once.

    The tolerance is relative to each pair, not to the largest score: one score of 1e308 must
    not make every cosine of the run look equal (and rank-based)."""
    if values.size == 0:
        return 0
    s = np.sort(values)
    tol = 1e-9 * np.maximum(np.maximum(np.abs(s[1:]), np.abs(s[:-1])), 1e-300)
    return int(1 + np.count_nonzero(_difference(s[1:], s[:-1]) > tol))


def _unit(x: np.ndarray) -> tuple[np.ndarray, int]:
    """``x`` divided by a power of two ``2**e`` that brings every finite value into [-1, 1], and ``e``.

    Exact (but for values that become subnormal, negligible next to the largest), so a ratio of
    spreads is the same number, and squares and sums cannot overflow for scores near 1.8e308."""
    finite = x[np.isfinite(x)]
    top = float(np.max(np.abs(finite))) if finite.size else 0.0
    e = math.frexp(top)[1] if top > 0 else 0
    with np.errstate(under="ignore"):
        return np.ldexp(x, -e), e


def _rank_reasons(rows: pd.DataFrame, top1: np.ndarray) -> list[str]:
    """Why a system's scores look determined by rank (empty when they do not).

    Three independent signs, any one suffices:

    1. top-1 scores take only a handful of distinct values across queries (at least 10
       queries; at most max(3, 5% of them) values, and never more than 10, so a cosine
       rounded to two decimals over thousands of queries is not mistaken for one): an RRF
       run of two lists gives values like 1/61 + 1/61, 1/61 + 1/62, ... whatever the query;
    2. the score is a fixed function of rank: over ranks 1-10, the spread of scores across
       queries at the same rank is under 5% of the spread between ranks (a cosine differs from
       query to query at every rank, OOD queries lower);
    3. scores match reciprocal-rank-fusion sums ``1/(c + a) [+ 1/(c + b)]`` for one constant
       c, raw or divided by the best possible score (normalized RRF).
    """
    reasons = []
    n = int(np.isfinite(top1).sum())
    finite = top1[np.isfinite(top1)]
    distinct = _distinct(finite)
    if n >= 10 and distinct <= max(3, min(int(0.05 * n), 10)):
        reasons.append(f"top-1 scores take only {distinct} distinct value{'s' * (distinct != 1)} "
                       f"across {n} queries")
    head = rows[(rows["rank"] <= 10) & np.isfinite(rows["score"].to_numpy())]
    raw_head = head["score"].to_numpy(np.float64)
    unit, e = _unit(raw_head)  # spreads in units of 2**e: no overflow, the same ratio
    head = pd.DataFrame({"rank": head["rank"].to_numpy(), "query_id": head["query_id"].to_numpy(),
                         "score": unit})
    by_rank = head.groupby("rank", sort=True)["score"]
    counts = by_rank.count()
    usable = counts[counts >= 2].index
    if len(usable) >= 2 and head["query_id"].nunique() >= 3:
        h = head[head["rank"].isin(usable)]
        grouped = h.groupby("rank")["score"]
        means = grouped.transform("mean").to_numpy()
        resid = h["score"].to_numpy() - means
        dof = max(len(h) - len(usable), 1)
        with np.errstate(under="ignore"):
            within = math.sqrt(float(np.sum(resid ** 2)) / dof)
            between = float(np.std(grouped.mean().to_numpy()))
        if between > 0 and within <= 0.05 * between:
            with np.errstate(over="ignore"):
                shown = float(np.ldexp(within, e))
            reasons.append(
                f"the score is a function of rank (across queries, scores at the same rank "
                f"vary by {shown:.3g}, {within / between:.1%} of their spread between ranks)")
        elif between == 0 and within == 0:
            reasons.append("every hit has the same score")
    match = _rrf_match(raw_head)
    if match is not None:
        c, share, normalized = match
        reasons.append(f"{share:.0%} of the top-10 scores are reciprocal-rank-fusion sums "
                       f"of 1/({c} + rank) terms{' (normalized)' if normalized else ''}")
    return reasons


# --------------------------------------------------------------------------------------------
# The result.


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
            raise KeyError(why or f"no calibrated system {system!r}; "
                                  f"calibrated: {', '.join(self.systems)}")
        return self.summary.loc[system]

    def _indeterminate(self, system: str) -> str | None:
        row = self._row(system)
        reasons = []
        for label, n in (("negatives", int(row["n_negative"])),
                         ("positives", int(row["n_positive"]))):
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
        return jsonable({
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
        })

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

    def to_dict(self) -> dict[str, Any]:
        """Everything but the per-query frames, JSON-able (NaN -> None)."""
        summary = self.summary.reset_index()
        return jsonable({
            "settings": {k: v for k, v in self.settings.items() if k != "rank_reasons"},
            "summary": summary.to_dict(orient="records"),
            "metrics": {s: self.metrics(s) for s in self.systems},
            "per_stratum": self.per_stratum.to_dict(orient="records"),
            "warnings": list(self.warnings),
            "missing_negatives": self.missing_negatives,
            "missing_positives": self.missing_positives,
            **({} if self.guarantee is None
               else {"guarantee": self.guarantee.to_dict(orient="records")}),
        })

    def plot(self, kind: str = "distribution", ax=None, system=None, **kwargs):
        """Draw this calibration: ``"distribution"`` (top-1 scores with the cutoff), ``"roc"``,
        ``"pr"`` or ``"tradeoff"``. Returns the display; never calls ``plt.show()``."""
        plot_calibration = viz("plot_calibration")

        return plot_calibration(self, kind=kind, ax=ax, system=system, **kwargs)

    def _repr_html_(self) -> str:
        box, esc, table, warnings_html = viz("box", "esc", "table", "warnings_html")

        s = self.settings
        how = (f"cutoff = {s['quantile']:.0%} quantile of the positives' top-1 scores"
               if s.get("cutoff") is None else "fixed cutoff (production behaviour)")
        if self.guarantee is not None:
            how += f"; {_guarantee_text(s)}"
        body = (table(self.summary, max_rows=20)
                + ("" if self.guarantee is None else table(self.guarantee.set_index(
                    ["system", "stratum"]), max_rows=40))
                + warnings_html(self.warnings)
                + f"<div>{esc(how)}; intervals: Wilson 95% for shares, percentile bootstrap "
                  f"({s['n_resamples']} resamples, seed {s['seed']}) for auroc and margin. "
                  "Details: .top1, .per_stratum, .intervals</div>")
        return box("Calibration (out-of-distribution queries)", body)

    def __repr__(self) -> str:
        return (f"Calibration(systems={self.systems}, warnings={len(self.warnings)})\n"
                + self.summary.to_string())


def _cutoff_for(system: str, cutoff, quantile: float, pos: np.ndarray) -> tuple[float, float]:
    """(cutoff, quantile) for a system: the fixed one when given, else the q-quantile."""
    fixed = cutoff.get(system) if isinstance(cutoff, Mapping) else cutoff
    if fixed is not None:
        fixed = float(fixed)
        if not math.isfinite(fixed):
            raise ValueError(f"cutoff for {system!r} must be a finite number, got {fixed}")
        return fixed, math.nan
    if pos.size == 0:
        return math.nan, quantile
    return float(_quantile(pos, quantile)), quantile


def _no_scores_message(system: str) -> str:
    return (f"system {system!r} has no scores: calibration needs the absolute relevance score "
            "of each hit (SPEC B1)")


def _guarantee_text(settings: Mapping[str, Any]) -> str:
    g, by = settings.get("guarantee"), settings.get("by")
    text = ("" if g is None else f"split-conformal cutoff: retention >= {1 - g['alpha']:.0%} "
            f"for a new positive, bounds at {1 - g['delta']:.0%} confidence")
    if by is not None:
        text += ("; " if text else "") + f"one cutoff per {by} (Mondrian)"
    return text


def calibrate(judgments, run, queries=None, negatives=None, quantile: float = 0.10,
              cutoff=None, threshold: int = 1, n_resamples: int = 1000, seed=0,
              guarantee=None, by: str | None = None) -> Calibration:
    """Calibrate a relevance cutoff per system and measure how well it rejects OOD queries.

    For each system with scores: ``top1`` of a query is the score of its rank-1 row in
    :func:`retrieval_eval.metrics.dedupe_run`; positives are judged queries with a grade
    >= ``threshold`` that the system ranked, negatives the ``expect_none`` queries (from
    ``queries`` and/or ``negatives``). The cutoff is the ``quantile`` of the positives' top1
    (linear interpolation), keeping the rule embedder-portable: no absolute number is
    hard-coded. A fixed ``cutoff`` (a number, or ``{system: number}``; systems not in the
    mapping are calibrated) replaces it: the figures are then what production does with its
    cutoff, and ``quantile`` is NaN. See SPEC B2 for every figure's definition.

    Raises when a negative carries a relevant label, and when no system has scores (a
    score-less system next to scored ones is left out with a warning). An empty run gives an
    empty result (no system, empty frames, a warning): a gate over it is INDETERMINATE. Systems whose scores
    look rank-based (RRF) are flagged, warned about, and their measurements marked
    indeterminate, as are all measurements over fewer than 10 positives or negatives.

    ``guarantee`` (alpha, ``{"alpha": .., "delta": ..}`` or a
    :class:`retrieval_eval.guarantee.Guarantee`) replaces the quantile cutoff of every
    calibrated system by the split-conformal one, the ``floor(alpha (n + 1))``-th smallest
    positive top-1 score, so that a new positive query keeps its answer with probability
    >= 1 - alpha; ``.guarantee`` then reports alpha, n, the coverage interval and a
    Clopper-Pearson lower bound on the negatives refused (``docs/ood-calibration.md``). With
    too few positives (n + 1 < 1/alpha) the cutoff is NaN and a warning says so.
    ``by="stratum"`` adds one cutoff per stratum of the positives (Mondrian calibration; a
    stratum too small falls back to the pooled cutoff), used by ``top1["above_cutoff"]``,
    ``per_stratum`` and :func:`apply_cutoff`; ``summary`` stays the pooled cutoff's.
    """
    from .guarantee import as_guarantee

    g = as_guarantee(guarantee)
    if by not in (None, "stratum"):
        raise ValueError(f"by must be None or 'stratum', got {by!r}")
    if not 0.0 <= float(quantile) <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be >= 1")
    j, r, q = _as_judgments(judgments), _as_run(run), _as_queries(queries)
    negs = negative_ids(q, negatives)
    check_negatives(j, negs, threshold)
    qt = _query_table(j, q, negs, threshold)
    rows = _rows(r, j, qt, threshold)
    systems = list(pd.unique(rows["system"]))
    has_scores = rows.groupby("system", sort=False)["score"].apply(lambda s: s.notna().any())
    scoreless = [s for s in systems if not has_scores[s]]
    scored = [s for s in systems if has_scores[s]]
    if scoreless and not scored:
        raise ValueError("; ".join(_no_scores_message(s) for s in scoreless))

    warnings: list[str] = []
    system_warnings: dict[str, list[str]] = {s: [] for s in systems}

    def warn(system: str | None, text: str) -> None:
        """Record a warning; one about no system in particular concerns every system."""
        warnings.append(text)
        for name in ([system] if system is not None else systems):
            system_warnings[name].append(text)

    for s in scoreless:
        warn(s, _no_scores_message(s) + "; it is left out")
    if not systems:  # an empty run is an empty result, not an error (nothing was ranked)
        warn(None, "the run is empty: no system to calibrate")
    if not negs:
        warn(None, "no negatives: mark out-of-distribution queries with expect_none: true in a "
                   "queries file (or pass negatives=[...]) to measure OOD rejection")

    # top1: the rank-1 row of every ranking, plus a row for each positive/negative not ranked.
    first = rows[rows["rank"] == 1]
    present = first[["system", "query_id"]]
    wanted_ids = qt.index[qt["kind"].isin(["positive", "negative"])]
    grid = pd.DataFrame({
        "system": pd.array(np.repeat(np.asarray(systems, dtype=object), len(wanted_ids)), dtype=ID),
        "query_id": pd.array(np.tile(wanted_ids.to_numpy(dtype=object), len(systems)), dtype=ID),
    })
    absent = grid.merge(present, on=["system", "query_id"], how="left", indicator=True)
    absent = absent[absent["_merge"] == "left_only"].drop(columns="_merge")
    absent = absent.merge(qt.reset_index(), on="query_id", how="left")
    top1 = pd.concat([
        pd.DataFrame({
            "system": first["system"].to_numpy(), "query_id": first["query_id"].to_numpy(),
            "kind": first["kind"].to_numpy(), "stratum": first["stratum"].to_numpy(),
            "query": first["query"].to_numpy(), "top1_doc_id": first["doc_id"].to_numpy(),
            "top1_score": first["score"].to_numpy(np.float64),
        }),
        pd.DataFrame({
            "system": absent["system"].to_numpy(), "query_id": absent["query_id"].to_numpy(),
            "kind": absent["kind"].to_numpy(), "stratum": absent["stratum"].to_numpy(),
            "query": absent["query"].to_numpy(),
            "top1_doc_id": pd.array([pd.NA] * len(absent), dtype=ID),
            "top1_score": np.full(len(absent), np.nan),
        }),
    ], ignore_index=True)
    for c in ("system", "query_id", "kind", "stratum", "query", "top1_doc_id"):
        top1[c] = top1[c].astype(ID)
    top1["missing"] = ~np.isfinite(top1["top1_score"].to_numpy(np.float64))
    top1 = top1[top1["system"].isin(scored)].reset_index(drop=True)
    top1["above_cutoff"] = pd.array([pd.NA] * len(top1), dtype="boolean")
    top1["pairwise_win"] = np.nan

    records, interval_rows = [], []
    missing_neg: dict[str, list[str]] = {}
    missing_pos: dict[str, list[str]] = {}
    rank_reasons: dict[str, list[str]] = {}
    sys_col = top1["system"].to_numpy(dtype=object)
    kind_col = top1["kind"].to_numpy(dtype=object)
    miss_col = top1["missing"].to_numpy()
    score_col = top1["top1_score"].to_numpy(np.float64)
    qid_col = top1["query_id"].to_numpy(dtype=object)
    above = np.full(len(top1), -1, dtype=np.int8)
    win = np.full(len(top1), np.nan)
    cutoffs: dict[str, float] = {}
    for s in scored:  # one pass per system; everything inside is vectorized over queries
        mine = sys_col == s
        is_pos, is_neg = mine & (kind_col == "positive"), mine & (kind_col == "negative")
        missing_neg[s] = [str(x) for x in qid_col[is_neg & miss_col]]
        missing_pos[s] = [str(x) for x in qid_col[is_pos & miss_col]]
        if missing_neg[s]:
            warn(s, f"system {s!r}: {len(missing_neg[s])} negative(s) have no top-1 score (not in "
                    f"the run or unscored) and are left out: {_names(missing_neg[s])}")
        if missing_pos[s]:
            warn(s, f"system {s!r}: {len(missing_pos[s])} positive(s) have no top-1 score (not in "
                    f"the run or unscored) and are left out: {_names(missing_pos[s])}")
        pos_m, neg_m = is_pos & ~miss_col, is_neg & ~miss_col
        pos, neg = score_col[pos_m], score_col[neg_m]
        c, qv = _cutoff_for(s, cutoff, float(quantile), pos)
        if g is not None and not math.isnan(qv):  # calibrated (not fixed): the conformal cutoff
            from .guarantee import conformal_cutoff

            c, qv = conformal_cutoff(pos, g.alpha), math.nan
        cutoffs[s] = c
        if math.isnan(c) and (g is None or pos.size == 0):
            warn(s, f"system {s!r}: no positive has a top-1 score, so no cutoff can be calibrated")
        fig = _figures(pos, neg, c)
        reasons = _rank_reasons(rows[rows["system"] == s], score_col[mine & ~miss_col])
        rank_reasons[s] = reasons
        if reasons:
            n_q = int(np.count_nonzero(mine & ~miss_col))
            warn(s, f"system {s!r}: {'; '.join(reasons)}; scores look determined by rank (RRF?), "
                    "so they carry no absolute relevance and cannot separate OOD queries "
                    f"({n_q} queries)")
        for label, n in (("negatives", neg.size), ("positives", pos.size)):
            if n < MIN_SAMPLES:
                warn(s, f"system {s!r}: only {n} {label} with a top-1 score (fewer than "
                        f"{MIN_SAMPLES}): calibration figures are indeterminate")
        if not math.isnan(c):
            above[mine & ~miss_col] = (score_col[mine & ~miss_col] >= c).astype(np.int8)
        win[pos_m] = _wins(pos, np.sort(neg), True)
        win[neg_m] = _wins(neg, np.sort(pos), False)
        records.append({"system": s, "cutoff": c, "quantile": qv, "n_positive": int(pos.size),
                        "n_negative": int(neg.size), **fig, "rank_based": bool(reasons)})
        boot = _bootstrap(pos, neg, int(n_resamples), seed)
        ns = int(np.count_nonzero(neg < c)) if not math.isnan(c) else 0
        ps = int(np.count_nonzero(pos >= c)) if not math.isnan(c) else 0
        boot_label = f"percentile bootstrap 95% ({int(n_resamples)} resamples, seed {seed})"
        for name, value, n, ci, hits, how in (
            ("negative_satisfaction", fig["negative_satisfaction"], neg.size, None, ns,
             "wilson 95%"),
            ("positive_retention", fig["positive_retention"], pos.size, None, ps, "wilson 95%"),
            ("auroc", fig["auroc"], pos.size + neg.size, boot["auroc"], 0, boot_label),
            ("separation_margin", fig["separation_margin"], pos.size + neg.size,
             boot["separation_margin"], 0, boot_label),
            ("aupr_in", fig["aupr_in"], pos.size + neg.size, (math.nan, math.nan), 0, ""),
            ("aupr_out", fig["aupr_out"], pos.size + neg.size, (math.nan, math.nan), 0, ""),
            ("fpr@95tpr", fig["fpr@95tpr"], neg.size, (math.nan, math.nan), 0, ""),
        ):
            lo, hi = ci if ci is not None else (math.nan, math.nan)
            interval_rows.append({"system": s, "metric": name, "value": value, "n": int(n),
                                  "ci_low": lo, "ci_high": hi, "interval": how,
                                  "hits": hits if ci is None else -1})

    top1["above_cutoff"] = pd.array(np.where(above < 0, None, above == 1), dtype="boolean")
    top1["pairwise_win"] = win
    summary = pd.DataFrame.from_records(records, columns=["system", *SUMMARY_COLUMNS])
    summary["system"] = summary["system"].astype(ID)
    summary = summary.set_index("system")
    summary["n_positive"] = summary["n_positive"].astype(np.int64)
    summary["n_negative"] = summary["n_negative"].astype(np.int64)
    summary["rank_based"] = summary["rank_based"].astype(bool)
    intervals = pd.DataFrame.from_records(
        interval_rows,
        columns=["system", "metric", "value", "n", "ci_low", "ci_high", "interval", "hits"])
    # Wilson intervals for every share at once (one normal quantile, not one per share).
    wil = ((intervals["hits"] >= 0) & (intervals["n"] > 0) & intervals["value"].notna()).to_numpy()
    if wil.any():
        from .stats import wilson_interval

        lo, hi = wilson_interval(intervals.loc[wil, "hits"].to_numpy(np.float64),
                                 intervals.loc[wil, "n"].to_numpy(np.float64))
        intervals.loc[wil, "ci_low"], intervals.loc[wil, "ci_high"] = lo, hi
    intervals = intervals.drop(columns="hits")
    intervals["system"] = intervals["system"].astype(ID)
    intervals["metric"] = intervals["metric"].astype(ID)
    intervals["n"] = intervals["n"].astype(np.int64)
    per_stratum = _per_stratum(top1, cutoffs)
    settings = {
        "quantile": float(quantile), "cutoff": jsonable(cutoff) if cutoff is not None else None,
        "threshold": int(threshold), "n_resamples": int(n_resamples),
        "seed": seed if isinstance(seed, (int, np.integer)) or seed is None else repr(seed),
        "min_samples": MIN_SAMPLES, "rank_reasons": rank_reasons,
    }
    if g is None and by is None:
        return Calibration(summary, top1, per_stratum, intervals, warnings, missing_neg,
                           missing_pos, settings, {s: w for s, w in system_warnings.items()}, rows)
    from .guarantee import guarantee_table, query_cutoffs

    settings["guarantee"] = None if g is None else {"alpha": g.alpha, "delta": g.delta}
    settings["by"] = by
    given = frozenset(_fixed_systems(cutoff, list(cutoffs)))
    if g is not None:  # how each system's cutoff was set (plots name it)
        summary["method"] = pd.array(["fixed" if str(x) in given else "conformal"
                                      for x in summary.index], dtype=ID)
    gtable, notes = guarantee_table(top1, g, by, cutoffs, float(quantile), MIN_SAMPLES, given)
    for s, text in notes:
        warn(s, text)
    if by is not None:  # each query meets its stratum's cutoff
        limit = query_cutoffs(gtable, top1, cutoffs)
        score = top1["top1_score"].to_numpy(np.float64)
        ok = np.isfinite(score) & np.isfinite(limit)
        top1["above_cutoff"] = pd.array(np.where(ok, score >= limit, None), dtype="boolean")
        per_stratum = _per_stratum(top1, cutoffs, limit)
    return Calibration(summary, top1, per_stratum, intervals, warnings, missing_neg, missing_pos,
                       settings, {s: w for s, w in system_warnings.items()}, rows, gtable)


def _fixed_systems(cutoff, systems: list[str]) -> set[str]:
    """The systems whose cutoff was given (``cutoff=``), not calibrated."""
    if cutoff is None:
        return set()
    if isinstance(cutoff, Mapping):
        return {str(k) for k in cutoff}
    return set(systems)


def _names(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


def _per_stratum(top1: pd.DataFrame, cutoffs: dict[str, float],
                 limits: np.ndarray | None = None) -> pd.DataFrame:
    """(system, kind, stratum) rows for positives and negatives with a top-1 score;
    ``limits`` (one per ``top1`` row) replaces the system's cutoff with per-query ones."""
    from .stats import wilson_interval

    keep = (~top1["missing"] & top1["kind"].isin(["positive", "negative"])).to_numpy(bool)
    t = top1[keep]
    cut = (t["system"].map(cutoffs).to_numpy(np.float64) if limits is None
           else np.asarray(limits, dtype=np.float64)[keep])
    score = t["top1_score"].to_numpy(np.float64)
    neg = (t["kind"] == "negative").to_numpy()
    success = np.where(neg, score < cut, score >= cut).astype(np.float64)
    success[np.isnan(cut)] = np.nan
    frame = pd.DataFrame({
        "system": t["system"].to_numpy(), "kind": t["kind"].to_numpy(),
        "stratum": t["stratum"].to_numpy(), "success": success,
        "win": t["pairwise_win"].to_numpy(np.float64), "score": score,
    })
    g = frame.groupby(["system", "kind", "stratum"], sort=False, observed=True)
    out = pd.DataFrame({
        "n": g.size(),
        "hits": g["success"].sum(min_count=1),
        "share": g["success"].mean(),
        "auroc": g["win"].mean(),
        "median_top1": g["score"].median(),
    }).reset_index()
    if limits is None:
        out["cutoff"] = out["system"].map(cutoffs).astype(np.float64)
    else:
        out["cutoff"] = (pd.DataFrame({"system": t["system"].to_numpy(),
                                       "kind": t["kind"].to_numpy(),
                                       "stratum": t["stratum"].to_numpy(), "cut": cut})
                         .groupby(["system", "kind", "stratum"], sort=False)["cut"].first()
                         .reindex(pd.MultiIndex.from_frame(out[["system", "kind", "stratum"]]))
                         .to_numpy(np.float64))
    ok = out["share"].notna().to_numpy()
    lo = np.full(len(out), np.nan)
    hi = np.full(len(out), np.nan)
    if ok.any():
        lo[ok], hi[ok] = wilson_interval(out.loc[ok, "hits"].to_numpy(),
                                         out.loc[ok, "n"].to_numpy())
    out["share_ci_low"], out["share_ci_high"] = lo, hi
    out["figure"] = np.where(out["kind"] == "negative", "negative_satisfaction",
                             "positive_retention")
    order = {s: i for i, s in enumerate(cutoffs)}  # systems in run order
    out = out.sort_values(["system", "kind", "stratum"], kind="stable",
                          key=lambda c: c.map(order) if c.name == "system" else c)
    cols = ["system", "stratum", "kind", "n", "cutoff", "figure", "share", "share_ci_low",
            "share_ci_high", "auroc", "median_top1"]
    out = out[cols].reset_index(drop=True)
    for c in ("system", "stratum", "kind", "figure"):
        out[c] = out[c].astype(ID)
    out["n"] = out["n"].astype(np.int64)
    return out


# --------------------------------------------------------------------------------------------
# After the cutoff.


def apply_cutoff(run, cutoff) -> pd.DataFrame:
    """The run as a production consumer with a relevance cutoff sees it: hits scoring below
    the cutoff removed (a hit exactly at the cutoff stays).

    ``cutoff`` is a number (every system), a mapping ``{system: cutoff}`` or a
    :class:`Calibration` (each system's own cutoff; with ``by="stratum"`` each query's
    stratum's cutoff, the pooled one for queries and strata it has none for). Every system
    of the run must have a cutoff and scores; a hit without a score is removed too (nothing
    to compare). Rows keep their columns and their ``rank`` as written (the engine
    orders by it, so gaps do not matter); a query whose every hit is removed has no rows
    left, and ``evaluate`` then treats it as missing and scores it zero: that is what an
    abstention costs on a covered query.
    """
    r = _as_run(run)
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
        raise ValueError("; ".join(_no_scores_message(s) for s in scoreless))
    limit = systems.map(mapping).to_numpy(np.float64)
    if isinstance(cutoff, Calibration) and cutoff.settings.get("by") is not None:
        from .guarantee import stratum_limits

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
        inner = _quantile(top, np.linspace(0.0, 1.0, 101))
    with np.errstate(over="ignore"):  # above the largest double is inf: it keeps nothing too
        ends = [float(scores.min()), float(np.nextafter(scores.max(), np.inf))]
    return np.unique(np.r_[inner, ends])


def cutoff_sweep(judgments, run, queries=None, negatives=None, cutoffs=None, k: int = 10,
                 threshold: int = 1) -> pd.DataFrame:
    """The trade-off a cutoff makes, per system and cutoff: one tidy row each.

    Columns: ``system``, ``cutoff``, ``n_positive``, ``n_negative`` (queries with a top-1
    score, as in :func:`calibrate`), ``negative_satisfaction`` (negatives with top1 < cutoff),
    ``positive_retention`` (positives with top1 >= cutoff), ``abstain_rate`` (positives with
    nothing left after :func:`apply_cutoff`), ``recall@k`` after the cutoff (the metric
    engine's: :func:`retrieval_eval.metrics.compute` and ``aggregate`` on the cut run, every
    judged positive counted, a query left empty scoring zero), ``risk`` (share of answered
    positives and negatives that are negatives: OOD queries that still get an answer) and
    ``coverage`` (share of positives and negatives answered at all).

    ``cutoffs``: a list of numbers (every system), ``{system: list}``, or None (every
    distinct top-1 score plus both ends, or a 101-point quantile grid when there are many).
    """
    j, r, q = _as_judgments(judgments), _as_run(run), _as_queries(queries)
    negs = negative_ids(q, negatives)
    check_negatives(j, negs, threshold)
    qt = _query_table(j, q, negs, threshold)
    rows = _rows(r, j, qt, threshold)
    systems = [str(s) for s in pd.unique(rows["system"])]
    has = rows.groupby("system", sort=False)["score"].apply(lambda s: s.notna().any())
    scoreless = [s for s in systems if not has[s]]
    if scoreless:
        raise ValueError("; ".join(_no_scores_message(s) for s in scoreless))
    recall_name = f"recall@{int(k)}"
    pieces, runs = [], []
    for s in systems:  # per system; each vectorized over queries x cutoffs
        mine = rows[rows["system"] == s]
        if cutoffs is None:
            grid = None
        elif isinstance(cutoffs, Mapping):
            grid = np.asarray(cutoffs.get(s, []), dtype=np.float64)
        else:
            grid = np.asarray(list(cutoffs), dtype=np.float64)
        # top = the rank-1 score (as in calibrate); best = the highest score of the ranking,
        # which decides whether anything is left after the cutoff.
        first = mine[(mine["rank"] == 1).to_numpy()]
        per_q = pd.DataFrame({
            "kind": first["kind"].to_numpy(),
            "top": first["score"].to_numpy(np.float64),
            "best": mine.groupby("query_id", sort=False)["score"].max()
                        .reindex(first["query_id"]).to_numpy(np.float64),
        })
        per_q = per_q[per_q["kind"].isin(["positive", "negative"]).to_numpy()
                      & np.isfinite(per_q["top"].to_numpy())]
        if grid is None:
            grid = _default_cutoffs(per_q["top"].to_numpy(np.float64),
                                    mine["score"].to_numpy(np.float64))
        grid = np.unique(grid)
        is_neg = (per_q["kind"] == "negative").to_numpy()
        top = per_q["top"].to_numpy(np.float64)
        best = per_q["best"].to_numpy(np.float64)
        c = grid[:, None]
        answered = best[None, :] >= c
        npos, nneg = int((~is_neg).sum()), int(is_neg.sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            n_answered = answered.sum(axis=1)
            frame = pd.DataFrame({
                "system": s,
                "cutoff": grid,
                "n_positive": npos,
                "n_negative": nneg,
                "negative_satisfaction":
                    (top[None, is_neg] < c).sum(axis=1) / nneg if nneg else np.nan,
                "positive_retention":
                    (top[None, ~is_neg] >= c).sum(axis=1) / npos if npos else np.nan,
                "abstain_rate": (~answered[:, ~is_neg]).sum(axis=1) / npos if npos else np.nan,
                "risk": np.where(n_answered > 0,
                                 answered[:, is_neg].sum(axis=1) / np.maximum(n_answered, 1),
                                 np.nan),
                "coverage": n_answered / (npos + nneg) if npos + nneg else np.nan,
            })
        pieces.append(frame)
        # The cut runs, one synthetic system per cutoff, for one call of the engine. Only the
        # positives' rankings can change recall. When every ranking's scores are
        # non-increasing, a cutoff removes a suffix, so the first k rows are all that can
        # reach the top k: the rest are left out (exactly the same recall, far fewer rows).
        src = mine[(mine["kind"] == "positive").to_numpy()]
        score = src["score"].to_numpy(np.float64)
        qcodes = pd.factorize(src["query_id"])[0]
        same = qcodes[1:] == qcodes[:-1]
        if not np.any(same & (score[1:] > score[:-1])):
            keep = (src["rank"] <= int(k)).to_numpy()
            src, score = src[keep], score[keep]
        ci, ri = np.nonzero(score[None, :] >= c)
        runs.append(pd.DataFrame({
            "system": pd.array([f"{s}{_SEP}{i}" for i in range(len(grid))], dtype=ID).take(ci),
            "query_id": src["query_id"].array.take(ri),
            "rank": src["rank"].to_numpy(np.int64)[ri],
            "doc_id": src["doc_id"].array.take(ri),
            "score": score[ri],
        }))
    out = pd.concat(pieces, ignore_index=True)
    cut = pd.concat(runs, ignore_index=True)
    for col in ("query_id", "doc_id"):
        cut[col] = cut[col].astype(ID)
    per_query = compute(j, cut, k=(int(k),), threshold=threshold)
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
    out.insert(out.columns.get_loc("abstain_rate") + 1, recall_name, recall)
    out["system"] = out["system"].astype(ID)
    out["n_positive"] = out["n_positive"].astype(np.int64)
    out["n_negative"] = out["n_negative"].astype(np.int64)
    return out
