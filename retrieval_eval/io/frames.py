"""Frames in: the checks and conversions that turn a user's DataFrame into a data-model frame.

A reader's frame (exactly the contract's columns and dtypes) passes through vectorized checks
and copy-on-write views; any other frame is checked column by column, its ids must be strings
(a number is never turned into an id: ``007`` and ``7`` differ), and columns an analyst added
ride along. PyTerrier's and ir_measures' column names are renamed here (:func:`run_frame`,
:func:`label_frame`), so every function that takes a frame takes theirs. Labels given as a run,
or the reverse, are refused naming the order (:func:`refuse_swapped`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from ..model import (
    CORPUS_COLUMNS,
    CORPUS_REQUIRED,
    DEFAULT_SYSTEM,
    FINGERPRINTS,
    ID,
    JUDGMENT_COLUMNS,
    JUDGMENT_FIELDS,
    JUDGMENT_REQUIRED,
    MAX_RELEVANCE,
    QUERY_REQUIRED,
    RUN_COLUMNS,
    RUN_REQUIRED,
    TOO_LARGE,
)
from .columns import constant_strings, na_strings, new_run_frame, object_column, plain_fields, string_array
from .jsontext import is_int
from .runs import run_from_lines

__all__ = [
    "LABEL_ALIASES",
    "RUN_ALIASES",
    "carry_columns",
    "check_columns",
    "corpus_from_frame",
    "is_missing_scalar",
    "is_pyterrier_run",
    "judgments_from_frame",
    "label_frame",
    "queries_from_frame",
    "refuse_swapped",
    "run_frame",
    "run_from_any_frame",
    "run_from_frame",
    "string_column",
    "swapped_columns",
]


def is_missing_scalar(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def carry_columns(src: pd.DataFrame, dst: pd.DataFrame) -> None:
    """Columns an analyst added ride along after the contract's, copied (index reset)."""
    for c in src.columns:
        if c not in dst.columns:
            col = src[c]
            if isinstance(col.dtype, pd.api.extensions.ExtensionDtype):
                dst[c] = col.array.copy()
            else:
                dst[c] = col.to_numpy(copy=True)


def check_columns(df: pd.DataFrame, required: Iterable[str], label: str) -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise FormatError(label, None, f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")


def string_column(df: pd.DataFrame, name: str, label: str) -> Any:
    """A column as a fresh "string" array; numbers are refused, never turned into ids."""
    col = df[name]
    if isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype(object)
    if isinstance(col.dtype, pd.StringDtype):
        return pd.array(col.array, dtype=ID, copy=True)
    kind = pd.api.types.infer_dtype(col, skipna=True)
    if kind == "string":  # strings and missing values only: pandas converts it in C
        return pd.array(col.to_numpy(dtype=object), dtype=ID)
    for v in col.to_numpy(dtype=object):
        if not (v is None or v is pd.NA or isinstance(v, str) or (isinstance(v, float) and math.isnan(v))):
            raise FormatError(label, None, f"column {name} must hold strings, found {v!r}")
    return string_array([None if not isinstance(v, str) else v for v in col.to_numpy(dtype=object)], label)


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
        if not all(is_int(v) for v in raw):
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
    line: Any = df["line"].iloc[i] if "line" in df.columns else None
    line = int(line) if is_int(line) and line > 0 else None
    where = "" if line is not None else f"row {i}: "
    raise FormatError(label, line, f"{where}{name} {value} {TOO_LARGE}")


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
            if not (isinstance(have, pd.StringDtype) and have == ID and have.storage == ID.storage):
                return False
        elif have != np.dtype(dtype):
            return False
    return True


def _nonempty_strings(col: pd.Series) -> bool:
    """True when a "string" column has no NA and no empty string, read off its arrow offsets
    (no per-row work; see :func:`plain_fields`)."""
    if len(col) == 0:
        return True
    arr = pa.array(col.array)
    return plain_fields(arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr]))


def _all_none(values: np.ndarray) -> bool:
    """True when every value of an object array is None (False when a comparison fails)."""
    try:
        # numpy's stub refuses None as an operand of the ufunc; numpy compares elementwise
        return bool(np.equal(values, None).all())  # type: ignore[call-overload]
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


