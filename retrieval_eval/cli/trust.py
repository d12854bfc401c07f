"""The ``score-shift`` and ``label-agreement`` commands (registered by :mod:`retrieval_eval.cli`).

Both follow the CLI's conventions: exit 0 when computed (and every gate passed), 1 when a gate
failed or could not decide, 2 on a usage error or malformed input (one line on stderr, never a
traceback), ``--json`` for the machine-readable result, ``--out`` written atomically.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import inputs
from .common import EXIT_FINDING, EXIT_OK, CLIError, atomic_write_text, dumps, finite_float, positive_int
from .term import fmt_number

__all__ = [
    "add_commands",
    "calibrate_flags",
    "calibrate_options",
    "cmd_label_agreement",
    "cmd_score_shift",
    "render_guarantee",
]

COMMANDS = {
    "score-shift": "compare the top-1 score distributions of two runs: KS, PSI, cutoff shift, flips",
    "label-agreement": "agreement between labelers of the same labels: kappa, alpha, metric effect",
}


def add_commands(
    command: Callable[..., argparse.ArgumentParser], output_flags: Callable[[argparse.ArgumentParser, str], None]
) -> None:
    """Add both commands through the CLI's own ``command`` and ``output_flags`` helpers.

    Parameters
    ----------
    command : callable
        ``command(name, description, epilog)`` makes a verb's subparser
        (:func:`.parser.build_parser`).
    output_flags : callable
        ``output_flags(p, json_help)`` adds ``--json`` and ``--color``.
    """
    _add_score_shift(command, output_flags)
    _add_label_agreement(command, output_flags)


def _add_score_shift(
    command: Callable[..., argparse.ArgumentParser], output_flags: Callable[[argparse.ArgumentParser, str], None]
) -> None:
    """``score-shift``: two runs' top-1 scores, the cutoff's shift, the gates (ceilings)."""
    from ..analysis.calibration.shift import SHIFT_GATE_METRICS

    p = command(
        "score-shift",
        "Compare the top-1 scores of the same queries under two runs (a new embedding model, an\n"
        "index rebuild, two dates of one system): two-sample KS statistic and p-value, population\n"
        "stability index over deciles of the before scores, the calibrated cutoff of each run and\n"
        "its shift (paired bootstrap interval), and the share of queries whose accept/refuse\n"
        "decision flips under the old cutoff. Gates are ceilings: score-shift:psi:0.1 fails when\n"
        "the PSI is above 0.1.\n\n"
        "exit: 0 computed (every gate PASS), 1 a gate FAIL or INDETERMINATE,\n"
        "2 usage error or malformed input",
        "examples:\n"
        "  retrieval-eval score-shift --run-before old.jsonl --run-after new.jsonl \\\n"
        "      --judgments j.jsonl --queries queries.jsonl --gate score-shift:psi:0.1",
    )
    p.add_argument("--run-before", metavar="FILE", required=True, help="the earlier run, with scores")
    p.add_argument("--run-after", metavar="FILE", required=True, help="the later run, with scores")
    p.add_argument("--judgments", metavar="FILE", help="judgments JSONL: the positives that calibrate each cutoff")
    p.add_argument("--queries", metavar="FILE", help="queries JSONL: expect_none marks the negatives")
    p.add_argument("--system", metavar="NAME", help="the system to compare, when a run holds several")
    p.add_argument(
        "--cutoff",
        metavar="X",
        type=finite_float("--cutoff"),
        help="the cutoff production uses today (flips are counted under it)",
    )
    p.add_argument(
        "--quantile",
        metavar="Q",
        type=finite_float("--quantile", 0.0, 1.0),
        default=0.10,
        help="quantile of positive top-1 scores used as each run's cutoff (default 0.10)",
    )
    p.add_argument(
        "--alpha",
        metavar="A",
        type=finite_float("--alpha", 0.0, 1.0),
        help="use the split-conformal cutoff with retention >= 1 - A instead",
    )
    p.add_argument(
        "--bins",
        metavar="N",
        type=positive_int("--bins"),
        default=10,
        help="quantile bins of the before scores for the PSI (default 10)",
    )
    p.add_argument(
        "--gate",
        metavar="EXPR",
        action="append",
        default=[],
        help=f"score-shift:{'|'.join(SHIFT_GATE_METRICS)}:CEILING, repeatable",
    )
    p.add_argument("--out", metavar="FILE", help="also write the JSON result here (atomically)")
    output_flags(p, "print the result as JSON")
    p.set_defaults(handler=cmd_score_shift)


def _add_label_agreement(
    command: Callable[..., argparse.ArgumentParser], output_flags: Callable[[argparse.ArgumentParser, str], None]
) -> None:
    """``label-agreement``: labelers of the same labels, their effect on a run, the gates (floors)."""
    from ..analysis.trust.agreement import AGREEMENT_GATE_MEASURES

    p = command(
        "label-agreement",
        "Agreement between labelers of the same (query, key): Cohen's kappa (plain, linear and\n"
        "quadratic weights, and binary at --threshold), Krippendorff's alpha over every labeler,\n"
        "the confusion matrix, per-stratum kappa, and with --run the metrics scored with each\n"
        "labeler's labels on the queries both covered. labeled_by names the labeler. Gates are\n"
        "floors: label-agreement:kappa_binary:0.6 fails below 0.6.\n\n"
        "exit: 0 computed (every gate PASS), 1 a gate FAIL or INDETERMINATE,\n"
        "2 usage error or malformed input",
        "examples:\n"
        "  retrieval-eval label-agreement --judgments human.jsonl --other synthetic.jsonl\n"
        "  retrieval-eval label-agreement --judgments all.jsonl --run run.jsonl \\\n"
        "      --gate label-agreement:kappa_binary:0.6",
    )
    p.add_argument("--judgments", metavar="FILE", required=True, help="judgments JSONL (labeled_by names the labeler)")
    p.add_argument("--other", metavar="FILE", help="a second judgments JSONL, e.g. the synthetic labels")
    p.add_argument(
        "--labeler",
        metavar="NAME",
        action="append",
        help="a labeled_by value to compare, repeatable (default: every labeler)",
    )
    p.add_argument("--run", metavar="FILE", help="a run: score it with each labeler's labels")
    p.add_argument("-k", metavar="K", type=positive_int("-k"), default=10, help="cutoff (default 10)")
    p.add_argument(
        "--threshold",
        metavar="T",
        type=positive_int("--threshold"),
        default=1,
        help="lowest grade that counts as relevant (default 1)",
    )
    p.add_argument(
        "--gate",
        metavar="EXPR",
        action="append",
        default=[],
        help=f"label-agreement:{'|'.join(AGREEMENT_GATE_MEASURES)}:FLOOR",
    )
    p.add_argument("--out", metavar="FILE", help="also write the JSON result here (atomically)")
    output_flags(p, "print the result as JSON")
    p.set_defaults(handler=cmd_label_agreement)


def calibrate_flags(p: argparse.ArgumentParser) -> None:
    """``calibrate``'s --alpha and --by-stratum."""
    p.add_argument(
        "--alpha",
        metavar="A",
        type=finite_float("--alpha", 0.0, 1.0),
        help="split-conformal cutoff: a new positive keeps its answer with probability "
        ">= 1 - A (no cutoff when there are too few positives)",
    )
    p.add_argument(
        "--by-stratum",
        action="store_true",
        help="one cutoff per stratum of the positives (Mondrian), pooled for small strata",
    )


