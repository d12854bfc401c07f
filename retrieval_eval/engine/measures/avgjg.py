"""trec_eval's judgment-group averages: ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``
(``m_map_avgjg.c``, ``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``, ``form_res_rels_jg.c``), for every
query at once: :func:`evaluate_jg`.

A ``-R qrels_jg`` file is a qrels file whose iter field names a judgment group (one user's
judgments of the query). Each measure is computed per group, as ``map``, ``P`` and
``Rprec_mult`` are on qrels, then averaged over the query's groups (a group without a relevant
document counts 0). The ranking is trec_eval's (score descending, ties by doc id descending),
cut at ``max_ret``; a document is relevant in a group when its grade there is at least
``level`` (``-l``). ``Rprec_mult_avgjg`` at x takes the cutoff ``(long)(x R + 0.9)`` of each
group (the formula 10.0 keeps for ``Rprec_mult``), its precision 0 when that cutoff is 0.
Verified against trec_eval 10.0's test output ``out.test.qrels_jg`` and hand-computed cases.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from .declare import CUTOFFS, RPREC_MULTS, Family, Measure, make
from .declare import FAMILIES as DECLARED
from .prefs_rank import id_columns, ranked_judged, rankings

NAMES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
VERIFIED = "trec_eval 10.0's test outputs; hand-computed cases"
_NEEDS = " Needs judgment groups: evaluate_jg."
FAMILIES = (
    Family(
        "map_avgjg",
        "avgjg",
        None,
        verified=VERIFIED,
        definition="Average precision per judgment group, averaged over the groups." + _NEEDS,
    ),
    Family(
        "P_avgjg",
        "avgjg",
        "cutoff",
        CUTOFFS,
        verified=VERIFIED,
        definition="Precision at k per judgment group, averaged over the groups." + _NEEDS,
    ),
    Family(
        "Rprec_mult_avgjg",
        "avgjg",
        "level",
        RPREC_MULTS,
        verified=VERIFIED,
        definition="Precision at x R per judgment group (R its relevant count), averaged." + _NEEDS,
    ),
)
JG_COLUMNS = ("query_id", "jg", "doc_id", "relevance")


def compute(measure: Measure, a: Any, level: int) -> np.ndarray:
    """The catalogue's hook: qrels have no judgment groups, so an ``*_avgjg`` measure is refused."""
    raise ValueError(
        f"{measure.name} averages over judgment groups: it needs trec_eval's -R qrels_jg "
        "judgments, which plain qrels do not hold; use evaluate_jg(qrels_jg, run) "
        "(retrieval_eval.engine.measures.avgjg)"
    )


def check_jg(qrels_jg: Any, label: str = "qrels_jg") -> pd.DataFrame:
    """The judgment-group frame, checked: :data:`JG_COLUMNS`, string ids, integer grades, no
    document twice in one group of a query (trec_eval refuses it)."""
    from ...io.frames import check_columns
    from ...model import ID

    if not isinstance(qrels_jg, pd.DataFrame):
        raise ValueError(f"{label}: a DataFrame with columns {', '.join(JG_COLUMNS)} (read_qrels_jg reads one)")
    check_columns(qrels_jg, JG_COLUMNS, label)
    out = {}
    for c in JG_COLUMNS[:3]:
        if pd.api.types.infer_dtype(qrels_jg[c], skipna=False) != "string":
            raise ValueError(f"{label}: column {c!r} must hold strings (ids stay strings)")
        out[c] = pd.array(qrels_jg[c].to_numpy(dtype=object), dtype=ID)
    rel = pd.to_numeric(qrels_jg["relevance"], errors="coerce").to_numpy(dtype=np.float64)
    if not (np.isfinite(rel) & (rel == np.round(rel))).all():
        raise ValueError(f"{label}: relevance must be an integer on every row")
    frame = pd.DataFrame({**out, "relevance": rel.astype(np.int64)})
    twice = frame.duplicated(["query_id", "jg", "doc_id"]).to_numpy()
    if twice.any():
        row = frame[twice].iloc[0]
        raise ValueError(
            f"{label}: query {row['query_id']}: document {row['doc_id']} twice in judgment group "
            f"{row['jg']} (trec_eval refuses duplicate docs)"
        )
    return frame


