"""trec_eval's preference measures, the 14 ``prefs_*`` (``m_prefs_*.c``, ``form_prefs_counts.c``),
computed for every query at once: :func:`evaluate_prefs`.

Preferences (``-R prefs``; a qrels file read as preferences with ``-R qrels_prefs``) are grouped
per query into judgment groups (JG: one user's consistent preferences) of judgment sub-groups
(JSG): within a JSG every document is preferred to those with a lower ``rel_level``. A JG with
one JSG is complete (trec_eval's equivalence classes: a document listed twice counts twice);
a JG with several is a partial order, closed transitively (a cycle is refused, where trec_eval
aborts). Every preference A > B of a JG falls in one of trec_eval's areas, from the run's ranking
of the query's judged documents (score descending, ties by doc id ascending, which is the
prefs code's order, not the qrels code's; unretrieved judged documents follow, by doc id):

* both retrieved: fulfilled when A ranks above B (``_ret``);
* one retrieved: fulfilled when it is A (``_imp``, "implied");
* neither retrieved: possible, never fulfilled.

``prefs_num_prefs_poss`` / ``_ful`` / ``_ful_ret`` count them (summed over queries in the summary);
``prefs_simp*`` divide the counts of all JGs; ``prefs_avgjg*`` average the JGs' ratios (a JG
with no preference counts 0); ``prefs_pair*`` average over document pairs the share of the JGs'
preferences on the pair that the ranking fulfils; ``prefs_avgjg_Rnonrel*`` set each JG's number
of non-relevant documents (``rel_level`` 0) to its number of relevant ones (above 0) first,
with trec_eval's arithmetic to the letter (:mod:`.prefs_rnonrel`). A value trec_eval leaves at 0
(no preference, a 0 / 0) is 0 here too. Verified against trec_eval 10.0's test outputs
(``out.test.prefs``, ``out.test.qrels_prefs``) and hand-computed cases.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .declare import Family, Measure, make
from .prefs_rank import byte_rank, id_columns, ranked_judged, rankings
from .prefs_rnonrel import avg_over_groups, rnonrel

NAMES = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
#: trec_eval's nickname ``prefs`` (its ``prefs_off_name``); ``all_prefs`` is :data:`NAMES`.
OFFICIAL = NAMES[:6]
VERIFIED = "trec_eval 10.0's test outputs; hand-computed cases"
_WHAT = {
    "prefs_num_prefs_poss": "Number of preferences possible, retrieved or not (summed over queries).",
    "prefs_num_prefs_ful": "Number of preferences fulfilled, implied ones included (summed over queries).",
    "prefs_num_prefs_ful_ret": "Number of preferences fulfilled among retrieved documents (summed).",
    "prefs_simp": "Preferences fulfilled / possible (a pair neither retrieved counts as failed).",
    "prefs_pair": "Mean over document pairs of the share of their preferences fulfilled.",
    "prefs_avgjg": "Preferences fulfilled / possible per judgment group, averaged over groups.",
    "prefs_avgjg_Rnonrel": "prefs_avgjg with each group's non-relevant documents set to R.",
    "prefs_simp_ret": "Preferences fulfilled / possible, both documents retrieved.",
    "prefs_pair_ret": "prefs_pair over pairs with both documents retrieved.",
    "prefs_avgjg_ret": "prefs_avgjg over preferences with both documents retrieved.",
    "prefs_avgjg_Rnonrel_ret": "prefs_avgjg_Rnonrel over retrieved documents (trec_eval's arithmetic).",
    "prefs_simp_imp": "Preferences fulfilled / possible, at least one document retrieved.",
    "prefs_pair_imp": "prefs_pair over pairs with at least one document retrieved.",
    "prefs_avgjg_imp": "prefs_avgjg over preferences with at least one document retrieved.",
}
FAMILIES = tuple(
    Family(
        n,
        "prefs",
        None,
        aggregate="sum" if "_num_" in n else "mean",
        kind="int" if "_num_" in n else "float",
        definition=_WHAT[n] + " Needs preference judgments: evaluate_prefs.",
        verified=VERIFIED,
        reads_rel=False,
    )
    for n in NAMES
)
PREFS_COLUMNS = ("query_id", "jg", "jsg", "doc_id", "rel_level")
#: The most preference pairs enumerated at once (a few hundred MB of pair tables at most):
#: larger inputs are evaluated in blocks of whole rankings (:func:`blocks`).
PAIR_BLOCK = 4_000_000


def compute(measure: Measure, a: Any, level: int) -> np.ndarray:
    """The catalogue's hook: qrels hold no preferences, so a ``prefs_*`` measure is refused."""
    raise ValueError(
        f"{measure.name} is a preference measure: it needs preference judgments "
        "(trec_eval's -R prefs or -R qrels_prefs), which qrels do not hold; use "
        "evaluate_prefs(prefs, run) (retrieval_eval.engine.measures.prefs)"
    )


