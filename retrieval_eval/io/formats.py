"""File formats (SPEC A2, B1, B2): readers, writers, and coercion to the data-model frames.

Every reader returns a DataFrame exactly as ``docs/data-model.md`` describes it (column names,
order and dtypes are a contract the other modules code against), and every malformed input is
refused with :class:`~retrieval_eval.errors.FormatError` naming the input, the file's real
1-based line and what is wrong, never with a raw exception.

Speed: the large inputs (runs, TREC runs, qrels, judgments) are read by pyarrow into flat
columns and checked with vectorized operations. When that fast path meets anything it cannot
vouch for (a malformed line, a comment, a duplicate query, a non-finite score, an unknown
judgment field...) the input is read again by a careful line-by-line Python pass, which is the
authority: it either returns the same frame or raises the exact message with the real line
number. A plain file (an ASCII TREC run, qrels or JSON-lines file) is read by arrow straight
from disk, never held as Python bytes, after a block scan for the bytes arrow's split would
treat differently; a TREC run in the usual order (each query's lines together, ranks
ascending) is not sorted. The id columns arrow parses become the frame's columns as they are
(chunked, no copy), and a string column whose rows are all alike (a run's one system, a field
qrels lack) is one small block repeated. The frame a reader returns is taken by
``as_run``/``as_judgments`` through vectorized checks and copy-on-write views.

Choices this module makes, so every face behaves the same:

- Number text in unknown judgment fields: a float is parsed as ``_RawFloat``, a ``float`` that
  remembers its source text, and the writer emits that text, so ``1e5`` or ``1.50`` in an unknown
  field survive read -> write byte for byte. Everything else is written as canonical compact
  JSON (integers as Python writes them, strings with ``ensure_ascii=False``).
- ``null`` for an optional field means unset (pandas exports write ``null``); a wrong type is
  refused. ``NaN``/``Infinity`` are not JSON and are refused where the spec has no use for them.
- Lines are split on ``\n`` only (U+2028 is legal inside a JSON string); blank lines and
  ``//`` comments (``#`` in whitespace tables) are skipped but keep their line numbers.
- Whitespace tables (TREC runs, qrels) split on ASCII whitespace only, as trec_eval does.
- A run's ``system``: the ``system=`` argument when given (it names every row), else the line's
  field (the TREC run_name column), else ``"run"``. Duplicate lines are judged per
  (system, query) after that choice.
- ``to_trec_run`` writes a row's system as run_name unless it is the default ``"run"``, and a
  synthetic descending score ``n - rank + 1`` for a query without scores.
- ``read_*(path)`` label messages with the path; ``parse_*`` use the spec's labels.
- Ids are strings and are never converted from numbers: a frame with numeric ids is refused.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from . import safewrite as _safewrite
from ..errors import FormatError
from ..arrays import block_starts as _block_starts
from ..arrays import codes as _codes
from ..arrays import offsets as _offsets
from ..arrays import take as _take

__all__ = [
    "CORPUS_COLUMNS",
    "DEFAULT_SYSTEM",
    "JUDGMENT_COLUMNS",
    "JUDGMENT_FIELDS",
    "MAX_JSON_DEPTH",
    "MAX_RELEVANCE",
    "QUERY_COLUMNS",
    "RUN_COLUMNS",
    "as_corpus",
    "as_judgments",
    "as_queries",
    "as_run",
    "atomic_write_text",
    "empty_corpus",
    "empty_judgments",
    "empty_queries",
    "empty_run",
    "from_qrels",
    "from_trec_run",
    "parse_corpus",
    "parse_judgments",
    "parse_json",
    "parse_queries",
    "parse_run",
    "read_corpus",
    "read_json",
    "read_judgments",
    "read_qrels",
    "read_queries",
    "read_run",
    "read_trec_run",
    "rewrite_judgments",
    "serialize_judgments",
    "to_qrels",
    "to_trec_run",
    "write_corpus",
    "write_judgments",
    "write_queries",
    "write_run",
]

# ---------------------------------------------------------------------------------------------
# The contract: column names, order and dtypes (docs/data-model.md)
# ---------------------------------------------------------------------------------------------

#: Wire fields of a judgment, in canonical writing order (SPEC A2).
JUDGMENT_FIELDS: tuple[str, ...] = (
    "query_id",
    "query",
    "doc_uri",
    "chunk_id",
    "text_sha",
    "chunk_text",
    "relevance",
    "corpus_fingerprint",
    "labeled_by",
    "labeled_at",
    "stratum",
    "notes",
)
_OPTIONAL_JUDGMENT_STR = tuple(f for f in JUDGMENT_FIELDS if f not in ("query_id", "doc_uri", "relevance"))

#: Judgments frame: column -> dtype, in column order. ``df.astype(JUDGMENT_COLUMNS)`` works.
JUDGMENT_COLUMNS: dict[str, str] = {
    **{f: ("int64" if f == "relevance" else "string") for f in JUDGMENT_FIELDS},
    "extra": "object",
    "line": "int64",
}
#: Run frame (long: one row per system, query, rank).
RUN_COLUMNS: dict[str, str] = {
    "system": "string",
    "query_id": "string",
    "rank": "int64",
    "doc_id": "string",
    "score": "float64",
}
#: Queries frame.
QUERY_COLUMNS: dict[str, str] = {
    "query_id": "string",
    "query": "string",
    "stratum": "string",
    "expect_none": "bool",
}
#: Corpus frame (fingerprints in ``df.attrs``).
CORPUS_COLUMNS: dict[str, str] = {
    "chunk_id": "string",
    "doc_uri": "string",
    "doc_revision": "string",
    "ordinal": "Int64",
    "text": "string",
    "text_sha": "string",
}
#: The system name of a run line that names none.
DEFAULT_SYSTEM = "run"

#: The largest grade a judgment may carry. nDCG's gain is ``2**grade - 1`` in float64: up to
#: 2**53 - 1 every gain is an integer float64 holds exactly, and a DCG sum of any ranking the
#: engine can hold stays many orders of magnitude below float64's overflow (2**1024), so no
#: metric turns into inf/inf = NaN. A grade of 1024 would overflow the gain itself. Every reader
#: refuses a larger grade (naming its line); the scales in use (0-3, 0-4, 0-100) are far below.
MAX_RELEVANCE = 53
_TOO_LARGE = f"is above the largest grade allowed, {MAX_RELEVANCE} (the gain 2**grade - 1 must stay exact in float64)"

from ..model import ID as _STRING
_LS = pa.large_string()  # the text type of pandas' "string" columns
_FINGERPRINTS = ("corpus_fingerprint", "chunker_fingerprint")


def _empty(columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=d) for c, d in columns.items()})


def empty_judgments() -> pd.DataFrame:
    """A judgments frame with no rows and the contract's columns and dtypes."""
    return _empty(JUDGMENT_COLUMNS)


def empty_run() -> pd.DataFrame:
    """A run frame with no rows and the contract's columns and dtypes."""
    return _empty(RUN_COLUMNS)


def empty_queries() -> pd.DataFrame:
    """A queries frame with no rows and the contract's columns and dtypes."""
    return _empty(QUERY_COLUMNS)


def empty_corpus() -> pd.DataFrame:
    """A corpus frame with no rows; both fingerprints None in ``attrs``."""
    df = _empty(CORPUS_COLUMNS)
    df.attrs.update({k: None for k in _FINGERPRINTS})
    return df


# ---------------------------------------------------------------------------------------------
# Small shared helpers
# ---------------------------------------------------------------------------------------------


class _RawFloat(float):
    """A float from a JSON document that remembers its source text (``1e5``, ``1.50``)."""

    __slots__ = ("text",)

    def __new__(cls, text: str) -> _RawFloat:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _json_detail(err: ValueError) -> str:
    if isinstance(err, json.JSONDecodeError):
        msg = err.msg[:-3] if err.msg.endswith(" at") else err.msg
        return f"invalid JSON, {msg} at column {err.colno}"
    return f"invalid JSON, {err}"


def _string_array(values: list, label: str, lines: list[int] | None = None) -> pd.api.extensions.ExtensionArray:
    """``values`` (str or None) as a "string" array; a lone surrogate is a FormatError."""
    try:
        return pd.array(values, dtype=_STRING)
    except (UnicodeEncodeError, UnicodeDecodeError):
        for i, v in enumerate(values):
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    line = lines[i] if lines is not None and lines[i] else None
                    raise FormatError(label, line, "text is not valid Unicode (a lone surrogate escape)") from None
        raise


def _arrow_strings(arr: pa.Array | pa.ChunkedArray) -> Any:
    """A pyarrow string array as a pandas "string" array, without a Python-object detour.

    A chunked array is kept as it is (pandas holds a chunked array), so the chunks arrow's
    readers return become the column with no copy of their text.
    """
    if arr.type != _LS:
        arr = arr.cast(_LS)
    if _STRING.storage == "pyarrow":
        return pd.arrays.ArrowStringArray(arr)
    return pd.array(arr.to_pandas(types_mapper={pa.string(): _STRING, _LS: _STRING}.get), dtype=_STRING)


#: Rows in the block that a constant or all-null string column repeats (see :func:`_repeated`).
_REPEAT_BLOCK = 1 << 16


def _repeated(block: pa.Array, n: int) -> pa.ChunkedArray:
    """``n`` rows of a column whose rows are all alike, as ``block`` repeated chunk after chunk.

    Every chunk is the same arrow array (its buffers shared), so a 10M-row column of one run
    name or of nulls costs one block (under 1 MB), not 10M offsets and copies of the text.
    """
    full, rest = divmod(n, len(block)) if len(block) else (0, 0)
    return pa.chunked_array([block] * full + ([block.slice(0, rest)] if rest else []), block.type)


def _const_large_strings(value: str, n: int) -> pa.ChunkedArray:
    """``n`` copies of ``value`` as large_string (one shared block, built from buffers)."""
    k = min(n, _REPEAT_BLOCK)
    raw = value.encode("utf-8")
    offsets = np.arange(0, (k + 1) * len(raw), len(raw), dtype=np.int64) if raw else np.zeros(k + 1, np.int64)
    return _repeated(pa.Array.from_buffers(_LS, k, [None, pa.py_buffer(offsets), pa.py_buffer(raw * k)]), n)


def _constant_strings(value: str, n: int) -> Any:
    return _arrow_strings(_const_large_strings(value, n))


def _null_strings(n: int) -> pa.ChunkedArray:
    """``n`` nulls as large_string: one block of nulls repeated (see :func:`_repeated`).

    A frame's absent columns each wrap the same one (arrow arrays are immutable, and each
    column is its own pandas array, so a write to one column reaches no other).
    """
    return _repeated(pa.nulls(min(n, _REPEAT_BLOCK), _LS), n)


def _na_strings(n: int) -> Any:
    return _arrow_strings(_null_strings(n))


def _read_error(path: str | os.PathLike, err: OSError) -> FormatError:
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


def _regular_file(path: str | os.PathLike) -> bool:
    """True for a regular file: one that can be read twice (a pipe or /dev/stdin cannot)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError, TypeError):
        return False


def _read_bytes(path: str | os.PathLike) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as err:
        raise _read_error(path, err) from None


_SCAN_BLOCK = 1 << 21


def _file_blocks(path: str | os.PathLike) -> Iterator[bytearray]:
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
        raise _read_error(path, err) from None


def _plain_space_table(path: str | os.PathLike) -> bool:
    """True when a whitespace table file has only the bytes arrow's space-delimited read handles.

    That is: ASCII (so valid UTF-8 and no BOM), no tab, vertical tab or form feed, and no
    carriage return outside a CRLF line end (arrow would end a line at a lone one; the careful
    pass splits on it inside the line). Empty fields (repeated, leading or trailing spaces) and
    ``#`` lines are found afterwards in arrow's columns (:func:`_plain_fields`). The file is
    scanned in blocks with single-byte searches. False for an empty file too: the caller then
    takes the exact path.
    """
    cr = crlf = 0
    tail = b""
    for block in _file_blocks(path):
        if not block.isascii() or b"\t" in block or b"\v" in block or b"\f" in block:
            return False
        crlf += tail == b"\r" and block[:1] == b"\n"  # a CRLF cut between two blocks
        if b"\r" in block:
            cr += block.count(b"\r")
            crlf += block.count(b"\r\n")
        tail = block[-1:]
    return bool(tail) and cr == crlf


def _object_lines(blocks: Iterable[bytes | bytearray | memoryview], ascii_only: bool = False) -> int | None:
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
        if ascii_only and not block.isascii():
            return None
        a = np.frombuffer(block, np.uint8)
        newlines = np.flatnonzero(a == 0x0A)
        ends = bool(len(newlines)) and newlines[-1] == len(a) - 1  # the block ends a line
        if (at_start and a[0] != 0x7B) or not np.all(a[newlines[: len(newlines) - ends] + 1] == 0x7B):
            return None
        lines += len(newlines)
        at_start, seen = ends, True
    return None if not seen else lines + (0 if at_start else 1)


def _byte_blocks(data: bytes) -> Iterator[memoryview]:
    """``data`` cut into ``_SCAN_BLOCK`` views (no copy), for :func:`_object_lines`."""
    view = memoryview(data)
    return (view[i : i + _SCAN_BLOCK] for i in range(0, len(data), _SCAN_BLOCK))


def _plain_fields(col: pa.ChunkedArray, comment: bool = False) -> bool:
    """True when no value of a string/binary column is null or empty (nor, with ``comment``,
    starts with ``#``), read off the offsets buffers with no per-value work."""
    for chunk in col.chunks:
        if len(chunk) == 0:
            continue
        if chunk.null_count:
            return False
        offsets = _offsets(chunk)
        if not np.all(offsets[1:] > offsets[:-1]):
            return False
        if comment:
            data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)
            if np.any(data[offsets[:-1]] == ord("#")):
                return False
    return True


