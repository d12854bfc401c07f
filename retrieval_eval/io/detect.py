"""Which format a file is in: one rule, by extension and content, for the API and the CLI.

``as_judgments(path)``, ``as_run(path)`` and every CLI option that takes a file ask
:func:`sniff` what a path holds, then read it with the reader of that format
(:func:`retrieval_eval.io.convert.read_labels` and its siblings: the reading sits on top of the
readers, this rule below them). The rule reads at most the first 64 KiB:

1. a folder is a BEIR folder when it has ``qrels/`` (or ``corpus.jsonl``/``queries.jsonl``);
2. parquet by its magic bytes ``PAR1`` (whatever the name), or a ``.parquet``/``.pq`` name;
3. CSV by a ``.csv`` name;
4. JSON by the first content line: a JSON object on it is classified by its keys
   (``ranking``/``doc_id`` a run, ``relevance``/``doc_uri`` judgments, ``chunks`` a corpus,
   ``metrics``/``verdict`` a report, ``_id`` BEIR's ``queries.jsonl`` or ``corpus.jsonl``,
   ``query_id`` alone queries);
5. a whitespace table by its fields: ``query-id corpus-id score`` (BEIR's header) or 3-4
   fields ending in an integer are qrels; 6 fields (``qid Q0 doc rank score name``) a TREC run.

Content decides over the name where it is decisive (the magic bytes, a JSON object's keys):
a parquet file called ``run.jsonl`` is still parquet. When nothing decides, the kind is
``None`` and the caller's default reader reads it and reports what is wrong on which line.

A file that is clearly another kind of input than the one asked for is refused with one
line saying what it looks like and which option reads it: ``qrels.trec: looks like TREC
qrels (labels), not a run; pass it with --judgments or --qrels (as_judgments)``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import FormatError
from .text import first_content_line

__all__ = ["HEAD", "KINDS", "ORDER_HINT", "READ_WITH", "Sniff", "expect", "jsonish", "sniff", "sniff_bytes"]

#: kind -> (what it is, in words; the role it plays).
KINDS: dict[str, tuple[str, str]] = {
    "beir": ("a BEIR folder", "labels"),
    "judgments": ("judgments JSONL", "labels"),
    "qrels": ("TREC qrels", "labels"),
    "beir-qrels": ("BEIR qrels (query-id corpus-id score)", "labels"),
    "run": ("a JSONL run", "run"),
    "trec-run": ("a TREC run (qid Q0 doc rank score name)", "run"),
    "queries": ("queries JSONL", "queries"),
    "beir-queries": ("BEIR queries.jsonl (_id, text)", "queries"),
    "beir-corpus": ("BEIR corpus.jsonl (_id, title, text)", "corpus"),
    "corpus": ("a corpus JSON", "corpus"),
    "report": ("a report JSON", "report"),
    "json-dict": ("a pytrec_eval/ranx JSON dict {qid: {doc: value}}", "dict"),
    "parquet": ("a parquet table", "table"),
    "csv": ("a CSV table", "table"),
}

_ROLE_WORDS = {"labels": "labels", "run": "a run", "queries": "queries", "corpus": "a corpus", "report": "a report"}
#: role -> the CLI option and the Python function that read it.
READ_WITH = {
    "labels": "--judgments or --qrels (as_judgments)",
    "run": "--run (as_run)",
    "queries": "--queries (as_queries)",
    "corpus": "--corpus (as_corpus)",
    "report": "--baseline (Report.read)",
}

#: Said when a run comes where labels belong, or the reverse, through the Python API.
ORDER_HINT = "the order is (judgments, run)"

#: How much of a file the rule reads (64 KiB).
HEAD = 1 << 16
#: A JSON document whose first value is an object: ``{"q1": {"d1": ...`` (pytrec_eval, ranx).
_NESTED = re.compile(rb'\A\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*[-+0-9.]')


@dataclass(frozen=True)
class Sniff:
    """What :func:`sniff` found: ``kind`` (a key of :data:`KINDS`, or None when the content
    does not decide) and ``role`` (``labels``, ``run``, ``queries``, ``corpus``, ``report``,
    ``table`` for parquet/CSV whose columns decide, or None)."""

    kind: str | None
    role: str | None = None

    @property
    def words(self) -> str:
        return KINDS[self.kind][0] if self.kind else "an unknown format"


def _of(kind: str | None) -> Sniff:
    return Sniff(kind, KINDS[kind][1] if kind else None)


def _json_kind(obj: dict[str, Any], name: str) -> str | None:
    keys = set(obj)
    if "ranking" in keys or ("doc_id" in keys and "relevance" not in keys):
        return "run"
    if "relevance" in keys or "doc_uri" in keys:
        return "judgments"
    if "chunks" in keys:
        return "corpus"
    if keys & {"metrics", "verdict", "spec_version"}:
        return "report"
    if "_id" in keys:
        if "title" in keys or "corpus" in name:
            return "beir-corpus"
        return "beir-queries"
    if "query_id" in keys:
        return "queries"
    return None


def _is_int(text: str) -> bool:
    t = text[1:] if text[:1] in "+-" else text
    return t.isdigit() and t.isascii()


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _table_kind(fields: list[str]) -> str | None:
    if len(fields) == 3 and fields[2].isalpha() and not _is_int(fields[2]):
        return "beir-qrels"  # the header: query-id corpus-id score
    if len(fields) in (3, 4) and _is_int(fields[-1]):
        return "qrels"
    if len(fields) == 6 and _is_int(fields[3]) and _is_float(fields[4]):
        return "trec-run"
    return None


def sniff_bytes(head: bytes, name: str = "") -> Sniff:
    """The kind of a file from its first bytes and its name (see the module docstring)."""
    lower = name.lower()
    if head.startswith(b"PAR1"):
        return _of("parquet")
    if lower.endswith((".parquet", ".pq")):
        return _of("parquet")
    if lower.endswith(".csv"):
        return _of("csv")
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if _NESTED.match(head):
        return _of("json-dict")
    for raw in head.split(b"\n"):
        line = raw.strip()
        if not line or line.startswith(b"//") or line.startswith(b"#"):
            continue
        text = line.decode("utf-8", "replace")
        if text.startswith("{"):
            try:
                obj = json.loads(text)
            except (ValueError, RecursionError):  # pretty-printed, broken or too deep: the reader decides
                return Sniff(None)
            return _of(_json_kind(obj, Path(lower).name)) if isinstance(obj, dict) else Sniff(None)
        if text.startswith("["):
            return Sniff(None)
        return _of(_table_kind(text.split()))
    return Sniff(None)


def sniff(path: str | os.PathLike[str]) -> Sniff:
    """The kind of the file or folder at ``path`` (reads at most its first 64 KiB).

    Raises :class:`FormatError` for a path that does not exist, a folder that is not a BEIR
    folder, or a file that cannot be read.
    """
    p = Path(path)
    if p.is_dir():
        if (p / "qrels").is_dir() or (p / "corpus.jsonl").is_file() or (p / "queries.jsonl").is_file():
            return _of("beir")
        raise FormatError(str(path), None, "is a directory, and not a BEIR folder (it has no qrels/ folder)")
    try:
        with open(p, "rb") as fh:
            head = fh.read(HEAD)
    except FileNotFoundError:
        raise FormatError(str(path), None, "cannot read: no such file or directory") from None
    except PermissionError:
        raise FormatError(str(path), None, "cannot read: permission denied") from None
    except OSError as err:
        raise FormatError(str(path), None, f"cannot read: {err.strerror or err}") from None
    return sniff_bytes(head, p.name)


def expect(found: Sniff, role: str, label: str, api: bool = False) -> None:
    """Refuse ``found`` when it is clearly another role than ``role``: one line saying what the
    file looks like and which option (and function) reads it. Unknown kinds pass: the reader
    of ``role`` then says what is wrong on which line. ``api``: the path came through a Python
    function taking ``(judgments, run)``, so a run given as labels (or the reverse) also
    names that order (:data:`ORDER_HINT`)."""
    if found.role is None or found.role in (role, "table", "dict"):
        return
    swapped = api and {found.role, role} == {"labels", "run"}
    raise FormatError(
        label,
        None,
        f"looks like {found.words} ({found.role}), not {_ROLE_WORDS[role]}; "
        f"pass it with {READ_WITH[found.role]}" + (f"; {ORDER_HINT}" if swapped else ""),
    )


def jsonish(path: str | os.PathLike[str], data: bytes | None) -> bool:
    """A file the content did not decide: JSON by name (``.jsonl``/``.json``) or a first
    character ``{``/``[``, else a whitespace table."""
    if str(path).lower().endswith((".jsonl", ".json", ".ndjson")):
        return True
    if data is None:
        first = first_content_line(path)
    else:
        first = next(
            (
                ln.strip()
                for ln in data[:HEAD].decode("utf-8", "replace").splitlines()
                if ln.strip() and not ln.strip().startswith(("//", "#"))
            ),
            "",
        )
    return first.lstrip("\ufeff").startswith(("{", "["))
