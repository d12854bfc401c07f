"""Layer 1, input and output: readers, writers and the conversion of every input a user hands
over (paths, text, frames, dicts, other tools' objects) into the data model's frames.

Imports :mod:`retrieval_eval.model` and the base modules only. One module per format family,
bottom up: :mod:`.text` (bytes, paths, decoding), :mod:`.columns` (arrow -> pandas columns),
:mod:`.jsontext` (the JSON rule), :mod:`.whitespace` (whitespace tables); the readers
:mod:`.judgments`, :mod:`.runs`, :mod:`.trec`, :mod:`.qrels`, :mod:`.corpus`, :mod:`.queries`;
:mod:`.frames` (a user's DataFrame in), :mod:`.dicts` (pytrec_eval/ranx), :mod:`.beir`,
:mod:`.tabular` (parquet/CSV); :mod:`.detect` (the one format-detection rule); :mod:`.convert`
(``as_*``, the entry point, and reading a path by its detected format); :mod:`.writers`;
:mod:`.interop` (the field's shapes gathered, ``to_dict``, ir_datasets).

Every reader returns a DataFrame exactly as ``docs/data-model.md`` describes it (column names,
order and dtypes are a contract the other layers code against), and every malformed input is
refused with :class:`~retrieval_eval.errors.FormatError` naming the input, the file's real
1-based line and what is wrong, never with a raw exception.

Speed: the large inputs (runs, TREC runs, qrels, judgments) are read by pyarrow into flat
columns and checked with vectorized operations. When that fast path meets anything it cannot
vouch for (a malformed line, a comment, a duplicate query, a non-finite score, an unknown
judgment field...) the input is read again by a careful line-by-line Python pass, which is the
authority: it either returns the same frame or raises the exact message with the real line
number. The frame a reader returns is taken by ``as_run``/``as_judgments`` through vectorized
checks and copy-on-write views.

Choices the readers make, so every face behaves the same:

- ``null`` for an optional field means unset (pandas exports write ``null``); a wrong type is
  refused. ``NaN``/``Infinity`` are not JSON and are refused where the spec has no use for them.
- Lines are split on ``\\n`` only (U+2028 is legal inside a JSON string); blank lines and
  ``//`` comments (``#`` in whitespace tables) are skipped but keep their line numbers.
- Whitespace tables (TREC runs, qrels) split on ASCII whitespace only, as trec_eval does.
- A run's ``system``: the ``system=`` argument when given (it names every row), else the line's
  field (the TREC run_name column), else ``"run"``. Duplicate lines are judged per
  (system, query) after that choice.
- ``to_trec_run`` writes a row's system as run_name unless it is the default ``"run"``, and a
  synthetic descending score ``n - rank + 1`` for a query without scores.
- ``read_*(path)`` label messages with the path; ``parse_*`` use the spec's labels.
- Ids are strings and are never converted from numbers: a frame with numeric ids is refused.

The public names below are re-exported here, so ``from retrieval_eval.io import as_run`` works.
"""

from ..model import (
    CORPUS_COLUMNS,
    DEFAULT_SYSTEM,
    JUDGMENT_COLUMNS,
    JUDGMENT_FIELDS,
    MAX_RELEVANCE,
    QUERY_COLUMNS,
    RUN_COLUMNS,
    empty_corpus,
    empty_judgments,
    empty_queries,
    empty_run,
)
from .convert import (
    as_corpus,
    as_judgments,
    as_queries,
    as_run,
    read_corpus_file,
    read_labels,
    read_queries_file,
    read_run_file,
    refuse_swapped,
    rerank_by_score,
)
from .corpus import parse_corpus, read_corpus
from .frames import swapped_columns
from .jsontext import MAX_JSON_DEPTH, parse_json, read_json
from .judgments import parse_judgments, read_judgments
from .qrels import from_qrels, read_qrels
from .queries import parse_queries, read_queries
from .runs import parse_run, read_run
from .trec import from_trec_run, read_trec_run
from .writers import (
    atomic_write_text,
    rewrite_judgments,
    serialize_judgments,
    to_qrels,
    to_trec_run,
    write_corpus,
    write_judgments,
    write_parquet,
    write_queries,
    write_run,
)

__all__ = [
    "CORPUS_COLUMNS",
    "DEFAULT_SYSTEM",
    "JUDGMENT_COLUMNS",
    "JUDGMENT_FIELDS",
    "MAX_JSON_DEPTH",
    "MAX_RELEVANCE",
    "QUERY_COLUMNS",
    "RUN_COLUMNS",
    "as_corpus",
    "as_judgments",
    "as_queries",
    "as_run",
    "atomic_write_text",
    "empty_corpus",
    "empty_judgments",
    "empty_queries",
    "empty_run",
    "from_qrels",
    "from_trec_run",
    "parse_corpus",
    "parse_judgments",
    "parse_json",
    "parse_queries",
    "parse_run",
    "read_corpus",
    "read_corpus_file",
    "read_json",
    "read_judgments",
    "read_labels",
    "read_qrels",
    "read_queries",
    "read_queries_file",
    "read_run",
    "read_run_file",
    "read_trec_run",
    "refuse_swapped",
    "rerank_by_score",
    "rewrite_judgments",
    "serialize_judgments",
    "swapped_columns",
    "to_qrels",
    "to_trec_run",
    "write_corpus",
    "write_judgments",
    "write_parquet",
    "write_queries",
    "write_run",
]
