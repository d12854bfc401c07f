"""Blocks of whole queries: a run frame cut in memory, a parquet dataset read in record
batches, a TREC run read through one reused buffer (:func:`trec_blocks`), the next block read
while the last is scored (:func:`read_ahead`), the labels of a block's queries found in one
lookup (:class:`JudgmentIndex`), and the byte-level helpers the line readers of
:mod:`.streaming` use (where the last query of a block of bytes begins; a reader's error with
the line counted in the file).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd

from ... import arrays
from ...engine import kernels
from ...errors import FormatError
from ...io.byte_ranges import lines_before
from ...model import ID

T = TypeVar("T")

#: Bytes read for the first block per row asked for (later blocks use the measured size).
FIRST_BYTES_PER_ROW = 48
#: The judgments' columns the engine reads.
JUDGMENT_COLUMNS = ["query_id", "doc_uri", "chunk_id", "relevance", "stratum"]


class JudgmentIndex:
    """The judgments, with the rows of each query found in one lookup (no scan per block).

    ``rows(qids)`` gives the row positions of the labels of those queries, each query's rows in
    file order (the engine's rules, last label wins and the stratum of the first label line,
    read a query's own rows in order; nothing reads across queries). ``judged(ids)`` says
    which of some query ids have labels.

    The labels' query ids are hashed once, by their pandas index (on first use, so on each Dask
    worker once): a lookup per block costs the block's ids, not all the labels' (arrow's
    ``index_in`` hashed every label query again on each call: 0.2 s a block at 1M queries).
    """

    def __init__(self, judgments: pd.DataFrame):
        from ...io.columns import rows_of

        # Taken from once per block: its id columns in one chunk each (see rows_of), once.
        self.frame = rows_of(judgments[JUDGMENT_COLUMNS], np.arange(len(judgments)))
        codes, self.queries = arrays.codes(arrays.arrow(judgments["query_id"]))
        self.order = np.argsort(codes, kind="stable")
        self.bounds = np.searchsorted(codes[self.order], np.arange(len(self.queries) + 1))

    def _at(self, ids) -> np.ndarray:
        return self.queries.get_indexer(pd.array(arrays.arrow(ids), dtype=ID))

    def judged(self, ids) -> np.ndarray:
        return self._at(ids) >= 0

    def rows(self, qids) -> np.ndarray:
        at = self._at(qids)
        at = np.sort(at[at >= 0])
        lo, hi = self.bounds[at], self.bounds[at + 1]
        return self.order[kernels.ranges(lo, hi - lo)]

    def take(self, qids) -> pd.DataFrame:
        return self.frame.iloc[self.rows(qids)]


def read_ahead(blocks: Iterator[T]) -> Generator[T, None, None]:
    """The items of ``blocks`` in order, the next one read on a second thread while the caller
    works on this one: a file's next block is parsed (by arrow, without the GIL) while the
    engine scores the last. At most two blocks are held, the one given and the one coming.

    An error reading a block is raised where that block is asked for; a caller that stops early
    (its own error, or ``close()``) waits for the block being read, then closes ``blocks``.
    """
    from concurrent.futures import ThreadPoolExecutor

    done = object()

    def step():
        return next(blocks, done)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read_ahead") as pool:
        coming = pool.submit(step)
        try:
            while (item := coming.result()) is not done:
                coming = pool.submit(step)
                yield item
                del item
        finally:
            if not coming.cancel():
                coming.exception()  # wait: a generator cannot be closed while it runs
            close = getattr(blocks, "close", None)
            if close is not None:
                close()


def is_parquet(path) -> bool:
    p = Path(path)
    return p.is_dir() or p.suffix.lower() in (".parquet", ".pq")


def frame_blocks(run: pd.DataFrame, chunk_rows: int) -> Iterator[tuple[pd.DataFrame, np.ndarray]]:
    """A frame in memory cut into blocks of whole queries. Its rows are first put in order of
    each query's first appearance (a stable sort: each ranking keeps its rows' order), so a
    query in two places is not an error here; the keys are the rows' places before it."""
    codes = pd.factorize(run["query_id"].array)[0]
    where = np.arange(len(run), dtype=np.int64)
    if len(codes) and bool(np.any(codes[1:] < codes[:-1])):
        where = np.argsort(codes, kind="stable")
        run, codes = run.iloc[where].reset_index(drop=True), codes[where]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.zeros(0, int)
    cuts = block_bounds(starts, len(run), chunk_rows)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        block = run.iloc[lo:hi].reset_index(drop=True)
        block.attrs = {}
        yield block, where[lo:hi]
    empty = run.attrs.get("empty_rankings")
    if empty:  # the empty rankings have no rows: they travel on an empty block
        from ...io import empty_run

        tail = empty_run()
        tail.attrs["empty_rankings"] = list(empty)
        yield tail, np.zeros(0, dtype=np.int64)


