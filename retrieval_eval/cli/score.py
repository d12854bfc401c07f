"""``retrieval-eval score``: a run scored against judgments, as a spec report with its verdict
and gates (one report per system of the run).

The report is :meth:`retrieval_eval.analysis.evaluation.Evaluation.report`'s; the gates are
:func:`retrieval_eval.analysis.gates.apply_gates`'; this module reads the options, calls them
and hands the result to :mod:`.render`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..analysis.decisions.gates import Status, apply_gates, check_report, parse_gate, worse_status
from . import inputs
from .common import EXIT_FINDING, EXIT_OK, CLIError, atomic_write_text, check_out_not_input, dumps, load_json
from .render import Out, render_score, write_per_query, write_table

__all__ = [
    "CALIBRATION_METRICS",
    "STREAM_BYTES",
    "STREAM_CHUNK_ROWS",
    "baseline_for",
    "cmd_score",
    "load_baseline",
    "read_judged_option",
    "stream_rows",
]

#: A run file this big or bigger is scored in blocks of STREAM_CHUNK_ROWS rows (see
#: ``evaluate(chunk_rows=)``) when nothing needs it whole: 2 GiB is about 60M TREC lines, some
#: 6 GiB in memory read whole, where blocks of 2M rows keep the peak under 1 GiB.
STREAM_BYTES = 2 << 30
STREAM_CHUNK_ROWS = 2_000_000


def stream_rows(args: argparse.Namespace) -> int | None:
    """The block size ``score`` reads the run in, or None to read it whole.

    ``--system`` (one system's rows) and ``--queries`` (calibration reads every top-1 score)
    need the run whole, so they keep the in-memory path.
    """
    whole = args.system is not None or args.queries is not None or len(args.run) != 1
    if args.chunk_rows is not None:
        if whole:
            raise CLIError("--chunk-rows cannot go with --system, --queries or several --run: they need the runs whole")
        if _stream_kind(args.run[0]) is None:
            raise CLIError(
                f"--chunk-rows: {args.run[0]} is not a TREC run, a JSONL run or parquet, "
                "the formats read a block at a time"
            )
        return args.chunk_rows
    if whole or args.run[0] == "-" or args.order != "rank" or _stream_kind(args.run[0]) is None:
        return None
    try:
        size = os.path.getsize(args.run[0])
    except OSError:
        return None  # the reader says what is wrong with the path
    return STREAM_CHUNK_ROWS if size >= STREAM_BYTES else None


def _stream_kind(path: str) -> str | None:
    """The run's format when it can be read a block at a time (TREC, JSONL, parquet), else
    None (by the one detection rule, :func:`retrieval_eval.io.detect.sniff`)."""
    from ..io.detect import sniff

    if path == "-" or not os.path.isfile(path):  # a pipe or FIFO is read once, whole
        return None
    kind = sniff(path).kind
    return kind if kind in ("trec-run", "run", "parquet") else None


#: Report measurements without a cutoff (calibration figures, SPEC A6 / B2).
CALIBRATION_METRICS = (
    "negative_satisfaction",
    "positive_retention",
    "auroc",
    "separation_margin",
    "aupr_in",
    "aupr_out",
    "fpr@95tpr",
)


def load_baseline(path: str) -> dict[str, Any]:
    """A baseline report: a spec report, or the ``{"systems": {name: report}}`` file that
    ``score --out`` writes for a multi-system run (each entry checked as a report)."""
    data = load_json(path)
    if isinstance(data, dict) and "metrics" not in data and isinstance(data.get("systems"), dict):
        for name, entry in data["systems"].items():
            check_report(entry, label=f"{path} (system {name})")
        return data
    return check_report(data, label=path)


def cmd_score(args: argparse.Namespace, out: Out) -> int:
    """Run ``score``: read the inputs, evaluate every system, apply the gates, write the report.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the terminal report (or ``--json``/``--format`` text) goes.

    Returns
    -------
    int
        0 when every system's verdict is PASS, 1 otherwise.
    """
    # A well-formed gate over a metric the report lacks is INDETERMINATE, naming the nearest
    # names (SPEC A6), never a usage error: the same gate is right for a report that has it.
    gates = [parse_gate(g) for g in args.gate]
    ks = inputs.cutoffs(args.k)
    check_out_not_input(args, keep=("baseline",))
    if (args.quantile is not None or args.cutoff is not None) and not args.queries:
        raise CLIError("--quantile and --cutoff need --queries (the negatives to calibrate on)")
    if args.quantile is not None and args.cutoff is not None:
        raise CLIError("give --quantile or --cutoff, not both")
    args.k = ",".join(map(str, ks))
    source = inputs.load_labels(args)
    judgments, labels_path = source.frame, source.path
    chunk_rows = stream_rows(args)
    run = inputs.load_runs(args, args.system) if chunk_rows is None else args.run[0]
    corpus = inputs.load_corpus(args.corpus) if args.corpus else None
    queries = inputs.load_queries(args.queries) if args.queries else None
    if queries is not None:
        inputs.check_negatives(judgments, labels_path, queries, args.queries, args.threshold)
    baseline = load_baseline(args.baseline) if args.baseline else None

    from ..analysis.evaluation.core import evaluate

    drift_result = None
    if corpus is not None:
        from ..analysis.drift.core import drift

        drift_result = drift(judgments, corpus)
    calibration = _calibration(args, judgments, run, queries)
    # The same steps as report.build_report, once for every system of the run.
    ev = evaluate(
        judgments,
        run,
        k=ks,
        threshold=args.threshold,
        gain=args.gain,
        queries=queries,
        chunk_rows=chunk_rows,
        judged=read_judged_option(args, judgments),
    )
    systems = list(ev.systems)
    if not systems:
        raise CLIError(f"{labels_path}: no judgments, so nothing can be scored")
    reports: dict[str, dict[str, Any]] = {}
    for system in systems:
        report = ev.report(
            system=system, corpus=corpus, drift_result=drift_result, calibration=calibration, queries=queries
        )
        reports[system] = inputs.hint_cutoffs(
            apply_gates(report.to_dict(), gates, baseline_for(baseline, system, args.baseline)), gates, ks
        )
    if len(reports) == 1:
        payload: dict[str, Any] = next(iter(reports.values()))
    else:
        # Several systems in one run: one spec report per system, keyed by system.
        payload = {"systems": reports}
    text = dumps(payload)
    if args.out:
        atomic_write_text(args.out, text)
    _show(out, args, ev, reports, text, labels_path, calibration, no_scores=queries is not None and calibration is None)
    worst: Status = "PASS"
    for data in reports.values():
        worst = worse_status(worst, data["verdict"]["status"])
    return EXIT_OK if worst == "PASS" else EXIT_FINDING


def read_judged_option(args: argparse.Namespace, judgments):
    """The judge scores of every ``--judged`` path (None without one); a scored query the
    judgments lack is a one-line warning on stderr (its scores are left out)."""
    paths = getattr(args, "judged", None)
    if not paths:
        return None
    import warnings

    from ..analysis.judged.attach import read_judged

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = read_judged(list(paths), judgments)
    for w in caught:
        args.warn(str(w.message))
    system = getattr(args, "system", None)
    if system is not None:  # --system scores one system: the others' judge scores stay out
        scores = scores[scores["system"].isna() | (scores["system"] == system)]
    return scores


def _calibration(args: argparse.Namespace, judgments, run, queries):
    """The calibration ``--queries`` asks for, or None (no queries, or a run without scores)."""
    if queries is None or not bool(run["score"].notna().any()):
        return None
    from ..analysis.calibration.core import calibrate

    options: dict[str, Any] = {"threshold": args.threshold}
    if args.cutoff is not None:
        options["cutoff"] = args.cutoff
    if args.quantile is not None:
        options["quantile"] = args.quantile
    return calibrate(judgments, run, queries=queries, **options)


def _show(
    out: Out,
    args: argparse.Namespace,
    ev,
    reports: dict[str, dict[str, Any]],
    text: str,
    labels_path: str,
    calibration,
    no_scores: bool,
) -> None:
    """Write what ``score`` was asked to show: per-query values, a table, JSON or the report."""
    if args.per_query:
        write_per_query(out, ev, args.format)
    elif args.format:
        write_table(out, ev.summary, args.format, ev.to_markdown(), ev.to_latex())
    elif args.json:
        out.stream.write(text)
    else:
        render_score(out, reports, args, labels_path, calibration, no_scores=no_scores)


def baseline_for(baseline: dict[str, Any] | None, system: str, path: str | None) -> dict[str, Any] | None:
    """The baseline report for ``system``: the file itself, or its entry when the baseline is a
    multi-system file (``{"systems": {name: report}}``, what ``score --out`` writes then)."""
    if baseline is None:
        return None
    systems = baseline.get("systems")
    if isinstance(systems, dict) and "metrics" not in baseline:
        return systems.get(system)
    return baseline
