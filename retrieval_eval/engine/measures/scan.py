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

Nothing here loops over queries. The scan keeps only the **labelled** entries of each ranking
(``l_rk``, ``l_pos``, ``l_rel``: a retrieved document with a label, of any grade), with each
ranking's length ``r_ret``: an unlabelled entry is NONPOOL, and every measure of trec_eval reads
the labelled entries and the lengths only (10M retrieved rows carry a few hundred thousand
labels). The flat per-entry arrays of every entry (``e_rk``, ``e_pos``, ``e_rel``) are made
from them on first use, for the measures that weigh every rank (ERR, RBP, the C/W/L family).
Measures reduce the arrays with ``np.bincount`` / cumulative sums.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from ...arrays import arrow, codes, take, tie_runs
from ...model import ID
from ..kernels import ranges
from ..labels import winning_labels
from ..scan import Rankings, beside_starts, rankings, scan_run

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

T = TypeVar("T")

NONPOOL = -1
UNJUDGED = -2


@dataclass
class Arrays:
    """A run and its labels as flat arrays (see the module docstring for the rules).

    Per ranking ``r`` (a (system, query) pair that is evaluated): ``r_system``, ``r_query``
    (codes into ``systems`` / ``queries``) and ``r_ret`` (entries, after duplicates and
    ``max_ret``). Per labelled entry, in (ranking, rank) order: ``l_rk`` (its ranking),
    ``l_pos`` (0-based rank) and ``l_rel`` (grade, or UNJUDGED for a negative one). Per query:
    ``q_levels`` (``[query, grade]`` counts of labels with grade >= 0, trec_eval's
    ``rel_levels``). Every entry (``e_rk``, ``e_pos``, ``e_rel``, NONPOOL without a label) is
    made on first use.
    ``num_docs``: the collection's size, trec_eval's ``-N`` (0 unless given; only
    ``utility``'s fourth coefficient reads it).
    """

    systems: pd.Index
    queries: pd.Index
    r_system: np.ndarray
    r_query: np.ndarray
    r_ret: np.ndarray
    l_rk: np.ndarray
    l_pos: np.ndarray
    l_rel: np.ndarray
    q_levels: np.ndarray  # (n_queries, max_grade + 1) int64
    duplicates: np.ndarray  # per ranking: the run repeated a doc id in it
    num_docs: int = 0  # documents in the collection (trec_eval's -N)
    trec_version: str = "10.0"  # whose definitions where trec_eval 10.0 and 9.0.8 differ
    # What families compute once for all their cutoffs (see :meth:`memo`); not an init field,
    # so that ``dataclasses.replace`` (the variants' changed arrays) starts an empty one.
    _memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def memo(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()``, made once per arrays for ``key``: what a family's measures share across
        their cutoffs (nDCG's discounted gains, AP's precisions, the relevant entries)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    @property
    def n(self) -> int:
        return len(self.r_query)

    @cached_property
    def r_start(self) -> np.ndarray:
        """Per ranking: the index of its first entry among every entry."""
        return (np.cumsum(self.r_ret) - self.r_ret).astype(np.int64)

    @cached_property
    def l_start(self) -> np.ndarray:
        """Per ranking: the index of its first labelled entry."""
        count = np.bincount(self.l_rk, minlength=self.n)
        return (np.cumsum(count) - count).astype(np.int64)

    # ---- every entry, made on first use ---------------------------------------------------

    @cached_property
    def e_rk(self) -> np.ndarray:
        return np.repeat(np.arange(self.n, dtype=np.int64), self.r_ret)

    @cached_property
    def e_pos(self) -> np.ndarray:
        return ranges(np.zeros(self.n, dtype=np.int64), self.r_ret)

    @cached_property
    def e_rel(self) -> np.ndarray:
        out = np.full(int(self.r_ret.sum()), NONPOOL, dtype=np.int64)
        out[self.r_start[self.l_rk] + self.l_pos] = self.l_rel
        return out

    # ---- reductions shared by the families ----------------------------------------------

    def num_rel(self, level: int) -> np.ndarray:
        """Per ranking: labels of its query with grade >= level (trec_eval's num_rel)."""
        per_q = (
            self.q_levels[:, level:].sum(axis=1)
            if level < self.q_levels.shape[1]
            else np.zeros(len(self.queries), dtype=np.int64)
        )
        return per_q[self.r_query]

    def rel_ret(self, level: int) -> np.ndarray:
        """Per ranking: its relevant entries (grade >= level), trec_eval's num_rel_ret."""
        return self.l_sum(mask=self.l_rel >= level)

    def num_nonrel(self, level: int) -> np.ndarray:
        """Per ranking: labels of its query with 0 <= grade < level."""
        return self.q_levels[:, :level].sum(axis=1)[self.r_query]

    def l_sum(self, weights: ArrayLike | None = None, mask: np.ndarray | None = None) -> np.ndarray:
        """Per ranking: the number (or sum of ``weights``) of its labelled entries in ``mask``."""
        rk = self.l_rk if mask is None else self.l_rk[mask]
        if weights is None:
            return np.bincount(rk, minlength=self.n)
        w = np.broadcast_to(np.asarray(weights, dtype=float), self.l_rk.shape)
        return np.bincount(rk, weights=w if mask is None else w[mask], minlength=self.n)

    def l_cumsum(self, values: np.ndarray) -> np.ndarray:
        """Per labelled entry: the sum of ``values`` over its ranking's labelled entries up to
        and including it (equal to the sum over every entry when unlabelled ones add 0)."""
        c = np.cumsum(values)
        before = np.r_[0, c][self.l_start]
        return c - before[self.l_rk]

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per query, its labels with grade >= 0 sorted best first: ``(query, position, grade)``.

        The ideal ranking of nDCG and G: every judged document, the best grades first. Made
        once per arrays (read only: the families share it).
        """
        return self.ideal_by(np.arange(self.q_levels.shape[1]))

    def ideal_by(self, gain: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per query, its labels with grade >= 0 sorted by ``gain[grade]``, best first:
        ``(query, position, gain)``.

        One order of the grades serves every query (a gain belongs to a grade, not to a
        query), so the list is the ``q_levels`` counts repeated in that order.
        """
        nq, ng = self.q_levels.shape
        order = np.argsort(-np.asarray(gain), kind="stable")  # best first
        counts = self.q_levels[:, order]
        q = np.repeat(np.repeat(np.arange(nq), ng), counts.ravel())
        g = np.repeat(np.tile(np.asarray(gain)[order], nq), counts.ravel())
        per_q = counts.sum(axis=1)
        pos = np.arange(len(q)) - np.repeat(np.cumsum(per_q) - per_q, per_q)
        return q, pos, g


def trec_rankings(run: pd.DataFrame, queries: pd.Index, found: tuple[np.ndarray, bool] | None = None) -> Rankings:
    """The rankings of ``run`` in trec_eval's order: score descending, then doc id descending.

    A (system, query) ranking with any missing score keeps its own rank order. Runs are
    nearly always written in score order already, so the order is checked first, neighbour
    by neighbour: only the rankings whose scores go up somewhere are sorted whole, and in the
    others only the runs of tied scores whose doc ids are not descending. Doc ids are
    compared as arrow strings (byte order), and only where scores tie. ``found``: what
    :func:`retrieval_eval.engine.scan.ranking_starts` says of ``run``, when already known.
    """
    rk = rankings(run, queries, found)
    n = len(run)
    if n < 2:
        return rk
    score = run["score"].to_numpy(dtype=np.float64, na_value=np.nan)
    s = score if rk.order is None else score[rk.order]
    whole_block, bad_rows, seg = _out_of_order(run, rk, s)
    if bad_rows is None and not whole_block.any():
        return rk  # the run is in trec_eval's order already
    return _reordered(run, rk, s, whole_block, bad_rows, seg)


def _block_of(starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The ranking (of those starting at ``starts``) each of ``rows`` is in."""
    return np.searchsorted(starts, rows, side="right") - 1


def _within(last: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """The neighbour pairs (row i, row i + 1) of ``pairs`` that are in one ranking
    (``last``: the last row of each ranking but the last one)."""
    if not len(pairs) or not len(last):
        return pairs
    at = np.minimum(np.searchsorted(last, pairs), len(last) - 1)
    return pairs[last[at] != pairs]


def _out_of_order(
    run: pd.DataFrame, rk: Rankings, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """What :func:`trec_rankings` has to sort: the rankings whose scores go up somewhere
    (sorted whole; a ranking with a missing score is left alone), and the rows of the runs of
    tied scores whose doc ids are not descending with each such row's run's first row (None,
    None when there are none). ``s``: the scores in ranking order."""
    import pyarrow.compute as pc

    n, nb, perm = len(run), len(rk.starts), rk.order
    last = rk.starts[1:] - 1
    # Only the few rows found are kept: no full-length mask is made for the usual run,
    # written in order (each such temporary is 10 MB of new memory at 10M rows).
    skip = np.zeros(nb, dtype=bool)
    if np.isnan(np.min(s)):  # min is NaN when a score is missing
        skip[_block_of(rk.starts, np.flatnonzero(np.isnan(s)))] = True  # the ranking keeps its rank order
    whole_block = np.zeros(nb, dtype=bool)
    whole_block[_block_of(rk.starts, _within(last, np.flatnonzero(s[1:] > s[:-1])) + 1)] = True
    whole_block &= ~skip
    tie = _within(last, np.flatnonzero(s[1:] == s[:-1]))
    tie = tie[~(whole_block | skip)[_block_of(rk.starts, tie)]]
    if not len(tie):
        return whole_block, None, None
    doc = arrow(run["doc_id"])
    src = tie if perm is None else perm[tie]
    src_next = tie + 1 if perm is None else perm[tie + 1]
    wrong = pc.less(take(doc, src), take(doc, src_next)).to_numpy(zero_copy_only=False)
    if not wrong.any():
        return whole_block, None, None
    # Runs of equal scores in a ranking: a new run where the score or ranking changes.
    run_id, run_first = tie_runs(n, tie)
    bad = np.zeros(len(run_first), dtype=bool)
    bad[run_id[tie[wrong]]] = True
    return whole_block, bad[run_id], run_first[run_id]


def _reordered(
    run: pd.DataFrame,
    rk: Rankings,
    s: np.ndarray,
    whole_block: np.ndarray,
    bad_rows: np.ndarray | None,
    seg: np.ndarray | None,
) -> Rankings:
    """``rk`` with the rows :func:`_out_of_order` found sorted by score, then doc id, both
    descending, each within its segment (its ranking, or its run of tied scores)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n, perm = len(run), rk.order
    rows = np.repeat(whole_block, rk.lengths)  # the rows whose order is redone
    if bad_rows is not None:
        rows |= bad_rows
    at = np.flatnonzero(rows)
    # Segments follow one another and are named by their first row: sorted, they stay in place.
    block_start = rk.starts[_block_of(rk.starts, at)]
    at_seg = block_start if seg is None else np.where(whole_block[_block_of(rk.starts, at)], block_start, seg[at])
    src = at if perm is None else perm[at]
    table = pa.table({"g": pa.array(at_seg), "s": pa.array(s[at]), "d": take(arrow(run["doc_id"]), src)})
    order = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("s", "descending"), ("d", "descending")]).to_numpy(
        zero_copy_only=False
    )
    new = np.arange(n, dtype=np.int64) if perm is None else perm.copy()
    new[at] = src[order]
    return dataclasses.replace(rk, order=new)


