"""The verbs other than ``score``: ``drift``, ``validate``, ``convert``, ``calibrate``,
``compare`` and ``demo`` (``score`` is :mod:`.score`; ``score-shift`` and ``label-agreement``
are :mod:`.trust`; ``trec_eval`` is :mod:`.trec_eval`).

Each ``cmd_*`` takes the parsed command line and an :class:`.render.Out`, reads its inputs
through :mod:`.inputs`, calls the library once and returns the exit code.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from . import inputs, term, trust
from .common import (
    BOM,
    EXIT_FINDING,
    EXIT_OK,
    CLIError,
    atomic_write_text,
    check_out_not_input,
    decode_text,
    dumps,
    frame_records,
    naming,
)
from .render import Out, num, plural, render_calibration, render_comparison, write_table
from .render_trust import drift_frame, render_drift, render_validation

__all__ = ["CONVERT_TARGETS", "cmd_calibrate", "cmd_compare", "cmd_convert", "cmd_demo", "cmd_drift", "cmd_validate"]

#: What ``convert --to`` writes: labels to judgments, qrels or parquet; runs to a JSONL run, a
#: TREC run or parquet.
LABEL_TARGETS = ("judgments", "qrels", "parquet")
RUN_TARGETS = ("run", "trec-run", "parquet")
CONVERT_TARGETS = ("judgments", "qrels", "run", "trec-run", "parquet")


def cmd_drift(args: argparse.Namespace, out: Out) -> int:
    """Run ``drift``: classify every label against the live corpus; ``--fix`` re-anchors the recoverable ones in place.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 every label VALID (with ``--fix``: nothing left to review), 1 labels
        decayed or no labels at all (INDETERMINATE: nothing was checked).
    """
    if args.backup and not args.fix:
        raise CLIError("--backup applies to --fix only")
    if args.fix and args.judgments == "-":
        raise CLIError("--fix rewrites the judgments file; it cannot rewrite stdin")
    from ..analysis.drift.core import drift

    if args.fix and getattr(args, "qrels", None):
        raise CLIError(
            f"--fix rewrites judgments JSONL, and {args.qrels} is qrels; "
            "convert it first (retrieval-eval convert --to judgments)"
        )
    if not args.fix:
        source = inputs.load_labels(args)
        args.judgments = source.path
        result = drift(source.frame, inputs.load_corpus(args.corpus))
        fixed, written = None, False
    else:
        _check_fixable(args.judgments)
        result, fixed, written = _drift_fix(args)
    summary = result.summary
    decayed = summary.total - summary.valid
    if args.format and not args.json:
        write_table(out, drift_frame(result), args.format, result.to_markdown(), result.to_latex())
    elif args.json:
        payload = result.to_dict()
        if args.fix:
            payload["fix"] = {
                "reanchored": fixed.reanchored if fixed else 0,
                "collapsed": fixed.collapsed if fixed else 0,
                "needs_review": len(fixed.needs_review) if fixed else 0,
                "review": fixed.review_records() if fixed else [],
                "written": written,
            }
        out.stream.write(dumps(payload))
    else:
        render_drift(out, args, result, fixed, written)
    if not summary.total:
        return EXIT_FINDING  # no labels: INDETERMINATE, as an empty run is, never PASS
    if args.fix:
        # The recoverable labels were re-anchored; what is left is what a human must review.
        # The same status with and without --json (docs/cli.md).
        remaining = len(fixed.needs_review) if fixed else 0
        return EXIT_FINDING if remaining else EXIT_OK
    return EXIT_FINDING if decayed else EXIT_OK


def _check_fixable(path: str) -> None:
    """``--fix`` rewrites judgments JSONL in place; any other labels format is refused, by the
    library's one detection rule (:func:`retrieval_eval.io.detect.sniff`)."""
    from ..io.detect import sniff

    if path == "-" or not os.path.isfile(path):
        return  # the locked read below names a missing file
    kind = sniff(path).kind
    if kind not in ("judgments", None):
        raise CLIError(
            f"--fix rewrites judgments JSONL, and {path} is not ({kind}); "
            "convert it first (retrieval-eval convert --to judgments)"
        )


