"""A TREC run file (or a glob of them) cut into byte ranges of whole queries, each read by the
package's own TREC reader.

A range is about ``blocksize`` bytes of one file. Its ends are moved forward to the next *query
boundary*: the start of a data line whose query id differs from the previous data line's (blank
and ``#`` comment lines have no query; they go with the lines before them). Two neighbouring
ranges move their common end by the same rule, so every line belongs to exactly one range, and
in a file whose lines of each query stand together (the usual order) every ranking is whole in
one range. A query longer than a range makes the range before it longer and leaves the ranges
it covers empty.

Each range is parsed by :func:`~retrieval_eval.io.trec.trec_run_view` (the reader
:func:`~retrieval_eval.io.trec.read_trec_run` uses) straight from the file mapped into memory
(:func:`range_view`): the same dialect, the same checks and the same one-line
:class:`~retrieval_eval.errors.FormatError`, with the line counted in the whole file
(:func:`lines_before`). :func:`range_rows` gives a range's rows unranked (the file's own
ranks, in file order), for a caller that puts the pieces of a ranking found in several ranges
back together and orders them with :func:`~retrieval_eval.io.trec.order_trec`.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import BinaryIO

import pandas as pd

from ..errors import FormatError
from .text import read_error

__all__ = [
    "ByteRange",
    "byte_ranges",
    "lines_before",
    "parse_blocksize",
    "range_bytes",
    "range_rows",
    "range_view",
    "read_range",
    "run_files",
]

#: Bytes read at a time while looking for a query boundary.
_WINDOW = 1 << 16
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class ByteRange:
    """Bytes ``[start, end)`` of ``path`` (before moving to query boundaries); ``number``: the
    range's place among all the ranges of the glob (files in sorted order)."""

    path: str
    start: int
    end: int
    number: int


def parse_blocksize(blocksize: int | str) -> int:
    """Bytes from an int or a size string (``"64MB"``, ``"1GiB"``, as Dask writes them)."""
    if isinstance(blocksize, str):
        from dask.utils import parse_bytes

        blocksize = parse_bytes(blocksize)
    if isinstance(blocksize, bool) or not isinstance(blocksize, int) or blocksize < 1:
        raise ValueError(f"blocksize must be a positive number of bytes, got {blocksize!r}")
    return blocksize


def run_files(pattern: str | os.PathLike[str]) -> list[str]:
    """The files a path or glob names, in sorted order; a one-line error when there are none."""
    text = str(pattern)
    if not glob.has_magic(text):
        if os.path.isfile(text):
            return [text]
        raise read_error(text, FileNotFoundError() if not os.path.isdir(text) else IsADirectoryError())
    files = sorted(f for f in glob.glob(text) if os.path.isfile(f))
    if not files:
        raise FormatError(text, None, "no file matches this pattern")
    return files


def byte_ranges(pattern: str | os.PathLike[str], blocksize: int | str = "128MB") -> list[ByteRange]:
    """The ranges of every file a path or glob names, about ``blocksize`` bytes each.

    An empty file is one empty range (it reads as an empty run, as the main reader reads it).
    """
    size_ = parse_blocksize(blocksize)
    out: list[ByteRange] = []
    for path in run_files(pattern):
        try:
            size = os.path.getsize(path)
        except OSError as err:
            raise read_error(path, err) from None
        n = max(1, -(-size // size_))
        cuts = [size * i // n for i in range(n + 1)]
        out.extend(ByteRange(path, lo, hi, len(out) + j) for j, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])))
    return out


def _query(line: bytes, at_start: bool) -> bytes | None:
    """A line's query id (its first field), None for a blank or ``#`` comment line."""
    if at_start and line.startswith(_BOM):
        line = line[3:]
    fields = line.split(None, 1)
    if not fields or fields[0].startswith(b"#"):
        return None
    return fields[0]


def _previous_query(fh: BinaryIO, at: int) -> bytes | None:
    """The query of the last data line before byte ``at`` (a line start), None if there is none."""
    end = at
    tail = b""
    while end > 0:
        lo = max(0, end - _WINDOW)
        fh.seek(lo)
        tail = fh.read(end - lo) + tail
        end = lo
        lines = tail.split(b"\n")
        # The first piece may be cut (unless the window reached the file's start): keep it.
        for i in range(len(lines) - 1, 0 if lo else -1, -1):
            qid = _query(lines[i], lo == 0 and i == 0)
            if qid is not None:
                return qid
        tail = lines[0] if lo else b""
    return None


