"""Two runs (or two systems of one run), side by side, query by query: which queries moved,
where each relevant passage went, which documents entered or left the top k.

Every value is the engine's (:func:`.entries.per_query`); the ranks are the engine's
deduplicated order (:func:`.entries.ranked`). The rest is joins and sorting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...engine.labels import relevance_table
from ...io.convert import as_judgments, as_run
from ...model import ID
from ..handoff import viz
from .entries import Metric, one_system, per_query, ranked, resolve_metric, systems_of

__all__ = ["RunDiff", "diff_runs", "pair_runs"]


@dataclass
class RunDiff:
    """Two systems compared per query (:func:`diff_runs`).

    * ``queries``: one row per scored query: ``query_id``, ``a``, ``b``, ``delta`` (b - a),
      sorted by ``|delta|`` descending (ties in judgment order).
    * ``moves``: for every relevant label (grade >= threshold) of those queries, ``query_id``,
      ``key``, ``grade``, ``rank_a``, ``rank_b`` (the rank in each deduplicated run; NaN when
      absent).
    * ``entered`` / ``left``: the keys in b's top k and not a's / in a's and not b's:
      ``query_id``, ``key``, ``grade`` (NaN unjudged), ``rank`` (in b / in a).
    * ``top_a`` / ``top_b``: each system's top k (``query_id``, ``rank``, ``key``, ``grade``).
    * ``metric``, ``a``, ``b`` (the mean over the scored queries), ``names`` (the two systems).
    """

    metric: str
    names: tuple[str, str]
    a: float
    b: float
    k: int
    queries: pd.DataFrame
    moves: pd.DataFrame
    entered: pd.DataFrame
    left: pd.DataFrame
    top_a: pd.DataFrame
    top_b: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON: ``{"metric", "a", "b", "queries": [{"query_id", "a", "b", "delta",
        "moves": [{"key", "grade", "rank_a", "rank_b"}]}]}`` (a missing rank is null)."""
        moves = self.moves.astype(object).where(self.moves.notna(), None)
        grouped = {q: g[["key", "grade", "rank_a", "rank_b"]] for q, g in moves.groupby("query_id", sort=False)}
        empty = pd.DataFrame(columns=["key", "grade", "rank_a", "rank_b"])

        def rank(v):
            return None if v is None else int(v)

        out = []
        for q, a, b, d in self.queries[["query_id", "a", "b", "delta"]].itertuples(index=False):
            rows = grouped.get(q, empty)
            out.append(
                {
                    "query_id": str(q),
                    "a": float(a),
                    "b": float(b),
                    "delta": float(d),
                    "moves": [
                        {"key": str(r.key), "grade": int(r.grade), "rank_a": rank(r.rank_a), "rank_b": rank(r.rank_b)}
                        for r in rows.itertuples(index=False)
                    ],
                }
            )
        return {"metric": self.metric, "a": _num(self.a), "b": _num(self.b), "queries": out}

    def top(self, n: int = 10) -> pd.DataFrame:
        """The ``n`` queries that moved most (the head of ``queries``)."""
        return self.queries.head(n)

    def _repr_html_(self) -> str:
        return viz("diff_html")(self)

    def to_html(self, path: str | os.PathLike, top: int = 20) -> None:
        """Write the diff as one self-contained HTML page (static HTML and SVG, no script)."""
        viz("write_page")(path, f"{self.names[0]} vs {self.names[1]}: {self.metric}", viz("diff_html")(self, top=top))

    def __repr__(self) -> str:
        return (
            f"RunDiff({self.metric}: {self.names[0]} {self.a:.4f} -> {self.names[1]} {self.b:.4f}, "
            f"{len(self.queries)} queries, {int((self.queries['delta'] != 0).sum())} moved)"
        )


