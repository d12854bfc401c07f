"""The scan: a run read against the judgments, once, for every measure. Three policies live
here and nowhere else:

* **Order** (:func:`rankings`): a run's own order is authoritative; rows are ranked by their
  ``rank`` column within each (system, query_id). Readers decide ``rank`` (a TREC run read
  with ``order="score"`` is re-ranked the trec_eval way before it gets here).
* **Duplicates** (:func:`scan_run`, also behind :func:`dedupe_run`): a key repeated inside one
  ranking counts once, at its first occurrence; a (query, key) pair labelled twice takes its
  last label. A repeat is not new evidence; counting it again pushes recall, AP and
  nDCG above 1.
* **Depth**: only the entries the requested measures can reach are read.

There is no per-query Python loop. :func:`scan_run` reads the run in steps of whole rankings
(two steps run at once). In a step, ids are compared by 64-bit hashes computed in numpy, and
every match made on a hash is checked on the strings (a collision redoes the step with exact
codes); each step reduces its rows to per-ranking sums, each an ``np.bincount``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd

from ..arrays import arrow as _arrow
from ..arrays import block_starts as _block_starts
from ..arrays import kept_starts
from ..arrays import take as _take
from ..arrays import whole as _whole
from ..model import ID
from .duplicates import repeat_anywhere
from .kernels import fetch, find, first_appearance, groups, hashes, lookup, one_value, ranges, repeats, same
from .labels import label_keys
from .remembered import recalled, remember

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# Order and duplicates: the one place each is defined.

#: Rows handled per step of the scan. Rankings are never split across steps. Larger steps
#: make fewer numpy calls per row; of 64k-512k, 128k-256k were fastest, and 128k keeps the
#: two steps' temporaries (tens of MB, not the GBs of one pass over 10M rows) off the peak.
STEP_ROWS = 1 << 17


@dataclass
class Rankings:
    """A run's rankings: the (system, query) blocks of rows, in ranking order."""

    starts: np.ndarray  # per block: first row (in ``order`` when given, else in the frame)
    lengths: np.ndarray  # per block: raw entries
    system: np.ndarray  # per block: system code
    query: np.ndarray  # per block: query code (-1: the query is not among ``queries``)
    order: np.ndarray | None  # row permutation putting interleaved rankings together
    systems: pd.Index
    queries: pd.Index
    unjudged: pd.Index  # the run's queries not among ``queries`` (code -1), first appearance order


def ranking_starts(run: pd.DataFrame) -> tuple[np.ndarray, bool]:
    """The first row of each (system, query) block of a run frame, and whether ranks go up
    strictly inside every block (see :func:`_block_starts`). Inside
    :func:`.remembered.found_once`, found once per run."""
    columns = _ranking_columns(run)
    found = recalled(columns)
    if found is None:  # the reader may have found them while it read the run
        found = kept_starts(run["system"], run["query_id"], columns[2]) or _find_starts(*columns)
        remember(columns, found)
    return found


def _ranking_columns(run: pd.DataFrame) -> tuple[Any, Any, np.ndarray]:
    return _arrow(run["system"]), _arrow(run["query_id"]), run["rank"].to_numpy(dtype=np.int64)


def _find_starts(sys_arr: Any, q_arr: Any, rank: np.ndarray) -> tuple[np.ndarray, bool]:
    import pyarrow as pa

    return _block_starts(None if one_value(sys_arr) else sys_arr, q_arr, pa.array(rank), strict=True)


def whole_ranking_starts(run: pd.DataFrame) -> np.ndarray | None:
    """The first row of each ranking when every ranking is one block of rows with ranks going
    up strictly (the usual run, read from a file), else None. None too for blocks of under four
    rows on average: that is rows of interleaved rankings, whose blocks cost more to check
    than the caller's general path."""
    starts, in_order = ranking_starts(run)
    if not in_order or len(starts) > len(run) // 4:
        return None
    heads = pd.DataFrame({c: _take(_arrow(run[c]), starts) for c in ("system", "query_id")})
    return None if heads.duplicated().any() else starts


def beside_starts(run: pd.DataFrame, work: Callable[[], T]) -> tuple[T, tuple[np.ndarray, bool] | None]:
    """``work()``, and the run's ranking boundaries (:func:`ranking_starts`) found beside it on
    a second thread when the run is large (arrow compares neighbours without the GIL); None
    for a small run, whose scan finds them itself. Returns ``(work's result, found)``."""
    if len(run) < STEP_ROWS:
        return work(), None
    columns = _ranking_columns(run)
    found = recalled(columns)
    if found is not None:
        return work(), found
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        finding = pool.submit(_find_starts, *columns)
        got = work()
        found = finding.result()
    remember(columns, found)
    return got, found


