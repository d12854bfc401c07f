"""Terminal rendering for the CLI: colour only where it helps, tables that line up.

Colour is for a person at a terminal. Piped into a file, a CI log or another program, escape
codes are noise, so ``auto`` colours only a TTY and honours the ``NO_COLOR`` convention
(https://no-color.org: any non-empty value turns colour off); ``--color always`` and
``--color never`` override both.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

__all__ = ["COLOR_MODES", "Style", "color_enabled", "escape", "fmt_number", "table", "visible_len"]

from ..visible import ANSI as _ANSI
from ..visible import escape

_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}

_STATUS_COLOR = {
    "PASS": "green",
    "VALID": "green",
    "FAIL": "red",
    "ORPHANED": "red",
    "error": "red",
    "INDETERMINATE": "yellow",
    "SPLIT": "yellow",
    "RE_ANCHORABLE": "cyan",
    "MERGED": "cyan",
    "warning": "yellow",
}


#: What ``--color`` takes (:func:`color_enabled`).
COLOR_MODES = ("auto", "always", "never")


def color_enabled(mode: str, stream: TextIO, environ: Any = None) -> bool:
    """Whether to colour output written to ``stream``.

    ``always`` and ``never`` are what they say; ``auto`` colours only when ``stream`` is a
    terminal, ``NO_COLOR`` is unset or empty, and ``TERM`` is not ``dumb``.
    """
    if mode == "always":
        return True
    if mode == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


class Style:
    """Wraps text in ANSI codes when enabled, and is the identity otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def status(self, status: str) -> str:
        """A verdict or drift status in its colour, bold."""
        color = _STATUS_COLOR.get(status)
        return self(status, "bold", color) if color else self(status, "bold")


def visible_len(text: str) -> int:
    """Length of ``text`` as a terminal shows it (escape codes take no room)."""
    return len(_ANSI.sub("", text))


def fmt_number(value: Any, decimals: int = 4) -> str:
    """A table cell for a number: fixed decimals for floats, ``-`` for missing, ints as is."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "-"
    return f"{x:.{decimals}f}"


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    align: Sequence[str] | None = None,
    indent: str = "  ",
    style: Style | None = None,
) -> str:
    """Render rows as an aligned text table.

    ``align`` holds ``"l"`` or ``"r"`` per column; by default the first column is left-aligned
    and the others right-aligned (numbers line up on their decimal point when they have the
    same number of decimals). Widths are measured without escape codes, so coloured cells
    align too. Control characters in a cell (an id's newline or escape sequence) are shown
    escaped (:func:`escape`), so no cell can break the table or drive the terminal; only
    ``style``'s colour codes are kept, and only when it colours. Returns the lines joined by
    newlines, without a trailing one.
    """
    colors = style is not None and style.enabled
    rows = [[escape(c, colors=colors) for c in r] for r in rows]
    headers = [escape(h, colors=colors) for h in headers]
    ncol = len(headers)
    if align is None:
        align = ["l"] + ["r"] * (ncol - 1)
    widths = [visible_len(h) for h in headers]
    for r in rows:
        if len(r) != ncol:
            raise ValueError(f"row has {len(r)} cells, expected {ncol}")
        for i, cell in enumerate(r):
            widths[i] = max(widths[i], visible_len(cell))

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            pad = " " * (widths[i] - visible_len(cell))
            out.append(pad + cell if align[i] == "r" else cell + pad)
        return (indent + "  ".join(out)).rstrip()

    head = [style(h, "bold") if style else h for h in headers]
    lines = [line(head), indent + "  ".join("-" * w for w in widths)]
    lines.extend(line(r) for r in rows)
    return "\n".join(lines)
