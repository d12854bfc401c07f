"""The Measurement of an LLM-judged metric: the query-clustered interval, variance components
and the intraclass correlation.

A judge scored each query ``m_i`` times (samples at temperature > 0, or several judges). The
samples of one query share that query's difficulty, so they are not independent draws: pooling
them as if they were divides the spread by ``sqrt(N)`` samples instead of ``sqrt(Q)`` queries
and understates the error (Miller 2024, "Adding Error Bars to Evals": the clustered standard
error). The unit of analysis is therefore the query: each query's samples are averaged, and the
per-query means are summarized exactly as ``summarize`` summarizes samples (mean, ``ddof=1``
standard deviation, two-sided 95% Student-t interval, df = Q - 1 capped at 120). With equal
samples per query this standard error equals the cluster-robust one of an OLS on a constant
(statsmodels' ``cov_type="cluster"``); with a single query the units are its samples.

The variance components are the one-way random-effects ANOVA estimates (unequal ``m_i``
handled with the usual ``n0``): ``var_within`` is the judge noise around a query's own mean,
``var_between`` the spread of the queries' true means, and ``icc = var_between / (var_between +
var_within)`` the share of the variance that is the queries'. :mod:`.planning` turns them into
sample sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...model import ID
from ..evaluation.measurement import Measurement, t_half_width

__all__ = ["EXTRA_FIELDS", "JUDGED_COLUMNS", "judged_measurements", "judged_summary", "naive_summary", "query_means"]

#: The columns :func:`judged_summary` adds after its grouping keys, in order.
JUDGED_COLUMNS = (
    "value",
    "n",
    "stdev",
    "ci_low",
    "ci_high",
    "samples",
    "samples_per_query",
    "var_between",
    "var_within",
    "icc",
    "naive_ci_low",
    "naive_ci_high",
)

#: The summary columns a judged Measurement carries as extra report fields.
EXTRA_FIELDS = ("samples", "var_between", "var_within", "icc")


def _check(scores: pd.DataFrame, keys: Sequence[str]) -> None:
    missing = [c for c in (*keys, "query_id", "value") if c not in scores.columns]
    if missing:
        raise ValueError(f"judge scores need the column(s) {', '.join(missing)}")
    values = scores["value"].to_numpy(dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError("judge scores must be finite numbers (read them with read_judge_scores)")


def query_means(scores: pd.DataFrame, by: Sequence[str] = ("system", "metric")) -> pd.DataFrame:
    """One row per (``by``..., query_id): the mean of the query's samples and their count.

    Parameters
    ----------
    scores : DataFrame
        Tidy judge scores (:func:`retrieval_eval.io.judge_scores.read_judge_scores`).
    by : sequence of str
        The grouping columns besides ``query_id``.

    Returns
    -------
    DataFrame
        Columns ``*by, query_id, value, samples`` (``value`` float64, ``samples`` int64), in
        the order the groups first appear.
    """
    keys = [*by, "query_id"]
    _check(scores, keys)
    grouped = scores.groupby(keys, sort=False, observed=True)["value"]
    out = grouped.agg(["mean", "count"]).reset_index()
    out = out.rename(columns={"mean": "value", "count": "samples"})
    out["value"] = out["value"].astype(np.float64)
    out["samples"] = out["samples"].astype(np.int64)
    for key in keys:
        if out[key].dtype == object or isinstance(out[key].dtype, pd.StringDtype):
            out[key] = out[key].astype(ID)
    return out


def _components(scores: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: Q, N, the per-query means' mean and sd, SSW, SSB, sum of m_i^2."""
    qkeys = [*keys, "query_id"]
    v = scores["value"].astype(float)
    qmean = v.groupby([scores[k] for k in qkeys], sort=False, observed=True).transform("mean")
    work = scores[qkeys].assign(value=v, dev2=(v - qmean) ** 2)
    per_q = work.groupby(qkeys, sort=False, observed=True).agg(
        mean=("value", "mean"), m=("value", "size"), ssw=("dev2", "sum"), total=("value", "sum")
    )
    g = per_q.groupby(level=list(range(len(keys))), sort=False, observed=True)
    out = pd.DataFrame(
        {
            "Q": g.size(),
            "N": g["m"].sum(),
            "value": g["mean"].mean(),
            "stdev": g["mean"].std(ddof=1),
            "ssw": g["ssw"].sum(),
            "m2": (per_q["m"] ** 2).groupby(level=list(range(len(keys))), sort=False).sum(),
            "grand": g["total"].sum() / g["m"].sum(),
        }
    )
    by_group = per_q.groupby(level=list(range(len(keys))), sort=False)
    grand = (by_group["total"].transform("sum") / by_group["m"].transform("sum")).to_numpy()
    ssb = per_q["m"] * (per_q["mean"] - grand) ** 2
    out["ssb"] = ssb.groupby(level=list(range(len(keys))), sort=False).sum()
    # Pooled over all samples: what an analysis that ignores the queries would report.
    out["pooled_sd"] = v.groupby([scores[k] for k in keys], sort=False, observed=True).std(ddof=1)
    return out