def rankings(run: pd.DataFrame, queries: pd.Index | None, found: tuple[np.ndarray, bool] | None = None) -> Rankings:
    """Find the rankings of a run without hashing its rows.

    Rankings are contiguous runs of rows in files; only their first rows are hashed. A run
    whose rankings are interleaved, or whose ranks go down inside a ranking, is put in order
    by (first appearance of the ranking, rank): a run's own order is authoritative.
    ``found``: what :func:`ranking_starts` says of ``run``, when already known.
    """
    n = len(run)
    sys_arr, q_arr = _arrow(run["system"]), _arrow(run["query_id"])
    starts, in_order = ranking_starts(run) if found is None else found
    start_sys = _take(sys_arr, starts)
    start_q = _take(q_arr, starts)
    systems = pd.Index(pd.unique(pd.array(start_sys, dtype=ID)), dtype=ID)
    all_queries = pd.Index(pd.unique(pd.array(start_q, dtype=ID)), dtype=ID)
    if queries is None:
        queries = all_queries
    s_code = lookup(start_sys, systems)
    q_code = lookup(start_q, queries)
    not_among = np.flatnonzero(q_code < 0)
    unjudged = pd.Index(pd.unique(pd.array(_take(start_q, not_among), dtype=ID)), dtype=ID)
    # The (system, query) cell of each ranking; queries not in ``queries`` get codes past nq.
    nq = max(len(queries), 1)
    q_any = np.where(q_code >= 0, q_code, nq + lookup(start_q, all_queries))
    cell_key = s_code * (nq + len(all_queries)) + q_any
    order = None
    if repeats(cell_key).any() or not in_order:
        lengths = np.diff(np.r_[starts, n])
        cell_code, cell_first = first_appearance(cell_key)
        row_cell = np.repeat(cell_code, lengths)
        order = np.lexsort((run["rank"].to_numpy(dtype=np.int64), row_cell))
        row_cell = row_cell[order]
        first_of = np.flatnonzero(np.r_[True, row_cell[1:] != row_cell[:-1]])
        s_code, q_code = s_code[cell_first], q_code[cell_first]
        starts = first_of
    return Rankings(
        starts=starts,
        lengths=np.diff(np.r_[starts, n]),
        system=s_code,
        query=q_code,
        order=order,
        systems=systems,
        queries=queries,
        unjudged=unjudged,
    )


@dataclass
class Scan:
    """What the metrics read of a run, after order, duplicates and the depth cut.

    Blocks are the rankings the scan read, in scan order. Without judgments, the rows are every
    kept entry in (scan block, position) order, with its source row. With judgments, each step
    reduced its entries to ``sums`` (per ranking, and per query) and no row is kept.
    """

    rankings: Rankings
    block: np.ndarray  # per scanned block: its index in ``rankings``
    block_kept: np.ndarray  # per scanned block: deduplicated entries, cut at ``depth``
    block_dup: np.ndarray  # per scanned block: a key repeated among the entries read
    row_block: np.ndarray  # without judgments, per kept entry: scan block number
    row_position: np.ndarray  # ... its 0-based position in the deduplicated ranking
    row_source: np.ndarray  # ... and its row in the run frame
    sums: dict[str, np.ndarray]  # with judgments: what ``sums`` made of each step, joined


