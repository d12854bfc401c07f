"""The measure catalogue: trec_eval's measures (and their ir_measures / ranx names), computed
for every system and query at once from one scan of the run.

* :func:`parse_measure` / :func:`measures` (the registry, :mod:`.registry`);
* :func:`compute`: per-query values of the requested measures, as a DataFrame;
* :func:`summarize`: their summary with the aggregate trec_eval uses (mean; geometric mean for
  ``gm_*``; sum for the ``num_*`` counts).

Each family is one small module (``counts``, ``ranks``, ``sets``, ``ap``, ``bpref``, ``unjudged``,
``ndcg``) computing per-ranking values from the arrays of :mod:`.scan`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
import pandas as pd

from .registry import Measure, UnknownMeasure, make, measures, parse_measure, parse_measures
from .scan import Arrays, scan

__all__ = [
    "TREC_VERSIONS",
    "Measure",
    "UnknownMeasure",
    "compute",
    "make",
    "measures",
    "parse_measure",
    "parse_measures",
    "scan",
    "summarize",
    "values",
]

from ...model import ID

#: The trec_eval versions whose definitions :func:`compute` follows (``compat=``), newest first.
TREC_VERSIONS = ("10.0", "9.0.8")


def values(measure: Measure, arrays: Arrays, level: int = 1) -> np.ndarray:
    """One measure's value per ranking of ``arrays`` (``measure.rel`` overrides ``level``)."""
    module = importlib.import_module(f".{measure.spec.module}", __name__)
    return module.compute(measure, arrays, measure.rel if measure.rel is not None else level)


def compute(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    names: str | Measure | Iterable[str | Measure],
    level: int = 1,
    max_ret: int | None = None,
    complete: bool = False,
    order: str = "trec",
    num_docs: int = 0,
    compat: str = "10.0",
    systems: Iterable[str] = (),
    judged_only: bool = False,
) -> pd.DataFrame:
    """Per-query values of the measures ``names`` for every system of ``run``.

    Parameters
    ----------
    judgments, run : pandas.DataFrame
        Frames of the data model.
    names : str or list
        A name or a list of names in any spelling :func:`parse_measure` reads.
    level : int
        trec_eval's ``-l``: grades >= level are relevant.
    max_ret : int, optional
        trec_eval's ``-M``: read the top ``max_ret`` documents of each ranking.
    complete : bool
        trec_eval's ``-c``: every labelled query is evaluated, an unanswered one as empty.
    order : {"trec", "rank"}
        Score then doc id descending (trec_eval's), or the run's own rank order.
    num_docs : int
        trec_eval's ``-N``, the number of documents in the collection: only ``utility``'s
        fourth coefficient reads it (the non-relevant documents not retrieved). 0 unless
        given, as in trec_eval; the files do not hold it.
    compat : {"10.0", "9.0.8"}
        Which trec_eval's definitions to follow where the two differ (docs/trec_eval-versions.md):
        10.0 (the current NIST release, the default) rounds ``iprec_at_recall``'s and
        ``11pt_avg``'s recall cutoff to the nearest integer (``lround(x R)``); 9.0.8 (what
        pytrec_eval embeds) takes ``floor(x R + 0.9)``.
    systems : list of str
        Systems evaluated even if the run has no row of theirs: with ``complete`` each then
        scores every labelled query as an empty ranking (0, the rule for an unanswered query).
    judged_only : bool
        trec_eval's ``-J``: every retrieved document without a judgment (outside the judgments,
        or judged with a negative grade) leaves its ranking before any measure reads it, after
        ``max_ret`` (trec_eval's ``form_res_rels``); the documents below move up.

    Returns
    -------
    pandas.DataFrame
        One row per evaluated (system, query_id), systems in first-appearance order, queries
        in the order the judgments list them, with one float column per measure named
        canonically (``P_10``, ``ndcg_cut_10``; ``num_q`` is 1 a query, as pytrec_eval and
        ir_measures give it: its summary, the number of queries, is their sum).
        ``attrs["measures"]`` holds the parsed :class:`Measure` list, and ``attrs["repeats"]``
        the ``(system, query_id)`` of each evaluated ranking that repeats a doc id (kept once,
        at its first place; trec_eval refuses such a run).

    Raises
    ------
    ValueError
        An unknown measure name, a level below 1, ``num_docs`` not an integer >= 0, or an
        unknown ``compat``.
    """
    _check(level, num_docs, compat)
    ms = parse_measures(names)
    need = [m.depth for m in ms if m.family != "num_q"]  # num_q reads no ranking
    # a measure without a cutoff reads all; so does -J (the top k judged may lie below rank k)
    depth = None if not need or None in need or judged_only else max(cast("list[int]", need))
    a = scan(judgments, run, max_ret=max_ret, complete=complete, order=order, depth=depth, add_systems=systems)
    if judged_only:
        from .variants import judged_arrays

        a = judged_arrays(a)
    a.num_docs = int(num_docs)
    a.trec_version = compat
    return _frame(a, ms, {m.name: values(m, a, int(level)) for m in ms})