def block_bounds(starts: np.ndarray, n: int, chunk_rows: int) -> np.ndarray:
    """Block bounds: the first query start at or after each multiple of ``chunk_rows``."""
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    wanted = np.arange(chunk_rows, n, chunk_rows)
    at = np.searchsorted(starts, wanted)
    cut = np.where(at < len(starts), starts[np.minimum(at, len(starts) - 1)], n)
    return np.unique(np.r_[0, cut, n])


def relabel(err: FormatError, path, offset: int) -> FormatError:
    """The reader's message for a block at byte ``offset``, with the line counted in the file
    (counted only now: counting every block's lines costs more than the error ever does)."""
    if err.line is None:
        return FormatError(str(path), None, err.detail)
    return FormatError(str(path), err.line + lines_before(path, offset), err.detail)


SPACE = b" \t\r\n\v\f"
_SEPARATOR = np.frombuffer(SPACE, dtype=np.uint8)  # what may follow a line's first field
_INDENT = np.frombuffer(b" \t\v\f\r", dtype=np.uint8)  # the line is looked at in Python


def trailing_query(data) -> tuple[int, bytes | None]:
    """Where the lines of the last query of ``data`` (bytes, a bytearray or a memoryview)
    begin, and that query's id; (0, None) when ``data`` has no line of content.

    The last query is that of the last line of content (not blank, not a ``#`` comment); its
    lines are the lines from the cut on, blank and comment lines among them (a reader skips
    those, so they never part a ranking). Found on the bytes (numpy, no per-line Python but
    for indented lines), from the end in growing windows, so the cost is that of the last
    query's lines.
    """
    qid = _last_query(data)
    if qid is None:
        return 0, None
    buf = np.frombuffer(data, dtype=np.uint8)
    window = 1 << 16
    while True:
        lo = max(len(buf) - window, 0)
        part = buf[lo:]
        starts = np.flatnonzero(part == 10) + 1  # line starts inside the window
        if lo == 0:
            starts = np.r_[0, starts]
        starts = starts[starts < len(part)]
        other = np.flatnonzero(~_of_query(part, starts, qid))
        if len(other):
            return lo + int(starts[other[-1] + 1]), qid
        if lo == 0:
            return 0, qid
        window *= 4


def _of_query(part: np.ndarray, starts: np.ndarray, qid: bytes) -> np.ndarray:
    """Per line (starting at ``starts`` in ``part``): whether it is a line of query ``qid``,
    a blank line or a comment."""

    def byte(i: int) -> np.ndarray:  # each line's byte i; past the end a short last line reads "\n"
        at = starts + i
        return np.where(at < len(part), part[np.minimum(at, len(part) - 1)], 10)

    first = byte(0)
    same = np.ones(len(starts), dtype=bool)
    for i, b in enumerate(qid):
        same &= byte(i) == b
    same &= np.isin(byte(len(qid)), _SEPARATOR)
    belongs = same | (first == 10) | (first == 35)  # blank, "#"
    ends = np.r_[starts[1:], len(part)]  # each line runs to the next one's start
    for at in np.flatnonzero(np.isin(first, _INDENT)):  # rare: the line's fields after its indent
        fields = bytes(part[starts[at] : ends[at]]).split(None, 1)
        belongs[at] = not fields or fields[0].startswith(b"#") or fields[0] == qid
    return belongs


def _last_query(data) -> bytes | None:
    """The first field of the last line of content of ``data``, None when it has none."""
    end = len(data)
    while end > 0:
        line = _last_line(data, end)
        fields = line.split(None, 1)
        if fields and not fields[0].startswith(b"#"):
            return fields[0]
        end -= len(line) + 1
    return None


def _last_line(data, end: int) -> bytes:
    """The bytes of the line ending at ``end`` (before the newline there, if any), found from
    the end in growing windows."""
    window = 1 << 12
    while True:
        lo = max(end - window, 0)
        part = bytes(data[lo:end])
        at = part.rfind(b"\n")
        if at >= 0 or lo == 0:
            return part[at + 1 :]
        window *= 4


