"""The metric engine: SPEC A3, once, vectorized over long DataFrames.

Every number the toolkit reports about rankings comes from :func:`compute`. The seed API
(``score``, ``query_metrics``), the DataFrame API (``evaluate``), the report, the CLI and the
notebooks are thin faces on it. Three policies live here and nowhere else:

* **Order** (:func:`_prepare`): a run's own order is authoritative; rows are ranked by their
  ``rank`` column within each (system, query_id). Readers decide ``rank`` (a TREC run read
  with ``order="score"`` is re-ranked the trec_eval way before it gets here).
* **Duplicates** (:func:`dedupe_run`): a key repeated inside one ranking counts once, at its
  first occurrence. A repeat is not new evidence; counting it again pushes recall, AP and
  nDCG above 1.
* **Definitions** (:data:`METRIC_NAMES`, :func:`metric_name`): each metric once, with its
  cutoff, relevance threshold and gain stated in its name when they differ from the spec's
  defaults.

There is no per-query Python loop: rows are grouped by integer codes and every sum is an
``np.bincount`` over the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

ID = pd.StringDtype()
UNSTRATIFIED = "_unstratified"
GAINS = ("exponential", "linear")
#: Per-query metrics, in the order they appear in every table.
METRIC_NAMES = ("precision", "recall", "ndcg", "mrr", "map", "hit_rate", "judged")
#: The six metrics the spec defines; ``judged`` is this project's addition.
SPEC_METRICS = METRIC_NAMES[:6]


def metric_name(metric: str, k: int, gain: str = "exponential") -> str:
    """The name a metric carries: ``ndcg@10``; ``ndcg_linear@10`` for trec_eval's gain.

    The name says what the number is, so a linear-gain nDCG can never be compared with (or
    gated as) the spec's exponential one by accident.
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    base = "ndcg_linear" if metric == "ndcg" and gain == "linear" else metric
    return f"{base}@{int(k)}"


def check_ks(k) -> tuple[int, ...]:
    """Normalize ``k`` (an int or an iterable of ints) to a sorted tuple of distinct cutoffs."""
    ks = (k,) if isinstance(k, (int, np.integer)) else tuple(k)
    if not ks:
        raise ValueError("at least one cutoff k is needed")
    out = []
    for value in ks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"k must be a positive integer, got {value!r}")
        out.append(int(value))
    return tuple(sorted(set(out)))


def judgment_keys(judgments: pd.DataFrame) -> pd.Series:
    """The key that matches a judgment to a ranking entry: ``chunk_id``, else ``doc_uri``."""
    return judgments["chunk_id"].fillna(judgments["doc_uri"]).astype(ID)


@dataclass
class _Judged:
    """Judgments reduced to codes: one entry per (query, key) pair, the last label winning."""

    queries: pd.Index  # judged queries, in first-appearance order
    keys: pd.Index  # distinct keys
    rows: np.ndarray  # row positions (in the judgments frame) of the winning labels
    query: np.ndarray  # per pair: query code
    key: np.ndarray  # per pair: key code
    grade: np.ndarray  # per pair
    strata: np.ndarray  # per query: its first labelled stratum, or _unstratified


def _judged(judgments: pd.DataFrame, coded=None) -> _Judged:
    """Code the judgments once; the last label of a repeated (query, key) pair wins.

    ``validate`` reports such a pair as an error; scoring still needs one answer, and the last
    line is the one a person editing the file most recently wrote. ``coded`` passes codes
    already computed: ``(query codes, queries, key codes, keys)``.
    """
    if coded is None:
        q_codes, queries = _factorize(judgments["query_id"])
        k_codes, keys = _factorize(judgment_keys(judgments))
    else:
        q_codes, queries, k_codes, keys = coded
    pair = q_codes * max(len(keys), 1) + k_codes
    rows = np.flatnonzero(~_repeats(pair[::-1])[::-1])  # the last label of a pair wins
    first_row = np.full(len(queries), -1, dtype=np.int64)
    first_row[q_codes[::-1]] = np.arange(len(q_codes))[::-1]
    strata = judgments["stratum"].astype(ID).fillna(UNSTRATIFIED).to_numpy(dtype=object)
    return _Judged(
        queries=queries,
        keys=keys,
        rows=rows,
        query=q_codes[rows],
        key=k_codes[rows],
        grade=judgments["relevance"].to_numpy(dtype=np.int64)[rows],
        strata=strata[first_row] if len(queries) else np.zeros(0, dtype=object),
    )


