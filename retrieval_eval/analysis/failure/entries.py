"""What every failure-analysis view reads: one metric per (system, query) from the engine, the
deduplicated top of each ranking with its labels, and the checks that turn a wrong query,
system or measure into one clear error.

Nothing here computes a metric: the seed metrics (``ndcg@10``, ``recall@5``) come from
:func:`retrieval_eval.engine.metrics.compute`, trec_eval's catalogue (``P_10``, ``ndcg_cut_10``)
from :func:`retrieval_eval.engine.measures.compute`, the ranking order and the first-occurrence
rule from :func:`retrieval_eval.engine.scan.dedupe_run`, the label that counts (the last of a
repeated pair) from :func:`retrieval_eval.engine.labels.relevance_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...engine import measures as catalogue
from ...engine.labels import relevance_table
from ...engine.measures.seed import parse_metric
from ...engine.metrics import GAINS, check_ks, compute, metric_name
from ...engine.scan import dedupe_run
from ...model import ID, judgment_keys

__all__ = ["Metric", "check_query", "one_system", "per_query", "ranked", "resolve_metric", "systems_of", "texts"]


@dataclass(frozen=True)
class Metric:
    """A metric resolved once: its column ``name``, the engine that computes it (``"seed"`` or
    ``"catalogue"``), and for a seed metric its base name, cutoff and gain."""

    name: str
    engine: str
    base: str | None = None
    k: int | None = None
    gain: str = "exponential"


def resolve_metric(measure: str, k: int = 10, gain: str = "exponential") -> Metric:
    """The metric a name stands for: a seed metric (``ndcg@10``, ``ndcg``: at ``k``,
    ``ndcg_linear@5``) or one measure of trec_eval's catalogue (``P_10``, ``ndcg_cut_10``).

    Raises
    ------
    ValueError
        One line naming the measure and what is accepted.
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    check_ks(k)
    try:
        base, kk, own_gain = parse_metric(str(measure))
    except ValueError:
        base = None
    if base is not None:
        kk = int(k) if kk is None else kk
        g = own_gain or gain
        return Metric(metric_name(base, kk, g), "seed", base, kk, g)
    try:
        found = catalogue.parse_measures(str(measure))
    except ValueError:
        found = []
    if len(found) != 1 or found[0].family == "num_q":
        raise ValueError(
            f"unknown measure {measure!r}: give one seed metric (ndcg@10, recall@5, ...) or "
            "one measure of trec_eval's catalogue (P_10, ndcg_cut_10; rev.measures() lists them)"
        )
    return Metric(found[0].name, "catalogue")


def per_query(judgments: pd.DataFrame, run: pd.DataFrame, metric: Metric, threshold: int = 1) -> pd.DataFrame:
    """One row per (system, judged query) with ``value`` and ``scored``.

    A seed metric leaves a query without positives unscored (``scored`` False, ``value`` NaN),
    as its averages do: there was nothing to find. A catalogue measure scores every judged query
    (an unanswered one as an empty ranking), as trec_eval's ``-c`` does.
    """
    if metric.engine == "seed":
        assert metric.k is not None  # a seed metric names its cutoff
        frame = compute(judgments, run, k=(metric.k,), threshold=threshold, gain=metric.gain)
        scored = ~frame["no_positives"].to_numpy()
        value = np.where(scored, frame[metric.name].to_numpy(dtype=np.float64), np.nan)
    else:
        frame = catalogue.compute(judgments, run, [metric.name], level=threshold, complete=True, order="rank")
        scored = np.ones(len(frame), dtype=bool)
        value = frame[metric.name].to_numpy(dtype=np.float64)
    return pd.DataFrame(
        {
            "system": pd.array(frame["system"].to_numpy(dtype=object), dtype=ID),
            "query_id": pd.array(frame["query_id"].to_numpy(dtype=object), dtype=ID),
            "value": value,
            "scored": scored,
        }
    )


def ranked(judgments: pd.DataFrame, run: pd.DataFrame, depth: int | None = None) -> pd.DataFrame:
    """The deduplicated rankings (the engine's order, the first occurrence of a key kept), cut
    at ``depth``: ``system``, ``query_id``, ``rank``, ``key``, ``score``, ``grade`` (float, NaN
    when unjudged) and ``judged``."""
    top = dedupe_run(run, depth)
    labels = relevance_table(judgments)
    out = pd.DataFrame(
        {
            "system": pd.array(top["system"].to_numpy(dtype=object), dtype=ID),
            "query_id": pd.array(top["query_id"].to_numpy(dtype=object), dtype=ID),
            "rank": top["rank"].to_numpy(dtype=np.int64),
            "key": pd.array(top["doc_id"].to_numpy(dtype=object), dtype=ID),
            "score": top["score"].to_numpy(dtype=np.float64),
        }
    )
    grade = out.merge(labels.rename(columns={"relevance": "grade"}), how="left", on=["query_id", "key"], sort=False)[
        "grade"
    ]
    out["grade"] = grade.to_numpy(dtype=np.float64, na_value=np.nan)
    out["judged"] = ~np.isnan(out["grade"].to_numpy())
    return out


def systems_of(run: pd.DataFrame) -> list[str]:
    """The run's systems, in first-appearance order."""
    return [str(s) for s in pd.unique(run["system"])]


def one_system(run: pd.DataFrame, system: str | None, label: str = "run") -> str:
    """The system to look at: ``system`` (checked), or the run's only one.

    Raises
    ------
    ValueError
        An unknown system, or none given for a run that holds several (the message lists them).
    """
    names = systems_of(run)
    if system is None:
        if len(names) == 1:
            return names[0]
        raise ValueError(
            f"the {label} holds {len(names)} systems ({', '.join(names) or 'none'}): pass system= to choose one"
        )
    if str(system) not in names:
        raise ValueError(f"unknown system {system!r}: the {label} has {', '.join(names) or 'none'}")
    return str(system)


def check_query(query_id: str, judgments: pd.DataFrame, run: pd.DataFrame) -> str:
    """``query_id`` as a string, when the judgments or the run know it.

    Raises
    ------
    ValueError
        A query neither the judgments nor the run has.
    """
    qid = str(query_id)
    if not (judgments["query_id"] == qid).any() and not (run["query_id"] == qid).any():
        raise ValueError(f"unknown query {qid!r}: neither the judgments nor the run has it")
    return qid


def texts(judgments: pd.DataFrame, corpus: pd.DataFrame | None = None) -> pd.Series:
    """Each key's passage text (index: key): the corpus's text by chunk id, then by document
    uri, then the judgments' ``chunk_text``; keys with none are absent."""
    parts = []
    if corpus is not None and len(corpus):
        body = corpus["text"].astype(ID)
        parts.append(pd.Series(body.to_numpy(), index=pd.Index(corpus["chunk_id"].astype(ID))))
        parts.append(pd.Series(body.to_numpy(), index=pd.Index(corpus["doc_uri"].astype(ID))))
    keys = judgment_keys(judgments)
    parts.append(pd.Series(judgments["chunk_text"].astype(ID).to_numpy(), index=pd.Index(keys)))
    found = pd.concat(parts) if parts else pd.Series([], dtype=ID)
    found = found[found.notna()]
    return found[~found.index.duplicated(keep="first")].astype(ID)