def _group_table(
    q: pd.DataFrame, rk: pd.DataFrame, ranked: pd.DataFrame, level: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The (ranking, group) pairs with their relevant count, and the relevant retrieved rows
    (``g``, ``pos``) with their rank among the group's relevant retrieved (``k``, 1-based)."""
    rk = rk.assign(rid=np.arange(len(rk)))
    groups = q[["query_id", "jg"]].drop_duplicates().merge(rk, on="query_id")
    groups = groups.sort_values(["rid", "jg"], kind="stable").reset_index(drop=True)
    groups["g"] = np.arange(len(groups))
    rel = q[q["relevance"].to_numpy() >= level]
    n_rel = rel.groupby(["query_id", "jg"], observed=True).size().rename("R").reset_index()
    groups = groups.merge(n_rel, on=["query_id", "jg"], how="left").fillna({"R": 0})
    hits = ranked.merge(rel[["query_id", "jg", "doc_id"]], on=["query_id", "doc_id"])
    hits = hits.merge(groups[["system", "query_id", "jg", "g"]], on=["system", "query_id", "jg"])
    hits = hits.sort_values(["g", "pos"], kind="stable")
    hits["k"] = hits.groupby("g").cumcount() + 1
    return groups, hits


def _per_group(m: Measure, groups: pd.DataFrame, hits: pd.DataFrame) -> np.ndarray:
    """One measure's value per (ranking, group)."""
    n_g = len(groups)
    g, pos, k = (hits[c].to_numpy() for c in ("g", "pos", "k"))
    r = groups["R"].to_numpy(dtype=np.float64)
    if m.family == "map_avgjg":
        total = np.bincount(g, weights=k / (pos + 1.0), minlength=n_g)
        return np.divide(total, r, out=np.zeros(n_g), where=r > 0)
    if m.family == "P_avgjg":
        return np.bincount(g[pos < int(m.param)], minlength=n_g) / int(m.param)
    # Rprec_mult_avgjg: trec_eval's (long)(x R + 0.9); precision 0 at a cutoff of 0
    cuts = (float(m.param) * r + 0.9).astype(np.int64)
    found = np.bincount(g[pos < cuts[g]], minlength=n_g)
    return np.divide(found, cuts, out=np.zeros(n_g), where=cuts > 0)


def measures_of(measures: Any) -> list[Measure]:
    """The ``*_avgjg`` measures named: ``map_avgjg``, ``P_avgjg`` (its default cutoffs),
    ``P_avgjg.5,10`` or ``P_avgjg_5``, ``Rprec_mult_avgjg.0.2,0.4`` or ``Rprec_mult_avgjg_0.20``,
    or :class:`Measure` values (None: all three with their defaults)."""
    names = list(NAMES) if measures is None else [measures] if isinstance(measures, (str, Measure)) else measures
    out: dict[str, Measure] = {}
    for n in names:
        if isinstance(n, Measure) and n.family in NAMES:
            out.setdefault(n.name, n)
            continue
        m = re.fullmatch(r"(map_avgjg|P_avgjg|Rprec_mult_avgjg)(?:[._](.+))?", str(n).strip())
        if m is None or (m.group(1) == "map_avgjg" and m.group(2)):
            raise ValueError(f"evaluate_jg computes the *_avgjg measures only ({', '.join(NAMES)}), not {n!r}")
        family, params = m.groups()
        values = params.split(",") if params else DECLARED[family].defaults or (None,)
        for v in values:
            made = make(family, v)
            out.setdefault(made.name, made)
    return list(out.values())


def evaluate_jg(
    qrels_jg: pd.DataFrame,
    run: Any,
    measures: Any = None,
    level: int = 1,
    max_ret: int | None = None,
    complete: bool = False,
) -> pd.DataFrame:
    """Per-query values of trec_eval's judgment-group measures.

    Parameters
    ----------
    qrels_jg : pandas.DataFrame
        ``query_id``, ``jg``, ``doc_id``, ``relevance`` (:func:`retrieval_eval.io.prefs.read_qrels_jg`).
    run : run frame or anything :func:`retrieval_eval.io.convert.as_run` reads
    measures : str or list, optional
        Names of these families (``map_avgjg``, ``P_avgjg.5,10``, ``Rprec_mult_avgjg_0.20``);
        default trec_eval's nickname ``qrels_jg``: all three with their default parameters.
    level : int
        trec_eval's ``-l``: grades >= level are relevant.
    max_ret : int, optional
        trec_eval's ``-M``.
    complete : bool
        trec_eval's ``-c``: every query of the judgments, an unanswered one as empty.

    Returns
    -------
    pandas.DataFrame
        One row per (system, query_id) evaluated (queries in byte order), a float64 column per
        measure (``map_avgjg``, ``P_avgjg_5``, ``Rprec_mult_avgjg_0.20`` ...);
        ``attrs["measures"]`` the measures.

    Raises
    ------
    ValueError
        A malformed frame, another family's measure, a level below 1, a run repeating a document.
    """
    from ...io.convert import as_run

    if isinstance(level, bool) or int(level) != level or level < 1:
        raise ValueError(f"level must be an integer >= 1, got {level!r}")
    ms = measures_of(measures)
    q = check_jg(qrels_jg)
    r = as_run(run)
    systems = [str(x) for x in pd.unique(r["system"])] or ["run"]
    ranked = ranked_judged(q, r, max_ret, doc_desc=True)
    rk = rankings(q["query_id"].to_numpy(dtype=object), ranked, systems, complete)
    groups, hits = _group_table(q, rk, ranked, int(level))
    rid = groups["rid"].to_numpy()
    n_groups = np.bincount(rid, minlength=len(rk))
    frame = id_columns(rk)
    for m in ms:
        total = np.bincount(rid, weights=_per_group(m, groups, hits), minlength=len(rk))
        frame[m.name] = total / np.maximum(n_groups, 1)
    frame.attrs["measures"] = ms
    return frame