def relevance_table(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per (query_id, key) with its grade, in judgment order; the last label wins."""
    j = _judged(judgments)
    return pd.DataFrame({
        "query_id": pd.array(j.queries.take(j.query), dtype=ID),
        "key": pd.array(j.keys.take(j.key), dtype=ID),
        "relevance": j.grade,
    })


def _query_strata(judgments: pd.DataFrame, queries: pd.Index) -> np.ndarray:
    """Each query's stratum (its first labelled one), ``_unstratified`` when it has none."""
    j = _judged(judgments)
    at = _lookup(queries, j.queries)
    return np.where(at >= 0, j.strata[np.maximum(at, 0)] if len(j.strata) else UNSTRATIFIED,
                    UNSTRATIFIED).astype(object)


# --------------------------------------------------------------------------------------------
# Order and duplicates: the one place each is defined.


def _arrow(values) -> "pa.Array":
    import pyarrow as pa

    values = values.array if isinstance(values, (pd.Index, pd.Series)) else values
    if values.dtype != ID:
        values = pd.array(values, dtype=ID)
    arr = pa.array(values)
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _lookup(values, categories) -> np.ndarray:
    """Position of each value in ``categories`` (-1 when absent), by a C++ hash lookup."""
    import pyarrow.compute as pc

    found = pc.index_in(_arrow(values), value_set=_arrow(categories))
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _repeats(codes: np.ndarray) -> np.ndarray:
    """True for every entry equal to an earlier one (first occurrences are False).

    A stable argsort groups equal codes in row order; the codes here are nearly sorted (block
    or query major), where numpy's stable sort runs in near-linear time, several times faster
    than hashing them.
    """
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    repeat = np.empty(len(codes), dtype=bool)
    if len(codes):
        repeat[order] = np.r_[False, ordered[1:] == ordered[:-1]]
    return repeat


def _factorize(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes for string values, in first-appearance order, and the distinct values."""
    codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.int64, copy=False), pd.Index(uniques, dtype=ID)


@dataclass
class _Prepared:
    """A run reduced to integer arrays, ordered by (system, query_id, rank), deduplicated."""

    system: np.ndarray  # system code per row
    query: np.ndarray  # query code per row
    doc: np.ndarray  # doc code per row
    score: np.ndarray
    position: np.ndarray  # 0-based position in the deduplicated ranking
    block: np.ndarray  # ranking (system, query) code per row, non-decreasing
    block_system: np.ndarray  # per block
    block_query: np.ndarray  # per block
    block_has_duplicates: np.ndarray  # per block
    index: np.ndarray  # row labels of the kept rows in the input frame
    key: np.ndarray  # codes of the judgment keys passed to _prepare, in the docs' code space


def _first_appearance(values: np.ndarray) -> np.ndarray:
    """Codes of ``values`` (ints) renumbered in order of first appearance."""
    uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank_of = np.empty(len(uniq), dtype=np.int64)
    rank_of[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    return rank_of[inverse.ravel()]


def _prepare(run: pd.DataFrame, queries: pd.Index | None, depth: int | None,
             keys: pd.Series | None = None):
    """Order, deduplicate and (optionally) cut a run to ``depth`` entries per ranking.

    Returns ``(prepared, docs, systems, queries)``: the integer arrays, the distinct doc ids
    the codes index, and the systems and queries the codes index (first-appearance order).
    Rows whose query is not in ``queries`` (when given) are dropped: trec_eval ignores
    queries without judgments.

    ``keys`` (judgment keys) are coded jointly with the run's ids, in one hash pass: their codes
    come back as ``prepared.key`` and index the same ``docs``.

    Only the entries the cutoffs can reach are hashed. A ranking is cut to its first ``depth``
    raw entries; a ranking that repeated a key there is taken whole and deduplicated, since
    its later entries move up. ``block_has_duplicates`` therefore says whether a ranking
    repeated a key among the entries the metrics read; a repeat further down changes no
    number. With ``depth=None`` every entry is read.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(run)
    rank = run["rank"].to_numpy(dtype=np.int64)
    sys_arr, q_arr = _arrow(run["system"]), _arrow(run["query_id"])
    # Rankings are contiguous runs of rows in files; find their boundaries without hashing.
    # (Arrow bitmaps, not numpy bool arrays: a 10M-row run costs 1 MB here, not 10s of MB.)
    if n > 1:
        boundary = pc.or_(pc.not_equal(q_arr[1:], q_arr[:-1]),
                          pc.not_equal(sys_arr[1:], sys_arr[:-1]))
        starts = np.r_[0, pc.indices_nonzero(boundary).to_numpy() + 1].astype(np.int64)
        rank_arr = pa.array(rank)
        in_order = bool(pc.all(pc.or_(pc.greater(rank_arr[1:], rank_arr[:-1]), boundary)).as_py())
        del boundary, rank_arr
    else:
        starts = np.zeros(min(n, 1), dtype=np.int64)
        in_order = True
    start_sys = pd.array(sys_arr.take(starts), dtype=ID)
    start_q = pd.array(q_arr.take(starts), dtype=ID)
    systems = pd.Index(pd.unique(start_sys), dtype=ID)
    all_queries = pd.Index(pd.unique(start_q), dtype=ID)
    if queries is None:
        queries = all_queries
    nq = max(len(queries), 1)
    s_code = _lookup(start_sys, systems)
    q_code = _lookup(start_q, queries)
    # The (system, query) cell of each ranking; unjudged queries get their own codes past nq.
    q_any = np.where(q_code >= 0, q_code, nq + _lookup(start_q, all_queries))
    cell_key = s_code * (nq + len(all_queries)) + q_any
    row_index = None
    if len(np.unique(cell_key)) != len(starts) or not in_order:
        # Interleaved or unsorted rankings: order rows by (first appearance of the cell, rank).
        lengths = np.diff(np.r_[starts, n])
        row_cell = np.repeat(_first_appearance(cell_key), lengths)
        row_index = np.lexsort((rank, row_cell))
        row_cell = row_cell[row_index]
        first_of = np.flatnonzero(np.r_[True, row_cell[1:] != row_cell[:-1]])
        starts_src = row_index[first_of]
        s_code = _lookup(pd.array(sys_arr.take(starts_src), dtype=ID), systems)
        q_code = _lookup(pd.array(q_arr.take(starts_src), dtype=ID), queries)
        starts = first_of
    lengths = np.diff(np.r_[starts, n])
    judged = q_code >= 0
    doc_arr = _arrow(run["doc_id"])

    def select(take_whole: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows (in ranking order) of the judged rankings' first ``depth`` entries, or of the
        whole ranking where ``take_whole``; built on the selected size, not the run's."""
        take = np.where(judged, lengths, 0)
        if depth is not None:
            take = np.where(take_whole, take, np.minimum(take, depth))
        blk = np.repeat(np.arange(len(starts)), take)
        offsets = np.cumsum(take) - take
        rows = np.arange(len(blk)) - offsets[blk] + starts[blk]
        return rows, blk

    key_arr = _arrow(keys) if keys is not None else None

    def dedupe(rows: np.ndarray, blk: np.ndarray):
        src = rows if row_index is None else row_index[rows]
        everything = row_index is None and len(rows) == n
        docs_sel = doc_arr if everything else doc_arr.take(src)
        m = 0
        if key_arr is not None and len(key_arr):
            m = len(key_arr)
            docs_sel = pa.concat_arrays([key_arr.cast(docs_sel.type), docs_sel])
        codes, docs = _factorize(pd.Series(pd.array(docs_sel, dtype=ID), copy=False))
        key_codes, codes = codes[:m], codes[m:]
        pair = blk.astype(np.int64) * max(len(docs), 1) + codes
        dup = _repeats(pair)
        return src, codes, docs, blk, dup, key_codes

    take_whole = np.zeros(len(starts), dtype=bool)
    src, doc_codes, docs, blk, dup, key_codes = dedupe(*select(take_whole))
    has_dup = np.bincount(blk[dup], minlength=len(starts)) > 0
    if depth is not None and (has_dup & (lengths > depth)).any():
        take_whole = has_dup & (lengths > depth)
        src, doc_codes, docs, blk, dup, key_codes = dedupe(*select(take_whole))
        has_dup = np.bincount(blk[dup], minlength=len(starts)) > 0
    if dup.any():
        keep = ~dup
        src, doc_codes, blk = src[keep], doc_codes[keep], blk[keep]
    # Renumber the judged rankings 0..nb-1 and compute deduplicated positions.
    new_id = np.cumsum(judged) - 1
    blk = new_id[blk]
    nb = int(judged.sum())
    counts = np.bincount(blk, minlength=nb)
    position = np.arange(len(blk)) - np.repeat(np.r_[0, np.cumsum(counts)[:-1]], counts) \
        if nb else np.zeros(0, dtype=np.int64)
    if depth is not None:
        cut = position < depth
        if not cut.all():
            src, doc_codes, blk, position = src[cut], doc_codes[cut], blk[cut], position[cut]
    prepared = _Prepared(
        system=s_code[judged][blk],
        query=q_code[judged][blk],
        doc=doc_codes,
        score=run["score"].to_numpy(dtype=np.float64)[src],
        position=position,
        block=blk,
        block_system=s_code[judged],
        block_query=q_code[judged],
        block_has_duplicates=has_dup[judged],
        index=src,
        key=key_codes,
    )
    return prepared, docs, systems, queries


def dedupe_run(run: pd.DataFrame, depth: int | None = None) -> pd.DataFrame:
    """The run as metrics see it: ordered, each key counted at its first occurrence only.

    Returns a new long frame (system, query_id, rank, doc_id, score, plus any other columns of
    the input) where ``rank`` is the 1-based position in the deduplicated ranking, cut to
    ``depth`` entries per ranking when given. ``top1`` of a query (calibration) is its row
    with rank 1 here.
    """
    prepared, _, _, _ = _prepare(run, None, depth)
    out = run.iloc[prepared.index].reset_index(drop=True)
    out["rank"] = (prepared.position + 1).astype(np.int64)
    return out


# --------------------------------------------------------------------------------------------
# The engine.


def _grouped_cumsum(values: np.ndarray, block: np.ndarray, n_blocks: int) -> np.ndarray:
    """Cumulative sum of ``values`` restarting at every block (rows sorted by block)."""
    total = np.cumsum(values)
    block_totals = np.bincount(block, weights=values, minlength=n_blocks)
    before = np.r_[0.0, np.cumsum(block_totals)[:-1]]
    return total - before[block]


def compute(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    k=(10,),
    threshold: int = 1,
    gain: str = "exponential",
) -> pd.DataFrame:
    """Per-query metrics for every system of ``run`` at every cutoff in ``k``: SPEC A3.

    ``judgments`` and ``run`` are the frames the readers return (``docs/data-model.md``).
    Returns one row per (system, query_id) for every judged query of every system, systems in
    first-appearance order, queries in the order they first appear in the judgments, with:

    * ``system``, ``query_id``, ``stratum`` (the query's stratum, ``_unstratified`` without);
    * ``n_judged``, ``n_relevant`` (labels at or above ``threshold``), ``retrieved``
      (deduplicated ranking length, up to the largest cutoff);
    * ``missing`` (the system has no ranking for the query: it scores zero, never dropped),
      ``no_positives`` (nothing at the threshold: excluded from averages), ``duplicates``
      (the ranking repeated a key; only the first occurrence counted);
    * ``top1_score``: the score of the first entry of the deduplicated ranking (NaN without
      scores), the signal out-of-distribution calibration works from;
    * one float column per metric and cutoff, named by :func:`metric_name`:
      precision (hits / k), recall (hits / relevant), ndcg (gain ``2**g - 1`` or ``g``,
      discount ``log2(rank + 1)``, ideal list = every judged grade of the query, sorted,
      cut at k), mrr (1 / rank of the first hit within k), map (average precision within k,
      over all relevant), hit_rate, judged (share of the top k that has any judgment: how far
      the closed-world assumption "unjudged = not relevant" is being trusted).

    Runs' queries without judgments are ignored, as trec_eval ignores them.
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    ks = check_ks(k)
    kmax = ks[-1]
    q_codes, queries = _factorize(judgments["query_id"])
    # Judgment keys and the run's ids are coded together, in one hash pass.
    prepared, docs, systems, _ = _prepare(run, queries, kmax, keys=judgment_keys(judgments))
    judged_set = _judged(judgments, coded=(q_codes, queries, prepared.key, docs))
    if len(systems) == 0:
        systems = pd.Index(["run"], dtype=ID)
    nq, ns = len(queries), len(systems)

    rel_q = judged_set.query
    grades = judged_set.grade

    # Relevance lookup: (query, key) pairs as one sorted int64 code, then searchsorted.
    width = max(len(docs), 1)
    judged_pairs = rel_q * width + judged_set.key
    order = np.argsort(judged_pairs, kind="stable")
    judged_pairs, judged_grades = judged_pairs[order], grades[order]
    row_pairs = prepared.query * width + prepared.doc
    at = np.searchsorted(judged_pairs, row_pairs)
    at_clipped = np.minimum(at, max(len(judged_pairs) - 1, 0))
    is_judged = (at < len(judged_pairs)) & (
        judged_pairs[at_clipped] == row_pairs if len(judged_pairs) else False
    )
    row_grade = np.where(is_judged, judged_grades[at_clipped] if len(judged_pairs) else 0, 0)
    del row_pairs, at, at_clipped  # per-row temporaries are freed as soon as they are used
    hit = row_grade >= threshold
    position = prepared.position
    # Each row's DCG term: gain over the log2(rank + 1) discount.
    dcg_term = (np.exp2(row_grade) - 1.0) if gain == "exponential" else row_grade.astype(float)
    del row_grade
    dcg_term /= np.log2(position + 2.0)

    # Ideal DCG per query: every judged grade, sorted descending, cut at k.
    ideal_order = np.lexsort((-grades, rel_q))
    iq, ig = rel_q[ideal_order], grades[ideal_order]
    istarts = np.r_[0, np.cumsum(np.bincount(iq, minlength=nq))[:-1]] if nq else np.zeros(0, int)
    ipos = np.arange(len(iq)) - istarts[iq] if len(iq) else np.zeros(0, np.int64)
    igain = (np.exp2(ig) - 1.0) if gain == "exponential" else ig.astype(float)
    idisc = igain / np.log2(ipos + 2.0)
    n_relevant = np.bincount(rel_q, weights=grades >= threshold, minlength=nq)
    n_judged = np.bincount(rel_q, minlength=nq)

    # Per ranking (block) sums, then scattered onto the (system x query) grid.
    block = prepared.block
    nb = len(prepared.block_system)
    cell = prepared.block_system * nq + prepared.block_query
    # Each hit's precision at its rank: AP's term.
    ap_term = _grouped_cumsum(hit.astype(float), block, nb)
    ap_term /= position + 1.0
    ap_term *= hit
    first_hit = np.full(nb, np.inf)
    hit_rows = np.flatnonzero(hit)
    if len(hit_rows):
        hb = block[hit_rows]
        first = np.r_[True, hb[1:] != hb[:-1]]
        first_hit[hb[first]] = position[hit_rows[first]]

    grid = ns * nq
    present = np.zeros(grid, dtype=bool)
    present[cell] = True
    dup_grid = np.zeros(grid, dtype=bool)
    dup_grid[cell] = prepared.block_has_duplicates
    retrieved = np.zeros(grid, dtype=np.int64)
    retrieved[cell] = np.bincount(block, minlength=nb)
    top1 = np.full(grid, np.nan)
    first_rows = position == 0
    top1[cell[block[first_rows]]] = prepared.score[first_rows]
    nrel = np.tile(n_relevant, ns)
    safe_nrel = np.where(nrel > 0, nrel, 1.0)

    columns: dict[str, np.ndarray] = {}
    for kk in ks:
        # Rows are in rank order within each ranking, so "within k" is a mask on position.
        inside = position < kk
        hits = np.bincount(block, weights=hit & inside, minlength=nb)
        dcg = np.bincount(block, weights=np.where(inside, dcg_term, 0.0), minlength=nb)
        ap_sum = np.bincount(block, weights=np.where(inside, ap_term, 0.0), minlength=nb)
        judged = np.bincount(block, weights=is_judged & inside, minlength=nb)
        del inside
        idcg = np.tile(np.bincount(iq, weights=idisc * (ipos < kk), minlength=nq), ns)
        rr = np.where(first_hit < kk, 1.0 / (first_hit + 1.0), 0.0)

        def spread(values: np.ndarray) -> np.ndarray:
            out = np.zeros(grid)
            out[cell] = values
            return out

        g_hits, g_dcg = spread(hits), spread(dcg)
        columns[metric_name("precision", kk)] = g_hits / kk
        columns[metric_name("recall", kk)] = np.where(nrel > 0, g_hits / safe_nrel, 0.0)
        columns[metric_name("ndcg", kk, gain)] = np.where(
            idcg > 0, g_dcg / np.where(idcg > 0, idcg, 1.0), 0.0
        )
        columns[metric_name("mrr", kk)] = spread(rr)
        columns[metric_name("map", kk)] = np.where(nrel > 0, spread(ap_sum) / safe_nrel, 0.0)
        columns[metric_name("hit_rate", kk)] = (g_hits > 0).astype(float)
        columns[metric_name("judged", kk)] = spread(judged) / kk

    ordered = {name: columns[name] for m in METRIC_NAMES for name in
               [metric_name(m, kk, gain) for kk in ks]}
    strata = judged_set.strata
    frame = pd.DataFrame(
        {
            "system": pd.array(np.repeat(systems.to_numpy(), nq), dtype=ID),
            "query_id": pd.array(np.tile(queries.to_numpy(), ns), dtype=ID),
            "stratum": pd.array(np.tile(strata, ns), dtype=ID),
            "n_judged": np.tile(n_judged, ns).astype(np.int64),
            "n_relevant": nrel.astype(np.int64),
            "retrieved": retrieved,
            "missing": ~present,
            "no_positives": nrel == 0,
            "duplicates": dup_grid,
            "top1_score": top1,
            **ordered,
        }
    )
    frame.attrs["systems"] = list(systems)
    return frame


def metric_columns(per_query: pd.DataFrame) -> list[str]:
    """The metric columns of a per-query frame, in table order."""
    return [c for c in per_query.columns if "@" in c]


def aggregate(per_query: pd.DataFrame, by=("system",)) -> pd.DataFrame:
    """Macro means over the scored queries (those with positives), with ``n`` = their count.

    Queries without positives are excluded, not scored zero: there was nothing for retrieval
    to find. Values are rounded to 12 decimals as the spec's report is. Groups with no scored
    query have ``n`` 0 and NaN means (a metric that was not computed is absent, not zero).
    """
    cols = metric_columns(per_query)
    by = list(by)
    scored = per_query[~per_query["no_positives"]]
    means = scored.groupby(by, sort=False, observed=True)[cols].mean()
    counts = (~per_query["no_positives"]).groupby(
        [per_query[c] for c in by], sort=False, observed=True
    ).sum()
    out = means.reindex(counts.index).round(12)
    out.insert(0, "n", counts.astype(np.int64))
    return out