def _check(level: int, num_docs: int, compat: str) -> None:
    """:func:`compute`'s arguments that are not the data, checked (ValueError)."""
    if compat not in TREC_VERSIONS:
        raise ValueError(f"compat must be one of {', '.join(TREC_VERSIONS)}, got {compat!r}")
    if isinstance(level, bool) or int(level) != level or level < 1:
        raise ValueError(f"level must be an integer >= 1, got {level!r}")
    if isinstance(num_docs, bool) or not isinstance(num_docs, (int, np.integer)) or num_docs < 0:
        raise ValueError(f"num_docs (trec_eval's -N) must be an integer >= 0, got {num_docs!r}")


def _frame(a: Arrays, ms: list[Measure], cols: dict[str, np.ndarray]) -> pd.DataFrame:
    """:func:`compute`'s frame: a row per ranking of ``a``, a column per measure, its attrs."""
    frame = pd.DataFrame(
        {
            "system": pd.array(a.systems.take(a.r_system).to_numpy(), dtype=ID),
            "query_id": pd.array(a.queries.take(a.r_query).to_numpy(), dtype=ID),
            **{m.name: _column(m, cols[m.name]) for m in ms if m.name in cols},
        }
    )
    frame.attrs["measures"] = ms
    dup = np.flatnonzero(a.duplicates)
    frame.attrs["repeats"] = list(
        zip(a.systems.take(a.r_system[dup]).tolist(), a.queries.take(a.r_query[dup]).tolist())
    )
    return frame


def _column(m: Measure, values_: np.ndarray) -> Any:
    """A measure's per-query column: float64, or a string column for ``relstring``."""
    if m.spec.kind == "str":
        return pd.array(values_, dtype=ID)
    return np.asarray(values_, dtype=np.float64)


def summarize(per_query: pd.DataFrame, measures_: Iterable[Measure] | None = None) -> pd.DataFrame:
    """One row per system: each measure summarized the way trec_eval does.

    Mean over the evaluated queries; ``gm_*`` (per-query logs) exp of the mean, i.e. the
    geometric mean; ``num_ret`` / ``num_rel`` / ``num_rel_ret`` / ``num_nonrel_judged_ret``
    the sum; ``num_q`` the number of queries. Every query evaluated counts, those without
    relevant labels included (they score 0), as in trec_eval. A query whose value is NaN
    (``Rndcg`` with a gain map that gives its relevant grades no positive gain: trec_eval's
    0 / 0) makes the mean NaN, as trec_eval's sum over the queries does.
    """
    ms = measures_ if measures_ is not None else per_query.attrs.get("measures", [])
    groups = per_query.groupby("system", sort=False, observed=True)
    size = groups.size()
    out = {}
    for m in ms:
        agg = m.spec.aggregate
        if agg == "none":  # relstring: a per-query string, no summary (trec_eval prints none)
            continue
        if agg == "count":
            out[m.name] = size.astype(float)
        elif agg == "sum":
            out[m.name] = groups[m.name].sum()
        elif agg == "gmean":
            out[m.name] = np.exp(groups[m.name].mean())
        else:
            out[m.name] = groups[m.name].mean().mask(groups[m.name].count() < size)
    table = pd.DataFrame(out)
    table.index = pd.Index(table.index, dtype=ID, name="system")
    return table


def attach(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    per_query: pd.DataFrame,
    summary: pd.DataFrame,
    names: str | Measure | Iterable[str | Measure],
    level: int,
    compat: str = "10.0",
) -> list[Measure]:
    """Add catalogue measures to an evaluation's per-query frame and summary, in place.

    The hook behind ``evaluate(..., measures=[...])``. Rankings keep the run's own order (as
    every other number of ``evaluate``; a TREC run read with ``order="score"`` is in
    trec_eval's order). Every judged query of every system gets a value, a query the system
    did not answer as an empty ranking (trec_eval's ``-c``), a system whose run has no row at
    all included: an unanswered query scores 0 (``num_q`` 1), never NaN. The summary column of each measure
    is trec_eval's aggregate over those queries (mean; geometric mean for ``gm_*``; sum for
    the counts), queries without relevant labels included, as trec_eval includes them;
    ``relstring`` (a per-query string) has none.
    Returns the measures added.
    """
    extra = compute(
        judgments,
        run,
        names,
        level=level,
        complete=True,
        order="rank",
        compat=compat,
        systems=per_query["system"].drop_duplicates().astype(str).tolist(),
    )
    ms = extra.attrs["measures"]
    cols = [m.name for m in ms]
    clash = [c for c in cols if c in per_query.columns]
    if clash:
        raise ValueError(f"measure column(s) {clash} already in the per-query frame")
    keyed = extra.set_index(["system", "query_id"])[cols]
    at = pd.MultiIndex.from_arrays([per_query["system"].astype(object), per_query["query_id"].astype(object)])
    values_ = keyed.reindex(at)
    for c in cols:
        per_query[c] = values_[c] if values_[c].dtype == ID else values_[c].to_numpy(dtype=np.float64)
    table = summarize(extra, ms)
    for m in ms:
        if m.name not in table.columns:
            continue  # no summary (relstring)
        summary[m.name] = table[m.name].reindex(summary.index).to_numpy(dtype=np.float64)
    return ms
