"""Judged metrics joined to an :class:`~retrieval_eval.analysis.result.Evaluation`.

``evaluate(..., judged=...)`` calls :func:`attach_judged`: each judged metric becomes a column
of ``per_query`` (the mean of the query's samples), of ``summary`` (the mean of those) and of
``per_stratum``, and the evaluation keeps the full Measurement tables (``judged``,
``judged_strata``) that the report, the gates and the notebook read.

A judged metric is averaged over the judged queries that have scores, whatever their relevance
labels: faithfulness of an answer does not need a relevant passage to exist, so a query
excluded from the retrieval averages (no positive, ``expect_none``) still counts here, and the
judged Measurement's ``n`` is its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...model import ID
from .measurement import judged_summary, query_means

__all__ = ["attach_judged", "read_judged"]


def read_judged(judged, judgments=None) -> pd.DataFrame:
    """Tidy judge scores from one source or a list of them (paths, frames, row lists).

    A frame that already has the tidy columns (``metric``, ``value``, ``query_id``) is taken as
    read; several sources are concatenated (``--judged`` is repeatable). Duplicates across
    sources are refused as within one.
    """
    from ...io.judge_scores import JUDGE_SCORE_COLUMNS, read_judge_scores

    if isinstance(judged, pd.DataFrame) and set(JUDGE_SCORE_COLUMNS) <= set(judged.columns):
        return judged
    sources = judged if isinstance(judged, (list, tuple)) and judged and not isinstance(judged[0], dict) else [judged]
    frames = [read_judge_scores(s, judgments=judgments) for s in sources]
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    keys = ["system", "query_id", "metric", "key", "labeled_by", "sample"]
    dup = out[keys].astype(object).fillna("\x00").duplicated()
    if dup.any():
        row = out[dup].iloc[0]
        raise ValueError(
            f"judge scores: query {row['query_id']}, metric {row['metric']}, sample "
            f"{row['sample']} is scored twice across the --judged files"
        )
    return out


def _assign_systems(scores: pd.DataFrame, systems: Sequence[str]) -> pd.DataFrame:
    """Rows without a system go to the evaluation's only system; a system the run lacks is an error."""
    unset = scores["system"].isna()
    if unset.any():
        if len(systems) != 1:
            raise ValueError(
                f"the judge scores name no system, but the run has {len(systems)} "
                f"({', '.join(systems)}); add a system column"
            )
        scores = scores.assign(system=scores["system"].astype(object).where(~unset, systems[0]).astype(ID))
    unknown = sorted(set(scores["system"].astype(str)) - set(systems))
    if unknown:
        raise ValueError(
            f"the judge scores name system(s) {', '.join(unknown)} the run does not have (it has {', '.join(systems)})"
        )
    return scores


def _clash(ev, metrics: list[str]) -> None:
    taken = [m for m in metrics if m in ev.per_query.columns]
    if taken:
        raise ValueError(
            f"judged metric name(s) {', '.join(taken)} clash with columns of the "
            "evaluation; rename them in the judge scores"
        )


def attach_judged(ev, judged) -> None:
    """Add the judged metrics of ``judged`` to ``ev`` in place (``ev`` was just built by
    ``evaluate``; nobody holds it yet).

    ``per_query`` gains one float64 column per metric (NaN for a query without scores),
    ``summary`` and ``per_stratum`` the means of those; ``ev.judged`` is
    :func:`~.measurement.judged_summary` by (system, metric) and ``ev.judged_strata`` by
    (system, stratum, metric), each query in the stratum ``per_query`` gives it. Scores of
    queries the judgments lack were warned about when read and are left out.
    """
    scores = read_judged(judged, ev.judgments)
    scores = _assign_systems(scores, [str(s) for s in ev.systems])
    pq = ev.per_query
    strata = pq.drop_duplicates("query_id").set_index("query_id")["stratum"]
    scores = scores[scores["query_id"].isin(strata.index)]
    if scores.empty:
        raise ValueError("no judge score names a judged query")
    metrics = [str(m) for m in pd.unique(scores["metric"].astype(object))]
    _clash(ev, metrics)
    scores = scores.assign(
        stratum=pd.array(strata.reindex(scores["query_id"].to_numpy()).to_numpy(dtype=object), dtype=ID)
    )
    means = query_means(scores).pivot_table(
        index=["system", "query_id"], columns="metric", values="value", observed=True, sort=False
    )
    cells = pd.MultiIndex.from_arrays([pq["system"].astype(object), pq["query_id"].astype(object)])
    for m in metrics:
        pq[m] = means[m].reindex(cells).to_numpy(dtype=np.float64)
    ev.judged = judged_summary(scores, by=("system", "metric"))
    ev.judged_strata = judged_summary(scores, by=("system", "stratum", "metric"))
    ev.judged_scores = scores
    _columns(ev, metrics)


def _columns(ev, metrics: list[str]) -> None:
    """The judged values as columns of ``summary`` and ``per_stratum`` (NaN where none)."""
    wide = ev.judged.pivot_table(index="system", columns="metric", values="value", observed=True)
    for m in metrics:
        ev.summary[m] = (
            wide[m].reindex(ev.summary.index.astype(object)).to_numpy(dtype=np.float64) if m in wide.columns else np.nan
        )
    if len(ev.per_stratum):
        table = ev.judged_strata.pivot_table(
            index=["system", "stratum"], columns="metric", values="value", observed=True
        )
        for m in metrics:
            ev.per_stratum[m] = (
                table[m].reindex(ev.per_stratum.index).to_numpy(dtype=np.float64) if m in table.columns else np.nan
            )
