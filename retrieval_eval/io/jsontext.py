"""The JSON rule every reader applies: strict JSON, line-numbered refusals, and the value checks.

Strict means no ``NaN``/``Infinity`` (not JSON numbers), no key given twice in one object (tools
disagree on which one counts), no nesting deeper than :data:`MAX_JSON_DEPTH`, no lone surrogate
escape. The careful line-by-line pass (:func:`json_lines`) and arrow's fast read
(:func:`json_table`) refuse the same lines. A float read in an unknown judgment field keeps its
source text (``_RawFloat``), and :func:`dump_value` writes that text back, so ``1e5`` or ``1.50``
survive a read and a write byte for byte.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from .columns import read_pool
from .text import decode, os_file, read_bytes, strip_bom

__all__ = [
    "MAX_JSON_DEPTH",
    "dump_value",
    "finite",
    "is_int",
    "is_number",
    "json_lines",
    "json_table",
    "not_object",
    "parse_json",
    "query_id_of",
    "read_json",
]


class _RawFloat(float):
    """A float from a JSON document that remembers its source text (``1e5``, ``1.50``)."""

    __slots__ = ("text",)
    text: str

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
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


class _DuplicateKey(ValueError):
    """A key given twice in one object (the key is kept to find its line)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {json.dumps(key, ensure_ascii=False)}")
        self.key = key


def _duplicate_line(content: str, key: str) -> int | None:
    """The line of the second ``key`` in one object of ``content``, or None when not found.

    Only on the error path: strings are blanked (their length kept, so positions hold), the
    nesting depth is a cumulative sum, and two occurrences of ``"key":`` whose nearest
    enclosing ``{`` is the same are the same object's.
    """
    blank = _JSON_STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', content)
    a = np.frombuffer(blank.encode("utf-32-le"), np.uint32)
    depth = np.cumsum(((a == 0x5B) | (a == 0x7B)).astype(np.int64) - ((a == 0x5D) | (a == 0x7D)))
    opens = np.flatnonzero(a == 0x7B)
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    seen: set[int] = set()
    for m in pattern.finditer(content):
        p = m.start()
        if blank[p] != '"':  # inside another string
            continue
        before = opens[opens < p]
        mine = before[depth[before] == depth[p]]
        owner = int(mine[-1]) if len(mine) else -1
        if owner in seen:
            return content.count("\n", 0, p) + 1
        seen.add(owner)
    return None


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

    Parameters
    ----------
    content : str
        The JSON text.
    label : str
        Names the input in messages.

    Returns
    -------
    object
        The parsed value.

    Raises
    ------
    FormatError
        The text is not strict JSON, naming the line where there is one.

    Examples
    --------
    >>> parse_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    """
    content = strip_bom(content)
    if _too_deep(content):
        raise FormatError(label, None, _TOO_DEEP)
    try:
        obj = _LOADS(content)
    except json.JSONDecodeError as err:
        raise FormatError(label, err.lineno, _json_detail(err)) from None
    except _DuplicateKey as err:
        raise FormatError(label, _duplicate_line(content, err.key), _json_detail(err)) from None
    except ValueError as err:
        raise FormatError(label, None, _json_detail(err)) from None
    except RecursionError:
        raise FormatError(label, None, _TOO_DEEP) from None
    if _SURROGATE_ESCAPE.search(content):
        _check_unicode(obj, label, None)
    return obj


def read_json(path: str | os.PathLike[str]) -> Any:
    """:func:`parse_json` of a UTF-8 file (BOM accepted); messages name the path.

    Parameters
    ----------
    path : str or PathLike
        A JSON file.

    Returns
    -------
    object
        The parsed value.

    Raises
    ------
    FormatError
        The file cannot be read or is not strict JSON.
    """
    label = str(path)
    return parse_json(decode(read_bytes(path), label), label)


def json_lines(content: str, label: str, raw_floats: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every line that is not blank or a ``//`` comment.

    Lines are split on ``\\n`` only: U+2028, form feeds and the like are legal inside JSON
    strings and must not shift line numbers. Every line is strict JSON (see :func:`parse_json`),
    whichever reader asks: the fast arrow paths refuse the same lines, so a line is accepted
    or refused the same way whatever else the file holds.
    """
    loads = _LOADS_RAW if raw_floats else _LOADS
    for i, line in enumerate(strip_bom(content).split("\n"), start=1):
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


def query_id_of(obj: Any, label: str, line: int) -> str:
    """A JSONL line must be an object with a non-empty string ``query_id``; returns it."""
    if not isinstance(obj, dict):
        raise FormatError(label, line, not_object(obj))
    qid = obj.get("query_id")
    if not isinstance(qid, str) or not qid:
        raise FormatError(label, line, "missing query_id")
    return qid


def not_object(obj: Any) -> str:
    return f"must be a JSON object, got {_type_name(obj)}"


def is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def finite(value: Any) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a double
        return False


#: arrow's JSON block (a line longer than a block is read again in one block, see :func:`json_table`).
_JSON_BLOCK = 1 << 24


def json_table(source: bytes | str | os.PathLike[str], schema: pa.Schema, unknown: str = "error") -> pa.Table | None:
    """arrow's strict read of JSON lines against ``schema``, else None.

    ``source`` is the bytes, or a path arrow reads straight from disk. ``unknown`` is what an
    unknown field does (``"error"``: the read fails; ``"ignore"``).
    """
    import pyarrow.json as pj

    size = len(source) if isinstance(source, bytes) else os.path.getsize(source)
    for block in (_JSON_BLOCK, size + 1):
        try:
            with pa.BufferReader(source) if isinstance(source, bytes) else os_file(source) as src:
                return pj.read_json(
                    src,
                    read_options=pj.ReadOptions(block_size=block),
                    parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior=unknown),
                    memory_pool=read_pool(),
                )
        except (OSError, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError) as err:
            if "straddl" not in str(err) or block > size or size >= 2**31 - 1:
                return None
    return None


def dump_value(value: Any) -> str:
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
        items = (f"{json.dumps(str(k), ensure_ascii=False)}:{dump_value(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ",".join(dump_value(v) for v in value) + "]"
    raise TypeError(f"cannot write a value of type {type(value).__name__} as JSON")
