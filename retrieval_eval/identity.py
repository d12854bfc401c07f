"""Content-addressed identity (SPEC A1).

A label points at text, not at a position in a list: the id of a chunk is a hash of where it
came from *and* what it says, so a re-chunk that changes the text changes the id, and drift can
tell a stale label from a live one.
"""

from __future__ import annotations

import hashlib
import unicodedata

SEP = "\x1f"


def normalize(text: str) -> str:
    """NFC, then ``\\r\\n`` and lone ``\\r`` to ``\\n``, then strip both ends. Nothing else.

    No case folding and no inner whitespace collapsing: every extra step is a step another
    implementation can get subtly different, and ids must agree across languages.
    """
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


def h128(s: str) -> str:
    """The first 32 lowercase hex characters of SHA-256 over the UTF-8 bytes of ``s``."""
    return hashlib.sha256(s.encode("utf-8")).hexdigest()[:32]


def text_sha(text: str) -> str:
    """Hash of the normalized text, so a judgment can describe itself without storing it."""
    return "t1:" + h128(normalize(text))


def chunk_id(doc_uri: str, doc_revision: str, ordinal: int, text: str, chunker_fingerprint: str) -> str:
    """Content-addressed chunk id: ``c1:`` + h128 of the five parts joined by U+001F."""
    parts = (doc_uri, doc_revision, str(int(ordinal)), normalize(text), chunker_fingerprint)
    return "c1:" + h128(SEP.join(parts))
