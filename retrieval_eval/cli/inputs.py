"""What every CLI verb takes, resolved in one place: labels, runs, cutoffs, output formats.

The command line takes what the library takes (``docs/cli.md``):

* labels: ``--judgments`` or ``--qrels`` name judgments JSONL, TREC or BEIR qrels, a parquet
  or CSV table, or a BEIR folder (``--split`` picks its qrels); the format is found by the
  one detection rule of :mod:`retrieval_eval.io.detect`, so the two options differ only in name;
* runs: ``--run`` (repeatable) names JSONL, TREC, parquet or CSV runs; ``--order rank|score``;
  a run read by rank whose scores tie gets one warning with a count;
* cutoffs: ``-k 5,10,100`` and repeated ``-k`` are one set, scored in one pass;
* ``--format markdown|latex|csv|json`` writes the summary table; ``--per-query`` writes the
  per-query values and the lists of missing, excluded and repeating queries.

Nothing here computes a number: it reads, selects and renders what the library returns.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .common import CLIError

__all__ = [
    "FORMATS",
    "LabelSource",
    "UsageError",
    "add_cutoffs",
    "add_format",
    "add_labels",
    "add_runs",
    "check_negatives",
    "check_output_flags",
    "cutoffs",
    "hint_cutoffs",
    "load_corpus",
    "load_labels",
    "load_other",
    "load_queries",
    "load_run",
    "load_runs",
    "tie_warning",
    "with_query_text",
    "without_query_text_warnings",
]

#: What ``--format`` writes a result's table as, instead of the terminal report.
FORMATS = ("markdown", "latex", "csv", "json")
#: How ``--order`` reads a ranking (:func:`retrieval_eval.io.detect.read_run_file`'s ``order``).
ORDERS = ("rank", "score")
_LABELS_HELP = (
    "labels: judgments JSONL, TREC or BEIR qrels, a pytrec_eval/ranx JSON dict, parquet, "
    "CSV, or a BEIR folder (the format is detected)"
)

#: The usage error of the command line (one line on stderr, exit 2); the same class as
#: :class:`.common.CLIError`, under the name this module has always raised.
UsageError = CLIError


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------


def add_labels(p: argparse.ArgumentParser, required: bool = True, group=None) -> None:
    """``--judgments``/``--qrels`` (one of them), ``--split``, ``--as-chunk-ids``."""
    labels = group if group is not None else p.add_mutually_exclusive_group(required=required)
    labels.add_argument("--judgments", metavar="PATH", help=_LABELS_HELP)
    labels.add_argument("--qrels", metavar="PATH", help="the same as --judgments (any labels format)")
    p.add_argument("--split", metavar="NAME", help="with a BEIR folder: the qrels split to read (default test)")
    p.add_argument("--as-chunk-ids", action="store_true", help="with qrels: the qrels ids are chunk_ids")


def add_runs(p: argparse.ArgumentParser, required: bool = True, many_help: str | None = None) -> None:
    """``--run`` (repeatable) and ``--order``."""
    p.add_argument(
        "--run",
        metavar="PATH",
        action="append",
        required=required,
        help=many_help
        or "a run: JSONL, TREC, a pytrec_eval/ranx JSON dict, parquet or CSV; "
        "repeatable (one file may hold several systems)",
    )
    p.add_argument(
        "--order",
        choices=ORDERS,
        default="rank",
        help="rank: each ranking in its own order (JSONL list, TREC rank column; default); "
        "score: re-ranked by score, ties by doc id descending, as trec_eval does",
    )


def add_cutoffs(
    p: argparse.ArgumentParser,
    help_: str = "cutoffs, e.g. -k 5,10,100 or -k 5 -k 10 (default 10); all are scored in one pass",
) -> None:
    """``-k`` (repeatable, each a cutoff or a comma list; :func:`cutoffs` joins them).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The verb's parser.
    help_ : str
        The option's help text.
    """
    p.add_argument("-k", metavar="K", action="append", type=_ks, help=help_)


def add_format(p: argparse.ArgumentParser, per_query: bool = False) -> None:
    """``--format`` (one of :data:`FORMATS`) and, with ``per_query``, ``--per-query``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The verb's parser.
    per_query : bool
        Also add ``--per-query`` (``score``).
    """
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="write the summary table as markdown, latex, csv or json instead of the "
        "terminal report" + (" (with --per-query: the per-query table)" if per_query else ""),
    )
    if per_query:
        p.add_argument(
            "--per-query",
            action="store_true",
            help="per-query values (like trec_eval -q), then the missing, excluded and "
            "repeating queries; --format csv|json for machines",
        )


def check_output_flags(args: argparse.Namespace) -> None:
    """``--json`` (the verb's JSON document) and ``--format`` (a table) are two outputs; one
    at a time. ``--per-query`` writes its own table, in ``--format`` when given."""
    if getattr(args, "format", None) and getattr(args, "json", False):
        raise UsageError("give --json or --format, not both (--format json writes the summary table)")
    if getattr(args, "per_query", False) and getattr(args, "json", False):
        raise UsageError("--per-query writes its own table; use --format json instead of --json")


def _ks(text: str) -> tuple[int, ...]:
    """``-k 5`` or ``-k 5,10,100`` as ints; the engine's rule (:func:`check_ks`) decides the
    largest cutoff, and only the wording of its refusal is the command line's."""
    from ..engine.metrics import MAX_K, check_ks

    parts = text.split(",")
    if not all(re.fullmatch(r"0*[1-9][0-9]*", s.strip()) for s in parts):
        if len(parts) == 1:
            raise UsageError(f"-k expects a positive integer, got '{text}'")
        raise UsageError(f"-k expects positive integers separated by commas (5,10,100), got '{text}'")
    for s in parts:
        try:
            check_ks(int(s))
        except ValueError:
            raise UsageError(f"-k is at most {MAX_K} (the largest int64), got '{s.strip()}'") from None
    return tuple(int(s) for s in parts)


def cutoffs(values: list[tuple[int, ...]] | None) -> tuple[int, ...]:
    """Every ``-k`` given (each maybe a comma list) as one ascending tuple; ``(10,)`` by default;
    more than :data:`~retrieval_eval.engine.metrics.MAX_CUTOFFS` distinct cutoffs are refused."""
    if not values:
        return (10,)
    ks = tuple(sorted({k for group in values for k in group}))
    from ..engine.metrics import MAX_CUTOFFS

    if len(ks) > MAX_CUTOFFS:
        raise UsageError(f"-k: at most {MAX_CUTOFFS} cutoffs at once, got {len(ks)}; give the cutoffs the report needs")
    return ks


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


@dataclass
class LabelSource:
    """Judgments as read, with where they came from and whether that format can carry query
    text (qrels and a table without a ``query`` column cannot: a warning about missing query
    text would then be about the format, not the labels)."""

    frame: pd.DataFrame
    path: str
    kind: str | None
    carries_query_text: bool


def _stdin() -> bytes:
    return sys.stdin.buffer.read()


def _check_path(path: str, folder_ok: bool) -> None:
    """The CLI's one-line refusals for a path that cannot be read at all."""
    import os

    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir() and not folder_ok:
        raise UsageError(f"{path}: is a directory, expected a file")
    if not os.access(p, os.R_OK):
        raise UsageError(f"{path}: permission denied")


def _read_once(path: str, folder_ok: bool) -> bytes | None:
    """The bytes of an input that can be read only once (``-``, a pipe such as ``<(cat f)``, a
    named FIFO), read now so that format detection and the reader see the same bytes; None
    for a regular file or folder, which the reader opens itself
    (:func:`retrieval_eval.io.text.stream_bytes`; a device is refused)."""
    from ..io.text import stream_bytes

    if path == "-":
        return _stdin()
    _check_path(path, folder_ok)
    return stream_bytes(path)


def load_labels(args: argparse.Namespace) -> LabelSource:
    """The labels named by ``--judgments`` or ``--qrels`` (``-`` is stdin), in any format."""
    from ..io.convert import read_labels
    from ..io.detect import sniff, sniff_bytes

    path = args.qrels if getattr(args, "qrels", None) else args.judgments
    split = getattr(args, "split", None)
    data = _read_once(path, folder_ok=True)
    found = sniff_bytes(data[: 1 << 16], "" if path == "-" else path) if data is not None else sniff(path)
    if split is not None and found.kind != "beir":
        raise UsageError("--split applies to a BEIR folder only")
    chunk_ids = bool(getattr(args, "as_chunk_ids", False))
    if chunk_ids and found.kind not in ("qrels", "beir-qrels", "beir", None):
        raise UsageError(f"--as-chunk-ids applies to qrels only, and {path} is {found.words}")
    frame = read_labels(path, as_chunk_ids=chunk_ids, split=split or "test", data=data, label=path)
    carries = found.kind in ("judgments", "beir") or (
        found.kind in ("parquet", "csv") and bool(frame["query"].notna().any())
    )
    return LabelSource(frame, path, found.kind, carries)


def load_other(path: str, role: str) -> pd.DataFrame:
    """``--queries`` (queries JSONL or BEIR's queries.jsonl) or ``--corpus`` (corpus JSON or
    BEIR's corpus.jsonl); ``-`` is stdin."""
    from ..io.convert import read_corpus_file, read_queries_file

    data = _read_once(path, folder_ok=False)
    reader = read_queries_file if role == "queries" else read_corpus_file
    return reader(path, data=data, label=path)


def load_queries(path: str) -> pd.DataFrame:
    """``--queries``: queries JSONL or BEIR's queries.jsonl (``-`` is stdin).

    Parameters
    ----------
    path : str

    Returns
    -------
    pandas.DataFrame
        The queries frame of the data model.
    """
    return load_other(path, "queries")


def load_corpus(path: str) -> pd.DataFrame:
    """``--corpus``: a corpus JSON document or BEIR's corpus.jsonl (``-`` is stdin).

    Parameters
    ----------
    path : str

    Returns
    -------
    pandas.DataFrame
        The corpus frame of the data model.
    """
    return load_other(path, "corpus")


def check_negatives(judgments, labels_path: str, queries, queries_path: str, threshold: int) -> None:
    """Refuse an ``expect_none`` query of ``queries_path`` that has a relevant label in
    ``labels_path``, naming both files (the same rule for score, calibrate and compare).

    Parameters
    ----------
    judgments, queries : pandas.DataFrame
        As read by :func:`load_labels` and :func:`load_queries`.
    labels_path, queries_path : str
        Named in the refusal.
    threshold : int
        The lowest relevant grade.
    """
    from ..analysis.calibration.core import check_negatives as check
    from ..analysis.calibration.core import negative_ids

    check(judgments, negative_ids(queries, None), threshold, label=labels_path, negatives_label=queries_path)


def load_run(path: str, system: str | None = None, order: str = "rank") -> tuple[pd.DataFrame, str | None]:
    """One run file of any format (``-`` is stdin), with ``--system`` selecting one system;
    also the file's kind (:func:`retrieval_eval.io.detect.sniff`)."""
    from ..io.convert import read_run_file
    from ..io.detect import sniff, sniff_bytes

    data = _read_once(path, folder_ok=False)
    kind = (sniff_bytes(data[: 1 << 16], "" if path == "-" else path) if data is not None else sniff(path)).kind
    run = read_run_file(path, order=order, data=data, label=path)
    if system is not None:
        systems = list(dict.fromkeys(run["system"].tolist()))
        if system not in systems:
            has = ", ".join(map(str, systems)) or "none"
            raise UsageError(f"{path}: no system '{system}' in the run (it has {has})")
        run = run[run["system"] == system].reset_index(drop=True)
    return run, kind


def load_runs(args: argparse.Namespace, system: str | None = None, warn=None) -> pd.DataFrame:
    """Every ``--run`` file, concatenated. With several files, a file whose rows name no system
    (the default ``run``) is named after the file, so two such files are two systems; the same
    system in two files is refused. Warns (``warn(text)``) about tied scores read by rank (a
    pytrec_eval/ranx dict has no order of its own: it is always ranked by score); ``warn``
    defaults to the command line's own (``args.warn``, set by :func:`.app.main`). The frame is
    marked ``attrs["ties_reported"]``: the Python API does not warn about it again."""
    if warn is None:
        warn = getattr(args, "warn", None)
    from ..io import DEFAULT_SYSTEM, RUN_COLUMNS

    paths = list(args.run)
    order = getattr(args, "order", "rank")
    runs = []
    for path in paths:
        run, kind = load_run(path, None if len(paths) > 1 else system, order)
        if len(paths) > 1 and len(run) and (run["system"] == DEFAULT_SYSTEM).all():
            run = run.assign(system=pd.array([Path(path).stem] * len(run), dtype="string"))
        if order == "rank" and warn is not None and kind != "json-dict":  # a dict is ranked by score
            message = tie_warning(run, path)
            if message:
                warn(message)
        runs.append(run)
    if len(runs) == 1:
        return _ties_reported(runs[0])
    seen: dict[str, str] = {}
    for path, run in zip(paths, runs):
        for name in pd.unique(run["system"]):
            if name in seen:
                raise UsageError(
                    f"{seen[name]} and {path} hold the same system '{name}'; give each run a distinct system"
                )
            seen[name] = path
    run = pd.concat([r[list(RUN_COLUMNS)] for r in runs], ignore_index=True).astype(RUN_COLUMNS)
    if system is not None:
        if system not in seen:
            raise UsageError(f"no system '{system}' in the runs (they have {', '.join(seen)})")
        run = run[run["system"] == system].reset_index(drop=True)
    return _ties_reported(run)


def _ties_reported(run: pd.DataFrame) -> pd.DataFrame:
    """The frame marked as one whose ties the command line has dealt with (warned about, or
    ranked by score), so the Python API it is handed to does not warn about them again."""
    from ..analysis.evaluation.ties import REPORTED

    run.attrs[REPORTED] = True
    return run


def tie_warning(run: pd.DataFrame, path: str) -> str | None:
    """One line when rankings hold tied scores and are read by rank: how many, and the switch
    that orders ties the way trec_eval does. None when no score ties."""
    from ..analysis.evaluation.ties import tie_message  # the one check, shared with the Python API

    return tie_message(
        run, path, "the file's order", "--order score orders ties by doc id descending, as trec_eval does"
    )


# ---------------------------------------------------------------------------------------------
# Gates naming a cutoff that was not computed
# ---------------------------------------------------------------------------------------------


def hint_cutoffs(report: dict[str, Any], gates, ks: tuple[int, ...]) -> dict[str, Any]:
    """The report with a hint on every gate whose metric names a cutoff that was not computed:
    the ``-k`` that would compute it. The gate stays INDETERMINATE: it is a hint, not a fix."""
    verdict = report.get("verdict") or {}
    reasons = list(verdict.get("reasons") or [])
    for gate in gates:
        m = re.search(r"@([0-9]+)$", gate.metric)
        if not m or int(m.group(1)) in ks or gate.metric in (report.get("metrics") or {}):
            continue
        want = ",".join(str(k) for k in sorted(set(ks) | {int(m.group(1))}))
        hint = f" (scored at k={','.join(map(str, ks))} only; run with -k {want} to compute it)"
        reasons = [r + hint if r.startswith(f"{gate.raw}: ") and "not present" in r else r for r in reasons]
    if reasons:
        report = dict(report, verdict=dict(verdict, reasons=reasons))
    return report


# ---------------------------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------------------------


def with_query_text(judgments: pd.DataFrame, queries: pd.DataFrame) -> pd.DataFrame:
    """Judgments whose missing query text is taken from a queries file (a label's own text
    wins, so a conflict between the two is still a conflict ``validate`` sees)."""
    text = queries.dropna(subset=["query"]).drop_duplicates("query_id")
    lookup = pd.Series(text["query"].to_numpy(dtype=object), index=text["query_id"].to_numpy(dtype=object))
    filled = lookup.reindex(judgments["query_id"].to_numpy(dtype=object)).to_numpy(dtype=object)
    current = judgments["query"].to_numpy(dtype=object)
    merged = pd.array([c if isinstance(c, str) else f for c, f in zip(current, filled)], dtype="string")
    return judgments.assign(query=merged)


def without_query_text_warnings(result):
    """The validation result without ``missing-query-text`` (for labels whose format cannot
    carry query text and no ``--queries`` to supply it)."""
    from dataclasses import replace

    return replace(result, issues=[i for i in result.issues if i.code != "missing-query-text"])
