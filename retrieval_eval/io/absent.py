"""An optional string field written as ``""`` means the same as an absent one (SPEC A2).

A ``"stratum": ""`` is ``_unstratified``, a ``"corpus_fingerprint": ""`` is no fingerprint, a
``"text_sha": ""`` falls back to the hash of ``chunk_text``, and so on for every optional string
field of a judgment, a query or a corpus chunk. Tools and hand edits write ``""`` for "none";
read literally it would make a stratum named ``''``, a second corpus fingerprint, or a
malformed hash, none of which the writer meant.

The readers keep the field as written (a file round-trips byte for byte); this module gives it
its meaning. Each analysis entry point (``evaluate``, ``validate``, ``drift``, ``calibrate``,
the report) reads its frames through these functions once, and the layers below see ``<NA>``.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

#: The optional string fields of a judgment (SPEC A2): everything but query_id and doc_uri.
JUDGMENT_OPTIONAL = (
    "query",
    "chunk_id",
    "text_sha",
    "chunk_text",
    "corpus_fingerprint",
    "labeled_by",
    "labeled_at",
    "stratum",
    "notes",
)
#: The optional string fields of a query line.
QUERY_OPTIONAL = ("query", "stratum")
#: The optional string fields of a corpus chunk (its chunk_id and doc_uri are required).
CORPUS_OPTIONAL = ("doc_revision", "text", "text_sha")
#: The corpus's fingerprints, kept in ``attrs``.
CORPUS_ATTRS = ("corpus_fingerprint", "chunker_fingerprint")


def blank_as_missing(frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """``frame`` with ``""`` read as ``<NA>`` in ``columns`` (those it has).

    Returns ``frame`` itself when no such cell is ``""`` (the usual case: nothing is copied),
    else a shallow copy with only the affected columns replaced; the input is never mutated.
    """
    replaced = {}
    for name in columns:
        if name not in frame.columns:
            continue
        col = frame[name]
        if not (pd.api.types.is_string_dtype(col.dtype) or col.dtype == object):
            continue
        blank = col.eq("").to_numpy(dtype=bool, na_value=False)
        if blank.any():
            replaced[name] = col.mask(blank)
    if not replaced:
        return frame
    out = frame.assign(**replaced)
    out.attrs = dict(frame.attrs)
    return out


def judgments_meaning(judgments: pd.DataFrame) -> pd.DataFrame:
    """A judgments frame with every blank optional string field read as absent."""
    return blank_as_missing(judgments, JUDGMENT_OPTIONAL)


def queries_meaning(queries: pd.DataFrame) -> pd.DataFrame:
    """A queries frame with a blank ``query`` or ``stratum`` read as absent."""
    return blank_as_missing(queries, QUERY_OPTIONAL)


def corpus_meaning(corpus: pd.DataFrame) -> pd.DataFrame:
    """A corpus frame with blank chunk fields and a blank fingerprint (``attrs``) read as absent."""
    out = blank_as_missing(corpus, CORPUS_OPTIONAL)
    blank = [name for name in CORPUS_ATTRS if out.attrs.get(name) == ""]
    if blank:
        if out is corpus:
            out = corpus.copy(deep=False)
            out.attrs = dict(corpus.attrs)
        for name in blank:
            out.attrs[name] = None
    return out