def _drift_fix(args: argparse.Namespace):
    """Read, fix and rewrite the judgments file under its lock (:mod:`retrieval_eval.io.safewrite`).

    The file is locked for the whole read-fix-write, so a second ``--fix`` is refused instead
    of overwriting labels it never read, and it is rewritten only when a label changed (a
    re-anchor, or the live fingerprint stamped on a VALID label): otherwise it keeps its bytes
    and its mtime. Only the changed lines are rewritten; comments, blank lines and the other
    labels stay byte for byte (:func:`retrieval_eval.io.rewrite_judgments`).
    """
    from .. import io as fm
    from ..analysis.drift.core import drift, fix
    from ..io.safewrite import LockedFile, WriteRefused

    path = args.judgments
    try:
        with LockedFile(path, read=True) as held:
            if held.data is None:
                raise CLIError(f"{path}: no such file")
            data = held.data
            bom = BOM if data.startswith(BOM) else b""
            text = decode_text(data, path)
            judgments = fm.parse_judgments(text, label=path)
            result = drift(judgments, inputs.load_corpus(args.corpus))
            fixed = fix(judgments, result)
            new_text = _rewrite(fm, text, judgments, fixed.judgments)
            written = new_text != text
            if written:
                held.replace(bom + new_text.encode("utf-8"), backup=args.backup)
                args.backup_path = held.backup_path  # beside a link's target, not the link
    except OSError as err:
        if isinstance(err, WriteRefused):
            raise CLIError(f"{err}; the file was left as it was") from None
        raise CLIError(f"{path}: cannot rewrite ({err.strerror or err}); the file was left as it was") from None
    return result, fixed, written


def _rewrite(fm, text: str, judgments, fixed) -> str:
    """``text`` with the changed labels rewritten and the collapsed ones' lines removed."""
    kept = judgments.loc[fixed.index]
    new_text = fm.rewrite_judgments(text, kept, fixed)
    gone = sorted(set(judgments["line"].tolist()) - set(kept["line"].tolist()))
    if not gone:
        return new_text
    lines = new_text.split("\n")
    for number in reversed(gone):  # each label is one line, its number as parsed
        del lines[number - 1]
    return "\n".join(lines)


def cmd_validate(args: argparse.Namespace, out: Out) -> int:
    """Run ``validate``: check a judgment set for errors and thin spots.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 no error (warnings allowed), 1 an error.
    """
    from ..analysis.trust.validation import validate

    source = inputs.load_labels(args)
    judgments, path = source.frame, source.path
    if args.queries:
        judgments = inputs.with_query_text(judgments, inputs.load_queries(args.queries))
    result = validate(judgments)
    if not source.carries_query_text and not args.queries:
        # qrels cannot carry query text: a warning per query would be about the format
        result = inputs.without_query_text_warnings(result)
    if args.json:
        out.stream.write(dumps(result.to_dict()))
    else:
        render_validation(out, path, result)
    return EXIT_OK if result.ok else EXIT_FINDING


def cmd_convert(args: argparse.Namespace, out: Out) -> int:
    """Run ``convert``: labels to judgments, qrels or parquet; runs to JSONL, TREC or parquet.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 written.
    """
    from .. import io as fm

    check_out_not_input(args)
    if args.run:
        if args.to not in RUN_TARGETS:
            raise CLIError(f"--run converts to run or trec-run, or to parquet with --out, not {args.to}")
        if args.as_chunk_ids:
            raise CLIError("--as-chunk-ids applies to --qrels only")
        run_path = args.run
        args.run = [run_path]
        run = inputs.load_runs(args, args.system)
        if args.to == "parquet":
            return _write_parquet(run, args)
        if args.to == "trec-run":
            name = args.system
            with naming(run_path):
                text = fm.to_trec_run(run, run_name=name) if name else fm.to_trec_run(run)
        else:
            text = fm.write_run(run)
    else:
        if args.to not in LABEL_TARGETS:
            given = "--qrels" if args.qrels else "--judgments"
            raise CLIError(f"{given} converts to judgments, qrels or parquet, not {args.to}")
        if args.system:
            raise CLIError("--system applies to --run only")
        labels = inputs.load_labels(args)
        judgments, source = labels.frame, labels.path
        if args.to == "parquet":
            return _write_parquet(judgments, args)
        with naming(source):
            text = fm.serialize_judgments(judgments) if args.to == "judgments" else fm.to_qrels(judgments, label=source)
    if args.out:
        atomic_write_text(args.out, text)
    else:
        out.stream.write(text)
    return EXIT_OK


def _write_parquet(data, args: argparse.Namespace) -> int:
    if not args.out:
        raise CLIError("--to parquet writes a binary file; give --out")
    from ..io.writers import write_parquet

    try:
        write_parquet(data, args.out)
    except OSError as err:
        raise CLIError(f"{args.out}: cannot write ({err.strerror or err})") from None
    return EXIT_OK


# -----------------------------------------------------------------------------------------------
# calibrate
# -----------------------------------------------------------------------------------------------