def _boundary(fh: BinaryIO, at: int, size: int) -> int:
    """The first query boundary at or after byte ``at`` (0 and ``size`` are boundaries)."""
    if at <= 0:
        return 0
    if at >= size:
        return size
    fh.seek(at - 1)
    if fh.read(1) != b"\n":
        fh.readline()  # the rest of the line that byte ``at`` is in
    start = fh.tell()
    before = _previous_query(fh, start)
    fh.seek(start)
    while start < size:
        line = fh.readline()
        qid = _query(line, start == 0)
        if qid is not None and qid != before:
            return start
        start += len(line)
    return size


def _bounds(rng: ByteRange) -> tuple[int, int]:
    """Where a range starts and ends once moved to query boundaries."""
    try:
        with open(rng.path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            return _boundary(fh, rng.start, size), _boundary(fh, rng.end, size)
    except OSError as err:
        raise read_error(rng.path, err) from None


def _read(path: str, lo: int, hi: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            fh.seek(lo)
            return fh.read(hi - lo)
    except OSError as err:
        raise read_error(path, err) from None


def range_bytes(rng: ByteRange) -> tuple[bytes, int]:
    """The bytes of a range moved to query boundaries, and their offset in the file."""
    lo, hi = _bounds(rng)
    return (_read(rng.path, lo, hi) if hi > lo else b""), lo


def range_view(rng: ByteRange) -> tuple[memoryview | bytes, int]:
    """:func:`range_bytes`, as a view of the file mapped into memory where it can be.

    The reader then parses the page cache in place: no copy of the range, and none of the
    page faults of filling a fresh buffer of its size (0.4 of 7 CPU seconds per 20M rows on
    the 2-core box). The mapping goes when the last reference to the view does. A file that
    cannot be mapped (a pipe, a special file) is read as bytes. As with any mapped read, a file
    cut shorter in place while a range is parsed ends the process (replacing it by a rename,
    as the package's own writers do, is safe).
    """
    import pyarrow as pa

    lo, hi = _bounds(rng)
    if hi <= lo:
        return b"", lo
    try:
        with pa.memory_map(os.fsdecode(rng.path), "r") as mapped:
            mapped.seek(lo)
            buf = mapped.read_buffer(hi - lo)  # a slice of the mapping, not a copy
    except (OSError, pa.ArrowException):
        return _read(rng.path, lo, hi), lo
    if len(buf) != hi - lo:  # the file changed under us: the plain read says what is there
        return _read(rng.path, lo, hi), lo
    return memoryview(buf), lo


def lines_before(path: str | os.PathLike[str], offset: int) -> int:
    """Lines that end before byte ``offset`` of a file (the line count of a part's first line)."""
    before = 0
    with open(path, "rb") as fh:
        while offset > 0:
            piece = fh.read(min(offset, 1 << 24))
            if not piece:
                break
            before += piece.count(b"\n")
            offset -= len(piece)
    return before


def _in_file(err: FormatError, path: str, offset: int) -> FormatError:
    if err.line is None or offset == 0:
        return err
    return FormatError(path, err.line + lines_before(path, offset), err.detail)


def read_range(rng: ByteRange, order: str = "rank", system: str | None = None) -> pd.DataFrame:
    """A range parsed by the package's TREC reader: the run frame of its lines.

    Raises
    ------
    FormatError
        The main reader's message for the range's first bad line, the line counted in the file.
    """
    from .trec import trec_run_view

    data, offset = range_view(rng)
    try:
        return trec_run_view(memoryview(data), label=rng.path, order=order, system=system)
    except FormatError as err:
        raise _in_file(err, rng.path, offset) from None


def range_rows(rng: ByteRange, system: str | None = None) -> pd.DataFrame:
    """A range's rows in file order with the file's own ranks (not grouped or renumbered)."""
    from .trec import trec_run_rows

    data, offset = range_bytes(rng)
    try:
        return trec_run_rows(data, label=rng.path, system=system)
    except FormatError as err:
        raise _in_file(err, rng.path, offset) from None
