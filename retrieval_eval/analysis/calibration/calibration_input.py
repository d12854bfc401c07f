"""What a calibration reads: its inputs as data-model frames, the negatives, the scored rows.

Every calibration entry point (:func:`~retrieval_eval.analysis.calibration.calibrate`,
:func:`~retrieval_eval.analysis.cutoffs.cutoff_sweep`, :func:`score_rows`) checks and converts
its input here, once: judgments, run and queries become the data model's frames; the
``expect_none`` queries become the negatives, refused when one carries a relevant label; the
deduplicated run becomes one row per hit with its grade and its query's kind and stratum.

Order and duplicates come from :func:`retrieval_eval.engine.metrics.dedupe_run` (the one place
they are defined): ``top1`` of a query is its rank-1 row there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ...engine.labels import query_strata
from ...engine.metrics import dedupe_run, relevance_table
from ...errors import FormatError
from ...model import ID, UNSTRATIFIED

__all__ = [
    "KINDS",
    "check_negatives",
    "judgments_frame",
    "negative_ids",
    "no_scores_message",
    "queries_frame",
    "query_table",
    "run_frame",
    "score_rows",
    "scored_rows",
]

#: Query kinds in :func:`score_rows`, in table order.
KINDS = ("positive", "negative", "no_positives", "unjudged")


# --------------------------------------------------------------------------------------------
# Input coercion: frames, lists of wire-format dicts or paths, through the formats module.


def _na_strings(n: int) -> pd.api.extensions.ExtensionArray:
    return pd.array([pd.NA] * n, dtype=ID)


def judgments_frame(judgments) -> pd.DataFrame:
    """A judgments frame in the data model's shape, checked and converted once.

    A frame already in the data model's shape is used as is (optional columns added as NA);
    anything else goes through :func:`retrieval_eval.as_judgments`.

    Parameters
    ----------
    judgments : DataFrame, list of dicts or path
        The labels.

    Returns
    -------
    DataFrame
        With ``query_id``, ``doc_uri``, ``chunk_id``, ``relevance``, ``stratum``, ``query`` and
        ``line``; absent values read as the data model says (``io.absent``).

    Examples
    --------
    >>> j = judgments_frame([{"query_id": "q1", "doc_uri": "d1", "relevance": 2}])
    >>> int(j["relevance"].iloc[0])
    2
    """
    from ...io import as_judgments, refuse_swapped
    from ...io.absent import judgments_meaning

    if not isinstance(judgments, pd.DataFrame):
        return judgments_meaning(as_judgments(judgments))
    refuse_swapped(judgments, "labels", "judgments")
    missing = [c for c in ("query_id", "doc_uri", "relevance") if c not in judgments.columns]
    if missing:
        raise ValueError(f"judgments need columns {', '.join(missing)} (docs/data-model.md)")
    add: dict[str, Any] = {
        c: _na_strings(len(judgments)) for c in ("chunk_id", "stratum", "query") if c not in judgments.columns
    }
    if "line" not in judgments.columns:
        add["line"] = np.zeros(len(judgments), dtype=np.int64)
    return judgments_meaning(judgments.assign(**add) if add else judgments)


def run_frame(run) -> pd.DataFrame:
    """A run frame in the data model's shape (system defaults to ``"run"``, score to NaN).

    Parameters
    ----------
    run : DataFrame, list of dicts or path
        The run; non-frames go through :func:`retrieval_eval.as_run`.

    Returns
    -------
    DataFrame
        With ``system``, ``query_id``, ``rank``, ``doc_id`` and ``score``.

    Examples
    --------
    >>> r = run_frame([{"query_id": "q1", "ranking": ["d1", "d2"], "scores": [0.9, 0.5]}])
    >>> r["rank"].tolist()
    [1, 2]
    """
    from ...io import as_run, refuse_swapped

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


def queries_frame(queries) -> pd.DataFrame | None:
    """A queries frame (``expect_none`` read as the data model says), or None.

    Parameters
    ----------
    queries : DataFrame, list of dicts, path or None
        The queries table; goes through :func:`retrieval_eval.as_queries`.

    Returns
    -------
    DataFrame or None
        With ``query_id``, ``expect_none``, ``stratum`` and ``query``; None without queries.

    Examples
    --------
    >>> q = queries_frame([{"query_id": "n1", "expect_none": True}])
    >>> bool(q["expect_none"].iloc[0])
    True
    """
    if queries is None:
        return None
    from ...io import as_queries
    from ...io.absent import queries_meaning

    return queries_meaning(as_queries(queries))


# --------------------------------------------------------------------------------------------
# Negatives.


def negative_ids(queries=None, negatives=None) -> list[str]:
    """The ids of the ``expect_none`` (out-of-distribution) queries, each once.

    These queries have no answer in the corpus, so they never enter the positive metrics'
    averages; calibration measures them by their top-1 score instead.

    Parameters
    ----------
    queries : DataFrame, list of dicts or path, optional
        A queries table whose ``expect_none`` column marks negatives.
    negatives : list of str, optional
        Explicit query ids. Both may be given: the union is returned, queries-file order first.

    Returns
    -------
    list of str

    Raises
    ------
    TypeError
        ``negatives`` is one string rather than a list of ids.

    Examples
    --------
    >>> negative_ids([{"query_id": "n1", "expect_none": True}, {"query_id": "q1"}], ["n2", "n1"])
    ['n1', 'n2']
    """
    ids: list[str] = []
    q = queries_frame(queries)
    if q is not None:
        ids.extend(q.loc[q["expect_none"], "query_id"].astype(str).tolist())
    if negatives is not None:
        if isinstance(negatives, str):
            raise TypeError("negatives must be a list of query ids, not one string")
        ids.extend(str(x) for x in negatives)
    return list(dict.fromkeys(ids))


def check_negatives(
    judgments,
    negatives: Iterable[str],
    threshold: int = 1,
    label: str = "judgments",
    negatives_label: str | None = None,
) -> None:
    """Raise :class:`FormatError` when a negative has a label at or above ``threshold``.

    A query marked ``expect_none`` claims the corpus holds nothing for it; a relevant label
    says the opposite. One of the two is wrong, and scoring either way would hide it, so the
    message names the query, the label's file (``label``) and line, its document, the file
    that marked the query (``negatives_label``, when known) and what to fix.

    Parameters
    ----------
    judgments : DataFrame, list of dicts or path
        The labels.
    negatives : iterable of str
        The negative query ids (:func:`negative_ids`).
    threshold : int
        The grade that counts as relevant.
    label, negatives_label : str
        The names of the judgments' file and of the file that marked the negatives, for the
        message.

    Returns
    -------
    None

    Raises
    ------
    FormatError
        A negative carries a relevant label.

    Examples
    --------
    >>> check_negatives([{"query_id": "n1", "doc_uri": "d", "relevance": 0}], ["n1"])
    """
    j = judgments_frame(judgments)
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
        label,
        line,
        f"query {str(first['query_id'])!r} is marked expect_none{where} but has a label with relevance "
        f"{int(first['relevance'])} >= threshold {threshold} on {str(key)!r}{more}; "
        "remove the label or the expect_none mark",
    )


# --------------------------------------------------------------------------------------------
# Rows.


def query_table(j: pd.DataFrame, q: pd.DataFrame | None, negs: list[str], threshold: int) -> pd.DataFrame:
    """One row per known query (judged, negative or in the queries table): kind, stratum, text.

    Stratum: the judgments' (the engine's rule: a query's first label), else the queries
    file's, else ``_unstratified``. Query text: the first labelled one, else the queries file's.

    Parameters
    ----------
    j : DataFrame
        Judgments (:func:`judgments_frame`).
    q : DataFrame or None
        Queries (:func:`queries_frame`).
    negs : list of str
        The negatives (:func:`negative_ids`).
    threshold : int
        The grade that makes a judged query a positive.

    Returns
    -------
    DataFrame
        Indexed by ``query_id``, columns ``kind`` (one of :data:`KINDS`), ``stratum``, ``query``.

    Examples
    --------
    >>> j = judgments_frame([{"query_id": "q1", "doc_uri": "d1", "relevance": 1}])
    >>> query_table(j, None, ["n1"], 1)["kind"].tolist()
    ['positive', 'negative']
    """
    rel = relevance_table(j)
    judged = pd.Index(pd.unique(j["query_id"].astype(ID)), dtype=ID)
    n_rel = (rel["relevance"] >= threshold).groupby(rel["query_id"], sort=False).sum()
    ids = list(judged) + list(negs) + ([] if q is None else list(q["query_id"]))
    ids = pd.Index(list(dict.fromkeys(ids)), dtype=ID, name="query_id")
    table = pd.DataFrame(index=ids)
    nr = n_rel.reindex(ids).fillna(0).astype(np.int64).to_numpy()
    is_judged = ids.isin(judged)
    kind = np.where(is_judged & (nr > 0), "positive", np.where(is_judged, "no_positives", "unjudged"))
    kind = np.where(ids.isin(pd.Index(negs, dtype=ID)), "negative", kind)
    table["kind"] = pd.array(kind, dtype=ID)
    strata = pd.Series(query_strata(j, judged), index=judged.to_numpy(), dtype=ID)
    stratum = strata.reindex(ids.to_numpy())
    text = j["query"].astype(ID)
    text = text[text.notna()].groupby(j["query_id"].astype(ID)[text.notna()], sort=False).first()
    query = text.reindex(ids.to_numpy())
    if q is not None:
        qq = q.drop_duplicates("query_id", keep="first").set_index("query_id")
        stratum = stratum.mask(
            stratum.isna() | (stratum == UNSTRATIFIED), qq["stratum"].reindex(ids.to_numpy()).to_numpy()
        )
        query = query.fillna(qq["query"].reindex(ids.to_numpy()))
    table["stratum"] = pd.array(stratum.fillna(UNSTRATIFIED).to_numpy(), dtype=ID)
    table["query"] = pd.array(query.to_numpy(), dtype=ID)
    return table


def scored_rows(r: pd.DataFrame, j: pd.DataFrame, qt: pd.DataFrame, threshold: int) -> pd.DataFrame:
    """The deduplicated run, one row per hit, with its grade and its query's kind and stratum.

    Parameters
    ----------
    r : DataFrame
        The run (:func:`run_frame`).
    j : DataFrame
        The judgments (:func:`judgments_frame`).
    qt : DataFrame
        The query table (:func:`query_table`).
    threshold : int
        The grade that counts as relevant.

    Returns
    -------
    DataFrame
        The columns of :func:`score_rows`.

    Examples
    --------
    >>> j = judgments_frame([{"query_id": "q1", "doc_uri": "d1", "relevance": 1}])
    >>> r = run_frame([{"query_id": "q1", "ranking": ["d1", "d1", "d2"], "scores": [0.9, 0.9, 0.5]}])
    >>> scored_rows(r, j, query_table(j, None, [], 1), 1)["doc_id"].tolist()
    ['d1', 'd2']
    """
    d = dedupe_run(r)[["system", "query_id", "rank", "doc_id", "score"]]
    d = d.astype({"system": ID, "query_id": ID, "doc_id": ID, "rank": np.int64, "score": np.float64})
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
    return out[["system", "query_id", "rank", "doc_id", "score", "relevance", "relevant", "kind", "stratum", "query"]]


def score_rows(judgments, run, queries=None, threshold: int = 1, negatives=None) -> pd.DataFrame:
    """The deduplicated run, one row per (system, query_id, rank), with what calibration needs.

    Parameters
    ----------
    judgments, run, queries
        Frames in the data model's shape, lists of wire-format dicts or paths.
    threshold : int
        The grade that counts as relevant.
    negatives : list of str, optional
        ``expect_none`` query ids, in addition to those the queries table marks.

    Returns
    -------
    DataFrame
        Columns ``system``, ``query_id``, ``rank`` (position in the deduplicated ranking),
        ``doc_id``, ``score``, ``relevance`` (the hit's grade, NaN when unjudged), ``relevant``
        (grade >= ``threshold``), ``kind`` (``positive``: judged with a grade >= threshold;
        ``negative``: ``expect_none``; ``no_positives``: judged, nothing at the threshold;
        ``unjudged``), ``stratum`` (judgments, else the queries file, else ``_unstratified``)
        and ``query`` (text when known).

    Raises
    ------
    FormatError
        A negative carries a relevant label.

    Examples
    --------
    >>> from retrieval_eval import load_demo
    >>> demo = load_demo()
    >>> rows = score_rows(demo.judgments, demo.runs, demo.queries)
    >>> sorted(rows["kind"].unique())
    ['negative', 'positive']
    """
    j, r, q = judgments_frame(judgments), run_frame(run), queries_frame(queries)
    negs = negative_ids(q, negatives)
    check_negatives(j, negs, threshold)
    return scored_rows(r, j, query_table(j, q, negs, threshold), threshold)


def no_scores_message(system: str) -> str:
    """Why a system without scores cannot be calibrated (one message, every entry point).

    Parameters
    ----------
    system : str
        The system's name.

    Returns
    -------
    str

    Examples
    --------
    >>> no_scores_message("bm25")[:27]
    "system 'bm25' has no scores"
    """
    return f"system {system!r} has no scores: calibration needs the absolute relevance score of each hit (SPEC B1)"