def _decode(data: bytes, label: str) -> str:
    """UTF-8 text without a leading BOM; invalid bytes are refused naming their line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise FormatError(label, line, f"not valid UTF-8 (byte 0x{data[err.start]:02x} at column {col})") from None
    return text[1:] if text.startswith("\ufeff") else text


def _checked_bytes(data: bytes, label: str) -> tuple[bytes, str | None]:
    """Bytes without a BOM, checked to be UTF-8; also the text when checking had to decode it.

    Pure ASCII (the usual run or qrels file) is valid UTF-8 and is checked without decoding, so
    the fast path never pays for a text it does not use.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.isascii():
        return data, None
    return data, _decode(data, label)


def _strip_bom(content: str) -> str:
    return content[1:] if content.startswith("\ufeff") else content


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_unicode(obj: Any, label: str, line: int | None) -> None:
    """Refuse a lone surrogate escape (``"\\ud800"``): Python's json accepts it, UTF-8 cannot hold it."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise FormatError(label, line, "invalid JSON, a lone surrogate escape is not valid Unicode") from None
    except (TypeError, ValueError):
        pass


#: The deepest nesting of arrays and objects any JSON input may have (a judgment's unknown
#: field, a corpus, a report). Real inputs nest a few levels; a fixed limit, checked before
#: parsing, makes "too deep" the same answer on every path and in every call stack, where
#: Python's parser would fail at a depth that depends on how deep the caller already is.
MAX_JSON_DEPTH = 100

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _too_deep(text: str) -> bool:
    """True when ``text`` nests arrays and objects more than :data:`MAX_JSON_DEPTH` deep.

    A text with fewer opening brackets than the limit cannot be that deep (two C-speed counts,
    the usual case); otherwise the depth is measured outside strings, vectorized.
    """
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    a = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8", "replace"), np.uint8)
    step = ((a == 0x5B) | (a == 0x7B)).astype(np.int64) - ((a == 0x5D) | (a == 0x7D))
    return bool(len(step)) and int(np.cumsum(step).max()) > MAX_JSON_DEPTH


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object from its (key, value) pairs; a key given twice is refused.

    Python's parser keeps the last of two equal keys and other tools keep the first, so a
    duplicate key means the line says two things: every JSON reader here refuses it.
    """
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {json.dumps(key, ensure_ascii=False)}")
            seen.add(key)
    return obj


#: Strict JSON: no NaN/Infinity (not JSON numbers), no duplicate keys. The raw variant keeps
#: each float's source text (judgments write unknown fields back byte for byte).
_LOADS = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_refuse_constant).decode
_LOADS_RAW = json.JSONDecoder(
    object_pairs_hook=_unique_keys, parse_float=_RawFloat, parse_constant=_refuse_constant
).decode
_TOO_DEEP = f"invalid JSON, nested more than {MAX_JSON_DEPTH} deep"


def parse_json(content: str, label: str = "json") -> Any:
    """One JSON document (a corpus, a report), read by the rule every JSON reader here applies.

    Strict JSON: ``NaN``/``Infinity`` are refused (not JSON numbers, and other tools reject
    them), so is a key given twice in one object (which one counts differs between tools) and
    nesting deeper than :data:`MAX_JSON_DEPTH`. A leading BOM is dropped. Raises
    :class:`FormatError` naming ``label`` and, where there is one, the line.
    """
    content = _strip_bom(content)
    if _too_deep(content):
        raise FormatError(label, None, _TOO_DEEP)
    try:
        obj = _LOADS(content)
    except json.JSONDecodeError as err:
        raise FormatError(label, err.lineno, _json_detail(err)) from None
    except ValueError as err:
        raise FormatError(label, None, _json_detail(err)) from None
    except RecursionError:
        raise FormatError(label, None, _TOO_DEEP) from None
    if _SURROGATE_ESCAPE.search(content):
        _check_unicode(obj, label, None)
    return obj


def read_json(path: str | os.PathLike) -> Any:
    """:func:`parse_json` of a UTF-8 file (BOM accepted); messages name the path."""
    label = str(path)
    return parse_json(_decode(_read_bytes(path), label), label)


def _json_lines(content: str, label: str, raw_floats: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every line that is not blank or a ``//`` comment.

    Lines are split on ``\\n`` only: U+2028, form feeds and the like are legal inside JSON
    strings and must not shift line numbers. Every line is strict JSON (see :func:`parse_json`),
    whichever reader asks: the fast arrow paths refuse the same lines, so a line is accepted
    or refused the same way whatever else the file holds.
    """
    loads = _LOADS_RAW if raw_floats else _LOADS
    for i, line in enumerate(_strip_bom(content).split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if _too_deep(line):
            raise FormatError(label, i, _TOO_DEEP)
        try:
            obj = loads(line)
        except ValueError as err:
            raise FormatError(label, i, _json_detail(err)) from None
        except RecursionError:
            raise FormatError(label, i, _TOO_DEEP) from None
        if "\\u" in line and _SURROGATE_ESCAPE.search(line):
            _check_unicode(obj, label, i)
        yield i, obj


def _type_name(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _query_id_of(obj: Any, label: str, line: int) -> str:
    """A JSONL line must be an object with a non-empty string ``query_id``; returns it."""
    if not isinstance(obj, dict):
        raise FormatError(label, line, _not_object(obj))
    qid = obj.get("query_id")
    if not isinstance(qid, str) or not qid:
        raise FormatError(label, line, "missing query_id")
    return qid


def _not_object(obj: Any) -> str:
    return f"must be a JSON object, got {_type_name(obj)}"


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a double
        return False


def _is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike))


# ---------------------------------------------------------------------------------------------
# Atomic writing
# ---------------------------------------------------------------------------------------------


# The write machinery lives in .safewrite (temp file, fsync, rename, lock, backups, signals);
# it is re-exported here because every writer of this module uses it.
atomic_write_text = _safewrite.atomic_write_text


# ---------------------------------------------------------------------------------------------
# Judgments (SPEC A2)
# ---------------------------------------------------------------------------------------------


def _judgment_row(obj: Any, line: int, label: str) -> tuple:
    """Check one wire-format judgment; the known fields in JUDGMENT_FIELDS order, then extra."""
    qid = _query_id_of(obj, label, line)
    uri = obj.get("doc_uri")
    if not isinstance(uri, str) or not uri:
        raise FormatError(label, line, "missing doc_uri")
    rel = obj.get("relevance")
    if not _is_int(rel) or rel < 0:
        raise FormatError(label, line, "relevance must be a non-negative integer")
    if rel > MAX_RELEVANCE:
        raise FormatError(label, line, f"relevance {rel} {_TOO_LARGE}")
    for name in _OPTIONAL_JUDGMENT_STR:
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            raise FormatError(label, line, f"{name} must be a string")
    extra = {k: v for k, v in obj.items() if k not in _KNOWN_JUDGMENT} or None
    return tuple(obj.get(f) for f in JUDGMENT_FIELDS) + (extra,)


_KNOWN_JUDGMENT = frozenset(JUDGMENT_FIELDS)


def _judgments_frame(rows: list[tuple], lines: list[int], label: str) -> pd.DataFrame:
    if not rows:
        return empty_judgments()
    cols = list(zip(*rows))
    data: dict[str, Any] = {}
    for i, name in enumerate(JUDGMENT_FIELDS):
        if name == "relevance":
            data[name] = np.asarray(cols[i], dtype=np.int64)
        else:
            data[name] = _string_array(list(cols[i]), label, lines)
    extra = np.empty(len(rows), dtype=object)
    extra[:] = cols[len(JUDGMENT_FIELDS)]
    data["extra"] = _object_column(extra)
    data["line"] = np.asarray(lines, dtype=np.int64)
    return pd.DataFrame(data, copy=False)


def parse_judgments(content: str, label: str = "judgments") -> pd.DataFrame:
    """Parse a judgments JSONL text into the judgments frame (one row per line, file order).

    Blank lines and ``//`` comments are skipped; ``line`` is the file's real line number so a
    message (``judgments:7: missing doc_uri``) points where an editor will. Unknown fields are
    kept in ``extra`` (dict, original order) so writing the labels back loses nothing another
    tool put there. ``null`` for an optional field means unset. ``relevance`` is an integer
    from 0 to :data:`MAX_RELEVANCE` (53): nDCG's gain ``2**grade - 1`` is computed in float64,
    exact for every such grade, and no DCG sum of them can overflow (1024 made it inf, and
    nDCG NaN). Lines are strict JSON (:func:`parse_json`: no NaN, no duplicate key, at most
    :data:`MAX_JSON_DEPTH` deep), on the fast path and the careful pass alike.
    """
    data = _utf8_bytes(content, None)
    fast = _judgments_fast(data) if data is not None else None
    if fast is not None:
        return fast
    return _judgments_python(content, label)


def _judgments_python(content: str, label: str) -> pd.DataFrame:
    """The careful pass: exact messages, real line numbers, unknown fields kept in ``extra``."""
    rows: list[tuple] = []
    lines: list[int] = []
    for line, obj in _json_lines(content, label, raw_floats=True):
        rows.append(_judgment_row(obj, line, label))
        lines.append(line)
    return _judgments_frame(rows, lines, label)


def _os_file(path: str | os.PathLike) -> pa.NativeFile:
    """The file opened for arrow as a plain file (a ``.gz`` name is not decompressed: the bytes
    are read as they are, like the careful pass reads them)."""
    return pa.OSFile(os.fsdecode(os.fspath(path)))


#: arrow's JSON block (a line longer than a block is read again in one block, see :func:`_json_table`).
_JSON_BLOCK = 1 << 24


def _json_table(source: bytes | str | os.PathLike, schema: pa.Schema, unknown: str = "error") -> pa.Table | None:
    """arrow's strict read of JSON lines against ``schema``, else None.

    ``source`` is the bytes, or a path arrow reads straight from disk. ``unknown`` is what an
    unknown field does (``"error"``: the read fails; ``"ignore"``).
    """
    import pyarrow.json as pj

    size = len(source) if isinstance(source, bytes) else os.path.getsize(source)
    for block in (_JSON_BLOCK, size + 1):
        try:
            with pa.BufferReader(source) if isinstance(source, bytes) else _os_file(source) as src:
                return pj.read_json(
                    src,
                    read_options=pj.ReadOptions(block_size=block),
                    parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior=unknown),
                )
        except (OSError, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError) as err:
            if "straddl" not in str(err) or block > size or size >= 2**31 - 1:
                return None
    return None


def _judgment_schema(fields: Iterable[str]) -> pa.Schema:
    return pa.schema([(f, pa.int64() if f == "relevance" else _LS) for f in JUDGMENT_FIELDS if f in fields])


def _judgments_fast(data: bytes) -> pd.DataFrame | None:
    """The pyarrow path for judgments: a frame when every line is a plain, valid judgment, else None.

    Plain means: every line (no blank or comment lines, so row i is line i + 1) is one JSON
    object with only the known fields, each of its type (strings, ``relevance`` an integer)
    or null. arrow's JSON reader refuses the rest (unknown fields, wrong types, duplicate
    keys, a lone surrogate escape, NaN...); the checks it does not make (a missing or empty
    id, a missing or negative relevance, two objects on one line) are made on its columns.
    arrow is first given only the fields the first line has (parsing fields no line has
    doubles its work), and all the known fields when a later line has another one.
    On None the careful pass reads the text and gives the exact message.
    """
    total = _object_lines(_byte_blocks(data))  # no blank, comment or indented line
    got = None if total is None else _judgments_table(data, data.split(b"\n", 1)[0], total)
    return None if got is None else _judgments_from_table(*got)


def _judgments_file(path: str | os.PathLike) -> tuple[pa.Table, set[str], int] | None:
    """:func:`_judgments_table` of an ASCII regular file of plain lines, read from disk."""
    if not _regular_file(path):
        return None
    total = _object_lines(_file_blocks(path), ascii_only=True)
    if total is None:
        return None
    try:
        with open(path, "rb") as fh:
            first = fh.readline()
    except OSError:
        return None
    return _judgments_table(path, first, total)


def _judgments_table(
    source: bytes | str | os.PathLike, first: bytes, total: int
) -> tuple[pa.Table, set[str], int] | None:
    """arrow's table of ``total`` plain judgment lines (``first`` the first one), the fields it
    holds and the line count, else None."""
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not set(obj) <= _KNOWN_JUDGMENT:
        return None
    fields = set(obj) | {"query_id", "doc_uri", "relevance"}
    table = _json_table(source, _judgment_schema(fields))
    if table is None and fields != _KNOWN_JUDGMENT:
        fields = _KNOWN_JUDGMENT
        table = _json_table(source, _judgment_schema(fields))
    if table is None or table.num_rows != total:
        return None  # e.g. two objects on one line
    return table, fields, total


def _judgments_from_table(table: pa.Table, fields: set[str], total: int) -> pd.DataFrame | None:
    """The judgments frame from arrow's table, else None (a missing or empty id, a bad relevance).

    The string columns arrow parsed become the frame's columns as they are (no copy).
    """
    import pyarrow.compute as pc

    if not (_plain_fields(table.column("query_id")) and _plain_fields(table.column("doc_uri"))):
        return None
    rel_col = table.column("relevance")
    if rel_col.null_count or not pc.all(pc.greater_equal(rel_col, 0), min_count=0).as_py():
        return None
    if not pc.all(pc.less_equal(rel_col, MAX_RELEVANCE), min_count=0).as_py():
        return None  # the careful pass names the line
    strings = {name: table.column(name) for name in fields if name != "relevance"}
    relevance = _numpy_column(rel_col, np.int64)
    del table, rel_col
    _release()  # the parse buffers and the relevance column, before numpy allocates the rest
    cols: dict[str, Any] = {}
    nulls = _null_strings(total)
    for name in JUDGMENT_FIELDS:
        if name == "relevance":
            cols[name] = relevance
        else:
            cols[name] = _arrow_strings(strings.pop(name, nulls))
    cols["extra"] = _object_column(np.full(total, None, dtype=object))
    cols["line"] = np.arange(1, total + 1, dtype=np.int64)
    return pd.DataFrame(cols, copy=False)


def read_judgments(path: str | os.PathLike) -> pd.DataFrame:
    """Read a judgments JSONL file; messages are labelled with the path."""
    got = _judgments_file(path)  # arrow reads a plain file from disk; it is never held as bytes
    if got is not None:
        fast = _judgments_from_table(*got)
        if fast is not None:
            return fast
    label = str(path)
    data = _read_bytes(path)  # the careful pass reads it and has the last word
    if data.isascii():
        return _judgments_python(data.decode("ascii"), label)
    text = _decode(data, label)
    fast = _judgments_fast(data[3:] if data.startswith(b"\xef\xbb\xbf") else data)
    if fast is not None:
        return fast
    return _judgments_python(text, label)


def _dump(value: Any) -> str:
    """Compact JSON for one value, writing a ``_RawFloat`` as the text it was read from."""
    if isinstance(value, _RawFloat):
        return value.text
    if value is None or value is pd.NA:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return json.dumps(float(value), allow_nan=False)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    raise TypeError(f"cannot write a value of type {type(value).__name__} as JSON")


def serialize_judgments(judgments: Any) -> str:
    """Canonical JSONL bytes for the labels (SPEC A2), as a str.

    Compact JSON, non-ASCII kept as is, fields in the spec's order then unknown fields in their
    original order, unset fields omitted, a newline after every line (so empty input is "").
    Two writers of the same labels produce the same bytes, which keeps label diffs reviewable.
    """
    df = as_judgments(judgments)
    if len(df) == 0:
        return ""
    cols = []
    for name in JUDGMENT_FIELDS:
        values = df[name].to_numpy(dtype=object, na_value=None) if name != "relevance" else df[name].to_numpy()
        cols.append(values)
    extras = df["extra"].to_numpy(dtype=object)
    prefixes = [json.dumps(n) + ":" for n in JUDGMENT_FIELDS]
    out = []
    dumps = json.dumps
    for i in range(len(df)):
        parts = []
        for j, name in enumerate(JUDGMENT_FIELDS):
            v = cols[j][i]
            if v is None:
                continue
            if name == "relevance":
                parts.append(prefixes[j] + str(int(v)))
            else:
                parts.append(prefixes[j] + dumps(v, ensure_ascii=False))
        extra = extras[i]
        if isinstance(extra, Mapping):
            for k, v in extra.items():
                if k in _KNOWN_JUDGMENT:
                    continue
                parts.append(dumps(str(k), ensure_ascii=False) + ":" + _dump(v))
        out.append("{" + ",".join(parts) + "}\n")
    return "".join(out)


def write_judgments(judgments: Any, path: str | os.PathLike, backup: bool = False) -> None:
    """Write canonical judgments to ``path`` atomically (see :func:`atomic_write_text`)."""
    atomic_write_text(path, serialize_judgments(judgments), backup=backup)


def rewrite_judgments(text: str, before: Any, after: Any) -> str:
    """``text`` with only the lines of the labels that differ between ``before`` and ``after``
    rewritten canonically (SPEC A2); every other byte is kept.

    ``before`` is the frame :func:`parse_judgments` read from ``text`` (its ``line`` column
    says where each label is) and ``after`` the same rows changed (``drift.fix``). Comment
    lines, blank lines, unchanged labels, their field order and spacing, a CRLF line end
    and the final newline (or its absence) stay byte for byte: a re-anchor then shows in a
    diff as the lines it changed, and nothing a person wrote between the labels is lost.

    Parameters
    ----------
    text : str
        The judgments file's text (without a byte-order mark).
    before : DataFrame
        ``parse_judgments(text)``.
    after : DataFrame
        The same rows, some changed (``drift.fix(before, result).judgments``).

    Returns
    -------
    str
        The new text; ``text`` itself when no label changed.

    Raises
    ------
    ValueError
        ``before`` and ``after`` differ in length, or ``before`` carries no line numbers of
        ``text``.

    Examples
    --------
    >>> text = '// pilot\\n{"query_id": "q1", "doc_uri": "d1", "relevance": 1}\\n'
    >>> before = parse_judgments(text)
    >>> after = before.assign(relevance=[2])
    >>> print(rewrite_judgments(text, before, after), end="")
    // pilot
    {"query_id":"q1","doc_uri":"d1","relevance":2}
    """
    b, a = as_judgments(before), as_judgments(after)
    if len(b) != len(a):
        raise ValueError(f"rewrite_judgments: {len(b)} labels before, {len(a)} after; the rows must be the same")
    changed = np.zeros(len(b), dtype=bool)
    for name in JUDGMENT_FIELDS:
        x, y = b[name].reset_index(drop=True), a[name].reset_index(drop=True)
        same = (x == y).fillna(False).to_numpy(dtype=bool) | (x.isna() & y.isna()).to_numpy(dtype=bool)
        changed |= ~same
    if not changed.any():
        return text
    rows = np.flatnonzero(changed)
    numbers = b["line"].to_numpy(dtype=np.int64)[rows]
    lines = text.split("\n")
    if (numbers < 1).any() or (numbers > len(lines)).any():
        raise ValueError("rewrite_judgments: the labels do not carry the line numbers of this text")
    fresh = serialize_judgments(a.iloc[rows]).split("\n")
    for number, line in zip(numbers.tolist(), fresh):
        end = "\r" if lines[number - 1].endswith("\r") else ""
        lines[number - 1] = line + end
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Runs (SPEC A2 + B1)
# ---------------------------------------------------------------------------------------------

_RUN_SCHEMA = None


def _writable(values: Any) -> Any:
    """A numpy array the caller may write into: arrow's zero-copy views are read-only."""
    if isinstance(values, np.ndarray) and not values.flags.writeable:
        return values.copy()
    return values