def _num(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def pair_runs(run_a, run_b=None, systems=None) -> tuple[pd.DataFrame, tuple[str, str]]:
    """One run frame holding the two systems to compare, renamed ``a`` and ``b``, and their names.

    With ``run_b``: each run's one system (or ``systems[i]`` of it). Without: two systems of
    ``run_a``, ``systems`` or its only two.

    Raises
    ------
    ValueError
        An unknown system, or a run whose system is not said.
    """
    run_a = as_run(run_a)
    if run_b is None:
        names = systems_of(run_a)
        if systems is None:
            if len(names) != 2:
                raise ValueError(
                    f"the run holds {len(names)} systems ({', '.join(names)}): pass systems=(a, b) or a second run"
                )
            systems = names
        sa, sb = (one_system(run_a, s) for s in systems)
        ra, rb = run_a[run_a["system"] == sa], run_a[run_a["system"] == sb]
    else:
        run_b = as_run(run_b)
        sa = one_system(run_a, None if systems is None else systems[0], "first run")
        sb = one_system(run_b, None if systems is None else systems[1], "second run")
        ra, rb = run_a[run_a["system"] == sa], run_b[run_b["system"] == sb]
    both = pd.concat([ra.assign(system="a"), rb.assign(system="b")], ignore_index=True)
    both["system"] = both["system"].astype(ID)
    return both, (sa, sb)


def _deltas(values: pd.DataFrame) -> pd.DataFrame:
    wide = values[values["scored"]].pivot(index="query_id", columns="system", values="value")
    order = pd.unique(values["query_id"])
    wide = wide.reindex([q for q in order if q in wide.index])
    out = pd.DataFrame(
        {
            "query_id": pd.array(wide.index, dtype=ID),
            "a": wide["a"].to_numpy(dtype=np.float64),
            "b": wide["b"].to_numpy(dtype=np.float64),
        }
    )
    out["delta"] = out["b"] - out["a"]
    size = out["delta"].abs().to_numpy()
    return out.iloc[np.argsort(-size, kind="stable")].reset_index(drop=True)


def _moves(judgments: pd.DataFrame, whole: pd.DataFrame, query_ids: pd.Series, threshold: int) -> pd.DataFrame:
    labels = relevance_table(judgments)
    rel = labels[(labels["relevance"] >= threshold) & labels["query_id"].isin(query_ids)]
    out = rel.rename(columns={"relevance": "grade"}).reset_index(drop=True)
    for side in ("a", "b"):
        mine = whole[whole["system"] == side][["query_id", "key", "rank"]].rename(columns={"rank": f"rank_{side}"})
        out = out.merge(mine, how="left", on=["query_id", "key"], sort=False)
        out[f"rank_{side}"] = out[f"rank_{side}"].to_numpy(dtype=np.float64, na_value=np.nan)
    position = pd.Series(np.arange(len(query_ids)), index=pd.Index(query_ids.to_numpy()))
    at = position.reindex(out["query_id"].to_numpy()).to_numpy()
    best = np.fmin(out["rank_a"].to_numpy(), out["rank_b"].to_numpy())
    order = np.lexsort((np.nan_to_num(best, nan=np.inf), -out["grade"].to_numpy(), at))
    return out.iloc[order].reset_index(drop=True)


def _crossing(top: pd.DataFrame, query_ids: pd.Series) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The keys in b's top k and not a's (entered), in a's and not b's (left)."""
    top = top[top["query_id"].isin(query_ids)]
    cols = ["query_id", "key", "grade", "rank"]
    a, b = top[top["system"] == "a"][cols], top[top["system"] == "b"][cols]
    entered = b.merge(a[["query_id", "key"]], how="left", on=["query_id", "key"], indicator=True, sort=False)
    left = a.merge(b[["query_id", "key"]], how="left", on=["query_id", "key"], indicator=True, sort=False)
    return (
        entered[entered["_merge"] == "left_only"][cols].reset_index(drop=True),
        left[left["_merge"] == "left_only"][cols].reset_index(drop=True),
    )


def diff_runs(
    judgments,
    run_a,
    run_b=None,
    measure: str = "ndcg@10",
    k: int = 10,
    systems=None,
    threshold: int = 1,
    gain: str = "exponential",
) -> RunDiff:
    """Returns two systems compared per query: values, deltas, where each relevant passage moved.

    Queries are sorted by ``|b - a|`` descending, so the head of the table is where a summary
    difference comes from. A query without positives is left out for a seed metric (it is not
    scored, as in every average of the toolkit); a query a system did not answer scores 0,
    because a production system that answers nothing has failed that query.

    Parameters
    ----------
    judgments : DataFrame or path
    run_a, run_b : DataFrame or path
        Two runs of one system each, or ``run_a`` alone holding the two systems.
    measure : str, default "ndcg@10"
        A seed metric (``ndcg@10``, ``recall@5``; a bare ``ndcg`` is at ``k``) or one measure
        of trec_eval's catalogue (``P_10``, ``ndcg_cut_10``).
    k : int, default 10
        The depth of the top lists (entered, left, the page's columns).
    systems : pair of str, optional
        Which systems to compare (``("dense", "bm25")``), when the runs hold several.
    threshold : int, default 1
    gain : {"exponential", "linear"}
        Of a bare ``ndcg``.

    Returns
    -------
    RunDiff

    Raises
    ------
    ValueError
        An unknown measure or system (one line naming it and what exists).

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> d = rev.load_demo()
    >>> diff = rev.diff_runs(d.judgments, d.runs, systems=("dense", "bm25"))
    >>> list(diff.queries.columns)
    ['query_id', 'a', 'b', 'delta']
    """
    judgments = as_judgments(judgments)
    metric: Metric = resolve_metric(measure, k, gain)
    run, names = pair_runs(run_a, run_b, systems)
    values = per_query(judgments, run, metric, threshold)
    table = _deltas(values)
    whole = ranked(judgments, run)
    top = whole[whole["rank"] <= k]
    entered, left = _crossing(top, table["query_id"])
    tops = [top[top["system"] == s][["query_id", "rank", "key", "grade"]].reset_index(drop=True) for s in "ab"]
    return RunDiff(
        metric.name,
        names,
        float(table["a"].mean()) if len(table) else float("nan"),
        float(table["b"].mean()) if len(table) else float("nan"),
        int(k),
        table,
        _moves(judgments, whole, table["query_id"], threshold),
        entered,
        left,
        tops[0],
        tops[1],
        {"threshold": threshold, "gain": gain},
    )
