"""The ir_measures call syntax of the catalogue's later families: ``NAME(key=value,...)@k``.

``split_call("SDCG(max_rel=3)@10")`` -> ``("SDCG", {"max_rel": "3"}, "10")``. Values stay
strings (quotes removed); each family checks and converts its own. Shared by the modules
``rbp``, ``err``, ``cwl`` and ``compat`` so that their names parse one way.
"""

from __future__ import annotations

import math
import re
from typing import Any


def split_call(text: str) -> tuple[str, dict[str, str], str | None] | None:
    """``(base, {key: value}, cutoff or None)`` of ``text``, or None when it is no such call."""
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_]*)(?:\(([^()]*)\))?(?:@(\S+))?", text.strip())
    if not m:
        return None
    base, args, cut = m.groups()
    out: dict[str, str] = {}
    for arg in filter(None, (a.strip() for a in (args or "").split(","))):
        key, eq, value = arg.partition("=")
        if not eq:
            return None  # not this syntax (e.g. gains={0:0,1:1}): another parser's
        out[key.strip()] = value.strip().strip("'\"")
    return base, out, cut


def number(value: str, what: str, low: float, high: float, integer: bool = False) -> Any:
    """``value`` as a float (an int if ``integer``) within ``[low, high]``, else ValueError."""
    try:
        x = float(value)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    if integer and x != int(x):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    if not low <= x <= high:
        raise ValueError(f"{what} must be within [{low:g}, {high:g}], got {value!r}")
    return int(x) if integer else x


def fmt(x: float) -> str:
    """A parameter as it shows in a canonical name: ``0.8``, ``3``, ``1``."""
    return f"{x:g}" if isinstance(x, float) else str(x)
