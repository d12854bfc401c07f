"""Bytes in: paths, file reads, UTF-8 decoding, and the one-line refusals every reader shares.

A file that cannot be opened is one :class:`~retrieval_eval.errors.FormatError` line naming it
(:func:`read_error`); text is UTF-8 with an optional BOM, and an invalid byte is refused naming
its line and column (:func:`decode`). Checks over a large file run block by block
(:func:`file_blocks`), never on the file held whole, and a plain file is handed to arrow to read
straight from disk (:func:`os_file`).

Bottom of the io layer: imports :mod:`retrieval_eval.errors` only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any, cast

import numpy as np
import pyarrow as pa

from ..errors import FormatError

__all__ = [
    "byte_blocks",
    "checked_bytes",
    "decode",
    "file_blocks",
    "first_content_line",
    "has_hex_prefix",
    "is_path",
    "object_lines",
    "os_file",
    "plain_space_blocks",
    "plain_space_table",
    "read_bytes",
    "read_error",
    "regular_file",
    "stream_bytes",
    "strip_bom",
    "utf8_bytes",
    "view_blocks",
]


def read_error(path: str | os.PathLike[str], err: OSError) -> FormatError:
    """The one-line message for a file that cannot be opened or read."""
    label = str(path)
    if isinstance(err, FileNotFoundError):
        return FormatError(label, None, "cannot read: no such file or directory")
    if isinstance(err, IsADirectoryError):
        return FormatError(label, None, "cannot read: is a directory")
    if isinstance(err, PermissionError):
        return FormatError(label, None, "cannot read: permission denied")
    if os.path.isdir(path):
        return FormatError(label, None, "cannot read: is a directory")
    return FormatError(label, None, f"cannot read: {err.strerror or err}")


def regular_file(path: str | os.PathLike[str]) -> bool:
    """True for a regular file: one that can be read twice (a pipe or /dev/stdin cannot)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError, TypeError):
        return False


def _devnull_rdev() -> int | None:
    try:
        return os.stat(os.devnull).st_rdev
    except OSError:
        return None