def cmd_calibrate(args: argparse.Namespace, out: Out) -> int:
    """Run ``calibrate``: out-of-distribution separation from top-1 scores.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 computed.
    """
    from ..analysis.calibration.core import calibrate

    run = inputs.load_runs(args, args.system)
    judgments = inputs.load_labels(args).frame
    queries = inputs.load_queries(args.queries)
    inputs.check_negatives(judgments, args.judgments, queries, args.queries, args.threshold)
    if len(run) == 0:
        raise CLIError(f"{', '.join(args.run)}: the run is empty: nothing to calibrate")
    options: dict[str, Any] = {"threshold": args.threshold, "quantile": args.quantile}
    if args.cutoff is not None:
        options["cutoff"] = args.cutoff
    options.update(trust.calibrate_options(args))
    result = calibrate(judgments, run, queries=queries, **options)
    if args.format and not args.json:
        write_table(out, result.summary, args.format, result.to_markdown(), result.to_latex())
    elif args.json:
        to_dict = getattr(result, "to_dict", None)
        payload = (
            to_dict()
            if callable(to_dict)
            else {"summary": frame_records(result.summary), "warnings": list(getattr(result, "warnings", []) or [])}
        )
        out.stream.write(dumps(payload))
    else:
        out(f"{out.s('calibrate', 'bold')}  {', '.join(args.run)}  {out.s('against', 'dim')}  {args.queries}")
        out()
        render_calibration(out, result)
        trust.render_guarantee(out, result)
    return EXIT_OK


# -----------------------------------------------------------------------------------------------
# compare
# -----------------------------------------------------------------------------------------------


def _check_metrics(names, ks, gain: str) -> None:
    """Refuse a ``--metric`` that is neither a spec metric nor a catalogue measure (exit 2)."""
    from ..analysis.decisions.pairwise.columns import metric_columns

    if names:
        try:
            metric_columns(names, ks, gain)
        except ValueError as err:
            raise CLIError(f"--metric: {err}") from None


def cmd_compare(args: argparse.Namespace, out: Out) -> int:
    """Run ``compare``: paired significance tests of systems against a baseline, or of every pair.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 computed.
    """
    from ..analysis.decisions.compare import compare

    ks = inputs.cutoffs(args.k)
    options: dict[str, Any] = {}
    judged = bool(getattr(args, "judged", None))
    if args.metric:
        if not judged:  # an unknown name is a usage error, named before anything is read
            _check_metrics(args.metric, ks, args.gain)
        options["metrics"] = args.metric
    judgments = inputs.load_labels(args).frame
    run: Any = inputs.load_runs(args)
    if args.queries:
        options["queries"] = inputs.load_queries(args.queries)
        inputs.check_negatives(judgments, args.judgments, options["queries"], args.queries, args.threshold)
    if run["system"].nunique() < 2:
        raise CLIError(
            f"{', '.join(args.run)}: comparing needs at least two systems; "
            f"the {'run has' if len(args.run) == 1 else 'runs have'} {run['system'].nunique()}"
        )
    if not (judgments["relevance"].to_numpy() >= args.threshold).any():
        raise CLIError(f"{args.judgments}: no label has relevance >= {args.threshold}: nothing to compare")
    if args.baseline is not None:
        systems = list(dict.fromkeys(run["system"].tolist()))
        if args.baseline not in systems:
            raise CLIError(f"--baseline: no system '{args.baseline}' in the runs (they have {', '.join(systems)})")
    if getattr(args, "judged", None):  # judged metrics are per-query columns of the evaluation compared
        from ..analysis.evaluation import evaluate
        from .score import read_judged_option

        run = evaluate(
            judgments,
            run,
            k=ks,
            threshold=args.threshold,
            gain=args.gain,
            queries=options.get("queries"),
            judged=read_judged_option(args, judgments),
        )
        # The judged metrics' names are known once their files are read: the rest are checked now.
        _check_metrics([m for m in args.metric or () if m not in run.per_query.columns], ks, args.gain)
    result = compare(
        judgments,
        run,
        baseline=args.baseline,
        k=ks,
        threshold=args.threshold,
        test=args.test,
        correction=args.correction,
        gain=args.gain,
        pairs=args.pairs,
        zero_method=args.zero_method,
        **options,
    )
    render_comparison(out, args, result)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace, out: Out) -> int:
    """Run ``demo``: the bundled demo end to end, written into ``--out`` with its page.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 written.
    """
    from .demo import run_demo

    folder = Path(args.out)
    if folder.exists() and not folder.is_dir():
        raise CLIError(f"{args.out}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CLIError(f"{args.out}: cannot create the folder ({err.strerror or err})") from None
    written = run_demo(folder)
    import pandas as pd

    from .demo import DEMO_GATES

    headline = pd.read_csv(
        written["headline.csv"], index_col="system", keep_default_na=False, na_values=[""], dtype={"system": "string"}
    )
    columns = ["ndcg@10", "recall@10", "auroc", "negative_satisfaction"]
    rows = [
        [str(system)] + [num(row[c]) for c in columns] + [str(row["calibration"]), str(row["gates"])]
        for system, row in headline.iterrows()
    ]
    out(f"{out.s('demo', 'bold')}  the bundled demo at k=10, gates: {', '.join(DEMO_GATES)}")
    out(
        term.table(
            ["system"] + columns + ["calibration", "gates"],
            rows,
            align=["l"] + ["r"] * len(columns) + ["l", "l"],
            style=out.s,
        )
    )
    out(f"page   {written['index.html']}")
    out(f"wrote  {plural(len(written), 'file')} to {folder}")
    return EXIT_OK


# -----------------------------------------------------------------------------------------------
