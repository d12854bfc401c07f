"""TREC runs (``query_id Q0 doc_id rank score run_name``): the fast arrow path and the careful pass.

A plain file is read by arrow straight from disk, never held as Python bytes, after a block
scan for the bytes arrow's split would treat differently; a run in the usual order (each
query's lines together, ranks ascending) is not sorted. :func:`order_trec` is the one rule that
groups and orders rows (by rank, ties by doc id; or by score, trec_eval's order).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..arrays import block_starts as _block_starts
from ..arrays import keep_starts, tie_runs
from ..arrays import take as _take
from ..arrays import take_strings as _take_strings
from ..errors import FormatError
from ..model import empty_run
from .columns import (
    LARGE_STRING,
    arrow_strings,
    block_rank,
    check_system,
    constant_strings,
    group_codes,
    group_starts,
    in_group_order,
    new_run_frame,
    numpy_column,
    plain_fields,
    read_pool,
    release,
    utf8_view,
)
from .text import checked_bytes, decode, plain_space_blocks, read_bytes, regular_file, utf8_bytes, view_blocks
from .whitespace import INT_RE, arrow_table, delimiter, parse_float_field, space_table_file, strict_table, table_lines

__all__ = ["from_trec_run", "order_trec", "read_trec_run", "trec_run_view"]


def order_trec(system: Any, qid: Any, doc: Any, rank_in: np.ndarray, score: np.ndarray, order: str) -> pd.DataFrame:
    """Group rows by (system, query) in first-appearance order, order each group, renumber.

    ``system`` is the run_name column, or a str naming every row (the column is then the
    compact constant one, see :func:`constant_strings`).
    """
    import pyarrow.compute as pc

    n = len(rank_in)
    if n == 0:
        return empty_run()
    codes = group_codes(system, qid)
    if order == "rank":
        # Equal ranks in one query: doc id ascending (byte order), then file order, so a run
        # with ties reads the same whatever order its lines were written in.
        perm = None if in_group_order(codes, rank_in, strict=True) else rank_order(codes, rank_in, doc)
    else:
        t = pa.table({"g": pa.array(codes), "s": pa.array(score), "d": doc})
        perm = pc.sort_indices(t, sort_keys=[("g", "ascending"), ("s", "descending"), ("d", "descending")])
        perm = perm.to_numpy(zero_copy_only=False)
    if perm is not None:
        # A row's query and system are its group's: taken from the groups' first rows (a few
        # thousand), not gathered row by row across the file. Codes count in first-appearance
        # order, so a group's first row is where the codes reach a new high; once ordered,
        # the codes are each group's code repeated over its size.
        first = np.flatnonzero(np.r_[True, codes[1:] > np.maximum.accumulate(codes)[:-1]])
        codes = np.repeat(np.arange(len(first), dtype=np.int64), np.bincount(codes, minlength=len(first)))
        score = score[perm]
        doc = _take_strings(doc, perm)
        at = pa.array(codes)
        qid = pc.take(_take(qid, first), at, memory_pool=read_pool())  # see read_pool
        system = system if isinstance(system, str) else pc.take(_take(system, first), at, memory_pool=read_pool())
    starts = group_starts(codes)
    counts = np.diff(np.concatenate((starts, [n])))
    rank = np.arange(n, dtype=np.int64) - np.repeat(starts, counts) + 1
    return _grouped_frame(system, qid, rank, doc, score, starts)  # the groups stand together now


def _grouped_frame(
    system: Any, qid: Any, rank: np.ndarray, doc: Any, score: np.ndarray, starts: np.ndarray
) -> pd.DataFrame:
    """The run frame of rows whose (system, query) blocks start at ``starts``, which the
    engine is handed (:func:`~retrieval_eval.arrays.keep_starts`) rather than finding them
    again. ``system``: the run_name column, or a str naming every row."""
    s_arr = constant_strings(system, len(rank)) if isinstance(system, str) else arrow_strings(system)
    frame = new_run_frame(s_arr, arrow_strings(qid), rank, arrow_strings(doc), score)
    keep_starts(frame["system"], frame["query_id"], starts)
    return frame


def rank_order(codes: np.ndarray, rank: np.ndarray, doc: Any) -> np.ndarray:
    """The row order grouping rows by ``codes`` (ascending) and ranking them within each group;
    equal ranks of a group by doc id ascending (byte order), then file order.

    Integer keys (group, rank) sort in numpy: when they are distinct and dense (a shuffled run
    file: each group's ranks 1..n) one scatter places every row, else a stable sort. Doc ids
    are compared only within runs of equal keys.
    """
    import pyarrow.compute as pc

    n = len(codes)
    lo = int(rank.min())
    span = int(rank.max()) - lo + 1
    groups_ = int(codes.max()) + 1
    if groups_ * span <= 2 * n + 1024:
        key = codes.astype(np.int64) * span + (rank - lo)
        seen = np.zeros(groups_ * span, dtype=bool)
        seen[key] = True
        if groups_ * span == n and bool(seen.all()):  # every key once, none missing: a key is its place
            perm = np.empty(n, dtype=np.int64)
            perm[key] = np.arange(n, dtype=np.int64)
            return perm
        dest = np.cumsum(seen, dtype=np.int64) - 1  # a key's place among the keys present
        if int(dest[-1]) + 1 == n:  # distinct keys: one scatter
            perm = np.empty(n, dtype=np.int64)
            perm[dest[key]] = np.arange(n, dtype=np.int64)
            return perm
        del seen, dest
        perm = np.argsort(key, kind="stable")
    else:
        perm = np.lexsort((rank, codes))  # stable: file order among equal keys
    c, r = codes[perm], rank[perm]
    tie = np.flatnonzero((c[1:] == c[:-1]) & (r[1:] == r[:-1]))
    if len(tie):
        run_id = tie_runs(n, tie)[0]
        at = np.flatnonzero(np.isin(run_id, run_id[tie]))  # rows in runs of equal keys
        t = pa.table({"g": pa.array(run_id[at]), "d": _take(doc, perm[at]), "i": pa.array(perm[at])})
        within = pc.sort_indices(t, sort_keys=[("g", "ascending"), ("d", "ascending"), ("i", "ascending")]).to_numpy(
            zero_copy_only=False
        )
        perm[at] = perm[at][within]
    return perm


def _starts_if_grouped(system: Any, qid: pa.ChunkedArray, rank_in: pa.ChunkedArray) -> np.ndarray | None:
    """The first row of each (system, query) block when rows already come grouped and in rank
    order, else None (the rows then need the general grouping of :func:`order_trec`).

    That is the usual TREC run: each query's lines together, ranks ascending. The frame then
    keeps the file's row order, with no sort and no hashing of the 10M ids: only neighbours
    are compared (:func:`~retrieval_eval.arrays.block_starts`), and the few block keys
    checked to be distinct. ``system`` is the run_name column, or a str naming every row.
    """
    if len(rank_in) == 0:
        return None
    # Strict: a tie in rank needs the doc-id order of :func:`order_trec`.
    first, in_order = _block_starts(
        None if isinstance(system, str) else system, qid, rank_in, strict=True, only_in_order=True
    )
    if not in_order:
        return None
    heads = system if isinstance(system, str) else _take(system, first)
    if group_codes(heads, _take(qid, first)).max() + 1 != len(first):
        return None  # a (system, query) comes back later in the file
    return first


#: Column types of a TREC run read by arrow: the ids as bytes (large_binary), which become
#: pandas' large_string with no copy (:func:`utf8_view`: the text arrow reads is valid UTF-8
#: already, a file only once the ASCII scan passed it, so the per-string UTF-8 check of a
#: string column is skipped: 0.15 s of a 10M-line read), the rank as int32 (it only orders
#: rows; a rank past 2**31 sends the file to the exact path), Q0 and run_name
#: dictionary-encoded (a few distinct values, 4 bytes a row, freed once checked).
_TREC_RUN_TYPES = {
    "q": pa.large_binary(),
    "it": pa.dictionary(pa.int32(), pa.binary()),
    "d": pa.large_binary(),
    "r": pa.int32(),
    "s": pa.float64(),
    "m": pa.dictionary(pa.int32(), pa.string()),
}


_TREC_RUN_NAMES = list(_TREC_RUN_TYPES)


#: The same with Q0 and run_name read as booleans (see :func:`_trec_run_guess`).
_TREC_RUN_BITS = dict(_TREC_RUN_TYPES, it=pa.bool_(), m=pa.bool_())


def _trec_run_guess(first: bytes) -> tuple[tuple[list[str], list[str]], str] | None:
    """How to read a TREC run whose lines all have the first line's Q0 and run_name fields.

    Returns arrow's (true, false) values for those two columns read as booleans
    (:data:`_TREC_RUN_BITS`; true: the run name, false: the Q0 field) and the run name; None
    when the first line is not six plain ASCII fields. Read so, a line with another value in either
    field, or an empty one, makes arrow refuse the file, and a run_name equal to the first
    line's Q0 field reads as false. Bits instead of dictionary codes: 0.1 s less to parse 10M
    lines, and 80 MB less held.
    """
    line = first[:-1] if first.endswith(b"\n") else first
    line = line[:-1] if line.endswith(b"\r") else line
    fields = line.split(delimiter(line).encode())
    if len(fields) != 6 or not all(fields) or fields[0].startswith(b"#") or not line.isascii():
        return None
    it, name = fields[1].decode(), fields[5].decode()
    return ([name], [] if it == name else [it]), name


#: What :func:`_trec_run_arrow` returns when a read with :data:`_TREC_RUN_BITS` does not settle
#: the file: it is read again with the run_name column as dictionary codes.
_READ_AGAIN = object()


def _trec_run_read(
    read: Callable[[dict[str, pa.DataType], tuple[list[str], list[str]] | None], pa.Table | None],
    first: bytes,
    order: str,
    system: str | None,
) -> pd.DataFrame | None:
    """The run frame from arrow's read of a TREC run whose first line is ``first``, else None.

    ``read(types, bools)`` reads the whole file (see :func:`strict_table`). It reads first as
    :func:`_trec_run_guess` says; when arrow refuses that (another Q0 field or run name) or a
    line has another run name (which only matters when ``system`` is not given), it reads
    again with the Q0 and run_name columns as dictionary codes (:data:`_TREC_RUN_TYPES`).
    Each table goes straight into :func:`_trec_run_arrow`, which lets its columns go one by one.
    """
    guess = _trec_run_guess(first)
    if guess is not None:
        bools, name = guess
        fast = _trec_run_arrow(read(_TREC_RUN_BITS, bools), order, system, name)
        if fast is not _READ_AGAIN:
            return fast
    return _trec_run_arrow(read(_TREC_RUN_TYPES, None), order, system)


def _plain_codes(col: pa.ChunkedArray) -> bool:
    """True when a dictionary-encoded column has no null and no empty value."""
    return all(c.indices.null_count == 0 and plain_fields(pa.chunked_array([c.dictionary])) for c in col.chunks)


def _one_value(col: pa.ChunkedArray) -> str | None:
    """The value every row of a dictionary-encoded column holds, else None (two or more)."""
    values: set[str] = set()
    for chunk in col.chunks:
        if len(chunk) and len(chunk.dictionary) != 1:
            return None
        values.update(chunk.dictionary.to_pylist() if len(chunk) else ())
    return values.pop() if len(values) == 1 else None


def _trec_run_file(path: str | os.PathLike[str], order: str, system: str | None) -> pd.DataFrame | None:
    """The fast read of a plain TREC run file (see :func:`plain_space_table`), else None.

    Arrow reads the columns straight from the file, which is never held as Python bytes. None
    sends the caller to the exact path, which reads the file again and either returns the
    same frame or raises the exact message.
    """
    if order not in ("rank", "score") or (system is not None and (not isinstance(system, str) or not system)):
        return None
    if not regular_file(path):
        return None
    try:
        with open(path, "rb") as fh:
            first = fh.readline(65536)
    except OSError:
        return None
    plain = None  # what the scan said of the file, once it ran

    def read(types: dict[str, pa.DataType], bools: tuple[list[str], list[str]] | None) -> pa.Table | None:
        nonlocal plain
        if plain is False:
            return None
        table, plain = space_table_file(path, _TREC_RUN_NAMES, types, keep_it=True, bools=bools, scan=plain is None)
        return table

    return _trec_run_read(read, first, order, system)


#: Rows from which a TREC run's read does two things at once (below, a thread costs more).
_TOGETHER_ROWS = 1 << 17


def _trec_run_arrow(table: pa.Table | None, order: str, system: str | None, name: str | None = None) -> Any:
    """The run frame from arrow's read of a TREC run (see :func:`_trec_run_read`), else None.

    None when a field is empty (the careful pass would count another number of fields), a line
    is a ``#`` comment or a score is not finite. The id columns arrow parsed become the frame's
    columns as they are (no copy), one run_name becomes the compact constant column, and every
    other parsed column is let go once converted.

    With ``name``, the table has the Q0 and run_name columns as booleans (see
    :func:`_trec_run_guess`); :data:`_READ_AGAIN` when that read did not settle the file.
    """
    import pyarrow.compute as pc

    if table is None:
        return None if name is None else _READ_AGAIN
    if table.num_rows == 0:
        return None
    qid, it, doc, r, s, m = table.columns
    del table
    qid, doc = utf8_view(qid), utf8_view(doc)
    if name is not None:  # no Q0 or run_name field is empty; every true run name is ``name``
        if system is None and not pc.all(m, min_count=0).as_py():
            return _READ_AGAIN  # a line has another run name
        names: Any = system if system is not None else name
        del it, m
    if not (plain_fields(qid, comment=True) and plain_fields(doc)):
        return None
    if name is None:
        if not (_plain_codes(it) and _plain_codes(m)):
            return None
        names = system if system is not None else _one_value(m)
        if names is None:
            names = m.cast(LARGE_STRING)  # several run names: the per-row column
        del it, m
    if not pc.all(pc.is_finite(s), min_count=0).as_py():
        return None
    release()  # the parse buffers let go, before numpy allocates
    if order == "rank" and len(r) >= _TOGETHER_ROWS:
        # The rankings' boundaries (arrow compares neighbours without the GIL) are found
        # while the scores are copied out.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            finding = pool.submit(_starts_if_grouped, names, qid, r)
            score = numpy_column(s, np.float64)
            first = finding.result()
    else:
        first = _starts_if_grouped(names, qid, r) if order == "rank" else None
        score = numpy_column(s, np.float64)
    del s
    rank_in = numpy_column(r, np.int64) if first is None else None
    del r
    release()
    if first is None:
        assert rank_in is not None
        return order_trec(names, qid, doc, rank_in, score, order)
    return _grouped_frame(names, qid, block_rank(first, len(score)), doc, score, first)


def _trec_python(text: str, label: str) -> tuple[list[Any], list[Any], list[Any], list[Any], list[Any]]:
    """The careful pass over a TREC run's lines. Fields after the sixth are ignored, as
    trec_eval ignores them ("reserved for future expansion"); fewer than six is an error."""
    q, d, r, s, m = [], [], [], [], []
    for line, f in table_lines(text):
        if len(f) < 6:
            raise FormatError(label, line, f"expected 6 fields, got {len(f)}")
        if not INT_RE.match(f[3]):
            raise FormatError(label, line, f"rank must be an integer, got {f[3]!r}")
        if not -(2**63) <= int(f[3]) < 2**63:
            raise FormatError(label, line, f"rank {f[3]} is too large")
        sc = parse_float_field(f[4])
        if sc is None:
            raise FormatError(label, line, f"score must be a finite number, got {f[4]!r}")
        q.append(f[0])
        d.append(f[2])
        r.append(int(f[3]))
        s.append(sc)
        m.append(f[5])
    return q, d, r, s, m


def _from_trec(text: str | None, data: bytes | None, label: str, order: str, system: str | None) -> pd.DataFrame:
    if order not in ("rank", "score"):
        raise ValueError(f"order must be 'rank' or 'score', got {order!r}")
    check_system(system)
    data = utf8_bytes(text, data)
    if data is not None:
        first = data[: data.find(b"\n") + 1] if b"\n" in data else data
        fast = _trec_run_read(
            lambda types, bools: arrow_table(data, _TREC_RUN_NAMES, types, True, bools), first, order, system
        )
        if fast is not None:
            return fast
    if text is None:
        assert data is not None
        text = decode(data, label)
    q, d, r, s, m = _trec_python(text, label)
    try:
        qid, doc = pa.array(q, LARGE_STRING), pa.array(d, LARGE_STRING)
        names = system if system is not None else pa.array(m, LARGE_STRING)
    except (UnicodeEncodeError, pa.ArrowException):
        raise FormatError(label, None, "text is not valid Unicode (a lone surrogate escape)") from None
    return order_trec(names, qid, doc, np.asarray(r, dtype=np.int64), np.asarray(s, dtype=np.float64), order)


def from_trec_run(
    content: str | bytes, label: str = "run", order: str = "rank", system: str | None = None
) -> pd.DataFrame:
    """Parse a TREC run (``query_id Q0 doc_id rank score run_name``) into the run frame.

    ``system`` is the run_name column unless ``system=`` is given. ``order="rank"`` orders each
    query by its rank column, as the spec reads it (equal ranks by doc id, ascending: a stable
    rule that does not depend on the order the lines were written in); ``order="score"``
    re-ranks by score descending then doc id descending, the order trec_eval evaluates in. The
    output ``rank`` is then 1..n in that order; ``score`` keeps the file's scores. Fields after
    the sixth are ignored, as trec_eval ignores them; fewer than six is an error.

    Parameters
    ----------
    content : str or bytes
        The TREC run text.
    label : str
        Names the input in messages.
    order : {"rank", "score"}
        Which column orders each query's rows.
    system : str, optional
        The system of every row, instead of the run_name column.

    Returns
    -------
    DataFrame
        The run frame, each query's rows in ``order``, ``rank`` renumbered 1..n.

    Raises
    ------
    FormatError
        A line with fewer than six fields, a rank that is not an integer or a score that is not
        a finite number, naming the line.

    Examples
    --------
    >>> run = from_trec_run("q1 Q0 d2 2 0.5 bm25\\nq1 Q0 d1 1 0.9 bm25\\n")
    >>> run[["system", "query_id", "rank", "doc_id"]].values.tolist()
    [['bm25', 'q1', 1, 'd1'], ['bm25', 'q1', 2, 'd2']]
    """
    if isinstance(content, (bytes, bytearray)):
        data, text = checked_bytes(bytes(content), label)
        return _from_trec(text, data, label, order, system)
    return _from_trec(content, None, label, order, system)


def read_trec_run(path: str | os.PathLike[str], order: str = "rank", system: str | None = None) -> pd.DataFrame:
    """Read a TREC run file (see :func:`from_trec_run`); messages are labelled with the path.

    Parameters
    ----------
    path : str or PathLike
        A TREC run file.
    order : {"rank", "score"}
        See :func:`from_trec_run`.
    system : str, optional
        The system of every row, instead of the run_name column.

    Returns
    -------
    DataFrame
        The run frame.

    Raises
    ------
    FormatError
        The file cannot be read, or a line is malformed (naming the path and line).
    """
    label = str(path)
    fast = _trec_run_file(path, order, system)
    if fast is not None:
        return fast
    data, text = checked_bytes(read_bytes(path), label)
    return _from_trec(text, data, label, order, system)


def trec_run_view(view: memoryview, label: str = "run", order: str = "rank", system: str | None = None) -> pd.DataFrame:
    """:func:`from_trec_run` of the bytes ``view`` shows, the same frame or the same message.

    Plain text (see :func:`~retrieval_eval.io.text.plain_space_blocks`) is read by arrow
    straight from the view, as a file is from disk: the text is never copied whole. Anything
    else is copied once and read by :func:`from_trec_run`. The frame holds no reference to the
    view's memory, so a reader may fill it again (the streamed reader's reused buffer).
    """
    usual = order in ("rank", "score") and (system is None or (isinstance(system, str) and system))
    if usual and len(view) and plain_space_blocks(view_blocks(view)):
        head = bytes(view[:65536])
        first = head[: head.find(b"\n") + 1] if b"\n" in head else head

        def read(types: dict[str, pa.DataType], bools: tuple[list[str], list[str]] | None) -> pa.Table | None:
            return strict_table(pa.BufferReader(pa.py_buffer(view)), _TREC_RUN_NAMES, types, " ", True, 0, bools)

        fast = _trec_run_read(read, first, order, system)
        if fast is not None:
            return fast
    return from_trec_run(bytes(view), label=label, order=order, system=system)


def trec_run_rows(content: bytes, label: str = "run", system: str | None = None) -> pd.DataFrame:
    """A TREC run's rows in file order with the file's own ranks: not grouped, not renumbered.

    The careful pass's fields (the same checks and messages as :func:`from_trec_run`), for a
    reader that puts the pieces of a ranking found in several places together and then orders
    them with :func:`order_trec` (the Dask path, after a shuffle by query). Columns ``system``,
    ``query_id``, ``doc_id`` (strings), ``rank`` (int64, as written), ``score`` (float64).
    """
    check_system(system)
    data, text = checked_bytes(bytes(content), label)
    if text is None:
        text = decode(data, label)
    q, d, r, s, m = _trec_python(text, label)
    strings = pd.StringDtype("pyarrow")
    return pd.DataFrame(
        {
            "system": pd.array([system] * len(q) if system is not None else m, dtype=strings),
            "query_id": pd.array(q, dtype=strings),
            "doc_id": pd.array(d, dtype=strings),
            "rank": np.asarray(r, dtype=np.int64),
            "score": np.asarray(s, dtype=np.float64),
        }
    )
