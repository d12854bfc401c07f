"""Results that save and reload: a frame as a JSON-safe dict, a result's frames as parquet.

A result (:class:`~retrieval_eval.analysis.result.Evaluation`,
:class:`~retrieval_eval.analysis.calibration_result.Calibration`) is a few frames plus
settings. :func:`frame_to_dict` writes a frame with its dtypes and index names, so that
:func:`frame_from_dict` gives back the same frame (ids stay strings, a nullable boolean stays
nullable, NaN comes back NaN: JSON's ``null``); :func:`write_result` writes each frame as a
parquet file and the rest as ``result.json`` in one folder, every file through the atomic
writer (:func:`retrieval_eval.io.safewrite.atomic_write_bytes`), and :func:`read_result` reads
them back. Infinite floats are not JSON: ``to_dict`` writes them as null (NaN on reload).
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, cast

import numpy as np
import pandas as pd

from ..jsonable import jsonable

__all__ = ["FORMAT_VERSION", "frame_from_dict", "frame_to_dict", "read_result", "write_result"]

#: The version of the saved form; a reader refuses a newer one.
FORMAT_VERSION = 1
_MANIFEST = "result.json"


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, pd.StringDtype) and dtype.na_value is pd.NA:  # "string", not pandas 3's "str"
        return f"string[{dtype.storage}]"
    return str(dtype)


def _cell(v: Any) -> Any:
    return jsonable(v.tolist() if isinstance(v, np.ndarray) else v)


def frame_to_dict(frame: pd.DataFrame | None) -> dict[str, Any] | None:
    """A frame as a JSON-safe dict: ``columns``, ``dtypes``, ``index`` (the index level names,
    their values stored as columns), ``data`` (one list per column) and ``attrs``.

    Parameters
    ----------
    frame : DataFrame or None

    Returns
    -------
    dict or None
        None for None (a result without that frame).

    Examples
    --------
    >>> d = frame_to_dict(pd.DataFrame({"x": [1.0, float("nan")]}))
    >>> d["data"], d["dtypes"]
    ({'x': [1.0, None]}, {'x': 'float64'})
    """
    if frame is None:
        return None
    named = [n for n in frame.index.names if n is not None]
    flat = frame.reset_index() if named else frame.reset_index(drop=True)
    data = {str(c): [_cell(v) for v in flat[c].to_numpy(dtype=object)] for c in flat.columns}
    return {
        "columns": [str(c) for c in flat.columns],
        "index": [str(n) for n in named],
        "dtypes": {str(c): _dtype_name(flat[c].dtype) for c in flat.columns},
        "data": data,
        "attrs": jsonable(dict(frame.attrs)),
    }


def _cast(values: Any, dtype: str) -> Any:
    """A column of ``values`` (a list or an object array) with ``dtype``: null reads as the
    dtype's missing value (NaN, NA); a float column's nulls as NaN."""
    col = pd.Series(values, dtype=object)
    if dtype.startswith(("float", "Float")):
        return col.map(lambda v: np.nan if v is None else v).astype(dtype)
    if dtype == "object":
        return col
    return col.astype(dtype)


def frame_from_dict(d: dict[str, Any] | None) -> pd.DataFrame | None:
    """The frame :func:`frame_to_dict` wrote (dtypes, index and attrs restored).

    Examples
    --------
    >>> f = pd.DataFrame({"s": pd.array(["a", None], dtype="string"), "x": [1.0, float("nan")]})
    >>> back = frame_from_dict(frame_to_dict(f))
    >>> back.equals(f), str(back["s"].dtype)
    (True, 'string')
    """
    if d is None:
        return None
    out = pd.DataFrame({c: _cast(d["data"][c], d["dtypes"][c]) for c in d["columns"]}, columns=list(d["columns"]))
    if d["index"]:
        out = out.set_index(list(d["index"]))
    out.attrs.update(d.get("attrs") or {})
    return out


def _frame_bytes(frame: pd.DataFrame, dtypes: dict[str, str]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    flat = frame.reset_index() if any(n is not None for n in frame.index.names) else frame.reset_index(drop=True)
    cols = {}
    for c in flat.columns:  # object columns (judgments' ``extra``) as JSON text
        v = flat[c]
        cols[str(c)] = (
            pd.array([None if x is None else json.dumps(jsonable(x)) for x in v.to_numpy(dtype=object)], dtype="string")
            if dtypes[str(c)] == "object"
            else v
        )
    table = pa.Table.from_pandas(pd.DataFrame(cols), preserve_index=False).replace_schema_metadata(None)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def write_result(
    kind: str, meta: dict[str, Any], frames: dict[str, pd.DataFrame | None], path: str | os.PathLike
) -> None:
    """Write a result to the folder ``path``: one ``<name>.parquet`` per frame, then
    ``result.json`` (``kind``, ``meta``, each frame's columns, dtypes and index), each file
    atomically; the manifest goes last, so a folder with a manifest holds every frame."""
    from ...io.safewrite import atomic_write_bytes, atomic_write_text

    os.makedirs(path, exist_ok=True)
    layout: dict[str, Any] = {}
    for name, frame in frames.items():
        if frame is None:
            layout[name] = None
            continue
        d = cast("dict[str, Any]", frame_to_dict(frame.iloc[:0]))
        d.pop("data")
        d["attrs"] = jsonable(dict(frame.attrs))
        atomic_write_bytes(os.path.join(path, f"{name}.parquet"), _frame_bytes(frame, d["dtypes"]))
        layout[name] = d
    manifest = {"kind": kind, "version": FORMAT_VERSION, "meta": jsonable(meta), "frames": layout}
    atomic_write_text(os.path.join(path, _MANIFEST), json.dumps(manifest, indent=1, allow_nan=False))


def read_result(path: str | os.PathLike, kind: str) -> tuple[dict[str, Any], dict[str, pd.DataFrame | None]]:
    """``(meta, frames)`` of a folder :func:`write_result` wrote for a result of ``kind``.

    Raises
    ------
    ValueError
        The folder holds no saved result, another kind of result, or a newer format.
    """
    import pyarrow.parquet as pq

    manifest_path = os.path.join(path, _MANIFEST)
    if not os.path.isfile(manifest_path):
        raise ValueError(f"{path}: no {_MANIFEST}; not a folder written by to_parquet()")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("kind") != kind or int(manifest.get("version", 0)) > FORMAT_VERSION:
        raise ValueError(
            f"{manifest_path}: holds a {manifest.get('kind')!r} result of format "
            f"{manifest.get('version')}, not a {kind} of format <= {FORMAT_VERSION}"
        )
    frames: dict[str, pd.DataFrame | None] = {}
    for name, d in manifest["frames"].items():
        if d is None:
            frames[name] = None
            continue
        table = pq.read_table(os.path.join(path, f"{name}.parquet")).to_pandas()
        data = {}
        for c in d["columns"]:
            v = table[c].to_numpy(dtype=object)
            if d["dtypes"][c] == "object":
                v = np.array([None if pd.isna(x) else json.loads(x) for x in v] or [], dtype=object)
            data[c] = [None if (x is None or (isinstance(x, float) and np.isnan(x)) or x is pd.NA) else x for x in v]
        frames[name] = frame_from_dict({**d, "data": data})
    return manifest["meta"], frames