def stream_bytes(path: str | os.PathLike[str]) -> bytes | None:
    """The whole content of ``path`` when it is a pipe, a FIFO or a socket; None for a regular
    file, a folder or a path that does not exist (the caller reads those as usual).

    A pipe (``<(cat f)``, ``/dev/stdin``) or a named FIFO can be read only once: detecting its
    format from its first bytes and then opening it again to read it would see an empty or a
    truncated stream (or wait forever for a second writer). So it is read once, here, into
    memory, as ``-`` (stdin) is, and the same bytes go to detection and to the reader. A
    character or block device (``/dev/zero``, a disk) is refused: it is no file of labels or
    runs, and reading one may never end (``/dev/null``, the empty input, is read as empty).

    Raises
    ------
    FormatError
        A device, or a stream that cannot be read.
    """
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    mode = st.st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return read_bytes(path)  # refuses a device


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The whole file, read once; a character or block device other than ``/dev/null`` is
    refused (``/dev/zero`` would be read until memory runs out)."""
    import stat

    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if (stat.S_ISCHR(st.st_mode) and st.st_rdev != _devnull_rdev()) or stat.S_ISBLK(st.st_mode):
                raise FormatError(str(path), None, "is a device, not a file; give a file, a pipe or - (stdin)")
            return fh.read()
    except OSError as err:
        raise read_error(path, err) from None


_SCAN_BLOCK = 1 << 21


def file_blocks(path: str | os.PathLike[str]) -> Iterator[bytearray]:
    """The file's bytes, ``_SCAN_BLOCK`` at a time: a scan never holds the file whole.

    The blocks are read into one reused buffer (cache-sized: the checks then run on bytes
    just read, and no block is allocated), so each is valid only until the next one.
    """
    buf = bytearray(_SCAN_BLOCK)
    try:
        with open(path, "rb", buffering=0) as fh:
            while n := fh.readinto(buf):
                yield buf if n == len(buf) else buf[:n]
    except OSError as err:
        raise read_error(path, err) from None


def has_hex_prefix(data: bytes | bytearray | memoryview) -> bool:
    """True when ``0x`` or ``0X`` occurs in ``data``: arrow reads an integer field ``0x10`` as
    16, where a grade or a rank is ``[+-]?[0-9]+`` (trec_eval reads ``0x10`` as 0), so such
    a table goes to the careful pass, which refuses the field naming its line. (An id that
    merely contains ``0x`` costs that slower pass, never a wrong value.)

    The ``x`` and ``X`` bytes are found with single-byte searches (memchr) and only their
    left neighbours looked at: a two-byte search costs ~2 ns a byte on text full of zeros (a
    run's scores and ids), 0.4 s of a 10M-line file. Text with many ``x`` takes the two-byte
    search.
    """
    if isinstance(data, memoryview):
        data = data.tobytes()
    for x in b"xX":
        at = data.find(x, 1)
        for _ in range(_FEW_X):
            if at < 0:
                break
            if data[at - 1] == 0x30:  # "0"
                return True
            at = data.find(x, at + 1)
        else:
            if (b"0x" if x == 0x78 else b"0X") in data:
                return True
    return False


#: How many ``x`` (or ``X``) bytes :func:`has_hex_prefix` looks at one by one.
_FEW_X = 32


def plain_space_table(path: str | os.PathLike[str]) -> bool:
    """True when a whitespace table file has only the bytes arrow's space-delimited read handles
    (:func:`plain_space_blocks` of the file, read in blocks)."""
    return plain_space_blocks(file_blocks(path))


def plain_space_blocks(blocks: Iterable[bytes | bytearray]) -> bool:
    """True when the text cut into ``blocks`` has only the bytes arrow's space-delimited read handles.

    That is: ASCII (so valid UTF-8 and no BOM), no ``0x`` (:func:`has_hex_prefix`), no tab,
    vertical tab or form feed, and no
    carriage return outside a CRLF line end (arrow would end a line at a lone one; the careful
    pass splits on it inside the line). Empty fields (repeated, leading or trailing spaces) and
    ``#`` lines are found afterwards in arrow's columns (:func:`plain_fields`). Each block is
    scanned with single-byte searches. False for no text at all: the caller then takes the
    exact path.
    """
    cr = crlf = 0
    tail: bytes | bytearray = b""
    for block in blocks:
        if not block.isascii() or b"\t" in block or b"\v" in block or b"\f" in block:
            return False
        if has_hex_prefix(block) or (tail == b"0" and cast(bytes, block[:1]) in (b"x", b"X")):
            return False
        crlf += tail == b"\r" and block[:1] == b"\n"  # a CRLF cut between two blocks
        if b"\r" in block:
            cr += block.count(b"\r")
            crlf += block.count(b"\r\n")
        tail = block[-1:]
    return bool(tail) and cr == crlf


def view_blocks(view: memoryview) -> Iterator[bytes]:
    """The bytes of ``view``, ``_SCAN_BLOCK`` at a time, each copied (a cache-sized copy, so the
    bytes methods of a scan apply; the text is never copied whole)."""
    return (bytes(view[i : i + _SCAN_BLOCK]) for i in range(0, len(view), _SCAN_BLOCK))


def object_lines(blocks: Iterable[bytes | bytearray | memoryview], ascii_only: bool = False) -> int | None:
    """How many lines the text cut into ``blocks`` has when each line starts with ``{``, else None.

    Then no line is blank, a comment or indented, so arrow's row i of JSON lines is line i + 1
    (and a line holding two objects shows as more rows than lines). The newlines are found
    with numpy, block by block (no per-line Python, no two-byte search). ``ascii_only`` also
    refuses a byte past 0x7F, for a file read without decoding. None for no text at all.
    """
    lines = 0
    at_start = True  # the next byte begins a line
    seen = False
    for block in blocks:
        if not len(block):
            continue
        if ascii_only and not cast(bytes, block).isascii():
            return None
        a = np.frombuffer(block, np.uint8)
        newlines = np.flatnonzero(a == 0x0A)
        ends = bool(len(newlines)) and newlines[-1] == len(a) - 1  # the block ends a line
        if (at_start and a[0] != 0x7B) or not np.all(a[newlines[: len(newlines) - ends] + 1] == 0x7B):
            return None
        lines += len(newlines)
        at_start, seen = ends, True
    return None if not seen else lines + (0 if at_start else 1)


def byte_blocks(data: bytes) -> Iterator[memoryview]:
    """``data`` cut into ``_SCAN_BLOCK`` views (no copy), for :func:`object_lines`."""
    view = memoryview(data)
    return (view[i : i + _SCAN_BLOCK] for i in range(0, len(data), _SCAN_BLOCK))


def decode(data: bytes, label: str) -> str:
    """UTF-8 text without a leading BOM; invalid bytes are refused naming their line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise FormatError(label, line, f"not valid UTF-8 (byte 0x{data[err.start]:02x} at column {col})") from None
    return text[1:] if text.startswith("\ufeff") else text


def checked_bytes(data: bytes, label: str) -> tuple[bytes, str | None]:
    """Bytes without a BOM, checked to be UTF-8; also the text when checking had to decode it.

    Pure ASCII (the usual run or qrels file) is valid UTF-8 and is checked without decoding, so
    the fast path never pays for a text it does not use.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.isascii():
        return data, None
    return data, decode(data, label)


def strip_bom(content: str) -> str:
    return content[1:] if content.startswith("\ufeff") else content


def is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike))


def os_file(path: str | os.PathLike[str]) -> pa.NativeFile:
    """The file opened for arrow as a plain file (a ``.gz`` name is not decompressed: the bytes
    are read as they are, like the careful pass reads them)."""
    return pa.OSFile(os.fsdecode(os.fspath(path)))


def utf8_bytes(text: str | None, data: bytes | None) -> bytes | None:
    """The UTF-8 bytes of ``text`` (BOM dropped) when no bytes were given; None when the text
    cannot be encoded (lone surrogates), which sends the caller to its careful pass."""
    if data is None and text is not None:
        try:
            return strip_bom(text).encode("utf-8")
        except UnicodeEncodeError:
            return None
    return data


def first_content_line(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(65536)
    except OSError as err:
        raise read_error(path, err) from None
    for raw in data.split(b"\n"):
        line = raw.strip().lstrip(b"\xef\xbb\xbf")
        if line and not line.startswith(b"//") and not line.startswith(b"#"):
            return line.decode("utf-8", "replace")
    return ""
