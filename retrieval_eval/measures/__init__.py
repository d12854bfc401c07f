"""The measure catalogue: trec_eval's measures (and their ir_measures / ranx names), computed
for every system and query at once from one scan of the run.

* :func:`parse_measure` / :func:`measures` (the registry, :mod:`.registry`);
* :func:`compute`: per-query values of the requested measures, as a DataFrame;
* :func:`summarize`: their summary with the aggregate trec_eval uses (mean; geometric mean for
  ``gm_*``; sum for the ``num_*`` counts).

Each family is one small module (``counts``, ``ranks``, ``sets``, ``ap``, ``bpref``,
``ndcg``) computing per-ranking values from the arrays of :mod:`.scan`.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

from .registry import FAMILIES, Measure, UnknownMeasure, make, measures, parse_measure, parse_measures
from .scan import Arrays, scan

__all__ = ["Measure", "UnknownMeasure", "compute", "make", "measures", "parse_measure",
           "parse_measures", "scan", "summarize", "values"]

ID = pd.StringDtype()


def values(measure: Measure, arrays: Arrays, level: int = 1) -> np.ndarray:
    """One measure's value per ranking of ``arrays`` (``measure.rel`` overrides ``level``)."""
    module = importlib.import_module(f".{measure.spec.module}", __name__)
    return module.compute(measure, arrays, measure.rel if measure.rel is not None else level)


def compute(judgments: pd.DataFrame, run: pd.DataFrame, names, level: int = 1,
            max_ret: int | None = None, complete: bool = False,
            order: str = "trec") -> pd.DataFrame:
    """Per-query values of the measures ``names`` for every system of ``run``.

    ``judgments`` and ``run`` are frames of the data model. ``names``: a name or a list of
    names in any spelling :func:`parse_measure` reads. ``level`` is trec_eval's ``-l``
    (grades >= level are relevant), ``max_ret`` its ``-M``, ``complete`` its ``-c``.

    Returns one row per evaluated (system, query_id), systems in first-appearance order,
    queries in the order the judgments list them, with one float column per measure named
    canonically (``P_10``, ``ndcg_cut_10``; ``num_q`` has no per-query value and is left
    out). ``attrs["measures"]`` holds the parsed :class:`Measure` list.
    """
    if isinstance(level, bool) or int(level) != level or level < 1:
        raise ValueError(f"level must be an integer >= 1, got {level!r}")
    ms = parse_measures(names)
    a = scan(judgments, run, max_ret=max_ret, complete=complete, order=order)
    cols = {m.name: values(m, a, int(level)) for m in ms if m.family != "num_q"}
    frame = pd.DataFrame({
        "system": pd.array(a.systems.take(a.r_system).to_numpy(), dtype=ID),
        "query_id": pd.array(a.queries.take(a.r_query).to_numpy(), dtype=ID),
        **{name: np.asarray(v, dtype=np.float64) for name, v in cols.items()},
    })
    frame.attrs["measures"] = ms
    return frame


def summarize(per_query: pd.DataFrame, measures_=None) -> pd.DataFrame:
    """One row per system: each measure summarized the way trec_eval does.

    Mean over the evaluated queries; ``gm_*`` (per-query logs) exp of the mean, i.e. the
    geometric mean; ``num_ret`` / ``num_rel`` / ``num_rel_ret`` / ``num_nonrel_judged_ret``
    the sum; ``num_q`` the number of queries. Every query evaluated counts, those without
    relevant labels included (they score 0), as in trec_eval.
    """
    ms = measures_ if measures_ is not None else per_query.attrs.get("measures", [])
    groups = per_query.groupby("system", sort=False, observed=True)
    out = {}
    for m in ms:
        agg = m.spec.aggregate
        if agg == "count":
            out[m.name] = groups.size().astype(float)
        elif agg == "sum":
            out[m.name] = groups[m.name].sum()
        elif agg == "gmean":
            out[m.name] = np.exp(groups[m.name].mean())
        else:
            out[m.name] = groups[m.name].mean()
    table = pd.DataFrame(out)
    table.index = pd.Index(table.index, dtype=ID, name="system")
    return table