def _label_levels(judgments: pd.DataFrame) -> np.ndarray:
    """Per judged query (first-appearance order), the ``[query, grade]`` counts of its labels
    with grade >= 0 (``q_levels``), the last label of a repeated (query, key) pair winning
    (:func:`retrieval_eval.engine.labels.winning_labels`). For a scan with no run to read: the
    scan's steps count them otherwise."""
    q_codes, queries, _, _, rows = winning_labels(judgments)
    q, grade = q_codes[rows].astype(np.int64), judgments["relevance"].to_numpy(dtype=np.int64)[rows]
    ng = int(grade.max()) + 1 if len(grade) and grade.max() > 0 else 1
    ok = grade >= 0
    q_levels = np.bincount(q[ok] * ng + grade[ok], minlength=len(queries) * ng)
    return q_levels.reshape(len(queries), ng).astype(np.int64)


def _labelled(
    found: tuple[np.ndarray, np.ndarray, np.ndarray], n_blocks: int, ideal: Any, n_units: int
) -> dict[str, np.ndarray]:
    """The scan's ``sums`` hook: a step's labelled entries, kept as they are (with the step's
    number of rankings and entries, to place them among every step's)."""
    local, position, grade = found
    return {
        "l_local": local,
        "l_pos": position,
        "l_grade": grade,
        "l_blocks": np.array([n_blocks]),
        "l_count": np.array([len(local)]),
    }


