"""Whitespace-separated tables (TREC runs, qrels): arrow's strict read, and the careful line split.

trec_eval splits a line on any run of ASCII whitespace; arrow splits on one delimiter, so arrow
reads a table only when no other separator can occur (:func:`arrow_table`,
:func:`space_table_file`), and :func:`table_lines` is the careful pass that has the last word.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from .columns import read_pool
from .text import has_hex_prefix, os_file, plain_space_table, strip_bom

__all__ = ["INT_RE", "arrow_table", "delimiter", "parse_float_field", "space_table_file", "strict_table", "table_lines"]


INT_RE = re.compile(r"[+-]?[0-9]+\Z")


_OTHER_SPACE = {" ": (b"\t", b"\v", b"\f", b"\r"), "\t": (b" ", b"\v", b"\f", b"\r")}


def delimiter(first: bytes) -> str:
    """The one separator arrow splits a table's lines on, from its first line."""
    return "\t" if (b"\t" in first and b" " not in first) else " "


def arrow_table(
    data: bytes,
    names: list[str],
    types: dict[str, pa.DataType],
    keep_it: bool = False,
    bools: tuple[list[str], list[str]] | None = None,
) -> pa.Table | None:
    """Strict pyarrow read of single-space (or single-tab) separated columns, else None."""
    if not data or data.isspace() or has_hex_prefix(data):  # arrow would read 0x10 as 16
        return None
    first = data[: data.find(b"\n")] if b"\n" in data else data
    delim = delimiter(first)
    # the careful pass splits on any run of ASCII whitespace; arrow splits on one delimiter, so
    # arrow is used only when the other separators cannot occur
    if any(c in data for c in _OTHER_SPACE[delim]):  # single-byte searches (memchr), not a regex
        other = b" " if delim == "\t" else b"\t"
        if other in data or b"\v" in data or b"\f" in data or data.count(b"\r") != data.count(b"\r\n"):
            return None
    return strict_table(pa.BufferReader(data), names, types, delim, keep_it, bools=bools)


#: arrow's CSV block: 4 MB chunks keep the parse buffers in flight (two threads) small; larger
#: blocks are no faster here and add ~40 MB to the peak of a 10M-line read.
_CSV_BLOCK = 1 << 22


def strict_table(
    source: Any,
    names: list[str],
    types: dict[str, pa.DataType],
    delim: str,
    keep_it: bool = False,
    skip_rows: int = 0,
    bools: tuple[list[str], list[str]] | None = None,
) -> pa.Table | None:
    """Strict pyarrow read of ``delim``-separated columns (no quoting, no empty lines), else None.

    ``bools`` is (true values, false values) for the columns ``types`` reads as booleans: any
    other value of theirs, the empty one included, makes arrow refuse the file.
    """
    import pyarrow.csv as pcsv

    true, false = bools if bools is not None else (["true"], ["false"])
    try:
        return pcsv.read_csv(
            source,
            read_options=pcsv.ReadOptions(column_names=names, block_size=_CSV_BLOCK, skip_rows=skip_rows),
            parse_options=pcsv.ParseOptions(
                delimiter=delim,
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=False,
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                include_columns=[c for c in names if keep_it or c != "it"],  # the unused iteration column
                true_values=true,
                false_values=false,
            ),
            memory_pool=read_pool(),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        return None


def space_table_file(
    path: str | os.PathLike[str],
    names: list[str],
    types: dict[str, pa.DataType],
    keep_it: bool = False,
    skip_rows: int = 0,
    bools: tuple[list[str], list[str]] | None = None,
    scan: bool = True,
) -> tuple[pa.Table | None, bool]:
    """Arrow's read of a whitespace table file straight from disk (None if arrow refuses it),
    and whether :func:`plain_space_table` passes the file (the table is None when not).

    The two run at once: arrow parses on its own threads while this one scans the bytes (the
    scan holds the GIL, the parse does not need it), which takes 0.1-0.15 s off a 10M-line file.
    A file the scan refuses costs that parse for nothing, and then takes the exact path.
    ``scan=False`` reads a file already scanned. ``bools``: see :func:`strict_table`.
    """
    from concurrent.futures import ThreadPoolExecutor

    def parse() -> pa.Table | None:
        try:
            source = os_file(path)
        except (OSError, pa.ArrowException):
            return None
        with source:
            return strict_table(source, names, types, " ", keep_it, skip_rows, bools)

    if not scan:
        return parse(), True
    with ThreadPoolExecutor(max_workers=1) as pool:
        reading = pool.submit(parse)
        plain = plain_space_table(path)  # a read error propagates once the parse is done
        table = reading.result()
    return (table if plain else None), plain


_ASCII_SPACE = re.compile(r"[ \t\v\f\r]+")


def table_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) for each line that is not blank or a ``#`` comment."""
    for i, line in enumerate(strip_bom(text).split("\n"), start=1):
        fields = _ASCII_SPACE.split(line.strip(" \t\v\f\r"))
        if fields == [""] or fields[0].startswith("#"):
            continue
        yield i, fields


def parse_float_field(s: str) -> float | None:
    if "_" in s:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None
