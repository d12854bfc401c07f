"""The scan to per-ranking arrays that every catalogue measure reads.

The catalogue follows trec_eval's semantics, and they are applied here, once:

* **Order**: a ranking is ordered by score, descending, ties by doc id, descending (byte
  order), as trec_eval's ``comp_sim_docno`` sorts. A ranking with a missing score keeps the
  run's own rank order (there is nothing to sort on).
* **Duplicates**: trec_eval refuses a ranking that repeats a doc id (``duplicate docs``). The
  catalogue keeps the first occurrence in that order (the engine's rule, via
  :func:`retrieval_eval.engine.scan.scan_run`); the ``trec_eval`` command refuses them, as trec_eval.
* **Depth** (``-M``): only the first ``max_ret`` entries of each ranking are read, and no more
  than the measures asked for need (their cutoff, when every one of them has one).
* **Labels**: the last label of a repeated (query, key) pair wins (:func:`retrieval_eval.engine.labels.judged`).
  A retrieved doc without a label has relevance ``NONPOOL`` (-1); a label with a negative
  grade is "in the pool but unjudged", ``UNJUDGED`` (-2), as trec_eval's ``form_res_rels``.
* **Queries**: a ranking is evaluated when its query has labels (trec_eval evaluates the
  queries of the qrels that the run answers); with ``complete`` (trec_eval ``-c``), every
  labelled query of every system is, an unanswered one as an empty ranking.

Nothing here loops over queries: rankings are segments of flat arrays in (ranking, position)
order, and the measures reduce them with ``np.bincount`` / cumulative sums.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...arrays import arrow, codes, take, whole
from ...model import ID
from ..kernels import find, lookup
from ..labels import judged
from ..scan import scan_run

NONPOOL = -1
UNJUDGED = -2


@dataclass
class Arrays:
    """A run and its labels as flat arrays (see the module docstring for the rules).

    Per ranking ``r`` (a (system, query) pair that is evaluated): ``r_system``, ``r_query``
    (codes into ``systems`` / ``queries``), ``r_start`` (its first entry) and ``r_ret``
    (entries, after duplicates and ``max_ret``). Per entry, in (ranking, rank) order:
    ``e_rk`` (its ranking) ``e_pos`` (0-based rank) and ``e_rel`` (grade, or NONPOOL /
    UNJUDGED). Per query: ``q_levels`` (``[query, grade]`` counts of labels with grade >= 0,
    trec_eval's ``rel_levels``). ``num_docs``: the collection's size, trec_eval's ``-N`` (0
    unless given; only ``utility``'s fourth coefficient reads it).
    """

    systems: pd.Index
    queries: pd.Index
    r_system: np.ndarray
    r_query: np.ndarray
    r_start: np.ndarray
    r_ret: np.ndarray
    e_rk: np.ndarray
    e_pos: np.ndarray
    e_rel: np.ndarray
    q_levels: np.ndarray  # (n_queries, max_grade + 1) int64
    duplicates: np.ndarray  # per ranking: the run repeated a doc id in it
    num_docs: int = 0  # documents in the collection (trec_eval's -N)

    @property
    def n(self) -> int:
        return len(self.r_query)

    # ---- reductions shared by the families ----------------------------------------------

    def num_rel(self, level: int) -> np.ndarray:
        """Per ranking: labels of its query with grade >= level (trec_eval's num_rel)."""
        per_q = self.q_levels[:, level:].sum(axis=1) if level < self.q_levels.shape[1] \
            else np.zeros(len(self.queries), dtype=np.int64)
        return per_q[self.r_query]

    def num_nonrel(self, level: int) -> np.ndarray:
        """Per ranking: labels of its query with 0 <= grade < level."""
        return self.q_levels[:, :level].sum(axis=1)[self.r_query]

    def seg_sum(self, weights=None, mask=None) -> np.ndarray:
        """Per ranking: the number (or sum of ``weights``) of its entries in ``mask``."""
        rk = self.e_rk if mask is None else self.e_rk[mask]
        if weights is not None and mask is not None:
            weights = weights[mask]
        return np.bincount(rk, weights=weights, minlength=self.n).astype(float) \
            if weights is not None else np.bincount(rk, minlength=self.n)

    def seg_cumsum(self, values: np.ndarray) -> np.ndarray:
        """Per entry: the sum of ``values`` over its ranking's entries up to and including it."""
        c = np.cumsum(values)
        before = np.r_[0, c][self.r_start]  # the sum before each ranking's first entry
        return c - before[self.e_rk]

    def ideal(self, gains: np.ndarray | None = None):
        """Per query, its labels with grade >= 0 sorted best first: ``(query, position, grade)``.

        The ideal ranking of nDCG and G: every judged document, the best grades first.
        """
        nq, ng = self.q_levels.shape
        grades = np.arange(ng - 1, -1, -1)  # best first
        counts = self.q_levels[:, ::-1]
        q = np.repeat(np.repeat(np.arange(nq), ng), counts.ravel())
        g = np.repeat(np.tile(grades, nq), counts.ravel())
        per_q = counts.sum(axis=1)
        pos = np.arange(len(q)) - np.repeat(np.cumsum(per_q) - per_q, per_q)
        return q, pos, g


def _trec_order(run: pd.DataFrame) -> pd.DataFrame:
    """The run re-ranked trec_eval's way: score descending, then doc id descending.

    A (system, query) ranking with any missing score keeps its own rank order.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(run)
    if n == 0:
        return run
    s_codes, _ = codes(arrow(run["system"]))
    q_codes, qs = codes(arrow(run["query_id"]))
    group = s_codes.astype(np.int64) * max(len(qs), 1) + q_codes
    score = run["score"].to_numpy(dtype=np.float64, na_value=np.nan)
    rank = run["rank"].to_numpy(dtype=np.int64)
    nan = np.isnan(score)
    if nan.any():
        gcode, ginv = np.unique(group, return_inverse=True)
        unscored = np.bincount(ginv, weights=nan, minlength=len(gcode)) > 0
        score = np.where(unscored[ginv], -rank.astype(np.float64), score)
    doc = whole(arrow(run["doc_id"]))
    table = pa.table({"g": pa.array(group), "s": pa.array(score), "d": doc})
    perm = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("s", "descending"),
                                             ("d", "descending")]).to_numpy(zero_copy_only=False)
    g = group[perm]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    counts = np.diff(np.r_[starts, n])
    out = run.iloc[perm].reset_index(drop=True)
    out["rank"] = (np.arange(n) - np.repeat(starts, counts) + 1).astype(np.int64)
    return out


def _levels(j) -> np.ndarray:
    """Per query, ``[query, grade]`` counts of its labels with grade >= 0 (``q_levels``)."""
    grade = j.grade
    max_grade = int(grade.max()) if len(grade) and grade.max() > 0 else 0
    q_levels = np.zeros((len(j.queries), max_grade + 1), dtype=np.int64)
    ok = grade >= 0
    np.add.at(q_levels, (j.query[ok], grade[ok]), 1)
    return q_levels


def _label_join(j, ordered: pd.DataFrame, src: np.ndarray, e_query: np.ndarray) -> np.ndarray:
    """Per entry (row ``src`` of ``ordered``, of query code ``e_query``): its grade, NONPOOL
    without a label, UNJUDGED for a negative one. The join is on (query code, key code)."""
    e_rel = np.full(len(src), NONPOOL, dtype=np.int64)
    if len(src) and len(j.rows):
        docs = take(arrow(ordered["doc_id"]), src)
        k_code = lookup(docs, j.keys)
        nk = max(len(j.keys), 1)
        pairs = j.query.astype(np.int64) * nk + j.key
        e_pair = e_query * nk + k_code
        at = find(pairs, np.where(k_code >= 0, e_pair, -1))
        found = (at >= 0) & (k_code >= 0)
        g = j.grade[at[found]]
        e_rel[found] = np.where(g >= 0, g, UNJUDGED)
    return e_rel


def scan(judgments: pd.DataFrame, run: pd.DataFrame, max_ret: int | None = None,
         complete: bool = False, order: str = "trec", depth: int | None = None) -> Arrays:
    """The per-ranking arrays of ``run`` against ``judgments`` (frames of the data model).

    ``max_ret``: trec_eval's ``-M``; ``complete``: trec_eval's ``-c`` (every labelled query
    of every system, an unanswered one as an empty ranking); ``order``: ``"trec"`` (score,
    then doc id, both descending) or ``"rank"`` (the run's own order); ``depth``: read no
    deeper than this (what the measures asked for need, see :attr:`Measure.depth`; ``r_ret``
    then counts at most ``depth`` entries).
    """
    if order not in ("trec", "rank"):
        raise ValueError(f"order must be 'trec' or 'rank', got {order!r}")
    if max_ret is not None and (isinstance(max_ret, bool) or int(max_ret) != max_ret or max_ret < 0):
        raise ValueError(f"max_ret must be a non-negative integer, got {max_ret!r}")
    j = judged(judgments)
    queries = j.queries
    nq = len(queries)
    q_levels = _levels(j)

    ordered = _trec_order(run) if order == "trec" else run
    if len(ordered):
        reach = [int(d) for d in (max_ret, depth) if d is not None]
        sc = scan_run(ordered, min(reach) if reach else None)
        rk = sc.rankings
        systems = rk.systems
        b_sys = rk.system[sc.block]
        b_query = lookup(rk.queries.take(rk.query[sc.block]), queries) if len(sc.block) \
            else np.zeros(0, dtype=np.int64)
        kept, dup = sc.block_kept, sc.block_dup
        row_block, row_pos, row_src = sc.row_block, sc.row_position, sc.row_source
    else:
        systems = pd.Index(pd.unique(run["system"].astype(ID)), dtype=ID)
        b_sys = b_query = kept = np.zeros(0, dtype=np.int64)
        dup = np.zeros(0, dtype=bool)
        row_block = row_pos = row_src = np.zeros(0, dtype=np.int64)
    if len(row_block) and max_ret == 0:
        row_block = row_pos = row_src = np.zeros(0, dtype=np.int64)
    # The blocks evaluated: those of a labelled query.
    evaluated = b_query >= 0
    block_to_r = np.full(len(b_query), -1, dtype=np.int64)
    r_system, r_query = b_sys[evaluated].astype(np.int64), b_query[evaluated].astype(np.int64)
    r_ret = np.asarray(kept, dtype=np.int64)[evaluated]
    r_dup = np.asarray(dup, dtype=bool)[evaluated]
    block_to_r[evaluated] = np.arange(int(evaluated.sum()))
    if complete and len(systems):
        have = np.zeros((len(systems), nq), dtype=bool)
        have[r_system, r_query] = True
        miss_s, miss_q = np.nonzero(~have)
        r_system = np.r_[r_system, miss_s].astype(np.int64)
        r_query = np.r_[r_query, miss_q].astype(np.int64)
        r_ret = np.r_[r_ret, np.zeros(len(miss_s), dtype=np.int64)]
        r_dup = np.r_[r_dup, np.zeros(len(miss_s), dtype=bool)]
    # Rankings in (system, query label order); entries follow.
    by = np.lexsort((r_query, r_system))
    new_of_old = np.empty(len(by), dtype=np.int64)
    new_of_old[by] = np.arange(len(by))
    r_system, r_query, r_ret, r_dup = r_system[by], r_query[by], r_ret[by], r_dup[by]
    r_start = np.r_[0, np.cumsum(r_ret)[:-1]].astype(np.int64) if len(r_ret) else np.zeros(0, np.int64)

    e_old = block_to_r[row_block] if len(row_block) else np.zeros(0, dtype=np.int64)
    keep = e_old >= 0
    e_rk = new_of_old[e_old[keep]]
    e_pos = row_pos[keep]
    src = row_src[keep]
    entry_order = np.lexsort((e_pos, e_rk))
    e_rk, e_pos, src = e_rk[entry_order], e_pos[entry_order], src[entry_order]
    e_rel = _label_join(j, ordered, src, r_query[e_rk])
    return Arrays(systems=systems, queries=queries, r_system=r_system, r_query=r_query,
                  r_start=r_start, r_ret=r_ret, e_rk=e_rk, e_pos=e_pos, e_rel=e_rel,
                  q_levels=q_levels, duplicates=r_dup)
