"""Writers: the data-model frames as JSONL, JSON, TREC, qrels and parquet text or files.

Every writer takes anything the matching ``as_*`` takes, writes canonical text (two writers of
the same data write the same bytes, so diffs stay reviewable), and writes a file atomically
(:func:`atomic_write_text`: a temporary file, then a rename).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from ..model import CORPUS_COLUMNS, DEFAULT_SYSTEM, FINGERPRINTS, ID, JUDGMENT_FIELDS, RUN_COLUMNS
from .columns import LARGE_STRING, arrow_of, group_codes, group_starts, in_group_order
from .convert import as_corpus, as_judgments, as_queries, as_run
from .jsontext import dump_value
from .judgments import KNOWN_JUDGMENT
from .safewrite import atomic_write_bytes, atomic_write_text
from .text import is_path

__all__ = [
    "atomic_write_text",
    "rewrite_judgments",
    "serialize_judgments",
    "to_qrels",
    "to_trec_run",
    "write_corpus",
    "write_judgments",
    "write_parquet",
    "write_queries",
    "write_run",
]


def serialize_judgments(judgments: Any) -> str:
    """Canonical JSONL bytes for the labels (SPEC A2), as a str.

    Compact JSON, non-ASCII kept as is, fields in the spec's order then unknown fields in their
    original order, unset fields omitted, a newline after every line (so empty input is "").
    Two writers of the same labels produce the same bytes, which keeps label diffs reviewable.

    Parameters
    ----------
    judgments : DataFrame, list of dicts or path
        Anything :func:`~retrieval_eval.io.convert.as_judgments` reads.

    Returns
    -------
    str
        The JSONL text.

    Examples
    --------
    >>> serialize_judgments([{"relevance": 1, "doc_uri": "d1", "query_id": "q1"}])
    '{"query_id":"q1","doc_uri":"d1","relevance":1}\\n'
    """
    df = as_judgments(judgments)
    if len(df) == 0:
        return ""
    cols = []
    for name in JUDGMENT_FIELDS:
        # the ignores on to_numpy(na_value=None) in this module: pandas-stubs refuse the None pandas takes
        values = df[name].to_numpy(dtype=object, na_value=None) if name != "relevance" else df[name].to_numpy()  # type: ignore[call-overload]
        cols.append(values)
    extras = df["extra"].to_numpy(dtype=object)
    prefixes = [json.dumps(n) + ":" for n in JUDGMENT_FIELDS]
    out = []
    dumps = json.dumps
    for i in range(len(df)):
        parts = []
        for j, name in enumerate(JUDGMENT_FIELDS):
            v = cols[j][i]
            if v is None:
                continue
            if name == "relevance":
                parts.append(prefixes[j] + str(int(v)))
            else:
                parts.append(prefixes[j] + dumps(v, ensure_ascii=False))
        extra = extras[i]
        if isinstance(extra, Mapping):
            for k, v in extra.items():
                if k in KNOWN_JUDGMENT:
                    continue
                parts.append(dumps(str(k), ensure_ascii=False) + ":" + dump_value(v))
        out.append("{" + ",".join(parts) + "}\n")
    return "".join(out)


def write_judgments(judgments: Any, path: str | os.PathLike[str], backup: bool = False) -> None:
    """Write canonical judgments to ``path`` atomically (see :func:`atomic_write_text`).

    Parameters
    ----------
    judgments : DataFrame, list of dicts or path
        Anything :func:`~retrieval_eval.io.convert.as_judgments` reads.
    path : str or PathLike
        Where to write.
    backup : bool
        Keep the file it replaces as ``path.bak``.

    Returns
    -------
    None
    """
    atomic_write_text(path, serialize_judgments(judgments), backup=backup)


def rewrite_judgments(text: str, before: Any, after: Any) -> str:
    """``text`` with only the lines of the labels that differ between ``before`` and ``after``
    rewritten canonically (SPEC A2); every other byte is kept.

    ``before`` is the frame :func:`parse_judgments` read from ``text`` (its ``line`` column
    says where each label is) and ``after`` the same rows changed (``drift.fix``). Comment
    lines, blank lines, unchanged labels, their field order and spacing, a CRLF line end
    and the final newline (or its absence) stay byte for byte: a re-anchor then shows in a
    diff as the lines it changed, and nothing a person wrote between the labels is lost.

    Parameters
    ----------
    text : str
        The judgments file's text (without a byte-order mark).
    before : DataFrame
        ``parse_judgments(text)``.
    after : DataFrame
        The same rows, some changed (``drift.fix(before, result).judgments``).

    Returns
    -------
    str
        The new text; ``text`` itself when no label changed.

    Raises
    ------
    ValueError
        ``before`` and ``after`` differ in length, or ``before`` carries no line numbers of
        ``text``.

    Examples
    --------
    >>> from retrieval_eval import parse_judgments
    >>> text = '// pilot\\n{"query_id": "q1", "doc_uri": "d1", "relevance": 1}\\n'
    >>> before = parse_judgments(text)
    >>> after = before.assign(relevance=[2])
    >>> print(rewrite_judgments(text, before, after), end="")
    // pilot
    {"query_id":"q1","doc_uri":"d1","relevance":2}
    """
    b, a = as_judgments(before), as_judgments(after)
    if len(b) != len(a):
        raise ValueError(f"rewrite_judgments: {len(b)} labels before, {len(a)} after; the rows must be the same")
    changed = np.zeros(len(b), dtype=bool)
    for name in JUDGMENT_FIELDS:
        x, y = b[name].reset_index(drop=True), a[name].reset_index(drop=True)
        same = (x == y).fillna(False).to_numpy(dtype=bool) | (x.isna() & y.isna()).to_numpy(dtype=bool)
        changed |= ~same
    if not changed.any():
        return text
    rows = np.flatnonzero(changed)
    numbers = b["line"].to_numpy(dtype=np.int64)[rows]
    lines = text.split("\n")
    if (numbers < 1).any() or (numbers > len(lines)).any():
        raise ValueError("rewrite_judgments: the labels do not carry the line numbers of this text")
    fresh = serialize_judgments(a.iloc[rows]).split("\n")
    for number, line in zip(numbers.tolist(), fresh):
        end = "\r" if lines[number - 1].endswith("\r") else ""
        lines[number - 1] = line + end
    return "\n".join(lines)


def _run_groups(df: pd.DataFrame) -> tuple[np.ndarray | None, np.ndarray, pa.Array, pa.Array]:
    """Rows grouped by (system, query) in first-appearance order, each group in rank order.

    Returns the row permutation (None when the frame is already in that order), the start of
    each group in the permuted rows, and the system and query_id columns as arrow arrays.
    """
    s = arrow_of(df["system"])
    q = arrow_of(df["query_id"])
    codes = group_codes(s, q)
    rank = df["rank"].to_numpy()
    order = None if in_group_order(codes, rank) else np.lexsort((rank, codes))
    return order, group_starts(codes if order is None else codes[order]), s, q


_TREC_SPACE = re.compile(rb"[ \t\n\v\f\r]")


def _whitespace_at(arr: pa.Array) -> int | None:
    """The first position of a large_string array whose value holds ASCII whitespace, or None.

    One regex search over the data buffer settles the usual case (no whitespace anywhere)."""
    import pyarrow.compute as pc

    if len(arr) == 0:
        return None
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    if data is None or not _TREC_SPACE.search(memoryview(data)[offsets[0] : offsets[-1]]):
        return None
    bad = pc.fill_null(pc.match_substring_regex(arr, r"[ \t\n\v\f\r]"), False)
    return int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])


def _check_trec_field(arr: pa.Array, what: str) -> None:
    """A TREC field cannot hold ASCII whitespace (trec_eval splits on it)."""
    at = _whitespace_at(arr)
    if at is None:
        return
    first = arr[at].as_py()
    raise ValueError(f"{what} {first!r} contains whitespace; the TREC format cannot hold it")


def _joined_text(arr: pa.Array) -> str:
    """The concatenation of a null-free large_string array, straight from its data buffer."""
    if len(arr) == 0:
        return ""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    return bytes(memoryview(arr.buffers()[2])[offsets[0] : offsets[-1]]).decode("utf-8")


def write_run(run: Any, path: str | os.PathLike[str] | None = None) -> str:
    """The run as JSONL text; written atomically to ``path`` when one is given.

    One line per (system, query_id) in first-appearance order, entries in rank order. A line
    carries ``scores`` when all its entries have a score (a query with no scores omits it; a
    query with only some scores is refused, since JSON has no NaN), and ``system`` when the
    system is not the default ``"run"``.

    Parameters
    ----------
    run : DataFrame, list of dicts, dict of runs or path
        Anything :func:`~retrieval_eval.io.convert.as_run` reads.
    path : str or PathLike, optional
        Where to write (atomically); None only returns the text.

    Returns
    -------
    str
        The JSONL text.

    Raises
    ------
    ValueError
        A query has scores for some entries only.

    Examples
    --------
    >>> write_run([{"query_id": "q1", "ranking": ["d1", "d2"]}])
    '{"query_id":"q1","ranking":["d1","d2"]}\\n'
    """
    df = as_run(run)
    out = []
    if len(df):
        order, starts, systems_arr, qids_arr = _run_groups(df)
        take: Callable[[np.ndarray], np.ndarray] = (lambda a: a) if order is None else (lambda a: a[order])
        ends = np.concatenate((starts[1:], [len(df)]))
        first = starts if order is None else order[starts]
        systems = systems_arr.take(pa.array(first)).to_pylist()
        qids = qids_arr.take(pa.array(first)).to_pylist()
        docs = take(df["doc_id"].to_numpy(dtype=object))
        scores = take(df["score"].to_numpy(dtype=np.float64))
        for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
            line: dict[str, Any] = {"query_id": qids[g], "ranking": docs[a:b].tolist()}
            sc = scores[a:b]
            nan = np.isnan(sc)
            if not nan.all():
                if nan.any():
                    raise ValueError(f"query {qids[g]} has scores for some entries only; JSON cannot hold the rest")
                line["scores"] = sc.tolist()
            if systems[g] != DEFAULT_SYSTEM:
                line["system"] = systems[g]
            out.append(json.dumps(line, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")
    text = "".join(out)
    if path is not None:
        atomic_write_text(path, text)
    return text


def to_trec_run(run: Any, run_name: str = "retrieval-eval") -> str:
    """The run in TREC format: ``query_id Q0 doc_id rank score run_name`` a line.

    Rows are grouped by (system, query) in first-appearance order and written in rank order.
    ``score`` is the run's real score when every entry of that query has one, written as the
    shortest text that reads back as the same double (``0.5``, ``1``, ``0.00001``); otherwise a
    synthetic descending score ``n - rank + 1`` (n = the query's ranking length, so 1 for the
    last entry), so tools that re-sort by score (trec_eval) keep the run's order. The last
    column is the row's system when it is not the default ``"run"``, else ``run_name``: one file
    can then carry several systems. An id holding whitespace is refused (ValueError), since
    the format splits on it.

    Parameters
    ----------
    run : DataFrame, list of dicts, dict of runs or path
        Anything :func:`~retrieval_eval.io.convert.as_run` reads.
    run_name : str
        The last column of rows whose system is the default ``"run"``.

    Returns
    -------
    str
        The TREC run text.

    Raises
    ------
    ValueError
        An id or run name holds whitespace.

    Examples
    --------
    >>> print(to_trec_run([{"query_id": "q1", "ranking": ["d1", "d2"]}]), end="")
    q1 Q0 d1 1 2 retrieval-eval
    q1 Q0 d2 2 1 retrieval-eval
    """
    import pyarrow.compute as pc

    df = as_run(run)
    if len(df) == 0:
        return ""
    if not run_name or re.search(r"[ \t\n\v\f\r]", run_name):
        raise ValueError(f"run name {run_name!r} is empty or contains whitespace; the TREC format cannot hold it")
    order, starts, systems, qids = _run_groups(df)
    n = len(df)
    docs = arrow_of(df["doc_id"])
    ranks = df["rank"].to_numpy()
    scores = df["score"].to_numpy(dtype=np.float64)
    if order is not None:
        idx = pa.array(order)
        systems, qids, docs = systems.take(idx), qids.take(idx), docs.take(idx)
        ranks, scores = ranks[order], scores[order]
    counts = np.diff(np.concatenate((starts, [n])))
    group = np.repeat(np.arange(len(starts)), counts)
    finite = np.isfinite(scores)
    real = (np.bincount(group, weights=finite, minlength=len(starts)) == counts)[group]
    synthetic = np.repeat(counts, counts) - (np.arange(n) - np.repeat(starts, counts))
    score_text = pc.if_else(
        pa.array(real),
        pc.cast(pa.array(np.where(real, scores, 0.0)), LARGE_STRING),
        pc.cast(pa.array(synthetic.astype(np.int64)), LARGE_STRING),
    )
    default = pc.equal(systems, pa.scalar(DEFAULT_SYSTEM, LARGE_STRING))
    names = pc.if_else(default, pa.scalar(run_name, LARGE_STRING), systems)
    for arr, what in ((qids, "query id"), (docs, "doc id"), (names, "run name")):
        _check_trec_field(arr, what)
    names_nl = pc.binary_join_element_wise(names, pa.scalar("", LARGE_STRING), pa.scalar("\n", LARGE_STRING))
    lines = pc.binary_join_element_wise(
        qids,
        pa.scalar("Q0", LARGE_STRING),
        docs,
        pc.cast(pa.array(ranks), LARGE_STRING),
        score_text,
        names_nl,
        pa.scalar(" ", LARGE_STRING),
    )
    return _joined_text(lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines)


def to_qrels(judgments: Any, label: str | None = None) -> str:
    """TREC qrels text: ``<query_id> 0 <key> <relevance>`` a line, key = chunk_id else doc_uri.

    An id holding ASCII whitespace is refused (:class:`FormatError` naming the judgment's line,
    else its row), as :func:`to_trec_run` refuses one: the format splits on whitespace, so the
    line would read back as other fields (``" "`` as query id reads back as query ``0``) or not
    at all. ``label`` names the input in that message (default: the path, else ``judgments``).

    Parameters
    ----------
    judgments : DataFrame, list of dicts or path
        Anything :func:`~retrieval_eval.io.convert.as_judgments` reads.
    label : str, optional
        Names the input in messages.

    Returns
    -------
    str
        The qrels text.

    Raises
    ------
    FormatError
        An id holds whitespace.

    Examples
    --------
    >>> print(to_qrels([{"query_id": "q1", "doc_uri": "d1", "relevance": 2}]), end="")
    q1 0 d1 2
    """
    df = as_judgments(judgments)
    if len(df) == 0:
        return ""
    key = df["chunk_id"].fillna(df["doc_uri"])
    if label is None:
        label = str(judgments) if is_path(judgments) else "judgments"
    for col in ("query_id", "key"):
        values = df["query_id"] if col == "query_id" else key
        at = _whitespace_at(arrow_of(values))
        if at is not None:
            what = col if col == "query_id" else ("chunk_id" if pd.notna(df["chunk_id"].iloc[at]) else "doc_uri")
            line = int(df["line"].iloc[at])
            where = "" if line > 0 else f"row {at}: "
            raise FormatError(
                label,
                line if line > 0 else None,
                f"{where}{what} {values.iloc[at]!r} contains whitespace; TREC qrels cannot hold it",
            )
    rel = df["relevance"].astype(str).astype(object)
    lines = df["query_id"].astype(object) + " 0 " + key.astype(object) + " " + rel
    return "\n".join(lines.tolist()) + "\n"


def write_corpus(corpus: Any, path: str | os.PathLike[str] | None = None) -> str:
    """The corpus as JSON text (2-space indent, fingerprints first, unset fields omitted).

    Written atomically to ``path`` when one is given.

    Parameters
    ----------
    corpus : DataFrame, dict, list of chunk dicts or path
        Anything :func:`~retrieval_eval.io.convert.as_corpus` reads.
    path : str or PathLike, optional
        Where to write (atomically); None only returns the text.

    Returns
    -------
    str
        The JSON text.
    """
    df = as_corpus(corpus)
    doc: dict[str, Any] = {k: df.attrs[k] for k in FINGERPRINTS if df.attrs.get(k) is not None}
    chunks = []
    cols = {c: df[c].to_numpy(dtype=object, na_value=None) for c in CORPUS_COLUMNS}  # type: ignore[call-overload]
    for i in range(len(df)):
        ch = {}
        for c in CORPUS_COLUMNS:
            v = cols[c][i]
            if v is not None:
                ch[c] = int(v) if c == "ordinal" else v
        chunks.append(ch)
    doc["chunks"] = chunks
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if path is not None:
        atomic_write_text(path, text)
    return text


def write_queries(queries: Any, path: str | os.PathLike[str] | None = None) -> str:
    """The queries as JSONL (query_id, query, stratum, expect_none only when true).

    Parameters
    ----------
    queries : DataFrame, list of dicts or path
        Anything :func:`~retrieval_eval.io.convert.as_queries` reads.
    path : str or PathLike, optional
        Where to write (atomically); None only returns the text.

    Returns
    -------
    str
        The JSONL text.

    Examples
    --------
    >>> write_queries([{"query_id": "q1", "query": "x"}])
    '{"query_id":"q1","query":"x"}\\n'
    """
    df = as_queries(queries)
    out = []
    q = df["query_id"].to_numpy(dtype=object, na_value=None)  # type: ignore[call-overload]
    t = df["query"].to_numpy(dtype=object, na_value=None)  # type: ignore[call-overload]
    s = df["stratum"].to_numpy(dtype=object, na_value=None)  # type: ignore[call-overload]
    e = df["expect_none"].to_numpy(dtype=bool)
    for i in range(len(df)):
        line: dict[str, Any] = {"query_id": q[i]}
        if t[i] is not None:
            line["query"] = t[i]
        if s[i] is not None:
            line["stratum"] = s[i]
        if e[i]:
            line["expect_none"] = True
        out.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    text = "".join(out)
    if path is not None:
        atomic_write_text(path, text)
    return text


def write_parquet(data: Any, path: str | os.PathLike[str]) -> None:
    """Write judgments or a run as a parquet table with the data-model columns, atomically.

    The table is serialized in memory and written by the same safe writer as every text format
    (:func:`~retrieval_eval.io.safewrite.atomic_write_bytes`), so the same promises hold: a temp
    file, fsynced, then renamed; a symbolic link followed; a hard-linked file, a FIFO or a
    device refused; a new file made by the umask, a rewritten one keeping its mode and owner;
    temp files removed on SIGTERM and after ``kill -9``.

    Which one ``data`` is comes from its columns (``relevance``: judgments). Judgments keep
    every field; their unknown fields (``extra``) are written as JSON text, and ``line`` is
    left out (it is a position in the file they came from). A run keeps
    ``system, query_id, rank, doc_id, score``.

    Parameters
    ----------
    data : DataFrame, list of dicts or path
        Judgments (a frame with ``relevance``/``label``) or anything
        :func:`~retrieval_eval.io.convert.as_run` reads.
    path : str or PathLike
        Where to write.

    Returns
    -------
    None

    Raises
    ------
    WriteRefused, OSError
        As :func:`~retrieval_eval.io.safewrite.atomic_write_bytes`; nothing was written.
    """
    import pyarrow.parquet as pq

    if isinstance(data, pd.DataFrame) and ("relevance" in data.columns or "label" in data.columns):
        j = as_judgments(data)
        cols: dict[str, Any] = {c: j[c] for c in JUDGMENT_FIELDS}
        extra = j["extra"].to_numpy(dtype=object)
        if any(v is not None for v in extra):
            cols["extra"] = pd.array(
                [None if v is None else json.dumps(v, ensure_ascii=False) for v in extra], dtype=ID
            )
        table = pa.Table.from_pandas(pd.DataFrame(cols), preserve_index=False)
    else:
        r = as_run(data)
        table = pa.Table.from_pandas(r[list(RUN_COLUMNS)], preserve_index=False)
    table = table.replace_schema_metadata(None)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    atomic_write_bytes(path, memoryview(sink.getvalue()))  # no copy of the serialized table
