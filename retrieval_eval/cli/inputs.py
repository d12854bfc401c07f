"""What every CLI verb takes, resolved in one place: labels, runs, cutoffs, output formats.

The command line takes what the library takes (``docs/cli.md``):

* labels: ``--judgments`` or ``--qrels`` name judgments JSONL, TREC or BEIR qrels, a parquet
  or CSV table, or a BEIR folder (``--split`` picks its qrels); the format is found by the
  one detection rule of :mod:`retrieval_eval.detect`, so the two options differ only in name;
* runs: ``--run`` (repeatable) names JSONL, TREC, parquet or CSV runs; ``--order rank|score``;
  a run read by rank whose scores tie gets one warning with a count;
* cutoffs: ``-k 5,10,100`` and repeated ``-k`` are one set, scored in one pass;
* ``--format markdown|latex|csv|json`` writes the summary table; ``--per-query`` writes the
  per-query values and the lists of missing, excluded and repeating queries.

Nothing here computes a number: it reads, selects and renders what the library returns.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["LabelSource", "UsageError", "add_format", "add_labels", "add_runs", "cutoffs", "load_labels", "load_runs"]

FORMATS = ("markdown", "latex", "csv", "json")
_LABELS_HELP = ("labels: judgments JSONL, TREC or BEIR qrels, a pytrec_eval/ranx JSON dict, parquet, "
                "CSV, or a BEIR folder (the format is detected)")


class UsageError(Exception):
    """Raised for a usage error; the CLI prints it as one line and exits 2."""


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
    p.add_argument("--run", metavar="PATH", action="append", required=required,
                   help=many_help or "a run: JSONL, TREC, a pytrec_eval/ranx JSON dict, parquet or CSV; "
                                     "repeatable (one file may hold several systems)")
    p.add_argument("--order", choices=("rank", "score"), default="rank",
                   help="rank: each ranking in its own order (JSONL list, TREC rank column; default); "
                        "score: re-ranked by score, ties by doc id descending, as trec_eval does")


def add_cutoffs(p: argparse.ArgumentParser, help_: str = "cutoffs, e.g. -k 5,10,100 or -k 5 -k 10 "
                                                          "(default 10); all are scored in one pass") -> None:
    p.add_argument("-k", metavar="K", action="append", type=_ks, help=help_)


def add_format(p: argparse.ArgumentParser, per_query: bool = False) -> None:
    p.add_argument("--format", choices=FORMATS,
                   help="write the summary table as markdown, latex, csv or json instead of the "
                        "terminal report" + (" (with --per-query: the per-query table)" if per_query else ""))
    if per_query:
        p.add_argument("--per-query", action="store_true",
                       help="per-query values (like trec_eval -q), then the missing, excluded and "
                            "repeating queries; --format csv|json for machines")


def check_output_flags(args: argparse.Namespace) -> None:
    """``--json`` (the verb's JSON document) and ``--format`` (a table) are two outputs; one
    at a time. ``--per-query`` writes its own table, in ``--format`` when given."""
    if getattr(args, "format", None) and getattr(args, "json", False):
        raise UsageError("give --json or --format, not both (--format json writes the summary table)")
    if getattr(args, "per_query", False) and getattr(args, "json", False):
        raise UsageError("--per-query writes its own table; use --format json instead of --json")


def _ks(text: str) -> tuple[int, ...]:
    parts = text.split(",")
    if not all(re.fullmatch(r"[0-9]+", s.strip()) and int(s) >= 1 for s in parts):
        if len(parts) == 1:
            raise UsageError(f"-k expects a positive integer, got '{text}'")
        raise UsageError(f"-k expects positive integers separated by commas (5,10,100), got '{text}'")
    ks = tuple(int(s) for s in parts)
    from ..engine.metrics import MAX_K

    for s, k in zip(parts, ks):
        if k > MAX_K:
            raise UsageError(f"-k is at most {MAX_K} (the largest int64), got '{s.strip()}'")
    return ks


def cutoffs(values: list[tuple[int, ...]] | None) -> tuple[int, ...]:
    """Every ``-k`` given (each maybe a comma list) as one ascending tuple; ``(10,)`` by default."""
    if not values:
        return (10,)
    return tuple(sorted({k for group in values for k in group}))


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


def load_labels(args: argparse.Namespace) -> LabelSource:
    """The labels named by ``--judgments`` or ``--qrels`` (``-`` is stdin), in any format."""
    from ..io.convert import read_labels
    from ..io.detect import sniff, sniff_bytes

    path = args.qrels if getattr(args, "qrels", None) else args.judgments
    split = getattr(args, "split", None)
    if path != "-":
        _check_path(path, folder_ok=True)
    data = _stdin() if path == "-" else None
    found = sniff_bytes(data[: 1 << 16], "") if data is not None else sniff(path)
    if split is not None and found.kind != "beir":
        raise UsageError("--split applies to a BEIR folder only")
    chunk_ids = bool(getattr(args, "as_chunk_ids", False))
    if chunk_ids and found.kind not in ("qrels", "beir-qrels", "beir", None):
        raise UsageError(f"--as-chunk-ids applies to qrels only, and {path} is {found.words}")
    frame = read_labels(path, as_chunk_ids=chunk_ids, split=split or "test", data=data, label=path)
    carries = found.kind in ("judgments", "beir") or (found.kind in ("parquet", "csv") and bool(frame["query"].notna().any()))
    return LabelSource(frame, path, found.kind, carries)


def load_other(path: str, role: str) -> pd.DataFrame:
    """``--queries`` (queries JSONL or BEIR's queries.jsonl) or ``--corpus`` (corpus JSON or
    BEIR's corpus.jsonl); ``-`` is stdin."""
    from ..io.convert import read_corpus_file, read_queries_file

    if path != "-":
        _check_path(path, folder_ok=False)
    data = _stdin() if path == "-" else None
    reader = read_queries_file if role == "queries" else read_corpus_file
    return reader(path, data=data, label=path)


def load_run(path: str, system: str | None = None, order: str = "rank") -> tuple[pd.DataFrame, str | None]:
    """One run file of any format (``-`` is stdin), with ``--system`` selecting one system;
    also the file's kind (:func:`retrieval_eval.detect.sniff`)."""
    from ..io.convert import read_run_file
    from ..io.detect import sniff, sniff_bytes

    if path != "-":
        _check_path(path, folder_ok=False)
    data = _stdin() if path == "-" else None
    kind = (sniff_bytes(data[: 1 << 16]) if data is not None else sniff(path)).kind
    run = read_run_file(path, order=order, data=data, label=path)
    if system is not None:
        systems = list(dict.fromkeys(run["system"].tolist()))
        if system not in systems:
            raise UsageError(f"{path}: no system '{system}' in the run (it has {', '.join(map(str, systems)) or 'none'})")
        run = run[run["system"] == system].reset_index(drop=True)
    return run, kind


def load_runs(args: argparse.Namespace, system: str | None = None, warn=None) -> pd.DataFrame:
    """Every ``--run`` file, concatenated. With several files, a file whose rows name no system
    (the default ``run``) is named after the file, so two such files are two systems; the same
    system in two files is refused. Warns (``warn(text)``) about tied scores read by rank (a
    pytrec_eval/ranx dict has no order of its own: it is always ranked by score)."""
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
        return runs[0]
    seen: dict[str, str] = {}
    for path, run in zip(paths, runs):
        for name in pd.unique(run["system"]):
            if name in seen:
                raise UsageError(f"{seen[name]} and {path} hold the same system '{name}'; give each run a distinct system")
            seen[name] = path
    run = pd.concat([r[list(RUN_COLUMNS)] for r in runs], ignore_index=True).astype(RUN_COLUMNS)
    if system is not None:
        if system not in seen:
            raise UsageError(f"no system '{system}' in the runs (they have {', '.join(seen)})")
        run = run[run["system"] == system].reset_index(drop=True)
    return run


def tie_warning(run: pd.DataFrame, path: str) -> str | None:
    """One line when rankings hold tied scores and are read by rank: how many, and the switch
    that orders ties the way trec_eval does. None when no score ties."""
    scored = run[run["score"].notna()]
    if not len(scored):
        return None
    tied = scored.duplicated(["system", "query_id", "score"], keep=False)
    if not tied.any():
        return None
    n_tied = scored.loc[tied, ["system", "query_id"]].drop_duplicates().shape[0]
    n_all = run[["system", "query_id"]].drop_duplicates().shape[0]
    return (f"{path}: {n_tied} of {n_all} rankings have tied scores; they are read by rank "
            "(the file's order); --order score orders ties by doc id descending, as trec_eval does")


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
# Writing tables
# ---------------------------------------------------------------------------------------------


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    from .app import _frame_records

    return _frame_records(frame)


def write_table(out, frame: pd.DataFrame, fmt: str, markdown: str | None = None, latex: str | None = None) -> None:
    """``frame`` in ``fmt``: the result's own Markdown/LaTeX when given, else the frame's."""
    from ..viz import tables

    if fmt == "markdown":
        out.stream.write(markdown if markdown is not None else tables.frame_markdown(frame))
    elif fmt == "latex":
        out.stream.write(latex if latex is not None else tables.frame_latex(frame))
    elif fmt == "csv":
        named = frame.index.name is not None or any(frame.index.names)
        buf = io.StringIO()
        frame.to_csv(buf, index=named, lineterminator="\n")
        out.stream.write(buf.getvalue())
    else:
        out.stream.write(json.dumps(_records(frame), indent=2, ensure_ascii=False) + "\n")


def drift_frame(result) -> pd.DataFrame:
    """A drift result's labels per status, as a two-column frame (csv/json output)."""
    from ..analysis.drift import DRIFT_STATUSES

    return pd.DataFrame({"status": list(DRIFT_STATUSES),
                         "labels": [int(result.summary[s.lower()]) for s in DRIFT_STATUSES]})


def query_lists(per_query: pd.DataFrame) -> dict[str, dict[str, list[str]]]:
    """Per system: ``missing`` (judged, with positives, no ranking: scored zero), ``excluded``
    (no label at the threshold, or expect_none: out of the averages), ``repeating`` (a key
    repeated in the ranking: only its first occurrence counted)."""
    negative = per_query["negative"] if "negative" in per_query.columns else False
    excluded = per_query["no_positives"] | negative
    out: dict[str, dict[str, list[str]]] = {}
    for name, mask in (("missing", per_query["missing"] & ~excluded), ("excluded", excluded),
                       ("repeating", per_query["duplicates"])):
        rows = per_query[mask]
        for system in pd.unique(per_query["system"]):
            ids = rows.loc[rows["system"] == system, "query_id"].astype(str).tolist()
            out.setdefault(str(system), {})[name] = ids
    return out


_LIST_TEXT = {
    "missing": "missing (judged, no ranking: scored zero)",
    "excluded": "excluded (no label at the threshold, or expect_none)",
    "repeating": "repeating (a key repeated in the ranking: first occurrence counted)",
}


def write_per_query(out, ev, fmt: str | None) -> None:
    """The per-query values of every system, then the lists of :func:`query_lists`."""
    from . import term as _term
    from ..engine.metrics import metric_columns

    pq = ev.per_query
    metrics = metric_columns(pq)
    columns = ["system", "query_id", "stratum", *metrics, "missing", "no_positives", "negative", "duplicates"]
    frame = pq[[c for c in columns if c in pq.columns]].reset_index(drop=True)
    lists = query_lists(pq)
    if fmt == "json":
        payload = {"per_query": _records(frame), "queries": lists}
        out.stream.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return
    if fmt in ("csv", "markdown", "latex"):
        write_table(out, frame, fmt)
        return
    shown = ["system", "query_id", *metrics] if len(ev.systems) > 1 else ["query_id", *metrics]
    rows = [[_term.fmt_number(v) if isinstance(v, float) else str(v) for v in r]
            for r in frame[shown].itertuples(index=False, name=None)]
    out(_term.table(shown, rows, align=["l"] * (len(shown) - len(metrics)) + ["r"] * len(metrics), style=out.s))
    for system, groups in lists.items():
        prefix = f"{system}: " if len(lists) > 1 else ""
        for name, ids in groups.items():
            out(f"  {prefix}{_LIST_TEXT[name]}: {len(ids)}" + (f": {', '.join(ids)}" if ids else ""))


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


GROUP_AT = 4
SHOW_IDS = 5


def group_issues(issues: list[dict[str, Any]]) -> list[list[str]]:
    """Rows ``[severity, code, message]`` with an issue that repeats (``GROUP_AT`` times or
    more, e.g. one per query) folded into one row: the count, the first message, and the
    first few query ids. ``--json`` keeps every issue."""
    by_code: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for issue in issues:
        by_code.setdefault((issue["severity"], issue["code"]), []).append(issue)
    rows = []
    for (severity, code), group in by_code.items():
        if len(group) < GROUP_AT:
            rows.extend([severity, code, i["message"]] for i in group)
            continue
        ids = []
        for i in group:
            m = re.search(r"\bquery (\S+)", i["message"])
            if m and m.group(1) not in ids:
                ids.append(m.group(1))
        shown = ", ".join(ids[:SHOW_IDS]) + (", ..." if len(ids) > SHOW_IDS else "")
        message = f"{len(group)} times, e.g. {group[0]['message']}"
        if ids:
            message += f"; queries {shown}"
        rows.append([severity, code, message + " (--json lists every one)"])
    return rows