def judgments_from_frame(df: pd.DataFrame, label: str, keep_negative: bool = False) -> pd.DataFrame:
    """The judgments frame of a frame; a negative grade is refused unless ``keep_negative``
    (trec_eval's "in the pool, not judged", which the measure catalogue reads)."""
    least = None if keep_negative else 0
    if _contract_frame(df, JUDGMENT_COLUMNS):
        extra = df["extra"].to_numpy(dtype=object)
        if (
            _nonempty_strings(df["query_id"])
            and _nonempty_strings(df["doc_uri"])
            and (len(df) == 0 or keep_negative or df["relevance"].to_numpy().min() >= 0)
            and (len(df) == 0 or df["relevance"].to_numpy().max() <= MAX_RELEVANCE)
        ):
            # The careful coercion keeps a dict and turns anything else into None. A reader's
            # column of None is kept as it is (20 ms to check at 3M rows; a new one is 23 MB
            # of fresh pages); other missing values (NaN, pd.NA) become None.
            if _all_none(extra):
                return _as_contract(df, {})
            if pd.isna(extra).all():
                return _as_contract(df, {"extra": object_column(np.full(len(df), None, dtype=object))})
    check_columns(df, JUDGMENT_REQUIRED, label)
    n = len(df)
    out: dict[str, Any] = {}
    for name in JUDGMENT_FIELDS:
        if name == "relevance":
            out[name] = _int_column(
                df, name, label, "relevance must be a non-negative integer", minimum=least, maximum=MAX_RELEVANCE
            )
        elif name in df.columns:
            out[name] = string_column(df, name, label)
        else:
            out[name] = na_strings(n)
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
    carry_columns(df, result)
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
    ranked = (bool(has & {"rank", "score"}) and bool(has & {"doc_id", "docno"})) or "ranking" in has
    if role == "labels" and ranked and not graded:
        return f"this looks like a run (columns {', '.join(c for c in _RUN_MARKS if c in has)}), not labels"
    if role == "run" and graded and not has & {"rank", "score", "ranking"}:
        return f"this looks like labels (columns {', '.join(c for c in _LABEL_MARKS if c in has)}), not a run"
    return None


def run_from_frame(df: pd.DataFrame, label: str, system: str | None) -> pd.DataFrame:
    if _contract_frame(df, RUN_COLUMNS):  # noqa: SIM102 (the contract check first, then its values)
        if (
            _nonempty_strings(df["query_id"])
            and _nonempty_strings(df["doc_id"])
            and (system is not None or not df["system"].isna().any())
            and not np.isinf(df["score"].to_numpy()).any()
        ):
            return _as_contract(df, {} if system is None else {"system": constant_strings(system, len(df))})
    check_columns(df, RUN_REQUIRED, label)
    n = len(df)
    q = string_column(df, "query_id", label)
    d = string_column(df, "doc_id", label)
    if pd.isna(q).any() or (pd.Series(q) == "").any():
        raise FormatError(label, None, "missing query_id")
    if pd.isna(d).any() or (pd.Series(d) == "").any():
        raise FormatError(label, None, "doc_id must be a non-empty string")
    if system is not None:
        s = constant_strings(system, n)
    elif "system" in df.columns:
        s = string_column(df, "system", label)
        if pd.isna(s).any():
            s = pd.Series(s).fillna(DEFAULT_SYSTEM).array
    else:
        s = constant_strings(DEFAULT_SYSTEM, n)
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
    out = new_run_frame(s, q, rank, d, score)  # pandas' read-only views of the input are copied there
    carry_columns(df, out)
    return out


#: PyTerrier / ir_measures column -> data-model column, per role.
RUN_ALIASES = {"qid": "query_id", "docno": "doc_id"}
LABEL_ALIASES = {"qid": "query_id", "docno": "doc_uri", "label": "relevance"}


def is_pyterrier_run(df: pd.DataFrame) -> bool:
    return "qid" in df.columns and "docno" in df.columns and "query_id" not in df.columns


