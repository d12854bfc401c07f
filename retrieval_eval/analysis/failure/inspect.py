"""One query, looked at: its top k with labels, gains and text, the relevant passages it missed,
and where its top-1 score falls against a calibrated cutoff.

The per-entry nDCG terms are the engine's own: :func:`retrieval_eval.engine.measures.seed.metric_sums`
(the sums the scan keeps for the seed metrics) is asked for each entry alone, as a ranking of
one, so the gain ``2**grade - 1`` (or ``grade``) and the discount ``log2(rank + 1)`` are written
once, there. The query's metric values come from :func:`retrieval_eval.engine.metrics.compute`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...engine.labels import relevance_table
from ...engine.measures.seed import metric_sums
from ...engine.metrics import compute, metric_columns, metric_name
from ...io.convert import as_corpus, as_judgments, as_queries, as_run
from ...model import ID, UNSTRATIFIED
from ..handoff import viz
from .entries import check_query, one_system, ranked, texts

__all__ = ["QueryInspection", "contributions", "entry_gains", "inspect_query"]


def entry_gains(grade: np.ndarray, rank: np.ndarray, gain: str = "exponential") -> tuple[np.ndarray, np.ndarray]:
    """Each entry's nDCG gain and discounted gain, from the engine's definitions.

    Parameters
    ----------
    grade : array of int
        The entries' grades (0 for an unjudged entry: it gains nothing, the closed-world rule).
    rank : array of int
        Their 1-based ranks.
    gain : {"exponential", "linear"}

    Returns
    -------
    tuple of arrays
        ``(gain, discounted_gain)``: what each entry adds to DCG at rank 1 and at its own rank
        (:func:`~retrieval_eval.engine.measures.seed.metric_sums` over rankings of one entry).
    """
    grade = np.asarray(grade, dtype=np.int64)
    rank = np.asarray(rank, dtype=np.int64)
    n = len(grade)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    depth = int(rank.max())
    sums = metric_sums((depth,), 1, gain)
    ideal = (np.zeros(0, dtype=np.int64),) * 3
    blocks = np.arange(n, dtype=np.int64)
    at_top = sums((blocks, np.zeros(n, dtype=np.int64), grade), n, ideal, 0)["dcg"][:, 0]
    at_rank = sums((blocks, rank - 1, grade), n, ideal, 0)["dcg"][:, 0]
    return at_top, at_rank


@dataclass
class QueryInspection:
    """One query of one system, looked at (:func:`inspect_query`).

    * ``ranking``: one row per entry of the top k: ``rank``, ``key``, ``score``, ``grade``
      (NaN when unjudged), ``judged``, ``relevant`` (grade >= threshold), ``gain`` and
      ``discounted_gain`` (the entry's terms of nDCG's DCG), ``contrib_<metric>@k`` (its share of
      precision, recall, nDCG and MRR at k: :func:`contributions`), ``text`` (NA when unknown).
    * ``missed``: the relevant keys not in the top k: ``key``, ``grade``, ``rank`` (where the
      run has them further down; NaN when not retrieved at all), ``text``.
    * ``metrics``: the query's seed metrics at k (the engine's), name -> value.
    * ``query``, ``stratum``, ``expect_none``; ``top1_score``, and with a calibration its
      ``cutoff`` and ``above_cutoff``.
    """

    query_id: str
    system: str
    k: int
    ranking: pd.DataFrame
    missed: pd.DataFrame
    metrics: dict[str, float]
    query: str | None = None
    stratum: str | None = None
    expect_none: bool | None = None
    top1_score: float = float("nan")
    cutoff: float | None = None
    above_cutoff: bool | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python (frames as lists of records)."""
        return {
            "query_id": self.query_id,
            "system": self.system,
            "k": self.k,
            "query": self.query,
            "stratum": self.stratum,
            "expect_none": self.expect_none,
            "top1_score": None if np.isnan(self.top1_score) else self.top1_score,
            "cutoff": self.cutoff,
            "above_cutoff": self.above_cutoff,
            "metrics": dict(self.metrics),
            "ranking": _records(self.ranking),
            "missed": _records(self.missed),
        }

    def _repr_html_(self) -> str:
        return viz("inspection_html")(self)

    def to_html(self, path: str | os.PathLike) -> None:
        """Write the view as one self-contained HTML page (no script, no external resource)."""
        viz("write_page")(path, f"query {self.query_id} ({self.system})", self._repr_html_())

    def __repr__(self) -> str:
        judged = int(self.ranking["judged"].sum())
        return (
            f"QueryInspection(query_id={self.query_id!r}, system={self.system!r}, k={self.k}, "
            f"judged={judged}/{len(self.ranking)}, missed={len(self.missed)})"
        )


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    data = frame.astype(object).where(frame.notna(), None)
    return data.to_dict(orient="records")


