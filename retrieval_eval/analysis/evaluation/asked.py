"""``evaluate(measures=[...])``: the measures asked for, under the names asked for, with their counts.

One rule decides what a name asked for is. A name that is the engine's own column at some cutoff
(``recall@10``, ``map@100``, ``ndcg_linear@5`` at linear gain) is that column: the spec's metric,
averaged over the queries with positives. Any other name (``nDCG@10``, ``ir_measures.nDCG@10``,
``P_5``, ``ndcg_cut.10``, ``map``) is a catalogue measure, as :func:`retrieval_eval.parse_measure`
reads it, averaged the way trec_eval averages it (every judged query, those without relevant labels
scoring 0). Its column carries the name as typed (an ir_measures object: as ir_measures prints it);
a name that stands for several measures (``P.5,10``) gives each its catalogue name.

:func:`resolve` makes that decision once; :func:`name_columns` renames the catalogue's columns to
the names asked for; :func:`counts` states each summary column's denominator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...engine.measures.seed import parse_metric
from ...engine.metrics import metric_name

__all__ = ["Asked", "counts", "name_columns", "resolve"]


@dataclass
class Asked:
    """What ``measures=`` asked for: the columns in the order asked (``names``), the cutoffs the
    engine must add for spec names (``cutoffs``), the catalogue measures to compute
    (``measures``: the catalogue's Measure objects), and each catalogue column's canonical name (``catalogue``)."""

    names: list[str] = field(default_factory=list)
    cutoffs: list[int] = field(default_factory=list)
    measures: list = field(default_factory=list)
    catalogue: dict[str, str] = field(default_factory=dict)
    #: No ``k`` was given: the summary holds ``n`` and the measures asked for, nothing else.
    only: bool = False


def _spec_column(name: str, gain: str) -> tuple[str, int] | None:
    """``(column, cutoff)`` when ``name`` is the engine's own column name at some cutoff, else None."""
    try:
        base, at, g = parse_metric(name)
    except ValueError:
        return None
    if at is None or metric_name(base, at, g or gain) != name:
        return None
    return name, int(at)


def resolve(measures, gain: str, only: bool = False) -> Asked:
    """Read ``measures`` (a name, an ir_measures object, or a list of them) once, raising
    ValueError (the catalogue's message) for a name that is no measure."""
    from ...engine.measures import parse_measure

    if isinstance(measures, str) or not isinstance(measures, (list, tuple, set, frozenset)):
        measures = [measures]
    out = Asked(only=only)
    for item in measures:
        asked = item if isinstance(item, str) else str(item)
        spec = _spec_column(asked, gain)
        if spec is not None:
            out.names.append(spec[0])
            out.cutoffs.append(spec[1])
            continue
        found = parse_measure(item)
        out.measures.extend(found)
        named = [asked] if len(found) == 1 else [m.name for m in found]
        out.names.extend(named)
        out.catalogue.update(zip(named, (m.name for m in found)))
    out.names = list(dict.fromkeys(out.names))
    out.measures = list({m.name: m for m in out.measures}.values())
    return out


def name_columns(frame: pd.DataFrame, asked: Asked) -> pd.DataFrame:
    """``frame`` (per-query or summary) with each catalogue column under the name asked for; a
    catalogue column nobody asked for by its canonical name is dropped."""
    kept = set(asked.names)
    extra = {name: frame[canonical] for name, canonical in asked.catalogue.items() if name != canonical}
    frame = frame.assign(**extra) if extra else frame
    return frame.drop(columns=[m.name for m in asked.measures if m.name not in kept and m.name in frame.columns])


def counts(per_query: pd.DataFrame, summary: pd.DataFrame) -> pd.Series:
    """Each summary column's denominator: the number of queries with a value in the per-query
    frame (the most of any system), as an int64 Series named ``queries``."""
    names = [c for c in summary.columns if c != "n" and c in per_query.columns]
    if not names or per_query.empty:
        return pd.Series(np.zeros(len(names), dtype=np.int64), index=pd.Index(names, dtype=object), name="queries")
    per_system = per_query[["system", *names]].groupby("system", observed=True, sort=False).count()
    return per_system.max().astype(np.int64).rename("queries")