def check_prefs(prefs: Any, label: str = "prefs") -> pd.DataFrame:
    """The preferences frame, checked: the columns of :data:`PREFS_COLUMNS`, string ids, finite
    levels, no document with two levels in one sub-group (trec_eval refuses it)."""
    from ...io.frames import check_columns
    from ...model import ID

    if not isinstance(prefs, pd.DataFrame):
        raise ValueError(f"{label}: a DataFrame with columns {', '.join(PREFS_COLUMNS)} (read_prefs reads one)")
    check_columns(prefs, PREFS_COLUMNS, label)
    out = {}
    for c in PREFS_COLUMNS[:4]:
        col = prefs[c]
        if pd.api.types.infer_dtype(col, skipna=False) != "string":
            raise ValueError(f"{label}: column {c!r} must hold strings (ids stay strings)")
        out[c] = pd.array(col.to_numpy(dtype=object), dtype=ID)
    level = pd.to_numeric(prefs["rel_level"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.isfinite(level).all():
        raise ValueError(f"{label}: rel_level must be a finite number on every row")
    frame = pd.DataFrame({**out, "rel_level": level})
    keys = ["query_id", "jg", "jsg", "doc_id"]
    two = frame.drop_duplicates(keys + ["rel_level"]).duplicated(keys, keep=False).to_numpy()
    if two.any():
        row = frame.drop_duplicates(keys + ["rel_level"])[two].iloc[0]
        raise ValueError(
            f"{label}: query {row['query_id']}: document {row['doc_id']} has two rel_levels in "
            f"sub-group {row['jsg']} of judgment group {row['jg']}"
        )
    return frame


def _judged_docids(p: pd.DataFrame, ranked: pd.DataFrame, rk: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Every judged document of each ranking with its docid rank (``form_prefs_and_ranks``):
    retrieved ones 0 .. njr - 1 in ranking order, then the others by doc id; and njr per ranking."""
    rk = rk.assign(rid=np.arange(len(rk)))
    docs = p[["query_id", "doc_id"]].drop_duplicates().merge(rk, on="query_id")
    docs = docs.merge(ranked, on=["system", "query_id", "doc_id"], how="left")
    ret = docs["pos"].notna().to_numpy()
    pos = docs["pos"].fillna(0).to_numpy(dtype=np.int64)
    doc_order = byte_rank(docs["doc_id"].to_numpy(dtype=object))
    rid = docs["rid"].to_numpy(dtype=np.int64)
    perm = np.lexsort((np.where(ret, 0, doc_order), pos, ~ret, rid))
    rid_sorted = rid[perm]
    starts = np.searchsorted(rid_sorted, np.arange(len(rk)))
    docid = np.empty(len(docs), dtype=np.int64)
    docid[perm] = np.arange(len(docs)) - starts[rid_sorted]
    njr = np.bincount(rid[ret], minlength=len(rk))
    return docs[["rid", "query_id", "doc_id"]].assign(docid=docid), njr


def _rows(p: pd.DataFrame, judged: pd.DataFrame, njr: np.ndarray) -> pd.DataFrame:
    """One row per (ranking, preference line): ``g`` (judgment group of the ranking), ``s``
    (its sub-group), ``docid``, ``level``, ``ret``, ``pa`` (the group has several sub-groups),
    sorted by g, s, level descending, docid (``comp_prefs_and_ranks_jg_rel_level``)."""
    rows = p.merge(judged, on=["query_id", "doc_id"])
    rid = rows["rid"].to_numpy(dtype=np.int64)
    g = pd.factorize(pd.MultiIndex.from_arrays([rid, rows["jg"].to_numpy(dtype=object)]))[0]
    s = pd.factorize(pd.MultiIndex.from_arrays([g, rows["jsg"].to_numpy(dtype=object)]))[0]
    # sub-groups ordered as trec_eval sorts them (byte order of the names) within a group
    s_rank = byte_rank(rows["jsg"].to_numpy(dtype=object))
    level = rows["rel_level"].to_numpy(dtype=np.float64)
    docid = rows["docid"].to_numpy(dtype=np.int64)
    perm = np.lexsort((docid, -level, s_rank, g))
    out = pd.DataFrame(
        {
            "rid": rid[perm],
            "g": g[perm],
            "s": s[perm],
            "docid": docid[perm],
            "level": level[perm],
            "doc_id": rows["doc_id"].to_numpy(dtype=object)[perm],
        }
    )
    out["ret"] = out["docid"].to_numpy() < njr[out["rid"].to_numpy()]
    n_sub = pd.Series(out["s"].to_numpy()).groupby(out["g"].to_numpy()).nunique()
    out["pa"] = n_sub.to_numpy()[out["g"].to_numpy()] > 1
    return out


def level_pairs(group: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, j) of rows sorted by group then level descending with level[i] > level[j] in
    the same group: row i is preferred to row j. No per-group loop (``np.repeat`` offsets)."""
    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    new_block = np.r_[True, (group[1:] != group[:-1]) | (level[1:] != level[:-1])]
    new_group = np.r_[True, group[1:] != group[:-1]]
    block_id = np.cumsum(new_block) - 1
    block_end = np.r_[np.flatnonzero(new_block)[1:], n][block_id]
    group_end = np.r_[np.flatnonzero(new_group)[1:], n][np.cumsum(new_group) - 1]
    counts = group_end - block_end
    left = np.repeat(np.arange(n), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    right = np.repeat(block_end, counts) + (np.arange(len(left)) - first)
    return left, right


def _closure(g: np.ndarray, a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    """The transitive closure of the edges (g, a, b) of each partial-order group (repeated
    squaring by joins: a few passes, no per-group loop)."""
    edges = pd.DataFrame({"g": g, "a": a, "b": b}).drop_duplicates()
    while True:
        step = edges.merge(edges.rename(columns={"a": "b", "b": "c"}), on=["g", "b"])[["g", "a", "c"]]
        grown = pd.concat([edges, step.rename(columns={"c": "b"})]).drop_duplicates(ignore_index=True)
        if len(grown) == len(edges):
            return edges.reset_index(drop=True)
        edges = grown


def _doc_named(rows: pd.DataFrame, g: int, docid: int) -> str:
    """The doc id of docid ``docid`` in group ``g`` (for a message)."""
    at = (rows["g"].to_numpy() == g) & (rows["docid"].to_numpy() == docid)
    return str(rows["doc_id"].to_numpy()[at][0])


def pair_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Every preference of every judgment group: ``g``, ``a`` (preferred docid), ``b``, with
    multiplicity in a complete group, the closure's edges in a partial one. Refused as trec_eval
    refuses them: a partial group giving a document levels 0 and above 0, or preferring a
    document to itself through its sub-groups (trec_eval aborts)."""
    gs, lv = rows["g"].to_numpy(), rows["level"].to_numpy()
    sub = rows["s"].to_numpy()
    i, j = level_pairs(sub, lv)  # rows are sorted by group, sub-group, level: a sub-group is a block
    docid, pa = rows["docid"].to_numpy(), rows["pa"].to_numpy()
    ec = ~pa[i]
    out = [pd.DataFrame({"g": gs[i[ec]], "a": docid[i[ec]], "b": docid[j[ec]]})]
    if pa.any():
        marks = pd.DataFrame({"g": gs[pa], "docid": docid[pa], "zero": lv[pa] == 0, "pos": lv[pa] > 0})
        both = marks.groupby(["g", "docid"])[["zero", "pos"]].any()
        both = both[both["zero"].to_numpy() & both["pos"].to_numpy()]
        if len(both):
            doc = _doc_named(rows, *both.index[0])
            raise ValueError(f"prefs: document {doc} has both 0 and non-0 rel_level in one judgment group")
        closed = _closure(gs[i[~ec]], docid[i[~ec]], docid[j[~ec]])
        loop = (closed["a"] == closed["b"]).to_numpy()
        if loop.any():
            row = closed[loop].iloc[0]
            raise ValueError(
                "prefs: inconsistent preferences in one judgment group: document "
                f"{_doc_named(rows, int(row['g']), int(row['a']))} is preferred to itself through its "
                "sub-groups (trec_eval aborts)"
            )
        out.append(closed)
    return pd.concat(out, ignore_index=True)


def group_counts(rows: pd.DataFrame, pairs: pd.DataFrame, njr_g: np.ndarray, n_groups: int) -> dict[str, np.ndarray]:
    """Per judgment group: trec_eval's JG counts (``num_prefs_fulfilled_ret`` ... ``num_rel_ret``)."""
    g, a, b = (pairs[c].to_numpy() for c in ("g", "a", "b"))
    ra, rb = a < njr_g[g], b < njr_g[g]

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(g[mask], minlength=n_groups)

    c = {
        "ful_ret": count(ra & rb & (a < b)),
        "poss_ret": count(ra & rb),
        "ful_imp": count(ra & ~rb),
        "poss_imp": count(ra ^ rb),
        "notoccur": count(~ra & ~rb),
    }
    # relevant / non-relevant documents: a complete group counts its lines, a partial one its
    # documents by their last level (trec_eval's rel_array: -1 for neither)
    last = rows.drop_duplicates(["g", "docid"], keep="last")
    per = pd.concat([rows[~rows["pa"].to_numpy()], last[last["pa"].to_numpy()]])
    pg, lv, ret = per["g"].to_numpy(), per["level"].to_numpy(), per["ret"].to_numpy()
    c["rel"] = np.bincount(pg[lv > 0], minlength=n_groups)
    c["rel_ret"] = np.bincount(pg[(lv > 0) & ret], minlength=n_groups)
    non = _nonrel(per)
    c["nonrel"] = np.bincount(pg[non], minlength=n_groups)
    c["nonrel_ret"] = np.bincount(pg[non & ret], minlength=n_groups)
    return c


def _nonrel(per: pd.DataFrame) -> np.ndarray:
    """Non-relevant: level 0 in a partial group (a negative level is neither), <= 0 in a
    complete one (``add_ec_pref_to_jg``'s else branch)."""
    lv, pa = per["level"].to_numpy(), per["pa"].to_numpy()
    return np.where(pa, lv == 0, lv <= 0)


def pair_means(pairs: pd.DataFrame, g_rid: np.ndarray, njr: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """``prefs_pair``, ``_ret``, ``_imp`` per ranking from the counts array of all its groups."""
    rid = g_rid[pairs["g"].to_numpy()]
    a, b = pairs["a"].to_numpy(), pairs["b"].to_numpy()
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    key = pd.DataFrame({"rid": rid, "lo": lo, "hi": hi, "up": (a < b).astype(np.int64)})
    agg = key.groupby(["rid", "lo", "hi"], sort=False)["up"].agg(["sum", "count"])
    r = agg.index.get_level_values("rid").to_numpy()
    lo_, hi_ = agg.index.get_level_values("lo").to_numpy(), agg.index.get_level_values("hi").to_numpy()
    share = agg["sum"].to_numpy() / agg["count"].to_numpy()
    both = hi_ < njr[r]
    one = (lo_ < njr[r]) & ~both
    out = {}
    for name, keep, scored in (
        ("prefs_pair", np.ones(len(r), bool), both | one),
        ("prefs_pair_ret", both, both),
        ("prefs_pair_imp", both | one, both | one),
    ):
        num = np.bincount(r[keep], minlength=n)
        total = np.bincount(r[keep & scored], weights=share[keep & scored], minlength=n)
        out[name] = np.divide(total, num, out=np.zeros(n), where=num > 0)
    return out


def measures_of(measures: Any) -> list[Measure]:
    """The ``prefs_*`` measures named (names or :class:`Measure` values; None: all 14)."""
    names = list(NAMES) if measures is None else [measures] if isinstance(measures, (str, Measure)) else measures
    out: dict[str, Measure] = {}
    for n in names:
        name = n.family if isinstance(n, Measure) else str(n).strip()
        if name not in NAMES:
            raise ValueError(f"evaluate_prefs computes the prefs_* measures only ({', '.join(NAMES)}), not {n!r}")
        out.setdefault(name, make(name))
    return list(out.values())


def evaluate_prefs(
    prefs: pd.DataFrame, run: Any, measures: Any = None, max_ret: int | None = None, complete: bool = False
) -> pd.DataFrame:
    """Per-query values of trec_eval's preference measures.

    Parameters
    ----------
    prefs : pandas.DataFrame
        Preferences: ``query_id``, ``jg``, ``jsg``, ``doc_id``, ``rel_level``
        (:func:`retrieval_eval.io.prefs.read_prefs`, or ``read_qrels_prefs`` for a qrels file).
    run : run frame or anything :func:`retrieval_eval.io.convert.as_run` reads
    measures : str or list, optional
        ``prefs_*`` names (default: all 14, trec_eval's ``all_prefs``, in its order).
    max_ret : int, optional
        trec_eval's ``-M``: the top ``max_ret`` documents of each ranking.
    complete : bool
        trec_eval's ``-c``: every query of the preferences, an unanswered one as empty.

    Returns
    -------
    pandas.DataFrame
        One row per (system, query_id) evaluated (queries of the preferences that the run
        answers, in byte order), a float64 column per measure; ``attrs["measures"]`` the
        measures. Summarize with :func:`retrieval_eval.engine.measures.summarize`.

    Raises
    ------
    ValueError
        A malformed frame, a measure that is not a ``prefs_*``, inconsistent preferences, a
        run repeating a document in a ranking.
    """
    from ...io.convert import as_run

    ms = measures_of(measures)
    p = check_prefs(prefs)
    r = as_run(run)
    systems = [str(x) for x in pd.unique(r["system"])] or ["run"]
    ranked = ranked_judged(p, r, max_ret, doc_desc=False)
    rk = rankings(p["query_id"].to_numpy(dtype=object), ranked, systems, complete)
    judged, njr = _judged_docids(p, ranked, rk)
    rows = _rows(p, judged, njr)
    n, n_groups = len(rk), int(rows["g"].max()) + 1 if len(rows) else 0
    g_rid = np.zeros(n_groups, dtype=np.int64)
    g_rid[rows["g"].to_numpy()] = rows["rid"].to_numpy()
    block = blocks(rows, n, PAIR_BLOCK)[rows["rid"].to_numpy()]
    values = {name: np.zeros(n) for name in NAMES}
    for b in np.unique(block):  # one block unless the pairs would not fit: whole rankings each
        for name, v in _block_values(rows[block == b], njr, g_rid, n).items():
            values[name] += v
    frame = id_columns(rk)
    for m in ms:
        frame[m.name] = np.asarray(values[m.family], dtype=np.float64)
    frame.attrs["measures"] = ms
    return frame


def blocks(rows: pd.DataFrame, n: int, limit: int) -> np.ndarray:
    """Each ranking's block: consecutive whole rankings, about ``limit`` preference pairs a
    block (bounded by each group's lines squared), so that the pairs enumerated at once stay
    within memory; a ranking above the limit is a block of its own."""
    size = np.bincount(rows["g"].to_numpy()).astype(np.float64)
    rid_of = np.zeros(len(size), dtype=np.int64)
    rid_of[rows["g"].to_numpy()] = rows["rid"].to_numpy()
    per_ranking = np.bincount(rid_of, weights=size**2, minlength=n)
    before = np.cumsum(per_ranking) - per_ranking
    return (before // max(limit, 1)).astype(np.int64)


def _block_values(rows: pd.DataFrame, njr: np.ndarray, g_rid: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Every measure per ranking from the lines of a block of whole rankings (0 for the others)."""
    n_groups = len(g_rid)
    pairs = pair_table(rows)
    c = group_counts(rows, pairs, njr[g_rid], n_groups)
    values = _measures(c, g_rid, n)
    values.update(pair_means(pairs, g_rid, njr, n))
    values["prefs_avgjg_Rnonrel"], values["prefs_avgjg_Rnonrel_ret"] = rnonrel(rows, pairs, c, njr[g_rid], g_rid, n)
    return values


def _measures(c: dict[str, np.ndarray], g_rid: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The counts, ``simp`` and ``avgjg`` measures per ranking from the JG counts."""

    def per_q(x: np.ndarray) -> np.ndarray:
        return np.bincount(g_rid, weights=x, minlength=n)

    # trec_eval's sums: fulfilled with both retrieved, and with implied ones; possible with both
    # retrieved, with at least one, and all of them
    ful_ret, ful_ri = c["ful_ret"], c["ful_ret"] + c["ful_imp"]
    poss_ret, poss_ri = c["poss_ret"], c["poss_ret"] + c["poss_imp"]
    poss_all = poss_ri + c["notoccur"]

    def ratio(f: np.ndarray, p: np.ndarray) -> np.ndarray:
        return np.divide(f, p, out=np.zeros(len(f)), where=p > 0)

    out = {
        "prefs_num_prefs_poss": per_q(poss_all),
        "prefs_num_prefs_ful": per_q(ful_ri),
        "prefs_num_prefs_ful_ret": per_q(ful_ret),
    }
    for suffix, f, p in (("", ful_ri, poss_all), ("_ret", ful_ret, poss_ret), ("_imp", ful_ri, poss_ri)):
        out["prefs_simp" + suffix] = ratio(per_q(f), per_q(p))
        out["prefs_avgjg" + suffix] = avg_over_groups(ratio(f, p), g_rid, n)
    return out
