"""How much the labels can move a number: each metric as scored (unjudged = not relevant, the
closed-world rule) and with every unjudged entry of the top k labelled at the highest grade of
the judgments, and what that does to a mean and to the sign of a difference.

Both numbers are the engine's: ``upper`` is the same metric computed on the judgments completed
with one label per hole (:func:`completed`), so it is exactly what pytrec_eval gives on those
completed qrels. The two labellings are the extremes people reason with; for a measure whose
ideal list grows with the labels (nDCG, AP, recall's denominator) a hole labelled relevant can
also lower a number, so ``low``/``high`` are the smaller and larger of the two, per query, and
the interval of a mean is theirs: an honest range for "what if the holes were relevant", not
a proof over every partial labelling.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...io.convert import as_judgments, as_run
from ...model import ID, JUDGMENT_COLUMNS
from ..handoff import viz
from .entries import per_query, ranked, resolve_metric, systems_of

__all__ = ["JudgmentBounds", "completed", "holes", "judgment_bounds"]


def holes(judgments: pd.DataFrame, run: pd.DataFrame, k: int) -> pd.DataFrame:
    """The unjudged entries of every top ``k``: ``system``, ``query_id``, ``rank``, ``key``,
    ``score`` (judged queries only: a query nobody labelled has no metric to move)."""
    top = ranked(judgments, run, k)
    known = top["query_id"].isin(pd.unique(judgments["query_id"]))
    return top[known & ~top["judged"]][["system", "query_id", "rank", "key", "score"]].reset_index(drop=True)


def completed(judgments: pd.DataFrame, gaps: pd.DataFrame, grade: int) -> pd.DataFrame:
    """``judgments`` plus one label of ``grade`` per distinct (query_id, key) of ``gaps``."""
    pairs = gaps[["query_id", "key"]].drop_duplicates()
    extra = pd.DataFrame(
        {
            c: pd.Series(pd.NA, index=range(len(pairs)), dtype=d)
            for c, d in JUDGMENT_COLUMNS.items()
            if c not in ("extra", "relevance", "line")
        }
    )
    extra["query_id"] = pd.array(pairs["query_id"].to_numpy(), dtype=ID)
    extra["doc_uri"] = pd.array(pairs["key"].to_numpy(), dtype=ID)
    extra["chunk_id"] = pd.array(pairs["key"].to_numpy(), dtype=ID)
    extra["relevance"] = np.full(len(pairs), int(grade), dtype=np.int64)
    extra["extra"] = pd.Series([None] * len(pairs), dtype=object)
    extra["line"] = np.zeros(len(pairs), dtype=np.int64)
    if not len(pairs):
        return judgments
    return pd.concat([judgments, extra[list(JUDGMENT_COLUMNS)]], ignore_index=True).astype(JUDGMENT_COLUMNS)


@dataclass
class JudgmentBounds:
    """What the holes of the top k can do to each number (:func:`judgment_bounds`).

    * ``per_query``: one row per (system, query, measure): ``value`` (as scored), ``upper``
      (every hole at ``grade``), ``unjudged`` (holes in the top k), ``low`` / ``high`` (the
      smaller and larger of the two).
    * ``summary``: per (system, measure) the mean of each, over the queries scored (``n``):
      ``mean_low`` .. ``mean_high`` is the interval of possible means.
    * ``comparisons``: per pair of systems and measure, the observed difference of means
      (``b - a``), its range over the two labellings of each side, and ``could_flip``.
    """

    per_query: pd.DataFrame
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    grade: int
    k: int
    settings: dict[str, Any] = field(default_factory=dict)

    def _repr_html_(self) -> str:
        return viz("bounds_html")(self)

    def to_html(self, path: str | os.PathLike) -> None:
        """Write the bounds as one self-contained HTML page."""
        viz("write_page")(path, "judgment bounds", self._repr_html_())

    def __repr__(self) -> str:
        return (
            f"JudgmentBounds(k={self.k}, grade={self.grade}, {len(self.summary)} system x measure, "
            f"{int(self.comparisons['could_flip'].sum()) if len(self.comparisons) else 0} could flip)"
        )


def _summary(rows: pd.DataFrame) -> pd.DataFrame:
    scored = rows[rows["scored"]]
    g = scored.groupby(["system", "measure"], sort=False, observed=True)
    out = pd.DataFrame(
        {
            "n": g.size().astype(np.int64),
            "mean": g["value"].mean(),
            "mean_upper": g["upper"].mean(),
            "mean_low": g["low"].mean(),
            "mean_high": g["high"].mean(),
            "unjudged": g["unjudged"].sum().astype(np.int64),
        }
    )
    return out.reset_index()


def _comparisons(summary: pd.DataFrame) -> pd.DataFrame:
    """Every ordered pair of systems (first-appearance order), per measure: b - a and its range.

    The range pairs a's best case with b's worst and the reverse, treating each system's holes
    on their own: a hole both systems retrieved gets one label in reality, so the range is
    wider than the truth (conservative: a "no" is reliable, a "yes" says to label more).
    """
    s = summary.set_index(["measure", "system"])
    pairs = summary[["measure", "system"]].merge(summary[["measure", "system"]], on="measure", suffixes=("_a", "_b"))
    rank = {name: i for i, name in enumerate(pd.unique(summary["system"]))}
    pairs = pairs[pairs["system_a"].map(rank) < pairs["system_b"].map(rank)].reset_index(drop=True)

    def col(side, name):
        return s[name].reindex(pd.MultiIndex.from_arrays([pairs["measure"], pairs[f"system_{side}"]])).to_numpy()

    delta = col("b", "mean") - col("a", "mean")
    lo = col("b", "mean_low") - col("a", "mean_high")
    hi = col("b", "mean_high") - col("a", "mean_low")
    flip = np.where(delta > 0, lo <= 0, np.where(delta < 0, hi >= 0, True))
    return pd.DataFrame(
        {
            "measure": pd.array(pairs["measure"], dtype=ID),
            "a": pd.array(pairs["system_a"], dtype=ID),
            "b": pd.array(pairs["system_b"], dtype=ID),
            "delta": delta,
            "delta_low": lo,
            "delta_high": hi,
            "could_flip": flip.astype(bool),
        }
    )


def judgment_bounds(
    judgments,
    run,
    measures=("ndcg@10",),
    k: int = 10,
    gain: str = "exponential",
    threshold: int = 1,
    grade: int | None = None,
) -> JudgmentBounds:
    """Returns each metric as scored and with every unjudged top-``k`` entry labelled at the top grade.

    ``value`` applies the closed-world rule (an unjudged entry is not relevant), the rule every
    number of the toolkit uses; ``upper`` labels every hole of the system's top ``k`` at the
    highest grade of the judgments (or ``grade``), each system with its own holes. Together
    they say how far the labels, not the system, could move a number: the honest companion of
    ``judged@k``, which counts the holes but not what they could be worth.

    Parameters
    ----------
    judgments, run : DataFrame or path
    measures : str or sequence of str
        Seed metrics (``ndcg@10``; a bare name is at ``k``) or catalogue measures (``P_10``).
    k : int, default 10
        The depth whose holes are filled.
    gain : {"exponential", "linear"}
    threshold : int, default 1
    grade : int, optional
        The grade a hole gets (default: the highest grade of the judgments).

    Returns
    -------
    JudgmentBounds

    Raises
    ------
    ValueError
        An unknown measure, a bad k or gain, or judgments with no label.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> d = rev.load_demo()
    >>> b = rev.judgment_bounds(d.judgments, d.runs, measures=["ndcg@10"], k=10)
    >>> bool((b.per_query["high"] >= b.per_query["value"]).all())
    True
    """
    judgments, run = as_judgments(judgments), as_run(run)
    metrics = [resolve_metric(m, k, gain) for m in ([measures] if isinstance(measures, str) else measures)]
    if not len(judgments):
        raise ValueError("the judgments hold no label: there is nothing to bound")
    top = int(judgments["relevance"].max()) if grade is None else int(grade)
    gaps = holes(judgments, run, k)
    count = gaps.groupby(["system", "query_id"], sort=False, observed=True).size()
    frames = []
    for metric in metrics:  # a few measures; each is one engine call per system
        value = per_query(judgments, run, metric, threshold)
        upper = pd.concat(
            [
                per_query(
                    completed(judgments, gaps[gaps["system"] == s], top), run[run["system"] == s], metric, threshold
                )
                for s in systems_of(run)
            ]
        )
        rows = value.merge(
            upper[["system", "query_id", "value"]].rename(columns={"value": "upper"}),
            how="left",
            on=["system", "query_id"],
            sort=False,
        )
        at = pd.MultiIndex.from_arrays([rows["system"], rows["query_id"]])
        rows["unjudged"] = count.reindex(at).fillna(0).to_numpy(dtype=np.int64)
        rows.insert(2, "measure", pd.array([metric.name] * len(rows), dtype=ID))
        frames.append(rows)
    rows = pd.concat(frames, ignore_index=True)
    rows.loc[~rows["scored"], "upper"] = np.nan  # not scored as labelled: out of every mean
    rows["low"] = np.fmin(rows["value"], rows["upper"])
    rows["high"] = np.fmax(rows["value"], rows["upper"])
    summary = _summary(rows)
    return JudgmentBounds(rows, summary, _comparisons(summary), top, int(k), {"threshold": threshold, "gain": gain})