def scan(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    max_ret: int | None = None,
    complete: bool = False,
    order: str = "trec",
    depth: int | None = None,
    add_systems: Iterable[str] = (),
) -> Arrays:
    """The per-ranking arrays of ``run`` against ``judgments`` (frames of the data model).

    ``max_ret``: trec_eval's ``-M``; ``complete``: trec_eval's ``-c`` (every labelled query
    of every system, an unanswered one as an empty ranking); ``order``: ``"trec"`` (score,
    then doc id, both descending) or ``"rank"`` (the run's own order); ``depth``: read no
    deeper than this (what the measures asked for need, see :attr:`Measure.depth`; ``r_ret``
    then counts at most ``depth`` entries); ``add_systems``: systems kept even without a row in
    ``run`` (after the run's own, in the order given), each with no ranking of its own until
    ``complete`` gives it every labelled query as an empty one.
    """
    if order not in ("trec", "rank"):
        raise ValueError(f"order must be 'trec' or 'rank', got {order!r}")
    if max_ret is not None and (isinstance(max_ret, bool) or int(max_ret) != max_ret or max_ret < 0):
        raise ValueError(f"max_ret must be a non-negative integer, got {max_ret!r}")
    (label_codes, queries), found = beside_starts(run, lambda: codes(arrow(judgments["query_id"])))
    nq = len(queries)
    none = np.zeros(0, dtype=np.int64)
    l_block = l_pos = l_grade = none
    if len(run) and nq:
        reach = [int(d) for d in (max_ret, depth) if d is not None]
        systems, q_levels, (r_system, r_query, r_ret, r_dup), labelled = _scanned(
            judgments, run, queries, label_codes, found, order, min(reach) if reach else None
        )
        if labelled is not None:
            l_block, l_pos, l_grade = labelled
    else:
        systems = rankings(run, queries).systems if len(run) else pd.Index([], dtype=ID)
        q_levels = _label_levels(judgments)
        r_system = r_query = r_ret = none
        r_dup = np.zeros(0, dtype=bool)
    if max_ret == 0:
        r_ret = np.zeros_like(r_ret)
        l_block = l_pos = l_grade = none
    more = [s for s in dict.fromkeys(str(x) for x in add_systems) if s not in set(systems)]
    if more:  # appended: the run's systems keep their codes
        systems = pd.Index([*systems.tolist(), *more], dtype=ID)
    if complete and len(systems):
        have = np.zeros((len(systems), nq), dtype=bool)
        have[r_system, r_query] = True
        miss_s, miss_q = np.nonzero(~have)
        r_system = np.r_[r_system, miss_s].astype(np.int64)
        r_query = np.r_[r_query, miss_q].astype(np.int64)
        r_ret = np.r_[r_ret, np.zeros(len(miss_s), dtype=np.int64)]
        r_dup = np.r_[r_dup, np.zeros(len(miss_s), dtype=bool)]
    return _arrays(systems, queries, q_levels, (r_system, r_query, r_ret, r_dup), (l_block, l_pos, l_grade))