def _query_facts(qid: str, judgments: pd.DataFrame, queries: pd.DataFrame | None):
    """The query's text, stratum and expect_none flag, from the queries file then the labels."""
    text = stratum = expect_none = None
    if queries is not None:
        row = queries[queries["query_id"] == qid]
        if len(row):
            r = row.iloc[0]
            text = None if pd.isna(r["query"]) else str(r["query"])
            stratum = None if pd.isna(r["stratum"]) else str(r["stratum"])
            expect_none = bool(r["expect_none"])
    labels = judgments[judgments["query_id"] == qid]
    if len(labels):
        first = labels.iloc[0]
        if text is None and pd.notna(first["query"]):
            text = str(first["query"])
        if stratum is None:
            stratum = UNSTRATIFIED if pd.isna(first["stratum"]) else str(first["stratum"])
    return text, stratum, expect_none


def _missed(
    qid: str, judgments: pd.DataFrame, whole: pd.DataFrame, k: int, threshold: int, text: pd.Series
) -> pd.DataFrame:
    """The relevant keys of the query outside the top k, with their rank further down (or NaN)."""
    labels = relevance_table(judgments[judgments["query_id"] == qid])
    relevant = labels[labels["relevance"] >= threshold]
    where = relevant[["key"]].merge(whole[["key", "rank"]], how="left", on="key", sort=False)
    rank = where["rank"].to_numpy(dtype=np.float64, na_value=np.nan)
    keep = ~(rank <= k)
    out = pd.DataFrame(
        {
            "key": pd.array(relevant["key"].to_numpy()[keep], dtype=ID),
            "grade": relevant["relevance"].to_numpy(dtype=np.int64)[keep],
            "rank": rank[keep],
        }
    )
    out["text"] = pd.array(text.reindex(out["key"]).to_numpy(), dtype=ID)
    return out.sort_values(["grade", "rank"], ascending=[False, True], na_position="last", kind="stable").reset_index(
        drop=True
    )


def contributions(ranking: pd.DataFrame, labels: pd.DataFrame, k: int, threshold: int, gain: str) -> pd.DataFrame:
    """Each top-k entry's share of the query's metrics at k: what it adds to ``precision@k``
    (relevant / k), ``recall@k`` (relevant / R, R the query's relevant labels), ``ndcg@k`` or
    ``ndcg_linear@k`` (its
    discounted gain over the ideal DCG at k, the ideal built from the labels' grades with the
    engine's gain and discount) and ``mrr@k`` (1 / rank at the first relevant entry). Each column
    sums to the engine's value of that metric, so a person sees which entries made the number.
    NaN for a query without relevant labels (its metrics do not exist)."""
    table = relevance_table(labels)
    n_rel = int((table["relevance"] >= threshold).sum())
    rel = ranking["relevant"].to_numpy(bool)
    ideal = np.sort(table["relevance"].to_numpy(np.int64)[table["relevance"].to_numpy() > 0])[::-1][:k]
    idcg = float(entry_gains(ideal, np.arange(1, len(ideal) + 1), gain)[1].sum())
    first = np.zeros(len(rel))
    if rel.any():
        at = int(np.argmax(rel))
        first[at] = 1.0 / float(ranking["rank"].iloc[at])
    out = pd.DataFrame(
        {
            f"precision@{k}": rel / k,
            f"recall@{k}": rel / max(n_rel, 1),
            metric_name("ndcg", k, gain): ranking["discounted_gain"].to_numpy() / (idcg or 1.0),
            f"mrr@{k}": first,
        },
        index=ranking.index,
    )
    return out if n_rel else out * np.nan  # no relevant label: the metrics do not exist


def _metric_values(labels: pd.DataFrame, mine: pd.DataFrame, k: int, threshold: int, gain: str) -> dict[str, float]:
    """The engine's metrics at ``k`` of the query's ranking (which checks k, threshold and gain)."""
    metrics = compute(labels, mine, k=(k,), threshold=threshold, gain=gain)  # checks k, threshold, gain
    return {c: float(metrics[c].iloc[0]) for c in metric_columns(metrics)} if len(metrics) else {}