def judged_summary(scores: pd.DataFrame, by: Sequence[str] = ("system", "metric")) -> pd.DataFrame:
    """One row per group of ``by``: the query-clustered Measurement of a judged metric, its
    variance components and, beside it, the naive interval that pools samples.

    ``value`` is the mean of the per-query means (the macro average every metric of the
    package reports), ``n`` the number of queries, ``stdev`` the ``ddof=1`` standard deviation
    of the per-query means and ``ci_low``/``ci_high`` the 95% Student-t interval on their mean
    (df = n - 1, capped at 120): the clustered interval, because the samples of one query are
    not independent. With one query the units are its samples (``summarize``'s rule), and one
    sample in all gives no interval (NaN), so a ``ci-lower`` gate on it is INDETERMINATE.
    ``var_within`` (judge noise: ANOVA mean square within queries, NaN when no query has two
    samples), ``var_between`` (between-query variance, ``(MSB - MSW) / n0`` floored at 0) and
    ``icc`` (their ratio to the total) say where the noise is; ``naive_ci_*`` is the interval
    of all samples pooled as if independent (df = N - 1), shown to be compared, never gated.

    Parameters
    ----------
    scores : DataFrame
        Tidy judge scores: ``query_id``, ``value`` and the ``by`` columns.
    by : sequence of str, default ("system", "metric")
        Grouping columns, e.g. ``("system", "metric", "stratum")``.

    Returns
    -------
    DataFrame
        ``*by`` then :data:`JUDGED_COLUMNS`; values rounded to 12 decimals, ``n`` and
        ``samples`` int64.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"system": "a", "metric": "faithfulness", "query_id": ["q1", "q1", "q2", "q2"],
    ...                   "value": [0.8, 0.6, 0.4, 0.4]})
    >>> row = judged_summary(s).iloc[0]
    >>> float(row["value"]), int(row["n"]), int(row["samples"])
    (0.55, 2, 4)
    """
    keys = list(by)
    _check(scores, keys)
    c = _components(scores, keys)
    q, n_all = c["Q"].to_numpy(float), c["N"].to_numpy(float)
    one = q == 1
    # A single query: its samples are the units (SPEC A3 summarize).
    n = np.where(one, n_all, q)
    sd = np.where(one, c["pooled_sd"].to_numpy(float), c["stdev"].to_numpy(float))
    value = c["value"].to_numpy(float)
    half = t_half_width(sd, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        msw = np.where(n_all > q, c["ssw"].to_numpy(float) / (n_all - q), np.nan)
        msb = np.where(q > 1, c["ssb"].to_numpy(float) / (q - 1), np.nan)
        n0 = (n_all - c["m2"].to_numpy(float) / n_all) / (q - 1)
        between = np.maximum((msb - msw) / n0, 0.0)
        icc = between / (between + msw)
    naive = t_half_width(c["pooled_sd"].to_numpy(float), n_all)
    grand = c["grand"].to_numpy(float)
    out = c.index.to_frame(index=False)
    if len(keys) == 1:
        out.columns = keys
    cols = {
        "value": value,
        "n": n.astype(np.int64),
        "stdev": np.where(n >= 2, sd, np.nan),
        "ci_low": value - half,
        "ci_high": value + half,
        "samples": n_all.astype(np.int64),
        "samples_per_query": n_all / q,
        "var_between": between,
        "var_within": msw,
        "icc": icc,
        "naive_ci_low": grand - naive,
        "naive_ci_high": grand + naive,
    }
    for name in JUDGED_COLUMNS:
        col = cols[name]
        out[name] = col if col.dtype == np.int64 else np.round(col.astype(np.float64), 12)
    for key in keys:
        out[key] = out[key].astype(ID)
    return out


def naive_summary(scores: pd.DataFrame, by: Sequence[str] = ("system", "metric")) -> pd.DataFrame:
    """The pooled (naive) mean and interval of every group, as if all samples were independent.

    Shown beside :func:`judged_summary` to make the point of clustering: with several samples
    per query its interval is too narrow. Never use it for a gate.

    Returns
    -------
    DataFrame
        ``*by, value, n, ci_low, ci_high`` with ``n`` the number of samples.
    """
    table = judged_summary(scores, by)
    grand = (table["naive_ci_low"] + table["naive_ci_high"]) / 2
    return table[list(by)].assign(
        value=grand.round(12), n=table["samples"], ci_low=table["naive_ci_low"], ci_high=table["naive_ci_high"]
    )


def judged_measurements(table: pd.DataFrame) -> list[Measurement]:
    """The :class:`Measurement` of every row of :func:`judged_summary` (same order).

    ``deterministic=False``; the interval is absent (not zero-width) when the row has none, so
    a ``ci-lower`` gate over it is INDETERMINATE; ``samples``, ``var_between``,
    ``var_within`` and ``icc`` ride along as extra fields (omitted when NaN: JSON has no NaN).
    """
    out = []
    for row in table.to_dict("records"):
        extra = {}
        for name in EXTRA_FIELDS:
            x = row[name]
            if pd.notna(x):
                extra[name] = int(x) if name == "samples" else float(x)
        has_ci = pd.notna(row["ci_low"])
        out.append(
            Measurement(
                value=float(row["value"]),
                n=int(row["n"]),
                stdev=float(row["stdev"]) if pd.notna(row["stdev"]) else None,
                ci=(float(row["ci_low"]), float(row["ci_high"])) if has_ci else None,
                deterministic=False,
                extra=extra,
            )
        )
    return out
