"""Strata: how a query's stratum is found, how strata are ordered and scored on their own rows.

What :mod:`~retrieval_eval.analysis.evaluation` (in memory), :mod:`~retrieval_eval.analysis.streaming`
(block by block) and :mod:`~retrieval_eval.analysis.report` (the per-stratum table of the spec
report) share, so that none of them imports another for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...engine import metrics as engine
from ...engine.metrics import ID, UNSTRATIFIED
from .measurement import Measurement


def query_strata_from(queries) -> pd.Series:
    """``query_id -> stratum`` from a queries file (queries without one are left out)."""
    from ...io import as_queries
    from ...io.absent import queries_meaning

    q = queries_meaning(as_queries(queries))
    q = q[q["stratum"].notna()].drop_duplicates("query_id")
    return pd.Series(q["stratum"].to_numpy(dtype=object), index=q["query_id"].to_numpy(dtype=object))


def stratum_order(names, counts: Mapping[str, int]) -> list[str]:
    """Scored strata first, then unscored ones, each in Unicode code-point order.

    Code-point order is what Python's ``sorted`` gives and does not change with the machine's
    locale, so two implementations (and two machines) list strata the same way.
    """
    names = list(names)
    return sorted(n for n in names if counts.get(n, 0) > 0) + sorted(n for n in names if counts.get(n, 0) == 0)


def stratum_keys(judgments: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgments keyed by (stratum, query), and the map ``query_id -> composite``."""
    strata = judgments["stratum"].astype(ID).fillna(UNSTRATIFIED)
    sep = "\x1f"
    composite = (strata + sep + judgments["query_id"].astype(ID)).astype(ID)
    j2 = judgments.assign(query_id=composite)
    mapping = pd.DataFrame({"query_id": judgments["query_id"].astype(ID), "composite": composite}).drop_duplicates()
    return j2, mapping


def stratum_run(run: pd.DataFrame, mapping: pd.DataFrame) -> pd.DataFrame:
    """The run keyed by (stratum, query): a run query's ranking is matched once per stratum
    its labels fall in."""
    r2 = run.merge(mapping, on="query_id", how="inner")
    return r2.assign(query_id=r2["composite"]).drop(columns="composite")


def stratum_table(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    ks,
    threshold,
    gain,
    per_query: pd.DataFrame,
    by_stratum: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Each stratum scored on its own rows, one row per (system, stratum) with ``n``.

    When every query carries one stratum (the usual case) this is the per-query frame grouped
    by stratum. A query labelled in several strata is scored once per stratum, on that
    stratum's labels only, by running the engine on (stratum, query) pairs (``by_stratum``:
    that engine's frame, when the caller already ran it, as streamed evaluation does).
    """
    if by_stratum is not None:
        pq = by_stratum
    elif engine.strata_span_queries(judgments):
        j2, mapping = stratum_keys(judgments)
        pq = engine.compute(j2, stratum_run(run, mapping), k=ks, threshold=threshold, gain=gain)
    else:
        pq = per_query
    out = engine.aggregate(pq, by=("system", "stratum"))
    order: list[Any] = []
    for system in pd.unique(out.index.get_level_values("system")):
        sub = out.xs(system, level="system")
        counts = dict(zip(sub.index, sub["n"]))
        order.extend((system, s) for s in stratum_order(sub.index, counts))
    return out.loc[order]


def measurements(row: pd.Series, names) -> dict[str, Measurement]:
    """The Measurements of ``names`` in ``row``; a name the row does not hold (a catalogue measure
    in a per-stratum row: strata carry the spec's metrics) or holds as NaN has none."""
    return {
        name: Measurement(value=float(row[name]), n=1, deterministic=True)
        for name in names
        if name in row.index and pd.notna(row[name])
    }


@dataclass
class StratumScore:
    """One stratum's scores: ``n`` queries scored and their metrics."""

    n: int
    metrics: dict[str, Measurement] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "metrics": {k: m.to_dict() for k, m in self.metrics.items()}}


class StrataScores(dict):
    """``{stratum: StratumScore}`` in the table's order (scored strata first, each group in
    code-point order), with ``appearance``: the strata in the order they first appear in the
    judgments, which :func:`worst_stratum` uses to break a tie."""

    def __init__(self, items=(), appearance=()):
        super().__init__(items)
        self.appearance = list(appearance)


def stratum_scores(ev, system: str, names) -> StrataScores:
    """The per-stratum table of one system as the seed's ``{stratum: StratumScore}`` (empty
    when nothing was judged: there is no stratum to score)."""
    systems = ev.per_stratum.index.get_level_values("system")
    if system not in set(systems):
        return StrataScores((), appearance=ev.strata)
    table = ev.per_stratum.xs(system, level="system")
    return StrataScores(
        (
            (str(name), StratumScore(n=int(row["n"]), metrics=measurements(row, names) if row["n"] else {}))
            for name, row in table.iterrows()
        ),
        appearance=ev.strata,
    )