def _object_column(values: np.ndarray) -> pd.Series:
    """An object column that a frame takes as it is: given a bare object array, pandas scans it
    to infer a type (0.1 s and ~70 MB of temporaries at 3M rows)."""
    return pd.Series(values, dtype=object, copy=False)


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    """One new (writable) array of ``dtype`` from ``parts``, in a single copy."""
    return np.concatenate(parts, dtype=dtype) if parts else np.zeros(0, dtype)


def _numpy_column(col: pa.ChunkedArray, dtype: Any) -> np.ndarray:
    """A null-free numeric arrow column as one writable numpy array (its chunks copied once)."""
    return _concat([c.to_numpy() for c in col.chunks], dtype)


def _run_frame(system: Any, qid: Any, rank: Any, doc: Any, score: Any) -> pd.DataFrame:
    return pd.DataFrame(
        {"system": system, "query_id": qid, "rank": _writable(rank), "doc_id": doc, "score": _writable(score)},
        copy=False,
    )


def _count_object_lines(data: bytes) -> int | None:
    """How many non-blank lines ``data`` has when each of them starts with ``{``, else None."""
    count = _object_lines(_byte_blocks(data))
    if count is not None:
        return count
    count = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        if not line.startswith(b"{"):
            return None  # indentation, comments: let the careful pass decide
        count += 1
    return count


def _no_empty(arr: pa.Array) -> bool:
    import pyarrow.compute as pc

    return len(arr) == 0 or not pc.any(pc.equal(pc.binary_length(arr), 0)).as_py()


def _run_json_columns(source: bytes | str | os.PathLike, n_lines: int) -> dict[str, pa.ChunkedArray] | None:
    """arrow's read of ``n_lines`` run JSON object lines into columns (query_id, ranking, scores,
    system), else None: arrow refuses the text, or a line holds two objects.

    ``source`` is the bytes, or a path arrow reads straight from disk.
    """
    global _RUN_SCHEMA
    if _RUN_SCHEMA is None:
        _RUN_SCHEMA = pa.schema(
            [("query_id", _LS), ("ranking", pa.list_(_LS)), ("scores", pa.list_(pa.float64())), ("system", _LS)]
        )
    # Unknown fields send the file to the careful pass: arrow would skip them unread (a NaN, a
    # duplicate key or a 100k-deep value in one would pass here and be refused there).
    table = _json_table(source, _RUN_SCHEMA)
    if table is None or table.num_rows != n_lines:
        return None  # e.g. two objects on one line
    return {name: table.column(name) for name in _RUN_SCHEMA.names}


def _parse_run_fast(data: bytes, system: str | None) -> pd.DataFrame | None:
    """The pyarrow path: a frame when every line is unambiguously valid, else None."""
    if not data or data.isspace():
        return None
    n_lines = _count_object_lines(data)
    cols = None if n_lines is None else _run_json_columns(data, n_lines)
    return None if cols is None else _run_from_columns(cols, system)


def _run_file_columns(path: str | os.PathLike) -> dict[str, pa.ChunkedArray] | None:
    """:func:`_run_json_columns` of an ASCII regular file of object lines, read from disk."""
    if not _regular_file(path):
        return None
    n_lines = _object_lines(_file_blocks(path), ascii_only=True)
    return None if n_lines is None else _run_json_columns(path, n_lines)


def _run_from_columns(cols: dict[str, pa.ChunkedArray], system: str | None) -> pd.DataFrame | None:
    """The run frame from arrow's columns, else None (the careful pass then decides).

    ``cols`` is emptied as it goes, so each parsed column is let go once it is converted; the
    doc ids arrow parsed become the frame's column as they are (no copy).
    """
    import pyarrow.compute as pc

    qid = cols.pop("query_id").combine_chunks()
    ranking = cols.pop("ranking")
    if qid.null_count or ranking.null_count or not _no_empty(qid):
        return None
    lengths = pc.list_value_length(ranking).to_numpy().astype(np.int64)
    docs = pc.list_flatten(ranking)
    del ranking
    if not _plain_fields(docs):  # a null or empty id
        return None
    total = int(lengths.sum())
    # scores: absent or null on a line means that line has none
    scores_col = cols.pop("scores")
    if scores_col.null_count < len(scores_col):
        has = ~scores_col.is_null().to_numpy()
        slen = pc.list_value_length(scores_col).fill_null(0).to_numpy().astype(np.int64)
        if np.any(slen[has] != lengths[has]):
            return None
        flat = pc.list_flatten(scores_col)
        if flat.null_count or not pc.all(pc.is_finite(flat), min_count=0).as_py():
            return None
        values = _numpy_column(flat, np.float64)
        del flat, scores_col
        if has.all():
            score = values
        else:
            score = np.full(total, np.nan)
            score[np.repeat(has, lengths)] = values
        del values
    else:
        score = np.full(total, np.nan)
        del scores_col
    _release()  # the parsed scores
    # systems: the argument, else each line's own, else the default
    line_sys = None
    sys_col = cols.pop("system").combine_chunks()
    if system is None:
        if sys_col.null_count == len(sys_col):
            system = DEFAULT_SYSTEM
        else:
            line_sys = sys_col.fill_null(DEFAULT_SYSTEM)
            if not _no_empty(line_sys):
                return None
            if len(pc.unique(line_sys)) == 1:
                system, line_sys = line_sys[0].as_py(), None  # one system: the constant column
    # one line per (system, query)
    if len(qid) and _group_codes(system if line_sys is None else line_sys, qid).max() + 1 != len(qid):
        return None
    line_index = np.arange(len(lengths), dtype=np.int32 if len(lengths) < 2**31 else np.int64)
    parent = pa.array(np.repeat(line_index, lengths))  # the line of each row
    q_rows = _arrow_strings(qid.take(parent))
    s_rows = _constant_strings(system, total) if line_sys is None else _arrow_strings(line_sys.take(parent))
    del parent
    rank = _block_rank((np.cumsum(lengths) - lengths)[lengths > 0], total)
    df = _run_frame(s_rows, q_rows, rank, _arrow_strings(docs), score)
    empty = np.flatnonzero(lengths == 0)
    if len(empty):
        qs = qid.take(pa.array(empty)).to_pylist()
        ss = [system] * len(qs) if line_sys is None else line_sys.take(pa.array(empty)).to_pylist()
        df.attrs["empty_rankings"] = list(zip(ss, qs))
    return df


