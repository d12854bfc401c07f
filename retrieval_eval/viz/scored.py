"""What the Displays of an evaluation read from it: a metric's column and the scored queries.

Shared by :mod:`retrieval_eval.viz.evaluation` (strata, metric@k) and
:mod:`retrieval_eval.viz.delta` (per-query differences).
"""

from __future__ import annotations

import pandas as pd

__all__ = ["resolve_metric", "scored_queries"]


def resolve_metric(ev, metric: str, k: int | None = None) -> str:
    """A column name (``recall@10``) from a name with or without its cutoff.

    Parameters
    ----------
    ev : Evaluation
        An :func:`~retrieval_eval.evaluate` result.
    metric : str
        A column name (``recall@10``, checked) or a base name (``recall``).
    k : int, optional
        The cutoff of a base name; by default the evaluation's largest.

    Returns
    -------
    str
        The per-query column that holds the metric.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import resolve_metric
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)
    >>> resolve_metric(ev, "recall"), resolve_metric(ev, "ndcg", 5), resolve_metric(ev, "ndcg@1")
    ('recall@10', 'ndcg@5', 'ndcg@1')
    """
    if "@" in metric:
        if metric not in ev.per_query.columns:
            raise ValueError(
                f"no metric {metric!r}; available: {', '.join(c for c in ev.per_query.columns if '@' in c)}"
            )
        return metric
    return ev.metric(metric, k)


def scored_queries(ev) -> pd.DataFrame:
    """Per-query rows that enter the averages (positives present, not an expect_none query).

    Parameters
    ----------
    ev : Evaluation
        An :func:`~retrieval_eval.evaluate` result.

    Returns
    -------
    pandas.DataFrame
        The rows of ``ev.per_query`` that enter the means, in their order.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import scored_queries
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)
    >>> scored_queries(ev)["system"].value_counts().sort_index().to_dict()
    {'bm25': 45, 'dense': 45, 'rrf': 45}
    """
    pq = ev.per_query
    keep = ~pq["no_positives"].to_numpy(bool)
    if "negative" in pq.columns:
        keep &= ~pq["negative"].to_numpy(bool)
    return pq[keep]
