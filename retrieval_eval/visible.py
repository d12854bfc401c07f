"""Text shown to a person, made safe: every control character as a visible escape.

Ids, strata, system names and paths come from files anyone can write. The terminal (the CLI)
and the Markdown tables (the viz layer) both show them, so the rule lives here, below both.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ANSI", "CONTROLS", "escape"]

#: This package's own colour codes (``ESC [ digits m``): they can only colour text.
ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: What a terminal acts on instead of showing: C0 and C1 controls and DEL (ESC starts sequences
#: that set the title, clear the screen or move the cursor; U+009B is an 8-bit CSI), and the
#: bidirectional overrides that make text read in another order than it is stored.
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match) -> str:
    ch = match.group()
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escape(text: Any, newlines: bool = False, colors: bool = False) -> str:
    """``text`` as a terminal should show it: each control character as a visible escape.

    Ids, strata, system names and paths come from files anyone can write; printed raw,
    ``\\x1b]0;title\\x07`` would retitle the terminal and ``\\x1b[2J`` clear it. They are
    shown as Python writes them (``\\x1b``, ``\\n``, ``\\u202e``). ``newlines`` keeps ``\\n``
    (text of several lines); ``colors`` keeps this module's own colour codes (``ESC [ digits m``:
    they can only colour text), for output that :class:`Style` coloured. Printable text is
    returned unchanged, so escaping twice is escaping once.
    """
    text = str(text)
    if not CONTROLS.search(text):
        return text
    if colors:
        codes = ANSI.findall(text)
        parts = ANSI.split(text)
        return "".join(escape(part, newlines) + code for part, code in zip(parts, codes + [""]))
    if newlines:
        return "\n".join(CONTROLS.sub(_visible, line) for line in text.split("\n"))
    return CONTROLS.sub(_visible, text)