def calibrate_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``calibrate()`` keywords --alpha and --by-stratum ask for."""
    options: dict[str, Any] = {}
    if getattr(args, "alpha", None) is not None:
        options["guarantee"] = args.alpha
    if getattr(args, "by_stratum", False):
        options["by"] = "stratum"
    return options


def render_guarantee(out, calibration) -> None:
    """The guarantee table of a calibration made with --alpha or --by-stratum, if any."""
    table = getattr(calibration, "guarantee", None)
    if table is None:
        return
    cols = [
        "system",
        "stratum",
        "source",
        "n_positive",
        "rank",
        "cutoff",
        "coverage",
        "coverage_ci_low",
        "coverage_ci_high",
        "negative_satisfaction",
        "negative_satisfaction_lower",
    ]
    out()
    out(out.s("guarantee", "bold"))
    out(table[cols].round(4).to_string(index=False))


def _gates(expressions: list[str], kind: str):
    from ..analysis.decisions.gates import parse_gate

    gates = [parse_gate(g) for g in expressions]
    wrong = [g.raw for g in gates if g.kind != kind]
    if wrong:
        raise CLIError(f"this command takes {kind}:... gates only, not '{wrong[0]}'")
    return gates


def _finish(args: argparse.Namespace, out, payload: dict[str, Any], gates, lines: list[str]) -> int:
    from ..analysis.decisions.gates import evaluate_gates

    evaluation = evaluate_gates(payload, gates)
    if gates:
        payload["verdict"] = evaluation.to_dict()
    text = dumps(payload)
    if args.out:
        atomic_write_text(args.out, text)
    if args.json:
        out.stream.write(text)
    else:
        for line in lines:
            out(line)
        for result in evaluation.results:
            out(f"gate {result.expression}: {result.status}")
        for reason in evaluation.reasons:
            out(f"  {reason}")
    return EXIT_OK if evaluation.passed else EXIT_FINDING


def _table(frame, columns) -> list[str]:
    rows = []
    for name, row in frame.iterrows():  # a handful of measures
        cells = [f"{name!s:<16}"] + [f"{fmt_number(row[c], 4):>10}" for c in columns]
        rows.append("  " + " ".join(cells))
    return ["  " + " ".join([f"{'':<16}"] + [f"{c:>10}" for c in columns])] + rows


def _load_judgments(path: str):
    """Labels in any format the library reads (:mod:`.inputs`)."""
    return inputs.load_labels(argparse.Namespace(judgments=path)).frame


def _load_run(path: str):
    """A run in any format the library reads (:mod:`.inputs`)."""
    return inputs.load_run(path)[0]


def cmd_score_shift(args: argparse.Namespace, out) -> int:
    """Run ``score-shift``: the top-1 score distributions of two runs compared.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 computed and every gate PASS, 1 a gate FAIL or INDETERMINATE.
    """
    from ..analysis.calibration.shift import score_shift

    gates = _gates(args.gate, "score-shift")
    before = _load_run(args.run_before)
    after = _load_run(args.run_after)
    judgments = _load_judgments(args.judgments) if args.judgments else None
    queries = inputs.load_queries(args.queries) if args.queries else None
    result = score_shift(
        before,
        after,
        judgments=judgments,
        queries=queries,
        system=args.system,
        cutoff=args.cutoff,
        quantile=args.quantile,
        guarantee=args.alpha,
        bins=args.bins,
    )
    lines = [
        f"score-shift  {args.run_before} ({result.settings['before']})  ->  "
        f"{args.run_after} ({result.settings['after']}), {len(result.top1)} shared queries",
        "",
    ]
    lines += _table(result.summary, ["value", "n", "ci_low", "ci_high"])
    lines += [""] + [f"warning: {w}" for w in result.warnings]
    return _finish(args, out, result.to_dict(), gates, lines)


def cmd_label_agreement(args: argparse.Namespace, out) -> int:
    """Run ``label-agreement``: agreement between labelers of the same labels.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 computed and every gate PASS, 1 a gate FAIL or INDETERMINATE.
    """
    from ..analysis.trust.agreement import label_agreement

    gates = _gates(args.gate, "label-agreement")
    judgments = _load_judgments(args.judgments)
    other = _load_judgments(args.other) if args.other else None
    run = _load_run(args.run) if args.run else None
    result = label_agreement(judgments, other, labelers=args.labeler, run=run, k=args.k, threshold=args.threshold)
    a, b = result.labelers[:2]
    lines = [f"label-agreement  {len(result.units)} units labeled by both", f"  first:  {a}", f"  second: {b}", ""]
    lines += _table(result.summary, ["value", "n", "ci_low", "ci_high"])
    if result.metrics is not None:
        lines += ["", "  metrics on the shared queries (first labels -> second labels):"]
        for rec in result.metrics.itertuples(index=False):
            lines.append(
                f"    {rec.system:<10} {rec.metric:<14} {rec.labels_first:.4f} -> "
                f"{rec.labels_second:.4f} ({rec.difference:+.4f})"
            )
    lines += [""] + [f"warning: {w}" for w in result.warnings]
    return _finish(args, out, result.to_dict(), gates, lines)