def _ranking(
    whole: pd.DataFrame, labels: pd.DataFrame, k: int, threshold: int, gain: str, text: pd.Series
) -> pd.DataFrame:
    """The top k of the ``whole`` ranking: each entry's rank, key, score, grade, whether it is
    relevant, its gain and discounted gain, its share of each metric (``contrib_*``), its text."""
    top = whole[whole["rank"] <= k].reset_index(drop=True)
    grade = top["grade"].to_numpy()
    g, dg = entry_gains(np.nan_to_num(grade, nan=0.0).astype(np.int64), top["rank"].to_numpy(), gain)
    ranking = top[["rank", "key", "score", "grade", "judged"]].copy()
    ranking["relevant"] = grade >= threshold
    ranking["gain"], ranking["discounted_gain"] = g, dg
    ranking = ranking.join(contributions(ranking, labels, k, threshold, gain).add_prefix("contrib_"))
    ranking["text"] = pd.array(text.reindex(ranking["key"]).to_numpy(), dtype=ID)
    return ranking


def _top1_against_cutoff(ranking: pd.DataFrame, calibration, name: str) -> tuple[float, float | None, bool | None]:
    """The top-1 score, the system's calibrated cutoff and whether the score clears it (None
    without a calibration of the system, or when either number is NaN)."""
    top1 = float(ranking["score"].iloc[0]) if len(ranking) else float("nan")
    cutoff = above = None
    if calibration is not None and name in calibration.systems:
        cutoff = float(calibration.cutoff(name))
        above = None if np.isnan(top1) or np.isnan(cutoff) else bool(top1 >= cutoff)
    return top1, cutoff, above


def inspect_query(
    judgments,
    run,
    query_id,
    system=None,
    k: int = 10,
    corpus=None,
    queries=None,
    calibration=None,
    threshold: int = 1,
    gain: str = "exponential",
) -> QueryInspection:
    """Returns one query's top ``k`` with its labels, gains and text, and the relevant keys it missed.

    The ranking is the engine's (its order, each key at its first occurrence); an unjudged
    entry has grade NaN and gains nothing (the closed-world rule every metric applies), and is
    shown as a hole, because a hole is a question about the labels, not a verdict on the
    system. ``missed`` lists every relevant label (grade >= ``threshold``) outside the top k
    with the rank where the run has it, so a near miss (rank 12) reads differently from a
    passage the system never retrieved (NaN).

    Parameters
    ----------
    judgments, run : DataFrame or path
        Anything :func:`~retrieval_eval.as_judgments` / :func:`~retrieval_eval.as_run` read.
    query_id : str
    system : str, optional
        Required when the run holds several systems.
    k : int, default 10
    corpus, queries : DataFrame or path, optional
        Passage text (else the judgments' ``chunk_text``); query text, stratum and expect_none.
    calibration : Calibration, optional
        Adds the system's cutoff and whether the top-1 score clears it.
    threshold : int, default 1
    gain : {"exponential", "linear"}

    Returns
    -------
    QueryInspection

    Raises
    ------
    ValueError
        An unknown query or system (one line naming it), a bad k, threshold or gain.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> d = rev.load_demo()
    >>> rev.inspect_query(d.judgments, d.runs, "st-01", system="bm25", k=5).ranking["rank"].tolist()
    [1, 2, 3, 4, 5]
    """
    judgments, run = as_judgments(judgments), as_run(run)
    corpus = None if corpus is None else as_corpus(corpus)
    queries = None if queries is None else as_queries(queries)
    name = one_system(run, system)
    qid = check_query(query_id, judgments, run)
    mine = run[(run["system"] == name) & (run["query_id"] == qid)].reset_index(drop=True)
    labels = judgments[judgments["query_id"] == qid].reset_index(drop=True)
    values = _metric_values(labels, mine, k, threshold, gain)
    text = texts(labels, corpus)
    whole = ranked(labels, mine)
    ranking = _ranking(whole, labels, k, threshold, gain, text)
    q_text, stratum, expect_none = _query_facts(qid, judgments, queries)
    top1, cutoff, above = _top1_against_cutoff(ranking, calibration, name)
    return QueryInspection(
        qid,
        name,
        int(k),
        ranking,
        _missed(qid, labels, whole, k, threshold, text),
        values,
        q_text,
        stratum,
        expect_none,
        top1,
        cutoff,
        above,
        {"threshold": threshold, "gain": gain},
    )