def run_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A PyTerrier result frame renamed to the run frame's columns (rank 0-based -> 1-based);
    any other frame as it is. The input is never modified."""
    if not is_pyterrier_run(df):
        return df
    out = df.rename(columns=RUN_ALIASES)
    if "rank" in out.columns:
        rank = pd.to_numeric(out["rank"], errors="coerce")
        out = out.assign(rank=rank + 1)
    elif "score" in out.columns:
        # pyterrier.model.add_ranks: score descending, ties in row order (method="first").
        rank = out.groupby("query_id", sort=False)["score"].rank(ascending=False, method="first")
        out = out.assign(rank=rank)
    return out


def label_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A PyTerrier (``qid, docno, label``) or ir_measures (``query_id, doc_id, relevance``)
    qrels frame renamed to the judgments frame's columns; any other frame as it is."""
    cols = set(df.columns)
    rename: dict[str, str] = {}
    if "qid" in cols and "query_id" not in cols:
        rename["qid"] = "query_id"
    if "doc_uri" not in cols:
        if "docno" in cols:
            rename["docno"] = "doc_uri"
        elif "doc_id" in cols:
            rename["doc_id"] = "doc_uri"
    if "label" in cols and "relevance" not in cols:
        rename["label"] = "relevance"
    return df.rename(columns=rename) if rename else df


def run_from_any_frame(obj: pd.DataFrame, system: str | None, label: str) -> pd.DataFrame:
    """The run frame of any run-like frame: the contract's, PyTerrier's (:func:`run_frame`), or
    one row per query with a ``ranking`` list (read as wire lines). The frame branch of
    :func:`~retrieval_eval.io.convert.as_run`, after its checks."""
    obj = run_frame(obj)
    if "ranking" in obj.columns and "doc_id" not in obj.columns:  # one row per query, wire-like
        records = obj.to_dict("records")
        lines = [{k: v for k, v in r.items() if not is_missing_scalar(v)} for r in records]
        return run_from_lines(enumerate(lines, start=1), label, system)
    out = run_from_frame(obj, label, system)
    empty = obj.attrs.get("empty_rankings")
    if empty and "empty_rankings" not in out.attrs:
        out.attrs["empty_rankings"] = [(system or s, q) for s, q in empty]
    return out


def queries_from_frame(obj: pd.DataFrame, label: str) -> pd.DataFrame:
    """The queries frame of a frame: ``query_id`` required and unique, ``query``/``stratum``
    strings, ``expect_none`` a boolean (missing: False)."""
    check_columns(obj, QUERY_REQUIRED, label)
    n = len(obj)
    out: dict[str, Any] = {"query_id": string_column(obj, "query_id", label)}
    if pd.isna(out["query_id"]).any() or (pd.Series(out["query_id"]) == "").any():
        raise FormatError(label, None, "missing query_id")
    for c in ("query", "stratum"):
        out[c] = string_column(obj, c, label) if c in obj.columns else na_strings(n)
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
    carry_columns(obj, df)
    return df


def corpus_from_frame(obj: pd.DataFrame, label: str) -> pd.DataFrame:
    """The corpus frame of a frame (``chunk_id``, ``doc_uri`` required); the fingerprints in
    ``attrs`` are copied, missing ones set to None."""
    check_columns(obj, CORPUS_REQUIRED, label)
    n = len(obj)
    out: dict[str, Any] = {}
    for c, dtype in CORPUS_COLUMNS.items():
        if c not in obj.columns:
            out[c] = pd.array([None] * n, dtype="Int64") if dtype == "Int64" else na_strings(n)
        elif dtype == "Int64":
            try:
                out[c] = pd.array(obj[c].to_numpy(dtype=object), dtype="Int64")
            except (TypeError, ValueError):
                raise FormatError(label, None, f"column {c} must hold integers") from None
        else:
            out[c] = string_column(obj, c, label)
    for req in ("chunk_id", "doc_uri"):
        if pd.isna(out[req]).any() or (pd.Series(out[req]) == "").any():
            raise FormatError(label, None, f"a chunk has no {req}")
    df = pd.DataFrame(out)
    carry_columns(obj, df)
    df.attrs.update({k: obj.attrs.get(k) for k in FINGERPRINTS})
    return df