def _scanned(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    queries: pd.Index,
    label_codes: np.ndarray,
    found: tuple[np.ndarray, bool] | None,
    order: str,
    reach: int | None,
) -> tuple[pd.Index, np.ndarray, tuple[np.ndarray, ...], tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """The engine's scan of ``run`` (read no deeper than ``reach``) for :func:`scan`: the
    systems, the per-query grade counts, the per-ranking (system, query, entries, repeats) and
    the labelled entries (ranking, position, grade; None when there are none)."""
    nq = len(queries)
    ranked = trec_rankings(run, queries, found) if order == "trec" else rankings(run, queries, found)
    sc = scan_run(run, reach, judgments, queries, label_codes, sums=_labelled, ranked=ranked, grade_counts=True)
    # The steps count each query's labels by grade, the last label of a repeated pair
    # winning there as everywhere (no second pass over the labels); the grades past the
    # highest winning one are dropped, as :func:`_label_levels` counts them.
    q_levels = sc.sums["grade_counts"].reshape(nq, -1)
    top = np.flatnonzero(q_levels.any(axis=0))
    q_levels = q_levels[:, : int(top[-1]) + 1 if len(top) else 1].astype(np.int64)
    per_ranking = (
        ranked.system[sc.block].astype(np.int64),
        ranked.query[sc.block].astype(np.int64),
        sc.block_kept.astype(np.int64),
        sc.block_dup.astype(bool),
    )
    got = sc.sums
    labelled = None
    if len(got.get("l_local", ())):
        offset = np.cumsum(got["l_blocks"]) - got["l_blocks"]
        labelled = (got["l_local"] + np.repeat(offset, got["l_count"]), got["l_pos"].astype(np.int64), got["l_grade"])
    return ranked.systems, q_levels, per_ranking, labelled


def _arrays(
    systems: pd.Index,
    queries: pd.Index,
    q_levels: np.ndarray,
    per_ranking: tuple[np.ndarray, ...],
    labelled: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> Arrays:
    """:class:`Arrays` of :func:`scan`'s figures: rankings in (system, query label order),
    labelled entries following them, in rank order."""
    r_system, r_query, r_ret, r_dup = per_ranking
    l_block, l_pos, l_grade = labelled
    by = np.lexsort((r_query, r_system))
    new_of_old = np.empty(len(by), dtype=np.int64)
    new_of_old[by] = np.arange(len(by))
    l_rk = new_of_old[l_block]
    entry_order = np.lexsort((l_pos, l_rk))
    l_rk, l_pos = l_rk[entry_order], l_pos[entry_order]
    l_grade = np.asarray(l_grade, dtype=np.int64)[entry_order]
    return Arrays(
        systems=systems,
        queries=queries,
        r_system=r_system[by],
        r_query=r_query[by],
        r_ret=r_ret[by],
        l_rk=l_rk,
        l_pos=l_pos,
        l_rel=np.where(l_grade >= 0, l_grade, UNJUDGED),
        q_levels=q_levels,
        duplicates=r_dup[by],
    )