def _run_python(items: Iterable[tuple[int, Any]], label: str, system: str | None) -> pd.DataFrame:
    """The careful pass over (line, object) pairs: exact messages, real line numbers."""
    seen: dict[tuple[str, str], int] = {}
    sys_col: list[str] = []
    q_col: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    lengths: list[int] = []
    lines: list[int] = []
    for line, obj in items:
        qid = _query_id_of(obj, label, line)
        if "ranking" not in obj or obj["ranking"] is None:
            raise FormatError(label, line, "missing ranking")
        ranking = obj["ranking"]
        if not isinstance(ranking, list):
            raise FormatError(label, line, "ranking must be a list")
        for i, key in enumerate(ranking):
            if not isinstance(key, str) or not key:
                raise FormatError(label, line, f"ranking[{i}] must be a non-empty string")
        sc = obj.get("scores")
        if sc is not None:
            if not isinstance(sc, list):
                raise FormatError(label, line, "scores must be a list")
            if len(sc) != len(ranking):
                raise FormatError(label, line, f"scores has {len(sc)} entries, ranking has {len(ranking)}")
            for i, s in enumerate(sc):
                if not _is_number(s) or not _finite(s):
                    raise FormatError(label, line, f"scores[{i}] must be a finite number")
        own = obj.get("system")
        if own is not None and (not isinstance(own, str) or not own):
            raise FormatError(label, line, "system must be a non-empty string")
        name = system if system is not None else (own if own is not None else DEFAULT_SYSTEM)
        prev = seen.get((name, qid))
        if prev is not None:
            of = "" if name == DEFAULT_SYSTEM else f" of system {name}"
            raise FormatError(label, line, f"duplicate entry for query {qid}{of}, already on line {prev}")
        seen[(name, qid)] = line
        sys_col.append(name)
        q_col.append(qid)
        docs.extend(ranking)
        if sc is not None:
            scores.extend(float(s) for s in sc)
        else:
            scores.extend([math.nan] * len(ranking))
        lengths.append(len(ranking))
        lines.append(line)
    n = np.asarray(lengths, dtype=np.int64)
    total = int(n.sum())
    offsets = np.concatenate(([0], np.cumsum(n)[:-1])) if len(n) else np.zeros(0, dtype=np.int64)
    rank = np.arange(total, dtype=np.int64) - np.repeat(offsets, n) + 1
    row_lines = list(np.repeat(np.asarray(lines, dtype=np.int64), n))
    q_rows = _string_array(list(np.repeat(np.asarray(q_col, dtype=object), n)), label, row_lines)
    s_rows = _string_array(list(np.repeat(np.asarray(sys_col, dtype=object), n)), label, row_lines)
    doc_rows = _string_array(docs, label, row_lines)
    df = _run_frame(s_rows, q_rows, rank, doc_rows, np.asarray(scores, dtype=np.float64))
    empty = [(s, q) for s, q, k in zip(sys_col, q_col, lengths) if k == 0]
    if empty:
        df.attrs["empty_rankings"] = empty
    return df


def _check_system(system: str | None) -> None:
    if system is not None and (not isinstance(system, str) or not system):
        raise ValueError("system must be a non-empty string")


def _utf8_bytes(text: str | None, data: bytes | None) -> bytes | None:
    """The UTF-8 bytes of ``text`` (BOM dropped) when no bytes were given; None when the text
    cannot be encoded (lone surrogates), which sends the caller to its careful pass."""
    if data is None and text is not None:
        try:
            return _strip_bom(text).encode("utf-8")
        except UnicodeEncodeError:
            return None
    return data


def _parse_run(text: str | None, data: bytes | None, label: str, system: str | None) -> pd.DataFrame:
    _check_system(system)
    data = _utf8_bytes(text, data)
    if data is not None:
        fast = _parse_run_fast(data, system)
        if fast is not None:
            return fast
        if text is None:
            text = _decode(data, label)
    df = _run_python(_json_lines(text or "", label), label, system)
    return df


def parse_run(content: str | bytes, label: str = "run", system: str | None = None) -> pd.DataFrame:
    """Parse a run JSONL text into the long run frame (system, query_id, rank, doc_id, score).

    A line is ``{"query_id", "ranking": [...], "scores"?: [...], "system"?: str}``. Two lines
    for the same (system, query) are refused: the file no longer says what that query's
    ranking is, and picking one would be a guess. A key repeated *inside* a ranking is kept
    (the metric engine counts its first occurrence). ``system`` given here names every line's
    system (it overrides a line's own ``system``); else a line's field, else ``"run"``.
    ``rank`` is the 1-based position as written; ``score`` is NaN for a line without scores.
    A line with an empty ranking has no rows; its (system, query_id) is listed in
    ``df.attrs["empty_rankings"]``, so a caller can tell "answered nothing" from "missing".
    """
    if isinstance(content, (bytes, bytearray)):
        data, text = _checked_bytes(bytes(content), label)
        return _parse_run(text, data, label, system)
    return _parse_run(content, None, label, system)


def read_run(path: str | os.PathLike, system: str | None = None) -> pd.DataFrame:
    """Read a run JSONL file (see :func:`parse_run`); messages are labelled with the path."""
    if system is None or (isinstance(system, str) and system):
        cols = _run_file_columns(path)  # arrow reads a plain file from disk; it is never held as bytes
        fast = None if cols is None else _run_from_columns(cols, system)
        if fast is not None:
            return fast
    label = str(path)
    data, text = _checked_bytes(_read_bytes(path), label)  # the careful pass has the last word
    return _parse_run(text, data, label, system)


def _arrow_of(col: pd.Series) -> pa.Array:
    """A "string" column as one contiguous large_string arrow array (no Python objects)."""
    arr = pa.array(col.array)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr.cast(_LS)


def _group_codes(system: Any, qid: Any) -> np.ndarray:
    """Integer code per row for its (system, query_id), numbered in order of first appearance.

    ``system`` is an arrow array, or a str when every row has that system.
    """
    cq = _codes(qid)[0].astype(np.int64)
    if isinstance(system, str):
        return cq
    cs = _codes(system)[0].astype(np.int64)
    if len(cs) and cs.max() == 0:
        return cq
    combined = cs * (int(cq.max()) + 1 if len(cq) else 1) + cq
    return pd.factorize(combined, sort=False)[0].astype(np.int64)


def _run_groups(df: pd.DataFrame) -> tuple[np.ndarray | None, np.ndarray, pa.Array, pa.Array]:
    """Rows grouped by (system, query) in first-appearance order, each group in rank order.

    Returns the row permutation (None when the frame is already in that order), the start of
    each group in the permuted rows, and the system and query_id columns as arrow arrays.
    """
    s = _arrow_of(df["system"])
    q = _arrow_of(df["query_id"])
    codes = _group_codes(s, q)
    rank = df["rank"].to_numpy()
    order = None if _in_group_order(codes, rank) else np.lexsort((rank, codes))
    return order, _group_starts(codes if order is None else codes[order]), s, q


def _in_group_order(codes: np.ndarray, rank: np.ndarray, strict: bool = False) -> bool:
    """True when rows are already grouped by code (ascending) and ranked within each group
    (``strict``: no two rows of a group share a rank)."""
    same = codes[1:] == codes[:-1]
    up = rank[1:] > rank[:-1] if strict else rank[1:] >= rank[:-1]
    return bool(np.all(codes[1:] >= codes[:-1])) and bool(np.all(~same | up))


def _group_starts(sorted_codes: np.ndarray) -> np.ndarray:
    if len(sorted_codes) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], sorted_codes[1:] != sorted_codes[:-1])))


_TREC_SPACE = re.compile(rb"[ \t\n\v\f\r]")


def _whitespace_at(arr: pa.Array) -> int | None:
    """The first position of a large_string array whose value holds ASCII whitespace, or None.

    One regex search over the data buffer settles the usual case (no whitespace anywhere)."""
    import pyarrow.compute as pc

    if len(arr) == 0:
        return None
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    if data is None or not _TREC_SPACE.search(memoryview(data)[offsets[0] : offsets[-1]]):
        return None
    bad = pc.fill_null(pc.match_substring_regex(arr, r"[ \t\n\v\f\r]"), False)
    return int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])


def _check_trec_field(arr: pa.Array, what: str) -> None:
    """A TREC field cannot hold ASCII whitespace (trec_eval splits on it)."""
    at = _whitespace_at(arr)
    if at is None:
        return
    first = arr[at].as_py()
    raise ValueError(f"{what} {first!r} contains whitespace; the TREC format cannot hold it")


def _joined_text(arr: pa.Array) -> str:
    """The concatenation of a null-free large_string array, straight from its data buffer."""
    if len(arr) == 0:
        return ""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    return bytes(memoryview(arr.buffers()[2])[offsets[0] : offsets[-1]]).decode("utf-8")


