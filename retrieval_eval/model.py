"""The data model: the four frames' schemas, the one id dtype, the constants every layer shares.

Base layer: imports nothing of this package. Every id column (query, system, doc, chunk,
stratum) is a pandas string column of dtype :data:`ID`, under pandas 2 and 3 alike.

The four frames (``docs/data-model.md``) are judgments, run, queries and corpus. For each,
``*_COLUMNS`` maps column -> dtype in column order (``df.astype(RUN_COLUMNS)`` works),
``*_REQUIRED`` names the columns an input must have (the others are filled as missing), and
``empty_*()`` is the frame with no rows. The readers and ``as_*`` (:mod:`retrieval_eval.io`)
return exactly these frames; the layers above trust them.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

__all__ = [
    "CORPUS_COLUMNS",
    "CORPUS_REQUIRED",
    "DEFAULT_SYSTEM",
    "FINGERPRINTS",
    "ID",
    "JUDGMENT_COLUMNS",
    "JUDGMENT_FIELDS",
    "JUDGMENT_REQUIRED",
    "MAX_RELEVANCE",
    "QUERY_COLUMNS",
    "QUERY_REQUIRED",
    "RUN_COLUMNS",
    "RUN_REQUIRED",
    "TOO_LARGE",
    "UNSTRATIFIED",
    "empty_corpus",
    "empty_judgments",
    "empty_queries",
    "empty_run",
    "judgment_keys",
]

#: The dtype of every id column: pandas' string dtype (pyarrow-backed under pandas 3).
ID = pd.StringDtype()
#: The stratum of a query whose labels name none.
UNSTRATIFIED = "_unstratified"

#: Wire fields of a judgment, in canonical writing order (SPEC A2).
JUDGMENT_FIELDS: tuple[str, ...] = (
    "query_id",
    "query",
    "doc_uri",
    "chunk_id",
    "text_sha",
    "chunk_text",
    "relevance",
    "corpus_fingerprint",
    "labeled_by",
    "labeled_at",
    "stratum",
    "notes",
)


#: Judgments frame: column -> dtype, in column order. ``df.astype(JUDGMENT_COLUMNS)`` works.
JUDGMENT_COLUMNS: dict[str, str] = {
    **{f: ("int64" if f == "relevance" else "string") for f in JUDGMENT_FIELDS},
    "extra": "object",
    "line": "int64",
}


#: Run frame (long: one row per system, query, rank).
RUN_COLUMNS: dict[str, str] = {
    "system": "string",
    "query_id": "string",
    "rank": "int64",
    "doc_id": "string",
    "score": "float64",
}


#: Queries frame.
QUERY_COLUMNS: dict[str, str] = {"query_id": "string", "query": "string", "stratum": "string", "expect_none": "bool"}


#: Corpus frame (fingerprints in ``df.attrs``).
CORPUS_COLUMNS: dict[str, str] = {
    "chunk_id": "string",
    "doc_uri": "string",
    "doc_revision": "string",
    "ordinal": "Int64",
    "text": "string",
    "text_sha": "string",
}

#: The system name of a run line that names none.
DEFAULT_SYSTEM = "run"

#: The largest grade a judgment may carry. nDCG's gain is ``2**grade - 1`` in float64: up to
#: 2**53 - 1 every gain is an integer float64 holds exactly, and a DCG sum of any ranking the
#: engine can hold stays many orders of magnitude below float64's overflow (2**1024), so no
#: metric turns into inf/inf = NaN. A grade of 1024 would overflow the gain itself. Every reader
#: refuses a larger grade (naming its line); the scales in use (0-3, 0-4, 0-100) are far below.
MAX_RELEVANCE = 53

#: The reason a larger grade is refused, as every message says it.
TOO_LARGE = f"is above the largest grade allowed, {MAX_RELEVANCE} (the gain 2**grade - 1 must stay exact in float64)"

#: The corpus's fingerprints (in a corpus frame's ``attrs``), in writing order.
FINGERPRINTS = ("corpus_fingerprint", "chunker_fingerprint")


def _empty(columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=d) for c, d in columns.items()})


def empty_judgments() -> pd.DataFrame:
    """A judgments frame with no rows and the contract's columns and dtypes."""
    return _empty(JUDGMENT_COLUMNS)


def empty_run() -> pd.DataFrame:
    """A run frame with no rows and the contract's columns and dtypes."""
    return _empty(RUN_COLUMNS)


def empty_queries() -> pd.DataFrame:
    """A queries frame with no rows and the contract's columns and dtypes."""
    return _empty(QUERY_COLUMNS)


def empty_corpus() -> pd.DataFrame:
    """A corpus frame with no rows; both fingerprints None in ``attrs``."""
    df = _empty(CORPUS_COLUMNS)
    df.attrs.update({k: None for k in FINGERPRINTS})
    return df


#: The columns an input must have, per frame (the rest are optional and filled as missing).
JUDGMENT_REQUIRED = ("query_id", "doc_uri", "relevance")
RUN_REQUIRED = ("query_id", "doc_id")
QUERY_REQUIRED = ("query_id",)
CORPUS_REQUIRED = ("chunk_id", "doc_uri")


def judgment_keys(judgments: pd.DataFrame) -> pd.Series:
    """The key that matches a judgment to a ranking entry: ``chunk_id``, else ``doc_uri``.

    Parameters
    ----------
    judgments : DataFrame
        A judgments frame (``chunk_id`` and ``doc_uri`` columns).

    Returns
    -------
    Series
        One key per row, of dtype :data:`ID`.

    Examples
    --------
    >>> j = pd.DataFrame({"doc_uri": ["d1", "d2"], "chunk_id": [None, "d2#0"]}, dtype=ID)
    >>> judgment_keys(j).tolist()
    ['d1', 'd2#0']
    """
    return judgments["chunk_id"].fillna(judgments["doc_uri"]).astype(ID)