def parquet_blocks(path, chunk_rows: int, system) -> Iterator[pd.DataFrame]:
    """A parquet file or dataset directory read in record batches, cut between queries (the
    rows of the last query of a batch wait for the next one)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    from ...io import as_run

    label = str(path)
    strings = {pa.string(): ID, pa.large_string(): ID}.get
    held: list = []
    held_rows = 0

    def frame(tables) -> pd.DataFrame:
        table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        return as_run(table.to_pandas(types_mapper=strings), system=system, label=label)

    try:
        batches = ds.dataset(str(path), format="parquet").to_batches(batch_size=chunk_rows)
        for batch in batches:
            if not batch.num_rows:
                continue
            held.append(pa.Table.from_batches([batch]))
            held_rows += batch.num_rows
            if held_rows < chunk_rows:
                continue
            qid = held[-1].column("query_id")
            other = pc.indices_nonzero(pc.not_equal(qid, qid[-1])).to_numpy()
            if not len(other):
                continue  # the whole batch is the last query: it may go on
            cut = int(other[-1]) + 1
            tail = held[-1].slice(cut)
            held[-1] = held[-1].slice(0, cut)
            yield frame(held)
            held, held_rows = [tail], len(tail)
    except (OSError, pa.ArrowException) as err:
        raise FormatError(label, None, f"cannot read the parquet data ({err})") from None
    if held_rows:
        yield frame(held)


def trec_blocks(path, chunk_rows: int, system, order: str = "rank") -> Iterator[pd.DataFrame]:
    """A TREC run read in blocks of whole queries: each block is the lines from one cut to
    the next, parsed by :func:`~retrieval_eval.io.trec.trec_run_view` (the frame
    :func:`~retrieval_eval.formats.from_trec_run` gives); the lines of the block's last query
    wait for the next block (they may go on there).

    The file is read into one buffer, reused from block to block (:class:`_Buffer`): the
    waiting lines move to its front and the next bytes are read in after them, so no block's
    bytes are joined or copied, and the memory is touched once, not once per block.
    """
    from ...io.trec import trec_run_view

    label = str(path)

    def parse(view: memoryview, offset: int) -> pd.DataFrame:
        try:
            return trec_run_view(view, label, order, system)
        except FormatError as err:
            raise relabel(err, path, offset) from None

    buffer = _Buffer(path, chunk_rows * FIRST_BYTES_PER_ROW)
    held, held_qid = 0, None  # the buffer's first ``held`` bytes: lines of query ``held_qid``
    size = buffer.size
    with buffer:
        while True:
            end = buffer.fill(held, size)
            if end == held:
                break
            cut, qid = trailing_query(buffer.view(held, end))  # in the bytes just read
            if qid is None or (cut == 0 and (held_qid is None or qid == held_qid)):
                held, held_qid = end, held_qid if qid is None else qid  # no cut yet: the block grows
                continue
            block, held_qid = held + cut, qid  # cut 0: the new bytes start a query
            frame = parse(buffer.view(0, block), buffer.at)
            size = max(256, int(block / max(len(frame), 1) * chunk_rows))
            yield frame
            held = buffer.keep(block, end)
        if held:
            yield parse(buffer.view(0, held), buffer.at)


class _Buffer:
    """A file read in whole lines into one reused bytearray.

    ``fill(start, size)`` reads about ``size`` bytes after the first ``start`` (to the end of
    a line) and returns where the bytes end; ``keep(lo, hi)`` moves bytes ``lo:hi`` to the
    front (the lines that wait) and returns their length; ``at`` is the file offset of the
    buffer's first byte. The buffer grows when a block needs more room, never shrinks.
    """

    def __init__(self, path, size: int):
        from ...io.text import read_error

        self.size, self.at = size, 0
        self.data = bytearray(size + size // 4)
        try:
            self.fh = open(path, "rb")  # noqa: SIM115 (closed by __exit__)
        except OSError as err:
            raise read_error(path, err) from None

    def __enter__(self) -> _Buffer:
        return self

    def __exit__(self, *exc) -> None:
        self.fh.close()

    def view(self, lo: int, hi: int) -> memoryview:
        return memoryview(self.data)[lo:hi]

    def _room(self, need: int, keep: int) -> None:
        if need > len(self.data):
            grown = bytearray(need + need // 4)
            grown[:keep] = memoryview(self.data)[:keep]
            self.data = grown

    def fill(self, start: int, size: int) -> int:
        self._room(start + size, start)
        end = start
        with memoryview(self.data) as view:
            while end < start + size and (got := self.fh.readinto(view[end : start + size])):
                end += got
        if end == start + size and self.data[end - 1] != 0x0A:
            rest = self.fh.readline()  # the line the read cut, to its end
            self._room(end + len(rest), end)
            self.data[end : end + len(rest)] = rest
            end += len(rest)
        return end

    def keep(self, lo: int, hi: int) -> int:
        if lo:
            whole = np.frombuffer(self.data, dtype=np.uint8)
            whole[: hi - lo] = whole[lo:hi].copy()  # the regions may overlap
            del whole
            self.at += lo
        return hi - lo