def _steps(cost: np.ndarray) -> np.ndarray:
    """Cut units (with their row costs) into consecutive steps of about STEP_ROWS rows."""
    n = len(cost)
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    cum = np.cumsum(cost)
    marks = np.arange(1, int(cum[-1]) // STEP_ROWS + 1) * STEP_ROWS
    cuts = np.searchsorted(cum, marks, side="left") + 1
    return np.unique(np.r_[0, np.minimum(cuts, n), n]).astype(np.int64)


def scan_run(
    run: pd.DataFrame,
    depth: int | None,
    judgments: pd.DataFrame | None = None,
    queries: pd.Index | None = None,
    label_codes: np.ndarray | None = None,
    threshold: int = 1,
    sums: Callable[..., dict[str, np.ndarray]] | None = None,
    found: tuple[np.ndarray, bool] | None = None,
    ranked: Rankings | None = None,
    grade_counts: bool = False,
) -> Scan:
    """Order, deduplicate and cut a run to ``depth``, and (with judgments) grade its entries.

    This is where the run's own order, the first-occurrence rule for a repeated key and the
    last-label-wins rule for a repeated judgment are applied, for every face of the engine.

    The run is read in steps of whole rankings (STEP_ROWS rows; :func:`_step`). In a step, the
    ranked ids and the labels of the step's queries are coded by their hashes (:func:`hashes`);
    a repeated key is then a repeated (ranking, code) pair and a label lookup is a (query,
    code) pair, and each match is checked on the strings.
    Only the entries the cutoffs can reach are read: a ranking is cut to its first ``depth``
    raw entries, and taken whole only when it repeated a key there (later entries move up).

    With ``judgments``, ``queries`` and ``label_codes`` (each label's query code) are given and
    only the rankings of those queries are read; the labels are sorted by query so that each
    step's labels are one slice. Each step counts its queries' labels (``threshold`` says
    which are relevant), ranks their grades into the ideal rankings, and hands its labelled
    entries and ideal rankings to ``sums`` (see :func:`metric_sums`): a step's rows are
    reduced to per-ranking sums while they are small.

    ``ranked``: the run's rankings when the caller ordered them another way (the measure
    catalogue's trec_eval order); else :func:`rankings` finds them. ``grade_counts`` (with
    judgments): the sums also hold ``grade_counts``, per query (in ``queries`` order) the
    number of its winning labels of each grade from 0 to the highest grade of any label, flat
    (``reshape(len(queries), -1)``); negative grades are not counted.
    """
    rk = rankings(run, queries, found) if ranked is None else ranked
    plan = _plan(rk, run, depth, judgments, label_codes, threshold, sums, grade_counts)
    spans = list(zip(plan.steps[:-1].tolist(), plan.steps[1:].tolist()))
    if len(spans) > 1:
        # Arrow and numpy release the GIL while they work: two steps run at once.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            results = list(pool.map(lambda span: _step(plan, *span), spans))
    else:
        results = [_step(plan, *span) for span in spans]
    return _joined(plan, results)


@dataclass
class _Plan:
    """The scan's read-only state, which its steps share (two threads read it; nothing is
    copied): the rankings, the units (judged queries, or rankings) in scan order with their
    blocks, the steps, and with judgments the labels sorted by query."""

    rk: Rankings
    doc_arr: Any  # the run's doc ids, an arrow array
    depth: int | None
    blocks: np.ndarray  # the rankings read, in scan order
    unit_of_block: np.ndarray
    block_at: np.ndarray  # per unit: its first block
    steps: np.ndarray  # unit boundaries of the steps
    graded: bool
    keys: Any = None  # the labels' keys (arrow), sorted by query
    grades: np.ndarray | None = None
    label_q: np.ndarray | None = None
    label_at: np.ndarray | None = None  # per query: its first label
    n_grades: int = 1
    threshold: int = 1
    grade_counts: bool = False
    sums: Any = None


def _plan(
    rk: Rankings,
    run: pd.DataFrame,
    depth: int | None,
    judgments: pd.DataFrame | None,
    label_codes: np.ndarray | None,
    threshold: int,
    sums: Any,
    grade_counts: bool,
) -> _Plan:
    """The units, their blocks and labels, and the steps (of about STEP_ROWS rows each)."""
    import pyarrow as pa

    doc_arr = _arrow(run["doc_id"])
    graded = judgments is not None
    keys = grades = label_q = label_at = None
    n_grades = 1
    if graded:
        assert judgments is not None and label_codes is not None  # given together (see above)
        nq = len(rk.queries)
        keys = label_keys(judgments)
        keys = keys.cast(doc_arr.type)
        if isinstance(keys, pa.Array):
            keys = pa.chunked_array([keys], keys.type)
        grades = judgments["relevance"].to_numpy(dtype=np.int64)
        label_q = label_codes
        if len(label_q) > 1 and not bool(np.all(label_q[1:] >= label_q[:-1])):
            by_query = np.argsort(label_q, kind="stable")
            keys = pa.chunked_array([_take(keys, by_query)], keys.type)
            grades, label_q = grades[by_query], label_q[by_query]
        label_at = np.r_[0, np.cumsum(np.bincount(label_q, minlength=nq))].astype(np.int64)
        n_grades = int(grades.max()) + 1 if len(grades) and grades.max() > 0 else 1
        # Units are the judged queries; each brings its labels and its rankings.
        judged = np.flatnonzero(rk.query >= 0)
        blocks = judged[np.argsort(rk.query[judged], kind="stable")]
        unit_of_block = rk.query[blocks]
        n_units = nq
    else:
        blocks = np.arange(len(rk.starts))
        unit_of_block = blocks
        n_units = len(blocks)
    block_at = np.r_[0, np.cumsum(np.bincount(unit_of_block, minlength=n_units))].astype(np.int64)
    reach = rk.lengths[blocks] if depth is None else np.minimum(rk.lengths[blocks], depth)
    cost = np.bincount(unit_of_block, weights=reach, minlength=n_units)
    if graded:
        cost += np.diff(cast(np.ndarray, label_at))
    return _Plan(
        rk,
        doc_arr,
        depth,
        blocks,
        unit_of_block,
        block_at,
        _steps(cost),
        graded,
        keys,
        grades,
        label_q,
        label_at,
        n_grades,
        threshold,
        grade_counts,
        sums,
    )


def _step(plan: _Plan, ua: int, ub: int, exact: bool = False) -> dict[str, np.ndarray]:
    """One step: the rankings and labels of units ``ua`` to ``ub``.

    Ids are compared by their 64-bit hashes; every pair of ids the step treats as the same
    (a repeat in a ranking, a repeated label, an entry and its label) is then checked on
    the strings. A collision makes the step start again with exact codes (``exact``): each
    part returns None for it.
    """
    bs = plan.blocks[plan.block_at[ua] : plan.block_at[ub]]
    group = plan.unit_of_block[plan.block_at[ua] : plan.block_at[ub]] - ua  # per ranking: its unit
    # A key is (group << shift) | code: group a ranking or a unit of the step, code an id.
    shift = np.uint64(64 - max(len(bs), ub - ua, 1).bit_length())
    got: dict[str, np.ndarray] = {}
    labels = None
    if plan.graded:
        labels = _step_labels(plan, ua, ub, shift, exact, got)
        if labels is None:
            return _step(plan, ua, ub, exact=True)  # every label of a pair is the same key
    entries = _step_entries(plan, bs, shift, exact, labels)
    if entries is None:
        return _step(plan, ua, ub, exact=True)
    got.update(kept=entries.kept, dup=entries.has_dup)
    if not plan.graded:
        position, kept = entries.position, entries.kept
        if position is None:
            position = np.arange(len(entries.local), dtype=np.int64) - np.repeat(np.cumsum(kept) - kept, kept)
        got.update(
            row_block=entries.local + plan.block_at[ua], row_position=position, row_source=cast(np.ndarray, entries.src)
        )
        return got
    graded = _step_graded(plan, entries, cast(_StepLabels, labels), group, len(bs), shift, exact, ub - ua)
    if graded is None:
        return _step(plan, ua, ub, exact=True)
    got.update(graded)
    return got


@dataclass
class _StepLabels:
    """A step's labels: the winners of repeated (query, key) pairs and the ideal rankings."""

    labels: object  # the step's label keys (arrow)
    label_ids: tuple[Any, np.ndarray, np.ndarray] | None  # with their hashes (None with exact codes)
    m: int  # labels in the step
    win_rows: np.ndarray
    win_pairs: np.ndarray
    win_grades: np.ndarray
    ideal: tuple[np.ndarray, np.ndarray, np.ndarray]


def _step_labels(
    plan: _Plan, ua: int, ub: int, shift: np.uint64, exact: bool, got: dict[str, np.ndarray]
) -> _StepLabels | None:
    """The last label of a repeated (query, key) pair wins; the step's label counts (into
    ``got``) and each query's ideal ranking. None on a hash collision."""
    depth, cut_code = plan.depth, np.uint64(64) - shift
    assert plan.label_at is not None and plan.label_q is not None and plan.grades is not None  # graded
    la, m = int(plan.label_at[ua]), int(plan.label_at[ub] - plan.label_at[ua])
    labels = _whole(plan.keys.slice(la, m))
    label_ids: Any = None
    if exact:  # codes in first-appearance order: the same when docs follow the labels
        label_code = labels.dictionary_encode().indices.to_numpy(zero_copy_only=False)
        label_code = label_code.astype(np.uint64)
    else:
        label_ids = (labels, *hashes(labels))
        label_code = label_ids[1] >> cut_code
    label_local = plan.label_q[la : la + m].astype(np.int64) - ua
    pairs = label_local.astype(np.uint64) << shift | label_code
    later = groups(pairs[::-1])[0]  # the first from the end: the last label
    loser = np.flatnonzero(later != np.arange(m))
    if not exact and not same(label_ids, m - 1 - loser, label_ids, m - 1 - later[loser]):
        return None
    win_rows = (m - 1 - np.flatnonzero(later == np.arange(m)))[::-1]
    win_pairs = pairs[win_rows]
    win_grades = plan.grades[la : la + m][win_rows]
    win_query = label_local[win_rows]
    n_judged = np.bincount(win_query, minlength=ub - ua)
    got.update(n_judged=n_judged, n_relevant=np.bincount(win_query[win_grades >= plan.threshold], minlength=ub - ua))
    if plan.grade_counts:
        counted = win_grades >= 0
        got["grade_counts"] = np.bincount(
            win_query[counted] * plan.n_grades + win_grades[counted], minlength=(ub - ua) * plan.n_grades
        )
    # Each query's ideal ranking: its grades, best first. (Labels come sorted by
    # query: one stable sort of a nearly sorted key.)
    low = int(win_grades.min()) if len(win_rows) else 0
    span = int(win_grades.max()) - low + 1 if len(win_rows) else 1
    ideal = np.argsort(win_query * span + (span - 1 - (win_grades - low)), kind="stable")
    i_query, i_grade = win_query[ideal], win_grades[ideal]
    i_position = np.arange(len(ideal)) - (np.cumsum(n_judged) - n_judged)[i_query]
    counts = (i_grade != 0) & (i_position < depth) if depth is not None else i_grade != 0
    return _StepLabels(
        labels, label_ids, m, win_rows, win_pairs, win_grades, (i_query[counts], i_position[counts], i_grade[counts])
    )


@dataclass
class _StepEntries:
    """A step's ranked entries after duplicates and the depth cut."""

    local: np.ndarray  # per kept entry: its ranking in the step
    src: np.ndarray | None  # ... its row in the run frame
    doc_ids: tuple[Any, np.ndarray, np.ndarray] | None  # the entries' ids with their hashes (None with exact codes)
    doc_code: np.ndarray
    key: np.ndarray | None  # the (ranking, code) keys, when nothing was dropped
    entry: np.ndarray | None  # positions of the kept entries among those read (None: all)
    kept: np.ndarray  # per ranking: entries kept
    position: np.ndarray | None  # per kept entry: its position (None: in place)
    has_dup: np.ndarray  # per ranking: a key repeated among the entries read


def _step_entries(
    plan: _Plan, bs: np.ndarray, shift: np.uint64, exact: bool, labels: _StepLabels | None
) -> _StepEntries | None:
    """Read the step's rankings to ``depth`` (whole when a key repeats there), drop the repeats
    and cut back to ``depth``. None on a hash collision."""
    import pyarrow as pa

    rk, depth, cut_code = plan.rk, plan.depth, np.uint64(64) - shift
    m = labels.m if labels is not None else 0
    length = rk.lengths[bs]
    take = length if depth is None else np.minimum(length, depth)
    doc_ids: Any = None
    while True:
        local = np.repeat(np.arange(len(bs), dtype=np.int64), take)
        first = rk.starts[bs]
        if (
            rk.order is None
            and bool(np.all(take == length))
            and len(bs)
            and bool(np.all(first[1:] == first[:-1] + length[:-1]))
        ):
            # Whole rankings, one after another in the frame: one slice of it.
            src = None  # rows first[0] on, made only if asked for
            docs = _whole(plan.doc_arr.slice(int(first[0]), len(local)))
        else:
            rows = ranges(first, take)
            src = rows if rk.order is None else rk.order[rows]
            docs = fetch(plan.doc_arr, src)
        if exact:
            both = pa.concat_arrays(([cast(Any, labels).labels] if plan.graded else []) + [docs]).dictionary_encode()
            doc_code = both.indices.to_numpy(zero_copy_only=False)[m:].astype(np.uint64)
        else:
            doc_ids = (docs, *hashes(docs))
            doc_code = doc_ids[1] >> cut_code
        key: np.ndarray | None = local.view(np.uint64) << shift
        key |= doc_code
        prev = groups(key, heads=False)[1]
        dup = np.flatnonzero(prev >= 0)  # an earlier entry of its ranking is the same id
        if not exact and not same(doc_ids, dup, doc_ids, prev[dup]):
            return None
        has_dup = np.bincount(local[dup], minlength=len(bs)) > 0
        redo = has_dup & (length > take)
        if not redo.any():
            break
        take = np.where(redo, length, take)
    if src is None and (len(dup) or not plan.graded):
        src = np.arange(first[0], first[0] + len(local), dtype=np.int64)
    if len(dup):  # drop the repeats, then cut the rankings taken whole back to ``depth``
        keep = prev < 0
        entry = np.flatnonzero(keep)  # positions in ``docs``
        local, src = local[keep], cast(np.ndarray, src)[keep]
        kept = np.bincount(local, minlength=len(bs))
        position = np.arange(len(local), dtype=np.int64) - np.repeat(np.cumsum(kept) - kept, kept)
        if depth is not None and bool(np.any(take > depth)):
            cut = position < depth
            local, src, position, entry = local[cut], src[cut], position[cut], entry[cut]
            kept = np.minimum(kept, depth)
        key = None
    else:  # the usual step: every entry kept, in place
        entry, kept, position = None, take, None
    return _StepEntries(local, src, doc_ids, doc_code, key, entry, kept, position, has_dup)


def _step_graded(
    plan: _Plan,
    entries: _StepEntries,
    labels: _StepLabels,
    group: np.ndarray,
    n_blocks: int,
    shift: np.uint64,
    exact: bool,
    n_units: int,
) -> dict[str, np.ndarray] | None:
    """Each kept entry's label, if it has one, handed to ``sums`` with the ideal rankings.
    None on a hash collision."""
    local, entry, kept, key = entries.local, entries.entry, entries.kept, entries.key
    # With one ranking per query (group is 0, 1, 2...) and nothing dropped, the repeats' keys
    # are the lookup keys.
    if key is None or not np.array_equal(group, np.arange(n_blocks)):
        key = group[local].astype(np.uint64) << shift
        key |= entries.doc_code if entry is None else entries.doc_code[entry]
    at = find(labels.win_pairs, key)
    has = np.flatnonzero(at >= 0)
    at = at[has]
    if not exact and not same(
        cast(Any, entries.doc_ids),
        has if entry is None else entry[has],
        cast(Any, labels.label_ids),
        labels.win_rows[at],
    ):
        return None
    if entries.position is None:  # an entry's position: its place after its ranking's first entry
        position_has = has - (np.cumsum(kept) - kept)[local[has]]
    else:
        position_has = entries.position[has]
    return plan.sums((local[has], position_has, labels.win_grades[at]), n_blocks, labels.ideal, n_units)


def _joined(plan: _Plan, results: list[dict[str, np.ndarray]]) -> Scan:
    """The steps' pieces, joined into the :class:`Scan`; the rankings with no repeat above the
    cutoff are read whole for the report of a repeated key."""
    import pyarrow as pa

    out: dict[str, list[np.ndarray]] = {}
    for got in results:
        for name, values in got.items():
            out.setdefault(name, []).append(values)
    del results

    def cat(name: str, dtype: type[np.generic] | type[bool] = np.int64) -> np.ndarray:
        pieces = out.pop(name, None)
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)

    rk, blocks, depth = plan.rk, plan.blocks, plan.depth
    block_dup = cat("dup", bool)
    if plan.graded and depth is not None:
        # The metrics stop at the cutoff, the report of a repeated key does not (SPEC A3):
        # the rankings with no repeat above the cutoff are read whole for one.
        late = np.flatnonzero(~block_dup & (rk.lengths[blocks] > depth))
        late_blocks = blocks[late]
        block_dup[late] = repeat_anywhere(
            plan.doc_arr, rk.starts, rk.lengths, rk.order, late_blocks, _steps(rk.lengths[late_blocks])
        )
    pa.default_memory_pool().release_unused()  # the steps' ids, freed: give them back now
    return Scan(
        rankings=rk,
        block=blocks,
        block_kept=cat("kept"),
        block_dup=block_dup,
        row_block=cat("row_block"),
        row_position=cat("row_position"),
        row_source=cat("row_source"),
        sums={name: cat(name) for name in list(out)},  # what is left: the steps' sums
    )


def dedupe_run(run: pd.DataFrame, depth: int | None = None) -> pd.DataFrame:
    """The run as metrics see it: ordered, each key counted at its first occurrence only.

    Returns a new long frame (system, query_id, rank, doc_id, score, plus any other columns of
    the input) where ``rank`` is the 1-based position in the deduplicated ranking, cut to
    ``depth`` entries per ranking when given. ``top1`` of a query (calibration) is its row
    with rank 1 here.
    """
    scan = scan_run(run, depth)
    out = run.iloc[scan.row_source].reset_index(drop=True)
    out["rank"] = (scan.row_position + 1).astype(np.int64)
    return out
