"""JSON-able values from numpy/pandas ones: NaN and NA become None, numpy scalars Python ones."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def jsonable(value: Any) -> Any:
    """``value`` with dicts, lists and tuples converted recursively; non-finite floats -> None."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    return value


def measurement(row: Any, why: str | None = None) -> dict[str, Any] | None:
    """A gate-readable measurement from a summary row (``value``, ``n``, ``ci_low``,
    ``ci_high``, ``interval``): ``{"value", "n", ["ci", "interval"], ["indeterminate"]}``, values
    rounded to 12 decimals as the report's are; ``None`` when the value is NaN (a figure that
    does not exist is absent, never null or zero)."""
    if not math.isfinite(float(row["value"])):
        return None
    m: dict[str, Any] = {"value": round(float(row["value"]), 12), "n": int(row["n"])}
    if math.isfinite(float(row["ci_low"])):
        m["ci"] = [round(float(row["ci_low"]), 12), round(float(row["ci_high"]), 12)]
        m["interval"] = str(row["interval"])
    if why:
        m["indeterminate"] = why
    return m
