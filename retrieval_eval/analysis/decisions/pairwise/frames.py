"""Frames to JSON and back, dtypes included: what a saved result is made of."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ....engine.metrics import ID
from ...jsonable import jsonable

__all__ = ["frame_dict", "frame_of", "restore_dtypes"]


def restore_dtypes(frame: pd.DataFrame, dtypes: dict[str, str]) -> pd.DataFrame:
    out = {}
    for c, dt in dtypes.items():
        col = frame[c] if c in frame.columns else pd.Series([], dtype=object)
        if dt in ("string", "str", "object"):
            out[c] = pd.array(col.astype(object).where(col.notna(), None), dtype=ID)
        elif dt.startswith("float"):
            out[c] = pd.to_numeric(col, errors="coerce").to_numpy(np.float64)
        else:
            out[c] = col.to_numpy(dt)
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def frame_dict(frame: pd.DataFrame) -> dict[str, Any]:
    """A frame as JSON: its columns as lists, and their dtypes (to restore them exactly)."""
    return {
        "dtypes": {c: str(frame[c].dtype) for c in frame.columns},
        "columns": {c: jsonable(frame[c].tolist()) for c in frame.columns},
    }


def frame_of(d: dict[str, Any]) -> pd.DataFrame:
    return restore_dtypes(pd.DataFrame(d["columns"]), d["dtypes"])
