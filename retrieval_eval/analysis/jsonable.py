"""JSON-able values from numpy/pandas ones: NaN and NA become None, numpy scalars Python ones."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def jsonable(value: Any) -> Any:
    """``value`` made JSON-able: dicts, lists and tuples converted recursively, numpy scalars
    made Python ones, non-finite floats and NA made None.

    Parameters
    ----------
    value : object
        A value of a result (a number, a dict of them, ...).

    Returns
    -------
    object

    Examples
    --------
    >>> jsonable({"a": np.float64("nan"), "b": np.int64(3), "c": (1.5,)})
    {'a': None, 'b': 3, 'c': [1.5]}
    """
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
    """A gate-readable measurement from a summary row, or None when its value is NaN.

    A figure that does not exist is absent, never null or zero; values are rounded to 12
    decimals as the report's are.

    Parameters
    ----------
    row : Mapping or Series
        With ``value``, ``n``, ``ci_low``, ``ci_high`` and ``interval``.
    why : str, optional
        Why a gate on it cannot PASS (``indeterminate``).

    Returns
    -------
    dict or None
        ``{"value", "n", ["ci", "interval"], ["indeterminate"]}``.

    Examples
    --------
    >>> measurement({"value": 0.5, "n": 10, "ci_low": 0.3, "ci_high": 0.7, "interval": "wilson"})
    {'value': 0.5, 'n': 10, 'ci': [0.3, 0.7], 'interval': 'wilson'}
    """
    if not math.isfinite(float(row["value"])):
        return None
    m: dict[str, Any] = {"value": round(float(row["value"]), 12), "n": int(row["n"])}
    if math.isfinite(float(row["ci_low"])):
        m["ci"] = [round(float(row["ci_low"]), 12), round(float(row["ci_high"]), 12)]
        m["interval"] = str(row["interval"])
    if why:
        m["indeterminate"] = why
    return m