def write_run(run: Any, path: str | os.PathLike | None = None) -> str:
    """The run as JSONL text; written atomically to ``path`` when one is given.

    One line per (system, query_id) in first-appearance order, entries in rank order. A line
    carries ``scores`` when all its entries have a score (a query with no scores omits it; a
    query with only some scores is refused, since JSON has no NaN), and ``system`` when the
    system is not the default ``"run"``.
    """
    df = as_run(run)
    out = []
    if len(df):
        order, starts, systems_arr, qids_arr = _run_groups(df)
        take = (lambda a: a) if order is None else (lambda a: a[order])
        ends = np.concatenate((starts[1:], [len(df)]))
        first = starts if order is None else order[starts]
        systems = systems_arr.take(pa.array(first)).to_pylist()
        qids = qids_arr.take(pa.array(first)).to_pylist()
        docs = take(df["doc_id"].to_numpy(dtype=object))
        scores = take(df["score"].to_numpy(dtype=np.float64))
        for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
            line: dict[str, Any] = {"query_id": qids[g], "ranking": docs[a:b].tolist()}
            sc = scores[a:b]
            nan = np.isnan(sc)
            if not nan.all():
                if nan.any():
                    raise ValueError(f"query {qids[g]} has scores for some entries only; JSON cannot hold the rest")
                line["scores"] = sc.tolist()
            if systems[g] != DEFAULT_SYSTEM:
                line["system"] = systems[g]
            out.append(json.dumps(line, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")
    text = "".join(out)
    if path is not None:
        atomic_write_text(path, text)
    return text


def to_trec_run(run: Any, run_name: str = "retrieval-eval") -> str:
    """The run in TREC format: ``query_id Q0 doc_id rank score run_name`` a line.

    Rows are grouped by (system, query) in first-appearance order and written in rank order.
    ``score`` is the run's real score when every entry of that query has one, written as the
    shortest text that reads back as the same double (``0.5``, ``1``, ``0.00001``); otherwise a
    synthetic descending score ``n - rank + 1`` (n = the query's ranking length, so 1 for the
    last entry), so tools that re-sort by score (trec_eval) keep the run's order. The last
    column is the row's system when it is not the default ``"run"``, else ``run_name``: one file
    can then carry several systems. An id holding whitespace is refused (ValueError), since
    the format splits on it.
    """
    import pyarrow.compute as pc

    df = as_run(run)
    if len(df) == 0:
        return ""
    if not run_name or re.search(r"[ \t\n\v\f\r]", run_name):
        raise ValueError(f"run name {run_name!r} is empty or contains whitespace; the TREC format cannot hold it")
    order, starts, systems, qids = _run_groups(df)
    n = len(df)
    docs = _arrow_of(df["doc_id"])
    ranks = df["rank"].to_numpy()
    scores = df["score"].to_numpy(dtype=np.float64)
    if order is not None:
        idx = pa.array(order)
        systems, qids, docs = systems.take(idx), qids.take(idx), docs.take(idx)
        ranks, scores = ranks[order], scores[order]
    counts = np.diff(np.concatenate((starts, [n])))
    group = np.repeat(np.arange(len(starts)), counts)
    finite = np.isfinite(scores)
    real = (np.bincount(group, weights=finite, minlength=len(starts)) == counts)[group]
    synthetic = np.repeat(counts, counts) - (np.arange(n) - np.repeat(starts, counts))
    score_text = pc.if_else(
        pa.array(real),
        pc.cast(pa.array(np.where(real, scores, 0.0)), _LS),
        pc.cast(pa.array(synthetic.astype(np.int64)), _LS),
    )
    names = pc.if_else(pc.equal(systems, pa.scalar(DEFAULT_SYSTEM, _LS)), pa.scalar(run_name, _LS), systems)
    for arr, what in ((qids, "query id"), (docs, "doc id"), (names, "run name")):
        _check_trec_field(arr, what)
    names_nl = pc.binary_join_element_wise(names, pa.scalar("", _LS), pa.scalar("\n", _LS))
    lines = pc.binary_join_element_wise(
        qids, pa.scalar("Q0", _LS), docs, pc.cast(pa.array(ranks), _LS), score_text, names_nl, pa.scalar(" ", _LS)
    )
    return _joined_text(lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines)


# ---------------------------------------------------------------------------------------------
# Whitespace-separated tables (TREC runs, qrels)
# ---------------------------------------------------------------------------------------------

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")


_OTHER_SPACE = {" ": (b"\t", b"\v", b"\f", b"\r"), "\t": (b" ", b"\v", b"\f", b"\r")}


def _delimiter(first: bytes) -> str:
    """The one separator arrow splits a table's lines on, from its first line."""
    return "\t" if (b"\t" in first and b" " not in first) else " "


def _arrow_table(
    data: bytes,
    names: list[str],
    types: dict[str, pa.DataType],
    keep_it: bool = False,
    bools: tuple[list[str], list[str]] | None = None,
) -> pa.Table | None:
    """Strict pyarrow read of single-space (or single-tab) separated columns, else None."""
    if not data or data.isspace():
        return None
    first = data[: data.find(b"\n")] if b"\n" in data else data
    delim = _delimiter(first)
    # the careful pass splits on any run of ASCII whitespace; arrow splits on one delimiter, so
    # arrow is used only when the other separators cannot occur
    if any(c in data for c in _OTHER_SPACE[delim]):  # single-byte searches (memchr), not a regex
        other = b" " if delim == "\t" else b"\t"
        if other in data or b"\v" in data or b"\f" in data or data.count(b"\r") != data.count(b"\r\n"):
            return None
    return _csv_table(pa.BufferReader(data), names, types, delim, keep_it, bools=bools)


#: arrow's CSV block: 4 MB chunks keep the parse buffers in flight (two threads) small; larger
#: blocks are no faster here and add ~40 MB to the peak of a 10M-line read.
_CSV_BLOCK = 1 << 22


def _csv_table(
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
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        return None


def _space_table_file(
    path: str | os.PathLike,
    names: list[str],
    types: dict[str, pa.DataType],
    keep_it: bool = False,
    skip_rows: int = 0,
    bools: tuple[list[str], list[str]] | None = None,
    scan: bool = True,
) -> tuple[pa.Table | None, bool]:
    """Arrow's read of a whitespace table file straight from disk (None if arrow refuses it),
    and whether :func:`_plain_space_table` passes the file (the table is None when not).

    The two run at once: arrow parses on its own threads while this one scans the bytes (the
    scan holds the GIL, the parse does not need it), which takes 0.1-0.15 s off a 10M-line file.
    A file the scan refuses costs that parse for nothing, and then takes the exact path.
    ``scan=False`` reads a file already scanned. ``bools``: see :func:`_csv_table`.
    """
    from concurrent.futures import ThreadPoolExecutor

    def parse() -> pa.Table | None:
        try:
            source = _os_file(path)
        except (OSError, pa.ArrowException):
            return None
        with source:
            return _csv_table(source, names, types, " ", keep_it, skip_rows, bools)

    if not scan:
        return parse(), True
    with ThreadPoolExecutor(max_workers=1) as pool:
        reading = pool.submit(parse)
        plain = _plain_space_table(path)  # a read error propagates once the parse is done
        table = reading.result()
    return (table if plain else None), plain


_ASCII_SPACE = re.compile(r"[ \t\v\f\r]+")


def _table_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) for each line that is not blank or a ``#`` comment."""
    for i, line in enumerate(_strip_bom(text).split("\n"), start=1):
        fields = _ASCII_SPACE.split(line.strip(" \t\v\f\r"))
        if fields == [""] or fields[0].startswith("#"):
            continue
        yield i, fields


def _parse_float_field(s: str) -> float | None:
    if "_" in s:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _order_trec(
    system: Any, qid: Any, doc: Any, rank_in: np.ndarray, score: np.ndarray, order: str
) -> pd.DataFrame:
    """Group rows by (system, query) in first-appearance order, order each group, renumber.

    ``system`` is the run_name column, or a str naming every row (the column is then the
    compact constant one, see :func:`_constant_strings`).
    """
    import pyarrow.compute as pc

    n = len(rank_in)
    if n == 0:
        return empty_run()
    codes = _group_codes(system, qid)
    if order == "rank":
        # Equal ranks in one query: doc id ascending (byte order), then file order, so a run
        # with ties reads the same whatever order its lines were written in.
        perm = None
        if not _in_group_order(codes, rank_in, strict=True):
            t = pa.table({"g": pa.array(codes), "r": pa.array(rank_in), "d": doc,
                          "i": pa.array(np.arange(n, dtype=np.int64))})
            perm = pc.sort_indices(t, sort_keys=[("g", "ascending"), ("r", "ascending"),
                                                 ("d", "ascending"), ("i", "ascending")])
            perm = perm.to_numpy(zero_copy_only=False)
    else:
        t = pa.table({"g": pa.array(codes), "s": pa.array(score), "d": doc})
        perm = pc.sort_indices(t, sort_keys=[("g", "ascending"), ("s", "descending"), ("d", "descending")])
        perm = perm.to_numpy(zero_copy_only=False)
    if perm is not None:
        idx = pa.array(perm)
        qid, doc = qid.take(idx), doc.take(idx)
        system = system if isinstance(system, str) else system.take(idx)
        codes, score = codes[perm], score[perm]
    starts = _group_starts(codes)
    counts = np.diff(np.concatenate((starts, [n])))
    rank = np.arange(n, dtype=np.int64) - np.repeat(starts, counts) + 1
    s_arr = _constant_strings(system, n) if isinstance(system, str) else _arrow_strings(system)
    return _run_frame(s_arr, _arrow_strings(qid), rank, _arrow_strings(doc), score)


def _starts_if_grouped(system: Any, qid: pa.ChunkedArray, rank_in: pa.ChunkedArray) -> np.ndarray | None:
    """The first row of each (system, query) block when rows already come grouped and in rank
    order, else None (the rows then need the general grouping of :func:`_order_trec`).

    That is the usual TREC run: each query's lines together, ranks ascending. The frame then
    keeps the file's row order, with no sort and no hashing of the 10M ids: only neighbours
    are compared (:func:`~retrieval_eval.metrics._block_starts`), and the few block keys
    checked to be distinct. ``system`` is the run_name column, or a str naming every row.
    """
    if len(rank_in) == 0:
        return None
    # Strict: a tie in rank needs the doc-id order of :func:`_order_trec`.
    first, in_order = _block_starts(None if isinstance(system, str) else system, qid, rank_in, strict=True)
    if not in_order:
        return None
    heads = system if isinstance(system, str) else _take(system, first)
    if _group_codes(heads, _take(qid, first)).max() + 1 != len(first):
        return None  # a (system, query) comes back later in the file
    return first


def _block_rank(first: np.ndarray, n: int) -> np.ndarray:
    """1-based position of each of ``n`` rows in its block; blocks start at rows ``first``."""
    size = n // len(first) if len(first) else 0
    if size and size * len(first) == n and bool(np.all(first == np.arange(0, n, size))):
        # Blocks of one size (a run cut at one depth): one row of ranks, copied down.
        rank = np.empty((len(first), size), dtype=np.int64)
        rank[:] = np.arange(1, size + 1, dtype=np.int64)
        return rank.reshape(-1)
    rank = np.ones(n, dtype=np.int64)
    rank[first[1:]] -= np.diff(first)
    return np.cumsum(rank, out=rank)


def _release() -> None:
    """Hand the memory arrow freed back to the system now, so numpy's arrays do not stack on it.

    arrow's allocator keeps freed pages for reuse; a big read frees hundreds of MB of parse
    buffers and chunks, and without this the process's peak is their sum with what follows.
    """
    pa.default_memory_pool().release_unused()


#: Column types of a TREC run read by arrow: the ids as pandas' large_string (the parsed chunks
#: become the frame's columns), the rank as int32 (it only orders rows; a rank past 2**31 sends
#: the file to the exact path), Q0 and run_name dictionary-encoded (a few distinct values, 4
#: bytes a row, freed once checked).
_TREC_RUN_TYPES = {
    "q": _LS,
    "it": pa.dictionary(pa.int32(), pa.binary()),
    "d": _LS,
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
    fields = line.split(_delimiter(line).encode())
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

    ``read(types, bools)`` reads the whole file (see :func:`_csv_table`). It reads first as
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
    return all(c.indices.null_count == 0 and _plain_fields(pa.chunked_array([c.dictionary])) for c in col.chunks)


def _one_value(col: pa.ChunkedArray) -> str | None:
    """The value every row of a dictionary-encoded column holds, else None (two or more)."""
    values = set()
    for chunk in col.chunks:
        if len(chunk) and len(chunk.dictionary) != 1:
            return None
        values.update(chunk.dictionary.to_pylist() if len(chunk) else ())
    return values.pop() if len(values) == 1 else None


def _trec_run_file(path: str | os.PathLike, order: str, system: str | None) -> pd.DataFrame | None:
    """The fast read of a plain TREC run file (see :func:`_plain_space_table`), else None.

    Arrow reads the columns straight from the file, which is never held as Python bytes. None
    sends the caller to the exact path, which reads the file again and either returns the
    same frame or raises the exact message.
    """
    if order not in ("rank", "score") or (system is not None and (not isinstance(system, str) or not system)):
        return None
    if not _regular_file(path):
        return None
    try:
        with open(path, "rb") as fh:
            first = fh.readline(65536)
    except OSError:
        return None
    plain = None  # what the scan said of the file, once it ran

    def read(types, bools) -> pa.Table | None:
        nonlocal plain
        if plain is False:
            return None
        table, plain = _space_table_file(path, _TREC_RUN_NAMES, types, keep_it=True, bools=bools,
                                         scan=plain is None)
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
    if name is not None:  # no Q0 or run_name field is empty; every true run name is ``name``
        if system is None and not pc.all(m, min_count=0).as_py():
            return _READ_AGAIN  # a line has another run name
        names: Any = system if system is not None else name
        del it, m
    if not (_plain_fields(qid, comment=True) and _plain_fields(doc)):
        return None
    if name is None:
        if not (_plain_codes(it) and _plain_codes(m)):
            return None
        names = system if system is not None else _one_value(m)
        if names is None:
            names = m.cast(_LS)  # several run names: the per-row column
        del it, m
    if not pc.all(pc.is_finite(s), min_count=0).as_py():
        return None
    _release()  # the parse buffers let go, before numpy allocates
    if order == "rank" and len(r) >= _TOGETHER_ROWS:
        # The rankings' boundaries (arrow compares neighbours without the GIL) are found
        # while the scores are copied out.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            finding = pool.submit(_starts_if_grouped, names, qid, r)
            score = _numpy_column(s, np.float64)
            first = finding.result()
    else:
        first = _starts_if_grouped(names, qid, r) if order == "rank" else None
        score = _numpy_column(s, np.float64)
    del s
    rank_in = _numpy_column(r, np.int64) if first is None else None
    del r
    _release()
    if first is None:
        return _order_trec(names, qid, doc, rank_in, score, order)
    rank = _block_rank(first, len(score))
    s_arr = _constant_strings(names, len(rank)) if isinstance(names, str) else _arrow_strings(names)
    return _run_frame(s_arr, _arrow_strings(qid), rank, _arrow_strings(doc), score)


def _trec_python(text: str, label: str) -> tuple[list, list, list, list, list]:
    """The careful pass over a TREC run's lines. Fields after the sixth are ignored, as
    trec_eval ignores them ("reserved for future expansion"); fewer than six is an error."""
    q, d, r, s, m = [], [], [], [], []
    for line, f in _table_lines(text):
        if len(f) < 6:
            raise FormatError(label, line, f"expected 6 fields, got {len(f)}")
        if not _INT_RE.match(f[3]):
            raise FormatError(label, line, f"rank must be an integer, got {f[3]!r}")
        if not -(2**63) <= int(f[3]) < 2**63:
            raise FormatError(label, line, f"rank {f[3]} is too large")
        sc = _parse_float_field(f[4])
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
    _check_system(system)
    data = _utf8_bytes(text, data)
    if data is not None:
        first = data[: data.find(b"\n") + 1] if b"\n" in data else data
        fast = _trec_run_read(lambda types, bools: _arrow_table(data, _TREC_RUN_NAMES, types, True, bools),
                              first, order, system)
        if fast is not None:
            return fast
    if text is None:
        text = _decode(data, label)
    q, d, r, s, m = _trec_python(text, label)
    try:
        qid, doc = pa.array(q, _LS), pa.array(d, _LS)
        names = system if system is not None else pa.array(m, _LS)
    except (UnicodeEncodeError, pa.ArrowException):
        raise FormatError(label, None, "text is not valid Unicode (a lone surrogate escape)") from None
    return _order_trec(names, qid, doc, np.asarray(r, dtype=np.int64), np.asarray(s, dtype=np.float64), order)


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
    """
    if isinstance(content, (bytes, bytearray)):
        data, text = _checked_bytes(bytes(content), label)
        return _from_trec(text, data, label, order, system)
    return _from_trec(content, None, label, order, system)


def read_trec_run(path: str | os.PathLike, order: str = "rank", system: str | None = None) -> pd.DataFrame:
    """Read a TREC run file (see :func:`from_trec_run`); messages are labelled with the path."""
    label = str(path)
    fast = _trec_run_file(path, order, system)
    if fast is not None:
        return fast
    data, text = _checked_bytes(_read_bytes(path), label)
    return _from_trec(text, data, label, order, system)


# ---------------------------------------------------------------------------------------------
# Qrels (SPEC A2)
# ---------------------------------------------------------------------------------------------


def _is_header(fields: list[str]) -> bool:
    """BEIR's header row (``query-id corpus-id score``): 3 fields, the last a word, not a grade."""
    return len(fields) == 3 and fields[2].replace("-", "").replace("_", "").isalpha()


def _qrels_python(text: str, label: str) -> tuple[list, list, list, list]:
    q, d, r, lines = [], [], [], []
    first = True
    for line, f in _table_lines(text):
        if first and _is_header(f):
            first = False
            continue
        first = False
        if len(f) == 4:
            qid, doc, rel = f[0], f[2], f[3]
        elif len(f) == 3:
            qid, doc, rel = f
        else:
            raise FormatError(label, line, f"expected 3 or 4 fields, got {len(f)}")
        if not _INT_RE.match(rel):
            raise FormatError(label, line, f"relevance must be an integer, got {rel!r}")
        value = int(rel)
        if value > MAX_RELEVANCE:
            raise FormatError(label, line, f"relevance {value} {_TOO_LARGE}")
        q.append(qid)
        d.append(doc)
        r.append(max(value, 0))
        lines.append(line)
    return q, d, r, lines


def _qrels_columns(first: bytes, second: bytes) -> tuple[int, list[str]] | None:
    """From a qrels file's first two lines: whether line 1 is BEIR's header, and the column names
    of the lines arrow reads (4 fields: TREC, 3: BEIR); None for a shape the careful pass decides."""
    if first.lstrip().startswith(b"#"):
        return None
    header = int(_is_header([f.decode("utf-8", "replace") for f in first.split()]))
    width = len((second if header else first).split())
    names = {4: ["q", "it", "d", "r"], 3: ["q", "d", "r"]}.get(width)
    return None if names is None else (header, names)


_QRELS_TYPES = {"q": _LS, "d": _LS, "r": pa.int64()}


def _qrels_arrow(table: pa.Table | None, header: int) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    """(query ids, doc ids, grades, line numbers) from arrow's read of qrels lines, else None.

    None when an id is empty (the careful pass would count another number of fields) or a line
    is a ``#`` comment. The iteration column is not read: a 4-field line whose iteration field
    is empty (``q  d 1``) is the 3-field line ``q d 1`` to the careful pass, the same row.
    """
    if table is None or table.num_rows == 0:
        return None
    qid, doc = table.column("q"), table.column("d")
    if not (_plain_fields(qid, comment=True) and _plain_fields(doc)):
        return None
    rel = _numpy_column(table.column("r"), np.int64)
    if len(rel) and rel.max() > MAX_RELEVANCE:
        return None  # the careful pass names the line
    del table
    _release()  # the parse buffers and the grade column, before numpy allocates the rest
    np.maximum(rel, 0, out=rel)  # TREC's "judged, harmful" grade is 0 here
    lines = np.arange(1 + header, len(rel) + 1 + header, dtype=np.int64)
    return _arrow_strings(qid), _arrow_strings(doc), rel, lines


def _qrels_fast(data: bytes) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    nl = data.find(b"\n")
    first = data if nl < 0 else data[:nl]
    rest = b"" if nl < 0 else data[nl + 1 :]
    shape = _qrels_columns(first, rest[: rest.find(b"\n")] if b"\n" in rest else rest)
    if shape is None:
        return None
    header, names = shape
    return _qrels_arrow(_arrow_table(rest if header else data, names, _QRELS_TYPES), header)


def _qrels_file(path: str | os.PathLike) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    """The fast read of a plain qrels file (see :func:`_plain_space_table`) straight from disk."""
    if not _regular_file(path):
        return None
    try:
        with open(path, "rb") as fh:
            shape = _qrels_columns(fh.readline(), fh.readline())
    except OSError:
        return None
    if shape is None:
        return None
    header, names = shape
    return _qrels_arrow(_space_table_file(path, names, _QRELS_TYPES, skip_rows=header)[0], header)


def _from_qrels(
    text: str | None,
    data: bytes | None,
    label: str,
    as_chunk_ids: bool,
    corpus_fingerprint: str | None,
    labeled_by: str | None,
) -> pd.DataFrame:
    data = _utf8_bytes(text, data)
    fast = _qrels_fast(data) if data is not None else None
    if fast is None:
        if text is None:
            text = _decode(data, label)
        q, d, r, ln = _qrels_python(text, label)
        q_arr, d_arr = _string_array(q, label, ln), _string_array(d, label, ln)
        fast = q_arr, d_arr, np.asarray(r, dtype=np.int64), np.asarray(ln, dtype=np.int64)
    return _qrels_frame(*fast, as_chunk_ids, corpus_fingerprint, labeled_by)


def _qrels_frame(
    q_arr: Any,
    d_arr: Any,
    rel: np.ndarray,
    lines: np.ndarray,
    as_chunk_ids: bool,
    corpus_fingerprint: str | None,
    labeled_by: str | None,
) -> pd.DataFrame:
    """The judgments frame of qrels rows; the fields qrels lack are compact NA columns."""
    n = len(rel)
    if n == 0:
        return empty_judgments()
    data_cols: dict[str, Any] = {}
    nulls = _null_strings(n)
    for name in JUDGMENT_FIELDS:
        if name == "query_id":
            data_cols[name] = q_arr
        elif name == "doc_uri":
            data_cols[name] = d_arr
        elif name == "chunk_id" and as_chunk_ids:
            data_cols[name] = d_arr.copy()
        elif name == "relevance":
            data_cols[name] = rel
        elif name == "corpus_fingerprint" and corpus_fingerprint is not None:
            data_cols[name] = _constant_strings(corpus_fingerprint, n)
        elif name == "labeled_by" and labeled_by is not None:
            data_cols[name] = _constant_strings(labeled_by, n)
        else:
            data_cols[name] = _arrow_strings(nulls)
    data_cols["extra"] = _object_column(np.full(n, None, dtype=object))
    data_cols["line"] = lines
    return pd.DataFrame(data_cols, copy=False)


def from_qrels(
    content: str | bytes,
    as_chunk_ids: bool = False,
    corpus_fingerprint: str | None = None,
    labeled_by: str | None = None,
    label: str = "qrels",
) -> pd.DataFrame:
    """Parse TREC (``qid iter docid rel``) or BEIR (``query-id corpus-id score``, header) qrels.

    Both shapes exist in the wild (trec_eval, BEIR, ir_datasets exports), so both are read:
    3 or 4 whitespace-separated fields, ``#`` comments and blank lines skipped, the BEIR header
    skipped, a negative grade (TREC's "judged, harmful") clamped to 0. The id goes to
    ``doc_uri``, and also to ``chunk_id`` with ``as_chunk_ids=True``. Returns a judgments frame.
    A grade above :data:`MAX_RELEVANCE` (53) is refused naming its line, on the fast path and
    the careful one alike: nDCG's gain ``2**grade - 1`` is exact in float64 only up to there,
    and a larger grade (1024) overflowed it into a NaN metric.
    """
    if isinstance(content, (bytes, bytearray)):
        data, text = _checked_bytes(bytes(content), label)
        return _from_qrels(text, data, label, as_chunk_ids, corpus_fingerprint, labeled_by)
    return _from_qrels(content, None, label, as_chunk_ids, corpus_fingerprint, labeled_by)


def read_qrels(
    path: str | os.PathLike,
    as_chunk_ids: bool = False,
    corpus_fingerprint: str | None = None,
    labeled_by: str | None = None,
) -> pd.DataFrame:
    """Read a qrels file (see :func:`from_qrels`); messages are labelled with the path."""
    fast = _qrels_file(path)
    if fast is not None:
        return _qrels_frame(*fast, as_chunk_ids, corpus_fingerprint, labeled_by)
    label = str(path)
    data, text = _checked_bytes(_read_bytes(path), label)
    return _from_qrels(text, data, label, as_chunk_ids, corpus_fingerprint, labeled_by)


def to_qrels(judgments: Any, label: str | None = None) -> str:
    """TREC qrels text: ``<query_id> 0 <key> <relevance>`` a line, key = chunk_id else doc_uri.

    An id holding ASCII whitespace is refused (:class:`FormatError` naming the judgment's line,
    else its row), as :func:`to_trec_run` refuses one: the format splits on whitespace, so the
    line would read back as other fields (``" "`` as query id reads back as query ``0``) or not
    at all. ``label`` names the input in that message (default: the path, else ``judgments``).
    """
    df = as_judgments(judgments)
    if len(df) == 0:
        return ""
    key = df["chunk_id"].fillna(df["doc_uri"])
    if label is None:
        label = str(judgments) if _is_path(judgments) else "judgments"
    for col in ("query_id", "key"):
        values = df["query_id"] if col == "query_id" else key
        at = _whitespace_at(_arrow_of(values))
        if at is not None:
            what = col if col == "query_id" else ("chunk_id" if pd.notna(df["chunk_id"].iloc[at]) else "doc_uri")
            line = int(df["line"].iloc[at])
            where = "" if line > 0 else f"row {at}: "
            raise FormatError(label, line if line > 0 else None,
                              f"{where}{what} {values.iloc[at]!r} contains whitespace; TREC qrels cannot hold it")
    rel = df["relevance"].astype(str).astype(object)
    lines = df["query_id"].astype(object) + " 0 " + key.astype(object) + " " + rel
    return "\n".join(lines.tolist()) + "\n"


# ---------------------------------------------------------------------------------------------
# Corpus (SPEC A2)
# ---------------------------------------------------------------------------------------------

_CORPUS_SHAPE = "must be a JSON object with a chunks list"


def _corpus_from_obj(obj: Any, label: str) -> pd.DataFrame:
    if not isinstance(obj, dict) or "chunks" not in obj:
        raise FormatError(label, None, _CORPUS_SHAPE)
    chunks = obj["chunks"]
    if not isinstance(chunks, list):
        raise FormatError(label, None, _CORPUS_SHAPE)
    attrs = {}
    for key in _FINGERPRINTS:
        v = obj.get(key)
        if v is not None and not isinstance(v, str):
            raise FormatError(label, None, f"{key} must be a string")
        attrs[key] = v
    cols: dict[str, list] = {c: [] for c in CORPUS_COLUMNS}
    for i, ch in enumerate(chunks):
        where = f"chunks[{i}]"
        if not isinstance(ch, dict):
            raise FormatError(label, None, f"{where} {_not_object(ch)}")
        for req in ("chunk_id", "doc_uri"):
            v = ch.get(req)
            if v is None or v == "":
                raise FormatError(label, None, f"{where} has no {req}")
            if not isinstance(v, str):
                raise FormatError(label, None, f"{where} {req} must be a string")
        for opt in ("doc_revision", "text", "text_sha"):
            v = ch.get(opt)
            if v is not None and not isinstance(v, str):
                raise FormatError(label, None, f"{where} {opt} must be a string")
        o = ch.get("ordinal")
        if o is not None and (not _is_int(o) or abs(o) > 2**63 - 1):
            raise FormatError(label, None, f"{where} ordinal must be an integer")
        for c in CORPUS_COLUMNS:
            cols[c].append(ch.get(c))
    data: dict[str, Any] = {}
    for c, dtype in CORPUS_COLUMNS.items():
        if dtype == "Int64":
            data[c] = pd.array(cols[c], dtype="Int64")
        else:
            data[c] = _string_array(cols[c], label)
    df = pd.DataFrame(data) if chunks else empty_corpus()
    df.attrs.update(attrs)
    return df


def parse_corpus(content: str, label: str = "corpus") -> pd.DataFrame:
    """Parse a corpus JSON document into the corpus frame (one row per chunk, file order).

    ``df.attrs`` carries ``corpus_fingerprint`` and ``chunker_fingerprint`` (None when absent),
    which drift compares against the labels' fingerprint. Chunk fields other than the six the
    spec names are not kept (the frame has no ``extra`` column); ``chunks[i]`` in messages is
    0-based, as in JSON Pointer.
    """
    return _corpus_from_obj(parse_json(content, label), label)


def read_corpus(path: str | os.PathLike) -> pd.DataFrame:
    """Read a corpus JSON file (see :func:`parse_corpus`); messages are labelled with the path."""
    label = str(path)
    return parse_corpus(_decode(_read_bytes(path), label), label=label)


def write_corpus(corpus: Any, path: str | os.PathLike | None = None) -> str:
    """The corpus as JSON text (2-space indent, fingerprints first, unset fields omitted).

    Written atomically to ``path`` when one is given.
    """
    df = as_corpus(corpus)
    doc: dict[str, Any] = {k: df.attrs[k] for k in _FINGERPRINTS if df.attrs.get(k) is not None}
    chunks = []
    cols = {c: df[c].to_numpy(dtype=object, na_value=None) for c in CORPUS_COLUMNS}
    for i in range(len(df)):
        ch = {}
        for c in CORPUS_COLUMNS:
            v = cols[c][i]
            if v is not None:
                ch[c] = int(v) if c == "ordinal" else v
        chunks.append(ch)
    doc["chunks"] = chunks
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if path is not None:
        atomic_write_text(path, text)
    return text


# ---------------------------------------------------------------------------------------------
# Queries (SPEC B2)
# ---------------------------------------------------------------------------------------------


def _queries_python(items: Iterable[tuple[int, Any]], label: str) -> pd.DataFrame:
    seen: dict[str, int] = {}
    q_id, q_text, q_stratum, q_none, lines = [], [], [], [], []
    for line, obj in items:
        qid = _query_id_of(obj, label, line)
        for name in ("query", "stratum"):
            v = obj.get(name)
            if v is not None and not isinstance(v, str):
                raise FormatError(label, line, f"{name} must be a string")
        none = obj.get("expect_none")
        if none is not None and not isinstance(none, (bool, np.bool_)):
            raise FormatError(label, line, "expect_none must be true or false")
        if qid in seen:
            raise FormatError(label, line, f"duplicate entry for query {qid}, already on line {seen[qid]}")
        seen[qid] = line
        q_id.append(qid)
        q_text.append(obj.get("query"))
        q_stratum.append(obj.get("stratum"))
        q_none.append(bool(none))
        lines.append(line)
    if not q_id:
        return empty_queries()
    return pd.DataFrame(
        {
            "query_id": _string_array(q_id, label, lines),
            "query": _string_array(q_text, label, lines),
            "stratum": _string_array(q_stratum, label, lines),
            "expect_none": np.asarray(q_none, dtype=bool),
        }
    )


def parse_queries(content: str, label: str = "queries") -> pd.DataFrame:
    """Parse a queries JSONL text (``{"query_id", "query"?, "stratum"?, "expect_none"?}``).

    ``expect_none: true`` marks an out-of-distribution query (nothing in the corpus answers
    it); it must be a JSON boolean, because a truthy string silently turning a query into a
    negative would change what calibration measures. A query declared twice is refused.
    Fields other than the four are ignored.
    """
    return _queries_python(_json_lines(content, label), label)


def read_queries(path: str | os.PathLike) -> pd.DataFrame:
    """Read a queries JSONL file (see :func:`parse_queries`); messages name the path."""
    label = str(path)
    return parse_queries(_decode(_read_bytes(path), label), label=label)


def write_queries(queries: Any, path: str | os.PathLike | None = None) -> str:
    """The queries as JSONL (query_id, query, stratum, expect_none only when true)."""
    df = as_queries(queries)
    out = []
    q = df["query_id"].to_numpy(dtype=object, na_value=None)
    t = df["query"].to_numpy(dtype=object, na_value=None)
    s = df["stratum"].to_numpy(dtype=object, na_value=None)
    e = df["expect_none"].to_numpy(dtype=bool)
    for i in range(len(df)):
        line: dict[str, Any] = {"query_id": q[i]}
        if t[i] is not None:
            line["query"] = t[i]
        if s[i] is not None:
            line["stratum"] = s[i]
        if e[i]:
            line["expect_none"] = True
        out.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    text = "".join(out)
    if path is not None:
        atomic_write_text(path, text)
    return text


# ---------------------------------------------------------------------------------------------
# Coercion: every API function accepts a frame, a list of wire-format dicts, or a path
# ---------------------------------------------------------------------------------------------


def _first_content_line(path: str | os.PathLike) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(65536)
    except OSError as err:
        raise _read_error(path, err) from None
    for raw in data.split(b"\n"):
        line = raw.strip().lstrip(b"\xef\xbb\xbf")
        if line and not line.startswith(b"//") and not line.startswith(b"#"):
            return line.decode("utf-8", "replace")
    return ""


def _is_missing_scalar(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _carry_columns(src: pd.DataFrame, dst: pd.DataFrame) -> None:
    """Columns an analyst added ride along after the contract's, copied (index reset)."""
    for c in src.columns:
        if c not in dst.columns:
            col = src[c]
            if isinstance(col.dtype, pd.api.extensions.ExtensionDtype):
                dst[c] = col.array.copy()
            else:
                dst[c] = col.to_numpy(copy=True)


def _check_columns(df: pd.DataFrame, required: Iterable[str], label: str) -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise FormatError(label, None, f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")


def _string_column(df: pd.DataFrame, name: str, label: str) -> Any:
    """A column as a fresh "string" array; numbers are refused, never turned into ids."""
    col = df[name]
    if isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype(object)
    if isinstance(col.dtype, pd.StringDtype):
        return pd.array(col.array, dtype=_STRING, copy=True)
    kind = pd.api.types.infer_dtype(col, skipna=True)
    if kind == "string":  # strings and missing values only: pandas converts it in C
        return pd.array(col.to_numpy(dtype=object), dtype=_STRING)
    for v in col.to_numpy(dtype=object):
        if not (v is None or v is pd.NA or isinstance(v, str) or (isinstance(v, float) and math.isnan(v))):
            raise FormatError(label, None, f"column {name} must hold strings, found {v!r}")
    return _string_array([None if not isinstance(v, str) else v for v in col.to_numpy(dtype=object)], label)


def _int_column(
    df: pd.DataFrame, name: str, label: str, detail: str, minimum: int | None = None, maximum: int | None = None
) -> np.ndarray:
    """The column as int64; FormatError(detail) for a missing, non-integer or too small value, and
    one naming the first row (its ``line`` when the frame has one) above ``maximum``."""
    col = df[name]
    if col.isna().any():
        raise FormatError(label, None, detail)
    if pd.api.types.is_bool_dtype(col.dtype):
        raise FormatError(label, None, detail)
    if pd.api.types.is_integer_dtype(col.dtype):
        values = col.to_numpy(dtype=np.int64)
    elif pd.api.types.is_float_dtype(col.dtype):
        f = col.to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(f)) or not np.all(f == np.round(f)) or np.any(np.abs(f) >= 2.0**63):
            raise FormatError(label, None, detail)
        if maximum is not None and len(f) and f.max() > maximum:
            _above(df, f, name, label, maximum)
        values = f.astype(np.int64)
    else:
        raw = col.to_numpy(dtype=object)
        if not all(_is_int(v) for v in raw):
            raise FormatError(label, None, detail)
        if maximum is not None and len(raw) and max(raw) > maximum:  # before int64 can overflow
            _above(df, raw, name, label, maximum)
        values = np.asarray(raw, dtype=np.int64)
    if minimum is not None and len(values) and values.min() < minimum:
        raise FormatError(label, None, detail)
    if maximum is not None and len(values) and values.max() > maximum:
        _above(df, values, name, label, maximum)
    return values


def _above(df: pd.DataFrame, values: np.ndarray, name: str, label: str, maximum: int) -> None:
    """Raise for the first value above ``maximum``, naming its file line (a reader's frame) or row."""
    if values.dtype == object:  # Python ints, possibly beyond int64
        i = next(i for i, v in enumerate(values) if v > maximum)
    else:
        i = int(np.flatnonzero(values > maximum)[0])
    value = values[i]
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    line = df["line"].iloc[i] if "line" in df.columns else None
    line = int(line) if _is_int(line) and line > 0 else None
    where = "" if line is not None else f"row {i}: "
    raise FormatError(label, line, f"{where}{name} {value} {_TOO_LARGE}")


def _contract_frame(df: pd.DataFrame, columns: Mapping[str, str]) -> bool:
    """True when ``df`` has exactly the contract's columns, order and dtypes and a 0..n-1 index.

    That is the frame a reader returns; coercing it again needs only the value checks, which
    are vectorized (see :func:`_as_contract`).
    """
    if list(df.columns) != list(columns):
        return False
    index = df.index
    if not isinstance(index, pd.RangeIndex) or index.start != 0 or index.step != 1:
        return False
    for name, dtype in columns.items():
        have = df[name].dtype
        if dtype == "string":
            if not (isinstance(have, pd.StringDtype) and have == _STRING and have.storage == _STRING.storage):
                return False
        elif have != np.dtype(dtype):
            return False
    return True


def _nonempty_strings(col: pd.Series) -> bool:
    """True when a "string" column has no NA and no empty string, read off its arrow offsets
    (no per-row work; see :func:`_plain_fields`)."""
    if len(col) == 0:
        return True
    arr = pa.array(col.array)
    return _plain_fields(arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr]))


def _all_none(values: np.ndarray) -> bool:
    """True when every value of an object array is None (False when a comparison fails)."""
    try:
        return bool(np.equal(values, None).all())
    except (TypeError, ValueError):  # pd.NA, or a value whose == is not a bool
        return False


def _copy_on_write() -> bool:
    if int(pd.__version__.split(".")[0]) >= 3:
        return True
    try:
        return pd.get_option("mode.copy_on_write") is True
    except (KeyError, pd.errors.OptionError):
        return False




def _as_contract(df: pd.DataFrame, replace: Mapping[str, Any]) -> pd.DataFrame:
    """A new frame over ``df``'s columns (copy-on-write: a write to either copies), with some
    columns replaced; no attrs (as a freshly built frame)."""
    data = {c: (replace[c] if c in replace else df[c]) for c in df.columns}
    # Without copy-on-write (pandas < 3 by default) shared columns would let a write to the
    # result reach the caller's frame, so they are copied there.
    return pd.DataFrame(data, copy=not _copy_on_write())


def _judgments_from_frame(df: pd.DataFrame, label: str) -> pd.DataFrame:
    if _contract_frame(df, JUDGMENT_COLUMNS):
        extra = df["extra"].to_numpy(dtype=object)
        if (
            _nonempty_strings(df["query_id"])
            and _nonempty_strings(df["doc_uri"])
            and (len(df) == 0 or df["relevance"].to_numpy().min() >= 0)
            and (len(df) == 0 or df["relevance"].to_numpy().max() <= MAX_RELEVANCE)
        ):
            # The careful coercion keeps a dict and turns anything else into None. A reader's
            # column of None is kept as it is (20 ms to check at 3M rows; a new one is 23 MB
            # of fresh pages); other missing values (NaN, pd.NA) become None.
            if _all_none(extra):
                return _as_contract(df, {})
            if pd.isna(extra).all():
                return _as_contract(df, {"extra": _object_column(np.full(len(df), None, dtype=object))})
    _check_columns(df, ("query_id", "doc_uri", "relevance"), label)
    n = len(df)
    out: dict[str, Any] = {}
    for name in JUDGMENT_FIELDS:
        if name == "relevance":
            out[name] = _int_column(
                df, name, label, "relevance must be a non-negative integer", minimum=0, maximum=MAX_RELEVANCE
            )
        elif name in df.columns:
            out[name] = _string_column(df, name, label)
        else:
            out[name] = _na_strings(n)
    for req in ("query_id", "doc_uri"):
        arr = out[req]
        if pd.isna(arr).any() or (pd.Series(arr) == "").any():
            raise FormatError(label, None, f"missing {req}")
    if "extra" in df.columns:
        extra = np.empty(n, dtype=object)
        extra[:] = [dict(v) if isinstance(v, Mapping) else None for v in df["extra"].to_numpy(dtype=object)]
    else:
        extra = np.full(n, None, dtype=object)
    out["extra"] = extra
    if "line" in df.columns:
        out["line"] = _int_column(df, "line", label, "line must be an integer")
    else:
        out["line"] = np.zeros(n, np.int64)
    result = pd.DataFrame(out)
    _carry_columns(df, result)
    return result


#: Columns that mark a run (a ranked list) and labels (a grade), in PyTerrier's names too.
_RUN_MARKS = ("doc_id", "docno", "rank", "score", "ranking")
_LABEL_MARKS = ("doc_uri", "docno", "doc_id", "relevance", "label")


def refuse_swapped(obj: Any, role: str, label: str) -> None:
    """Refuse a run given where labels belong, or labels where a run belongs, naming the order.

    A frame (or the first of a list of dicts) with ranking columns (``rank``, ``score`` beside
    ``doc_id``/``docno``, or ``ranking``) and no grade column (``relevance``/``label``) is a
    run; one with a grade column and no ranking column is labels. Every function that takes
    both takes ``(judgments, run)``, so the swap is the likely cause and the message says so,
    in one line. Anything else passes: the reader then says what is wrong.
    """
    if isinstance(obj, pd.DataFrame):
        cols = [str(c) for c in obj.columns]
    elif isinstance(obj, (list, tuple)) and obj and isinstance(obj[0], Mapping):
        cols = [str(c) for c in obj[0]]
    else:
        return
    swapped = swapped_columns(cols, role)
    if swapped:
        raise FormatError(label, None, f"{swapped}; the order is (judgments, run)")


def swapped_columns(columns: Iterable[str], role: str) -> str | None:
    """``"this looks like a run (columns ...), not labels"`` (or the reverse) when ``columns``
    are clearly the other role's than ``role`` (``"labels"``/``"run"``), else None: the one
    rule behind :func:`refuse_swapped` and the parquet/CSV readers."""
    has = set(columns)
    graded = bool(has & {"relevance", "label"})
    ranked = bool(has & {"rank", "score"}) and bool(has & {"doc_id", "docno"}) or "ranking" in has
    if role == "labels" and ranked and not graded:
        return f"this looks like a run (columns {', '.join(c for c in _RUN_MARKS if c in has)}), not labels"
    if role == "run" and graded and not has & {"rank", "score", "ranking"}:
        return f"this looks like labels (columns {', '.join(c for c in _LABEL_MARKS if c in has)}), not a run"
    return None


def as_judgments(obj: Any, label: str = "judgments") -> pd.DataFrame:
    """Coerce judgments to the judgments frame, never mutating the input.

    Accepts the frame a reader returns (required columns checked, dtypes cast, optional columns
    added as NA, a copy returned), a list of wire-format dicts (checked like file lines, with
    line = 1-based index in messages), a path of any labels format or a BEIR folder (read by
    the format :mod:`retrieval_eval.detect` finds: JSONL judgments, TREC/BEIR qrels, parquet,
    CSV, a pytrec_eval JSON dict), or the field's shapes of :mod:`retrieval_eval.interop`
    (a PyTerrier ``qid, docno, label`` frame, a ``{qid: {doc: grade}}`` dict, a ranx ``Qrels``).
    A grade above :data:`MAX_RELEVANCE` is refused, naming the row (the file line for a
    reader's frame), as every reader refuses it: its exponential gain would not be exact in
    float64.
    A run given here (see :func:`refuse_swapped`; a run file by :mod:`retrieval_eval.detect`)
    is refused with one line naming the order ``(judgments, run)``.
    """
    from . import interop  # the field's shapes (PyTerrier, pytrec_eval, ranx, files): docs/interop.md

    refuse_swapped(obj, "labels", label)
    if isinstance(obj, pd.DataFrame):
        return _judgments_from_frame(interop.label_frame(obj), label)
    if _is_path(obj):
        from .detect import read_labels

        return read_labels(obj, api=True)
    if isinstance(obj, (list, tuple)):
        rows = [_judgment_row(o, i, label) for i, o in enumerate(obj, start=1)]
        return _judgments_frame(rows, [0] * len(rows), label)
    foreign = interop.labels_from_object(obj, label)
    if foreign is not None:
        return foreign
    raise TypeError(f"cannot read judgments from {type(obj).__name__}; give a DataFrame, a list of dicts or a path")


def _run_from_frame(df: pd.DataFrame, label: str, system: str | None) -> pd.DataFrame:
    if _contract_frame(df, RUN_COLUMNS):
        if (
            _nonempty_strings(df["query_id"])
            and _nonempty_strings(df["doc_id"])
            and (system is not None or not df["system"].isna().any())
            and not np.isinf(df["score"].to_numpy()).any()
        ):
            return _as_contract(df, {} if system is None else {"system": _constant_strings(system, len(df))})
    _check_columns(df, ("query_id", "doc_id"), label)
    n = len(df)
    q = _string_column(df, "query_id", label)
    d = _string_column(df, "doc_id", label)
    if pd.isna(q).any() or (pd.Series(q) == "").any():
        raise FormatError(label, None, "missing query_id")
    if pd.isna(d).any() or (pd.Series(d) == "").any():
        raise FormatError(label, None, "doc_id must be a non-empty string")
    if system is not None:
        s = _constant_strings(system, n)
    elif "system" in df.columns:
        s = _string_column(df, "system", label)
        if pd.isna(s).any():
            s = pd.Series(s).fillna(DEFAULT_SYSTEM).array
    else:
        s = _constant_strings(DEFAULT_SYSTEM, n)
    if "score" in df.columns:
        sc = df["score"]
        if pd.api.types.is_bool_dtype(sc.dtype):
            raise FormatError(label, None, "score must be numeric")
        try:
            score = pd.to_numeric(sc, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
        except (ValueError, TypeError):
            raise FormatError(label, None, "score must be numeric") from None
        if np.isinf(score).any():
            raise FormatError(label, None, "score must be finite or NaN")
    else:
        score = np.full(n, np.nan)
    if "rank" in df.columns:
        rank = _int_column(df, "rank", label, "rank must be an integer", minimum=None)
    else:
        keys = pd.DataFrame({"s": s, "q": q})
        rank = keys.groupby(["s", "q"], sort=False).cumcount().to_numpy(dtype=np.int64) + 1
    if not _copy_on_write():  # without copy-on-write, views would let writes reach the input
        rank, score = np.array(rank, copy=True), np.array(score, copy=True)
    out = _run_frame(s, q, rank, d, score)  # pandas' read-only views of the input are copied there
    _carry_columns(df, out)
    return out


def as_run(obj: Any, system: str | None = None, label: str = "run") -> pd.DataFrame:
    """Coerce a run to the long run frame, never mutating the input.

    Accepts the frame a reader returns (``system`` added as ``"run"``, ``score`` as NaN and
    ``rank`` as 1..n per query in row order when missing), a list of wire-format dicts
    (``{"query_id", "ranking", ...}``, checked like file lines; a list of long rows with
    ``doc_id`` also works; so does a frame with a ``ranking`` column, one row per query), a path
    of any run format (JSONL, TREC, parquet, CSV, a pytrec_eval JSON dict: the format
    :mod:`retrieval_eval.detect` finds), a dict ``{system_name: run}`` whose runs are coerced
    and concatenated with the key as their system, or the field's shapes of
    :mod:`retrieval_eval.interop` (a PyTerrier ``qid, docno, score, rank`` frame, a
    ``{qid: {doc: score}}`` dict ranked by score, a ranx ``Run``).
    ``system`` given here names the system of every row. Labels given here (see
    :func:`refuse_swapped`; a labels file by :mod:`retrieval_eval.detect`) are refused with one
    line naming the order ``(judgments, run)``.
    """
    if system is not None and (not isinstance(system, str) or not system):
        raise ValueError("system must be a non-empty string")
    from . import interop  # the field's shapes (PyTerrier, pytrec_eval, ranx, files): docs/interop.md

    refuse_swapped(obj, "run", label)
    if isinstance(obj, pd.DataFrame):
        obj = interop.run_frame(obj)
        if "ranking" in obj.columns and "doc_id" not in obj.columns:  # one row per query, wire-like
            records = obj.to_dict("records")
            lines = [{k: v for k, v in r.items() if not _is_missing_scalar(v)} for r in records]
            return _run_python(enumerate(lines, start=1), label, system)
        out = _run_from_frame(obj, label, system)
        empty = obj.attrs.get("empty_rankings")
        if empty and "empty_rankings" not in out.attrs:
            out.attrs["empty_rankings"] = [(system or s, q) for s, q in empty]
        return out
    if _is_path(obj):
        from .detect import read_run_file

        return read_run_file(obj, system=system, api=True)
    if interop.is_score_dict(obj):
        return interop.run_from_dict(obj, system, label)
    if isinstance(obj, Mapping):
        parts = []
        for name, run in obj.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"system names must be non-empty strings, got {name!r}")
            parts.append(as_run(run, system=name, label=label))
        if not parts:
            return empty_run()
        out = pd.concat([p[list(RUN_COLUMNS)] for p in parts], ignore_index=True)
        out = out.astype(RUN_COLUMNS)
        empty = [pair for p in parts for pair in p.attrs.get("empty_rankings", [])]
        if empty:
            out.attrs["empty_rankings"] = empty
        return out
    if isinstance(obj, (list, tuple)):
        if obj and isinstance(obj[0], Mapping) and "doc_id" in obj[0] and "ranking" not in obj[0]:
            return _run_from_frame(pd.DataFrame(list(obj)), label, system)
        return _run_python(enumerate(obj, start=1), label, system)
    foreign = interop.run_from_object(obj, system, label)
    if foreign is not None:
        return foreign
    raise TypeError(
        f"cannot read a run from {type(obj).__name__}; give a DataFrame, a list of dicts, a dict of runs or a path"
    )


def as_queries(obj: Any, label: str = "queries") -> pd.DataFrame:
    """Coerce queries to the queries frame (a frame, a list of wire dicts, or a JSONL path)."""
    if isinstance(obj, pd.DataFrame):
        _check_columns(obj, ("query_id",), label)
        n = len(obj)
        out: dict[str, Any] = {"query_id": _string_column(obj, "query_id", label)}
        if pd.isna(out["query_id"]).any() or (pd.Series(out["query_id"]) == "").any():
            raise FormatError(label, None, "missing query_id")
        for c in ("query", "stratum"):
            out[c] = _string_column(obj, c, label) if c in obj.columns else _na_strings(n)
        if "expect_none" in obj.columns:
            raw = obj["expect_none"]
            if not pd.api.types.is_bool_dtype(raw.dtype) and not all(
                v is None or v is pd.NA or isinstance(v, (bool, np.bool_)) or (isinstance(v, float) and math.isnan(v))
                for v in raw.to_numpy(dtype=object)
            ):
                raise FormatError(label, None, "expect_none must be true or false")
            missing = raw.isna().to_numpy()
            out["expect_none"] = np.where(missing, False, raw.to_numpy(dtype=object)).astype(bool)
        else:
            out["expect_none"] = np.zeros(n, dtype=bool)
        df = pd.DataFrame(out)
        dup = df["query_id"].duplicated()
        if dup.any():
            raise FormatError(label, None, f"duplicate entry for query {df['query_id'][dup].iloc[0]}")
        _carry_columns(obj, df)
        return df
    if _is_path(obj):
        from .detect import read_queries_file  # queries JSONL or BEIR's queries.jsonl

        return read_queries_file(obj)
    if isinstance(obj, (list, tuple)):
        return _queries_python(enumerate(obj, start=1), label)
    raise TypeError(f"cannot read queries from {type(obj).__name__}; give a DataFrame, a list of dicts or a path")


def as_corpus(obj: Any, label: str = "corpus") -> pd.DataFrame:
    """Coerce a corpus to the corpus frame (a frame, the wire dict, a list of chunk dicts, a path).

    Fingerprints travel in ``attrs``; a frame's attrs are copied, missing ones set to None.
    """
    if isinstance(obj, pd.DataFrame):
        _check_columns(obj, ("chunk_id", "doc_uri"), label)
        n = len(obj)
        out: dict[str, Any] = {}
        for c, dtype in CORPUS_COLUMNS.items():
            if c not in obj.columns:
                out[c] = pd.array([None] * n, dtype="Int64") if dtype == "Int64" else _na_strings(n)
            elif dtype == "Int64":
                try:
                    out[c] = pd.array(obj[c].to_numpy(dtype=object), dtype="Int64")
                except (TypeError, ValueError):
                    raise FormatError(label, None, f"column {c} must hold integers") from None
            else:
                out[c] = _string_column(obj, c, label)
        for req in ("chunk_id", "doc_uri"):
            if pd.isna(out[req]).any() or (pd.Series(out[req]) == "").any():
                raise FormatError(label, None, f"a chunk has no {req}")
        df = pd.DataFrame(out)
        _carry_columns(obj, df)
        df.attrs.update({k: obj.attrs.get(k) for k in _FINGERPRINTS})
        return df
    if _is_path(obj):
        from .detect import read_corpus_file  # corpus JSON or BEIR's corpus.jsonl

        return read_corpus_file(obj)
    if isinstance(obj, Mapping):
        return _corpus_from_obj(dict(obj), label)
    if isinstance(obj, (list, tuple)):
        return _corpus_from_obj({"chunks": list(obj)}, label)
    raise TypeError(
        f"cannot read a corpus from {type(obj).__name__}; give a DataFrame, a dict, a list of chunks or a path"
    )
