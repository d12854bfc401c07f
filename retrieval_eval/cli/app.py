"""The ``retrieval-eval`` command line: a thin face on the library (SPEC A6).

Exit codes are the contract a CI job reads:

- ``0``: ok (the verdict is PASS, the labels are all VALID, the judgment set is sound);
- ``1``: a finding: a gate failed, the verdict is INDETERMINATE, labels decayed, ``validate``
  found an error;
- ``2``: the command could not run as asked: a usage error, or input that is missing,
  unreadable or malformed. Exactly one line goes to stderr, naming the file and, where there
  is one, the line, and never a traceback: a CI log should say what to fix, not where the
  tool's stack was.
- ``3``: an internal error (a bug in this tool), also one line; set ``RETRIEVAL_EVAL_DEBUG=1``
  for the traceback.

Nothing here computes a metric: files are read by :mod:`retrieval_eval.formats`, scored by
:mod:`retrieval_eval.report`, checked by :mod:`retrieval_eval.gates`, and this module only
reads arguments, calls them and renders what they return.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from . import term as _term
from . import trust as _trust
from . import inputs
from ..errors import FormatError
from ..analysis.gates import GateError, apply_gates, check_report, parse_gate, strata_order, worse_status, worst_of

__all__ = ["CLIError", "COMMANDS", "atomic_write_text", "build_parser", "main", "read_text"]

PROG = "retrieval-eval"
EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

_BOM = b"\xef\xbb\xbf"


class CLIError(Exception):
    """A usage error or unreadable input: printed as one line on stderr, exit code 2."""


# -----------------------------------------------------------------------------------------------
# Argument parsing
# -----------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, except that an error is one line and raises instead of exiting.

    argparse's own ``error`` prints the whole usage block and exits; a CI log then shows ten
    lines for a typo. Raising :class:`CLIError` lets :func:`main` print one line and return 2,
    which also keeps ``main`` callable from tests and notebooks without ``SystemExit``.
    """

    def error(self, message: str):  # type: ignore[override]
        raise CLIError(f"{message}; see '{self.prog} --help'")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=34, width=min(100, _terminal_width()))

    def _split_lines(self, text: str, width: int) -> list[str]:
        # Never break inside 'worst-stratum' or 'ci-lower': a gate split over two lines
        # cannot be copied.
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 100


#: The largest -k and --threshold: the engine holds ranks, cutoffs and grades as int64.
_MAX_INT = 2**63 - 1


def _positive_int(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
            raise CLIError(f"{flag} expects a positive integer, got '{text}'")
        if int(text) > _MAX_INT:
            raise CLIError(f"{flag} is at most {_MAX_INT} (the largest int64), got '{text}'")
        return int(text)

    return parse


def _finite_float(flag: str, low: float | None = None, high: float | None = None) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise CLIError(f"{flag} expects a finite number, got '{text}'")
        if (low is not None and value <= low) or (high is not None and value >= high):
            raise CLIError(f"{flag} expects a number strictly between {low:g} and {high:g}, got '{text}'")
        return value

    return parse


_DESCRIPTION = """\
Evaluate retrieval for search and RAG: metrics, a spec-conformant JSON report, CI gates,
label drift after re-chunking, and out-of-distribution calibration from relevance scores.

exit codes:
  0  ok: verdict PASS, labels VALID, judgments sound
  1  a finding: a gate failed, the verdict is INDETERMINATE, labels decayed,
     or validate found an error
  2  usage error, or input that is missing, unreadable or malformed (one line on stderr)
  3  internal error (a bug; RETRIEVAL_EVAL_DEBUG=1 shows the traceback)
"""

_EPILOG = """\
examples:
  retrieval-eval score --judgments judgments.jsonl --run run.jsonl -k 10 --gate recall@10:0.8
  retrieval-eval score --judgments j.jsonl --run run.jsonl --baseline last.json --gate ndcg@10:-0.02
  retrieval-eval drift --judgments judgments.jsonl --corpus corpus.json --fix --backup
  retrieval-eval convert --qrels test.qrels --to judgments --out judgments.jsonl

run 'retrieval-eval <command> --help' (or 'retrieval-eval help <command>') for a command's options.
"""

_GATE_HELP = (
    "a gate, repeatable: METRIC:FLOOR (recall@10:0.8), METRIC:-D or METRIC:+D (change against "
    "--baseline, e.g. ndcg@10:-0.02), worst-stratum:METRIC:FLOOR, METRIC:ci-lower:FLOOR"
)

COMMANDS: dict[str, str] = {
    "score": "score a run against judgments: metrics, strata, verdict, gates",
    "drift": "check judgments against a live corpus after re-chunking; --fix re-anchors",
    "validate": "check a judgment set for errors and thin spots",
    "convert": "convert between judgments, qrels, JSONL runs and TREC runs",
    "calibrate": "measure out-of-distribution separation from top-1 relevance scores",
    "compare": "compare the systems of one or more runs with significance tests",
    "demo": "run the bundled demo end to end and write a report, plots and a page",
    "trec_eval": "trec_eval's command line and output, line for line (retrieval_eval.trec_eval_cmd)",
}
COMMANDS.update(_trust.COMMANDS)  # score-shift, label-agreement (retrieval_eval/cli_trust.py)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every command (exposed for documentation and tests)."""
    width = max(len(name) for name in COMMANDS)
    listing = "\n".join(f"  {name:<{width}}  {text}" for name, text in COMMANDS.items())
    parser = _Parser(
        prog=PROG,
        usage="%(prog)s [-h] [-v] <command> [options]",
        description=_DESCRIPTION + "\ncommands:\n" + listing + "\n",
        epilog=_EPILOG,
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("-v", "--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", help=argparse.SUPPRESS,
                                parser_class=_Parser)
    parser.commands = sub.choices  # name -> the command's parser (help, option checks)

    def command(name: str, description: str, epilog: str | None = None) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            prog=f"{PROG} {name}",
            help=COMMANDS[name],
            description=description,
            epilog=epilog,
            formatter_class=_HelpFormatter,
            allow_abbrev=False,
        )
        p.add_argument("-v", "--version", action="version", version=f"{PROG} {_version()}",
                       help="print the version and exit")
        return p

    def output_flags(p: argparse.ArgumentParser, json_help: str) -> None:
        p.add_argument("--json", action="store_true", help=json_help)
        p.add_argument(
            "--color",
            choices=("auto", "always", "never"),
            default="auto",
            help="colour the output: auto (a terminal, unless NO_COLOR is set), always or never",
        )

    # score -------------------------------------------------------------------------------------
    p = command(
        "score",
        "Score a run against relevance judgments and print the metrics, the per-stratum table,\n"
        "the verdict and every gate. The verdict is INDETERMINATE when nothing could be scored or\n"
        "the judgment set is unsound; gates can only make it worse, never better.\n\n"
        "exit: 0 PASS, 1 FAIL or INDETERMINATE, 2 usage error or malformed input",
        "examples:\n"
        "  retrieval-eval score --judgments j.jsonl --run run.jsonl -k 5 --gate recall@5:0.8\n"
        "  retrieval-eval score --judgments j.jsonl --run run.jsonl --baseline main.json \\\n"
        "      --gate ndcg@10:-0.02 --gate worst-stratum:recall@10:0.6 --out report.json\n"
        "  retrieval-eval score --judgments j.jsonl --run scored.jsonl --queries queries.jsonl \\\n"
        "      --gate negative_satisfaction:0.9",
    )
    inputs.add_labels(p)
    inputs.add_runs(p)
    p.add_argument("--corpus", metavar="FILE", help="live corpus JSON: adds the label drift summary")
    p.add_argument("--queries", metavar="FILE", help="queries JSONL with expect_none negatives: adds calibration")
    p.add_argument("--baseline", metavar="FILE", help="a previous report JSON, for delta gates")
    p.add_argument("--gate", metavar="EXPR", action="append", default=[], help=_GATE_HELP)
    inputs.add_cutoffs(p)
    p.add_argument("--threshold", metavar="T", type=_positive_int("--threshold"), default=1,
                   help="lowest grade that counts as relevant (default 1)")
    p.add_argument("--gain", choices=("exponential", "linear"), default="exponential",
                   help="nDCG gain: exponential 2^g-1 (the spec's, default) or linear g (trec_eval's)")
    p.add_argument("--system", metavar="NAME", help="score only this system of a multi-system run")
    p.add_argument("--chunk-rows", metavar="N", type=_positive_int("--chunk-rows"),
                   help="read the run in blocks of about N rows of whole queries (automatic, "
                        "2,000,000, for a run file of 2 GiB or more without --system or --queries)")
    p.add_argument("--quantile", metavar="Q", type=_finite_float("--quantile", 0.0, 1.0),
                   help="with --queries: quantile of positive top-1 scores used as the cutoff (default 0.10)")
    p.add_argument("--cutoff", metavar="X", type=_finite_float("--cutoff"),
                   help="with --queries: a fixed score cutoff (the one production uses) instead")
    p.add_argument("--out", metavar="FILE", help="also write the JSON report here (atomically)")
    output_flags(p, "print the JSON report instead of tables (a run with several systems and no "
                    "--system gives {\"systems\": {name: report}})")
    inputs.add_format(p, per_query=True)
    p.set_defaults(handler=cmd_score)

    # drift -------------------------------------------------------------------------------------
    p = command(
        "drift",
        "Classify every judgment against the live corpus: VALID, RE_ANCHORABLE (same text, new\n"
        "id), MERGED (absorbed into a coarser chunk), SPLIT (now spans several chunks) or\n"
        "ORPHANED. --fix rewrites the judgments file, re-anchoring RE_ANCHORABLE and MERGED labels;\n"
        "SPLIT and ORPHANED are left for a human, because guessing would invent ground truth.\n\n"
        "exit: 0 every label VALID (with --fix: nothing left to review), 1 labels decayed,\n"
        "2 usage error or malformed input",
        "examples:\n"
        "  retrieval-eval drift --judgments judgments.jsonl --corpus corpus.json\n"
        "  retrieval-eval drift --judgments judgments.jsonl --corpus corpus.json --fix --backup",
    )
    inputs.add_labels(p)
    p.add_argument("--corpus", metavar="FILE", required=True, help="live corpus JSON")
    p.add_argument("--fix", action="store_true",
                   help="rewrite the judgments file with recoverable labels re-anchored")
    p.add_argument("--backup", action="store_true", help="with --fix: keep the old file as FILE.bak")
    output_flags(p, "print the drift result as JSON")
    inputs.add_format(p)
    p.set_defaults(handler=cmd_drift)

    # validate ----------------------------------------------------------------------------------
    p = command(
        "validate",
        "Check a judgment set: errors (duplicate labels, conflicting query texts, malformed ids,\n"
        "no positives) make every number computed from it untrustworthy; warnings (thin strata,\n"
        "no human labels, mixed fingerprints) make them fragile.\n\n"
        "exit: 0 no error (warnings allowed), 1 an error, 2 usage error or malformed input",
        "example:\n  retrieval-eval validate --judgments judgments.jsonl",
    )
    inputs.add_labels(p)
    p.add_argument("--queries", metavar="FILE",
                   help="queries JSONL: supplies query text to labels that carry none (qrels), so it is checked")
    output_flags(p, "print the validation result as JSON")
    p.set_defaults(handler=cmd_validate)

    # convert -----------------------------------------------------------------------------------
    p = command(
        "convert",
        "Convert between formats. Labels: --judgments or --qrels to judgments or qrels. Runs:\n"
        "--run (JSONL or TREC) to run (JSONL) or trec-run. Writes to --out (atomically) or stdout.",
        "examples:\n"
        "  retrieval-eval convert --qrels qrels.test.tsv --to judgments --out judgments.jsonl\n"
        "  retrieval-eval convert --judgments judgments.jsonl --to qrels\n"
        "  retrieval-eval convert --run run.jsonl --to trec-run --out run.trec",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", metavar="PATH", help="a run: JSONL, TREC, parquet or CSV")
    inputs.add_labels(p, group=source)
    p.add_argument("--to", required=True, choices=("judgments", "qrels", "run", "trec-run", "parquet"),
                   help="output format (parquet needs --out)")
    p.add_argument("--system", metavar="NAME",
                   help="with --run: keep only this system (and name the TREC run after it)")
    p.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    p.set_defaults(handler=cmd_convert)

    # calibrate ---------------------------------------------------------------------------------
    p = command(
        "calibrate",
        "Out-of-distribution robustness from absolute relevance scores. Retrieval never abstains,\n"
        "so rank order says nothing about an off-topic query; the top-1 score does. A cutoff is\n"
        "set at a quantile of the positives' top-1 scores (or given), and the negatives\n"
        "(expect_none queries) are scored against it.\n\n"
        "exit: 0 computed, 2 usage error or malformed input",
        "example:\n"
        "  retrieval-eval calibrate --run scored.jsonl --judgments j.jsonl --queries queries.jsonl",
    )
    inputs.add_runs(p)
    inputs.add_labels(p)
    p.add_argument("--queries", metavar="FILE", required=True,
                   help="queries JSONL; expect_none: true marks the negatives")
    p.add_argument("--quantile", metavar="Q", type=_finite_float("--quantile", 0.0, 1.0), default=0.10,
                   help="quantile of positive top-1 scores used as the cutoff (default 0.10)")
    p.add_argument("--cutoff", metavar="X", type=_finite_float("--cutoff"),
                   help="a fixed score cutoff (the one production uses)")
    p.add_argument("--threshold", metavar="T", type=_positive_int("--threshold"), default=1,
                   help="lowest grade that makes a query a positive (default 1)")
    p.add_argument("--system", metavar="NAME", help="only this system of a multi-system run")
    _trust.calibrate_flags(p)  # --alpha (split-conformal cutoff), --by-stratum (Mondrian)
    output_flags(p, "print the calibration table as JSON")
    inputs.add_format(p)
    p.set_defaults(handler=cmd_calibrate)

    # compare -----------------------------------------------------------------------------------
    p = command(
        "compare",
        "Compare systems (the systems of one run file, or several run files) on the same\n"
        "judgments, with paired significance tests and a multiple-comparison correction.\n\n"
        "exit: 0 computed, 2 usage error or malformed input",
        "example:\n"
        "  retrieval-eval compare --judgments j.jsonl --run bm25.jsonl --run hybrid.jsonl --baseline bm25",
    )
    inputs.add_labels(p)
    inputs.add_runs(p)
    p.add_argument("--baseline", metavar="SYSTEM", help="the system the others are compared with")
    inputs.add_cutoffs(p, "cutoff (default 10); one per comparison")
    p.add_argument("--threshold", metavar="T", type=_positive_int("--threshold"), default=1,
                   help="lowest grade that counts as relevant (default 1)")
    p.add_argument("--queries", metavar="FILE",
                   help="queries JSONL: expect_none queries are left out (and, with scores, compared on OOD)")
    p.add_argument("--metric", metavar="NAME", action="append",
                   help="a metric to compare (precision, recall, ndcg, ndcg_linear, mrr, map, hit_rate), repeatable")
    p.add_argument("--gain", choices=("exponential", "linear"), default="exponential",
                   help="gain of a bare 'ndcg': exponential 2^g-1 (default) or linear g; "
                        "'ndcg_linear' is always linear")
    p.add_argument("--test", choices=("randomization", "t", "wilcoxon", "bootstrap"), default="randomization",
                   help="paired significance test (default randomization)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "fdr_bh", "none"), default="holm",
                   help="multiple-comparison correction across all rows (default holm)")
    output_flags(p, "print the comparison table as JSON")
    inputs.add_format(p)
    p.set_defaults(handler=cmd_compare)

    # demo --------------------------------------------------------------------------------------
    p = command(
        "demo",
        "Run the bundled demo data end to end: score, drift, calibration, and write report.json,\n"
        "plots and an index.html listing them into --out.",
        "example:\n  retrieval-eval demo --out demo-output",
    )
    p.add_argument("--out", metavar="DIR", default="retrieval-eval-demo",
                   help="folder to write into (default ./retrieval-eval-demo)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the output: auto, always or never")
    p.set_defaults(handler=cmd_demo, json=False)
    _trust.add_commands(command, output_flags)

    from .trec_eval import add_command as add_trec_eval

    add_trec_eval(command)
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("retrieval-eval")
    except Exception:  # not installed (a source checkout on sys.path)
        return "0.1.0"


_VERSION_FLAGS = ("-v", "--version")


def _help_argv(argv: Sequence[str]) -> list[str]:
    """``help`` and ``help VERB`` as the ``--help`` and ``VERB --help`` they mean."""
    argv = list(argv)
    if argv[:1] == ["help"]:
        return [argv[1], "--help"] if len(argv) > 1 else ["--help"]
    return argv


def _wants_version(argv: Sequence[str]) -> bool:
    """``-v``/``--version`` anywhere before ``--``, before or after the verb: the version wins
    over everything else on the line (a missing argument included), as in git or pip."""
    for token in argv:
        if token == "--":
            return False
        if token in _VERSION_FLAGS:
            return True
    return False


def _check_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Refuse an option the command does not have, naming it, before argparse sees the line.

    argparse reports a missing required argument first and an unknown option only after, so
    ``score --judgmnets j.jsonl`` would complain about a missing --judgments, not the typo.
    """
    command = next((t for t in argv if not t.startswith("-")), None)
    sub = getattr(parser, "commands", {}).get(command)
    if sub is None:
        return
    known = {s for action in sub._actions for s in action.option_strings}
    for token in argv[argv.index(command) + 1:]:
        if token == "--":
            return
        if token == "-" or not token.startswith("-") or re.fullmatch(r"-[0-9.].*", token):
            continue  # a value ("-" is stdin), or a negative number
        name = token.split("=", 1)[0]
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
            hint = f"; did you mean '{close[0]}'?" if close else f"; see '{PROG} {command} --help'"
            raise CLIError(f"unknown option '{name}' for '{command}'{hint}")


def _check_command(argv: Sequence[str]) -> None:
    """Refuse a missing or unknown command with a suggestion, before argparse sees it.

    argparse would list every choice; a typo deserves the nearest command instead.
    """
    for token in argv:
        if token in ("-h", "--help", *_VERSION_FLAGS):
            return
        if token.startswith("-"):
            raise CLIError(f"unknown option '{token}' before the command; see '{PROG} --help'")
        if token in COMMANDS:
            return
        close = difflib.get_close_matches(token, list(COMMANDS), n=1, cutoff=0.5)
        if close:
            raise CLIError(f"unknown command '{token}'; did you mean '{close[0]}'?")
        raise CLIError(f"unknown command '{token}'; choose one of {', '.join(COMMANDS)}")
    raise CLIError(f"no command given; choose one of {', '.join(COMMANDS)} (see '{PROG} --help')")


#: Options whose value is a number: ``--cutoff -1e308`` is a value, not an unknown option
#: (argparse takes a token starting with "-" for an option unless it looks like ``-1`` or ``-.5``).
_NUMBER_OPTIONS = ("--cutoff", "--quantile", "--threshold", "-k")
_NEGATIVE_NUMBER = re.compile(r"-(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|-(?:inf|nan|infinity)", re.I)


def _join_negative_numbers(argv: list[str]) -> list[str]:
    """``--cutoff -1e308`` as ``--cutoff=-1e308``, so argparse reads the number as the value."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in _NUMBER_OPTIONS and i + 1 < len(argv) and _NEGATIVE_NUMBER.fullmatch(argv[i + 1]):
            out.append(f"{token}={argv[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


#: The options that name a file (or, for demo's --out, a folder), by argparse dest.
_FILE_OPTIONS = {"judgments": "--judgments", "qrels": "--qrels", "run": "--run", "corpus": "--corpus",
                 "queries": "--queries", "baseline": "--baseline", "out": "--out"}
#: The options a command reads (``-`` is stdin), as opposed to ``--out``, which it writes.
_INPUT_OPTIONS = ("judgments", "qrels", "run", "corpus", "queries", "baseline")


def _named_paths(args: argparse.Namespace, dests) -> list[tuple[str, str]]:
    """(option, value) for every file option of ``dests`` that was given, repeats included."""
    found = []
    for dest in dests:
        value = getattr(args, dest, None)
        for v in value if isinstance(value, list) else [value]:
            if v is not None:
                found.append((_FILE_OPTIONS[dest], v))
    return found


def _check_file_options(args: argparse.Namespace) -> None:
    """Refuse an empty file name and stdin (``-``) given for two inputs, naming the options.

    An empty name reaches the OS as "no such file" or, worse, as the current folder; stdin can
    be read once, so the second input would silently be empty.
    """
    for flag, value in _named_paths(args, _FILE_OPTIONS):
        if value == "":
            what = ("a system name" if args.command == "compare" and flag == "--baseline"
                    else "a folder name" if args.command == "demo" else "a file name")
            raise CLIError(f"{flag} is empty; give {what}")
    if args.command == "compare":  # its --baseline names a system, not a file
        stdin = [f for f, v in _named_paths(args, [d for d in _INPUT_OPTIONS if d != "baseline"]) if v == "-"]
    else:
        stdin = [f for f, v in _named_paths(args, _INPUT_OPTIONS) if v == "-"]
    if len(stdin) > 1:
        raise CLIError(f"'-' (stdin) given for {' and '.join(stdin)}; stdin can be read only once")


def _check_out_not_input(args: argparse.Namespace, keep: tuple[str, ...] = ()) -> None:
    """Refuse an ``--out`` that resolves to one of the command's inputs (links followed).

    ``score --out mine.jsonl --judgments mine.jsonl`` would replace the labels with a report.
    ``keep`` lists inputs a command may roll forward in place (score's ``--baseline``: writing
    this run's report where the last one was read is how a CI job keeps its baseline).
    """
    out = getattr(args, "out", None)
    if not out or out == "-":
        return
    target = os.path.realpath(out)
    for flag, value in _named_paths(args, [d for d in _INPUT_OPTIONS if d not in keep]):
        if value == "-":
            continue
        same = os.path.realpath(value) == target
        if not same:
            with contextlib.suppress(OSError):
                same = os.path.samefile(value, out)
        if same:
            raise CLIError(f"--out {out} is the {flag} input; writing it would destroy that input "
                           "(choose another output file)")


#: Report measurements without a cutoff (calibration figures, SPEC A6 / B2).
_CALIBRATION_METRICS = ("negative_satisfaction", "positive_retention", "auroc", "separation_margin",
                        "aupr_in", "aupr_out", "fpr@95tpr")


def _check_gate_metrics(gates: list[Any], ks: Sequence[int]) -> None:
    """Refuse a gate on a metric name no report can hold, with the closest names.

    Such a gate would only ever be INDETERMINATE: a typo (``recal@10``) must fail the command,
    not quietly stop gating. A real name at another cutoff (``recall@5`` with ``-k 10``) is
    kept: the gate says it was not computed.
    """
    from ..engine.metrics import METRIC_NAMES

    bases = (*METRIC_NAMES, "ndcg_linear")
    for gate in gates:
        name = gate.metric
        if name in _CALIBRATION_METRICS:
            continue
        base, at, cutoff = name.partition("@")
        if at and base in bases and re.fullmatch(r"[1-9][0-9]*", cutoff):
            continue
        known = [f"{b}@{k}" for b in bases for k in ks] + list(_CALIBRATION_METRICS)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise CLIError(f"--gate {gate.raw}: no metric is named '{name}'{hint} "
                       f"(metrics: {', '.join(b + '@K' for b in bases)}, {', '.join(_CALIBRATION_METRICS)})")


# -----------------------------------------------------------------------------------------------
# Reading and writing files
# -----------------------------------------------------------------------------------------------


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise CLIError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CLIError(f"{path}: is a directory, expected a file") from None
    except PermissionError:
        raise CLIError(f"{path}: permission denied") from None
    except OSError as err:
        raise CLIError(f"{path}: cannot read ({err.strerror or err})") from None


def read_text(path: str) -> str:
    """The text of ``path`` (``-`` is stdin), decoded as UTF-8.

    A leading UTF-8 byte-order mark is accepted and dropped: editors on Windows write one, it
    carries no meaning in UTF-8, and refusing it would make a file that looks right fail.
    Invalid UTF-8 is refused with the line it is on; guessing an encoding would silently change
    ids. Raises :class:`CLIError`.
    """
    return _decode(_read_bytes(path), path)


def _decode(data: bytes, path: str) -> str:
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise CLIError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[err.start]:02x}); save the file as UTF-8"
        ) from None


def _load_json(path: str) -> Any:
    """The JSON document in ``path`` by the readers' rule (:func:`retrieval_eval.formats.parse_json`:
    no NaN, no duplicate key, nesting at most ``MAX_JSON_DEPTH`` deep)."""
    return _formats().parse_json(read_text(path), label=path)


def atomic_write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`retrieval_eval.formats.atomic_write_text`:
    a temporary file in the same folder, then a rename), so a crash never leaves half a file.

    Raises :class:`CLIError` naming the path when the folder is missing or not writable.
    """
    try:
        _formats().atomic_write_text(path, text)
    except OSError as err:
        raise CLIError(f"{path}: cannot write ({err.strerror or err})") from None


def _formats():
    from .. import io

    return io


def _safewrite():
    from ..io import safewrite

    return safewrite


def _load_labels(args: argparse.Namespace):
    """(judgments, path) from --judgments/--qrels in any labels format (cli_inputs)."""
    source = inputs.load_labels(args)
    return source.frame, source.path


def _load_runs(args: argparse.Namespace, system: str | None = None):
    """Every --run in any run format, with the tied-scores warning (cli_inputs)."""
    return inputs.load_runs(args, system, warn=getattr(args, "warn", None))


#: A run file this big or bigger is scored in blocks of STREAM_CHUNK_ROWS rows (see
#: ``evaluate(chunk_rows=)``) when nothing needs it whole: 2 GiB is about 60M TREC lines, some
#: 6 GiB in memory read whole, where blocks of 2M rows keep the peak under 1 GiB.
STREAM_BYTES = 2 << 30
STREAM_CHUNK_ROWS = 2_000_000


def _stream_rows(args: argparse.Namespace) -> int | None:
    """The block size ``score`` reads the run in, or None to read it whole.

    ``--system`` (one system's rows) and ``--queries`` (calibration reads every top-1 score)
    need the run whole, so they keep the in-memory path.
    """
    whole = args.system is not None or args.queries is not None or len(args.run) != 1
    if args.chunk_rows is not None:
        if whole:
            raise CLIError("--chunk-rows cannot go with --system, --queries or several --run: "
                           "they need the runs whole")
        if _stream_kind(args.run[0]) is None:
            raise CLIError(f"--chunk-rows: {args.run[0]} is not a TREC run, a JSONL run or parquet, "
                           "the formats read a block at a time")
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
    None (by the one detection rule, :func:`retrieval_eval.detect.sniff`)."""
    from ..io.detect import sniff

    if path == "-" or not os.path.exists(path):
        return None
    kind = sniff(path).kind
    return kind if kind in ("trec-run", "run", "parquet") else None


def _load_corpus(path: str):
    return inputs.load_other(path, "corpus")


def _load_queries(path: str):
    return inputs.load_other(path, "queries")


#: The generic labels a library message uses when it does not know the file.
_GENERIC_LABELS = ("judgments", "run", "queries", "corpus", "qrels")


@contextlib.contextmanager
def _naming(path: str):
    """Name ``path`` in a library refusal that does not (a ``ValueError`` about the data, or a
    :class:`FormatError` labelled with a generic ``judgments``/``run``): every error line names
    the file it is about."""
    try:
        yield
    except FormatError as err:
        if err.label in _GENERIC_LABELS:
            raise FormatError(path, err.line, err.detail) from None
        raise
    except ValueError as err:
        if _from_a_library(err):
            raise
        raise CLIError(f"{path}: {err}") from None


def _check_negatives(judgments, labels_path: str, queries, queries_path: str, threshold: int) -> None:
    """Refuse an ``expect_none`` query of ``queries_path`` that has a relevant label in
    ``labels_path``, naming both files (the same rule for score, calibrate and compare)."""
    from ..analysis.calibration import check_negatives, negative_ids

    check_negatives(judgments, negative_ids(queries, None), threshold, label=labels_path,
                    negatives_label=queries_path)


def _load_baseline(path: str) -> dict[str, Any]:
    """A baseline report: a spec report, or the ``{"systems": {name: report}}`` file that
    ``score --out`` writes for a multi-system run (each entry checked as a report)."""
    data = _load_json(path)
    if isinstance(data, dict) and "metrics" not in data and isinstance(data.get("systems"), dict):
        for name, entry in data["systems"].items():
            check_report(entry, label=f"{path} (system {name})")
        return data
    return check_report(data, label=path)


def _jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars unwrapped, NaN and missing values as null."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return _jsonable(item())
        except (TypeError, ValueError):
            pass
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return _jsonable(tolist())
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    return str(value)


def _dumps(data: Any) -> str:
    return json.dumps(_jsonable(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _frame_records(frame) -> list[dict[str, Any]]:
    """A DataFrame (index included when it is named) as JSON-ready records."""
    if frame.index.name is not None or any(n is not None for n in frame.index.names):
        frame = frame.reset_index()
    return [_jsonable(r) for r in frame.to_dict(orient="records")]


# -----------------------------------------------------------------------------------------------
# Output
# -----------------------------------------------------------------------------------------------


class _Out:
    """Where a command writes: stdout, with colour when it is wanted."""

    def __init__(self, stream: TextIO, color: bool) -> None:
        self.stream = stream
        self.s = _term.Style(color)

    def __call__(self, text: str = "") -> None:
        # Ids, strata and paths in the text are shown with their control characters escaped.
        self.stream.write(_term.escape(text, newlines=True, colors=self.s.enabled) + "\n")


def _num(value: Any, decimals: int = 4) -> str:
    return _term.fmt_number(value, decimals)


def _n(count: int, one: str, many: str | None = None) -> str:
    """``1 query``, ``2 queries``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


# -----------------------------------------------------------------------------------------------
# score
# -----------------------------------------------------------------------------------------------


def cmd_score(args: argparse.Namespace, out: _Out) -> int:
    gates = [parse_gate(g) for g in args.gate]
    ks = inputs.cutoffs(args.k)
    _check_gate_metrics(gates, ks)
    _check_out_not_input(args, keep=("baseline",))
    if (args.quantile is not None or args.cutoff is not None) and not args.queries:
        raise CLIError("--quantile and --cutoff need --queries (the negatives to calibrate on)")
    if args.quantile is not None and args.cutoff is not None:
        raise CLIError("give --quantile or --cutoff, not both")
    args.k = ",".join(map(str, ks))
    judgments, labels_path = _load_labels(args)
    chunk_rows = _stream_rows(args)
    run = _load_runs(args, args.system) if chunk_rows is None else args.run[0]
    corpus = _load_corpus(args.corpus) if args.corpus else None
    queries = _load_queries(args.queries) if args.queries else None
    if queries is not None:
        _check_negatives(judgments, labels_path, queries, args.queries, args.threshold)
    baseline = _load_baseline(args.baseline) if args.baseline else None

    from ..analysis.evaluation import evaluate

    drift_result = None
    if corpus is not None:
        from ..analysis.drift import drift

        drift_result = drift(judgments, corpus)
    calibration = None
    if queries is not None and bool(run["score"].notna().any()):
        from ..analysis.calibration import calibrate

        options: dict[str, Any] = {"threshold": args.threshold}
        if args.cutoff is not None:
            options["cutoff"] = args.cutoff
        if args.quantile is not None:
            options["quantile"] = args.quantile
        calibration = calibrate(judgments, run, queries=queries, **options)
    # The same steps as report.build_report, once for every system of the run.
    ev = evaluate(judgments, run, k=ks, threshold=args.threshold, gain=args.gain, queries=queries,
                  chunk_rows=chunk_rows)
    systems = list(ev.systems)
    if not systems:
        raise CLIError(f"{labels_path}: no judgments, so nothing can be scored")
    reports: dict[str, dict[str, Any]] = {}
    for system in systems:
        report = ev.report(system=system, corpus=corpus, drift_result=drift_result,
                           calibration=calibration, queries=queries)
        reports[system] = inputs.hint_cutoffs(
            apply_gates(report.to_dict(), gates, _baseline_for(baseline, system, args.baseline)), gates, ks)
    if len(reports) == 1:
        payload: dict[str, Any] = next(iter(reports.values()))
    else:
        # Several systems in one run: one spec report per system, keyed by system.
        payload = {"systems": reports}
    text = _dumps(payload)
    if args.out:
        atomic_write_text(args.out, text)
    if args.per_query:
        inputs.write_per_query(out, ev, args.format)
    elif args.format:
        inputs.write_table(out, ev.summary, args.format, ev.to_markdown(), ev.to_latex())
    elif args.json:
        out.stream.write(text)
    else:
        _render_score(out, reports, args, labels_path, calibration,
                      no_scores=queries is not None and calibration is None)
    worst = "PASS"
    for data in reports.values():
        worst = worse_status(worst, data["verdict"]["status"])
    return EXIT_OK if worst == "PASS" else EXIT_FINDING


def _baseline_for(baseline: dict[str, Any] | None, system: str, path: str | None) -> dict[str, Any] | None:
    """The baseline report for ``system``: the file itself, or its entry when the baseline is a
    multi-system file (``{"systems": {name: report}}``, what ``score --out`` writes then)."""
    if baseline is None:
        return None
    systems = baseline.get("systems")
    if isinstance(systems, dict) and "metrics" not in baseline:
        return systems.get(system)
    return baseline


def _render_score(out: _Out, reports: dict[str, dict[str, Any]], args: argparse.Namespace,
                  labels_path: str, calibration: Any, no_scores: bool = False) -> None:
    s = out.s
    first = next(iter(reports.values()))
    j = first.get("judgments", {})
    out(f"{s('score', 'bold')}  {labels_path}  {s('against', 'dim')}  {', '.join(args.run)}")
    counts = [_n(j.get("queries", 0), "query", "queries"), f"{j.get('queries_scored', 0)} scored",
              _n(j.get("labels", 0), "label")]
    if "human_labels" in j or "synthetic_labels" in j:
        counts.append(f"{j.get('human_labels', 0)} human / {j.get('synthetic_labels', 0)} synthetic")
    settings = [f"k={args.k}", f"threshold={args.threshold}"]
    if args.gain != "exponential":
        settings.append(f"gain={args.gain}")
    if args.system:
        settings.append(f"system={args.system}")
    elif len(reports) > 1:
        settings.append(f"{len(reports)} systems")
    out(f"  {', '.join(settings)}  {s('|', 'dim')}  {', '.join(counts)}")
    drift = j.get("drift")
    if drift:
        out(f"  drift: {drift.get('valid', 0)} VALID, {drift.get('re_anchorable', 0)} RE_ANCHORABLE, "
            f"{drift.get('merged', 0)} MERGED, {drift.get('split', 0)} SPLIT, "
            f"{drift.get('orphaned', 0)} ORPHANED ({drift.get('invalid_ratio', 0.0):.1%} not VALID)")
    out()

    if len(reports) > 1:
        _render_system_metrics(out, reports)
    elif first.get("metrics"):
        _render_metrics(out, first["metrics"])
    else:
        out(f"  {s('no metric was computed', 'yellow')}")
    out()

    for system, data in reports.items():
        strata = data.get("per_stratum")
        if strata:
            title = "per stratum" if len(reports) == 1 else f"per stratum, {system}"
            _render_strata(out, strata, title, order=strata_order(data))
            out()

    if calibration is not None:
        _render_calibration(out, calibration)
        out()
    elif no_scores:
        out(f"{s('calibration', 'bold')}  {s('skipped: the run has no scores', 'yellow')} "
            "(calibration needs each ranking's relevance scores)")
        out()

    for system, data in reports.items():
        verdict = data.get("verdict", {})
        status = verdict.get("status", "INDETERMINATE")
        label = "verdict" if len(reports) == 1 else f"verdict, {system}"
        out(f"{s(label, 'bold')}  {s.status(status)}")
        for reason in verdict.get("reasons") or []:
            out(f"  - {reason}")
        gates = verdict.get("gates") or []
        if gates:
            out()
            rows = []
            for g in gates:
                rows.append([
                    s.status(g["status"]),
                    g["expression"],
                    _num(g.get("observed")),
                    _num(g.get("baseline")) if "baseline" in g else "",
                ])
            headers = ["gate", "expression", "observed", "baseline"]
            if not any(r[3] for r in rows):
                headers, rows = headers[:3], [r[:3] for r in rows]
            out(_term.table(headers, rows, align=["l", "l"] + ["r"] * (len(headers) - 2), style=s))
        if len(reports) > 1:
            out()


def _measurement_rows(metrics: dict[str, Any]) -> tuple[list[str], list[list[str]], dict[str, list[str]]]:
    any_ci = any(isinstance(m, dict) and m.get("ci") for m in metrics.values())
    any_n = any(isinstance(m, dict) and m.get("n") not in (None, 1) for m in metrics.values())
    headers = ["metric", "value"] + (["95% CI"] if any_ci else []) + (["n"] if any_n else [])
    rows: list[list[str]] = []
    notes: dict[str, list[str]] = {}  # reason -> the metrics it applies to
    for name, m in metrics.items():
        row = [name, _num(m.get("value"))]
        if any_ci:
            ci = m.get("ci")
            row.append(f"[{_num(ci[0])}, {_num(ci[1])}]" if ci else "")
        if any_n:
            row.append(str(m.get("n", "")))
        if m.get("indeterminate"):
            row[0] = name + " !"
            notes.setdefault(str(m["indeterminate"]), []).append(name)
        rows.append(row)
    return headers, rows, notes


def _render_metrics(out: _Out, metrics: dict[str, Any]) -> None:
    headers, rows, notes = _measurement_rows(metrics)
    out(_term.table(headers, rows, style=out.s))
    for why, names in notes.items():
        out(f"  ! {', '.join(names)}: a gate on {'it' if len(names) == 1 else 'these'} cannot pass: {why}")


def _render_system_metrics(out: _Out, reports: dict[str, dict[str, Any]]) -> None:
    names = list(reports)
    notes: dict[str, str] = {}
    metric_names: list[str] = []
    for data in reports.values():
        for name in data.get("metrics") or {}:
            if name not in metric_names:
                metric_names.append(name)
    rows = []
    for metric in metric_names:
        row = [metric]
        for system in names:
            m = (reports[system].get("metrics") or {}).get(metric)
            if not isinstance(m, dict):
                row.append("- ")
            elif m.get("indeterminate"):
                row.append(_num(m.get("value")) + "!")
                notes.setdefault(system, str(m["indeterminate"]))
            else:
                row.append(_num(m.get("value")) + " ")
        rows.append(row)
    out(_term.table(["metric"] + names, rows, style=out.s))
    for system, why in notes.items():
        out(f"  ! {system}: a gate on these cannot pass: {why}")


def _render_strata(out: _Out, strata: dict[str, Any], title: str = "per stratum",
                   order=()) -> None:
    """The per-stratum table; ``*`` marks, per metric, the one stratum ``worst_of`` names (ties
    by first appearance, ``order``), as the worst-stratum gate does; none when all are equal."""
    s = out.s
    metric_names: list[str] = []
    for st in strata.values():
        for name in st.get("metrics") or {}:
            if name not in metric_names:
                metric_names.append(name)
    worst: dict[str, str] = {}
    for name in metric_names:
        values = {
            stratum: st["metrics"][name]["value"]
            for stratum, st in strata.items()
            if st.get("n", 0) > 0 and name in (st.get("metrics") or {})
        }
        if values and min(values.values()) < max(values.values()):  # a tie everywhere marks nothing
            worst[name] = worst_of(values, order)
    rows = []
    for stratum, st in strata.items():
        row = [stratum, str(st.get("n", 0))]
        for name in metric_names:
            m = (st.get("metrics") or {}).get(name)
            if m is None:
                row.append("-")
                continue
            cell = _num(m.get("value"))
            if worst.get(name) == stratum:
                cell = s(cell + "*", "red")
            else:
                cell += " "
            row.append(cell)
        rows.append(row)
    out(f"{s(title, 'bold')}  (n = queries scored; * = worst stratum for the metric)")
    out(_term.table(["stratum", "n"] + metric_names, rows, style=s))


def _render_calibration(out: _Out, calibration: Any) -> None:
    s = out.s
    summary = getattr(calibration, "summary", None)
    out(f"{s('calibration', 'bold')}  (top-1 scores of positives vs expect_none negatives)")
    if summary is not None and len(summary):
        frame = summary.reset_index()
        columns = [c for c in (
            "system", "cutoff", "n_positive", "n_negative", "negative_satisfaction",
            "positive_retention", "separation_margin", "auroc", "fpr@95tpr", "rank_based",
        ) if c in frame.columns]
        rows = []
        for rec in frame[columns].to_dict(orient="records"):
            rows.append([_cell(rec[c]) for c in columns])
        out(_term.table(columns, rows, style=s))
    for warning in getattr(calibration, "warnings", None) or []:
        out(f"  ! {s(warning, 'yellow')}")


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    return _num(_jsonable(value))


# -----------------------------------------------------------------------------------------------
# drift
# -----------------------------------------------------------------------------------------------


def cmd_drift(args: argparse.Namespace, out: _Out) -> int:
    if args.backup and not args.fix:
        raise CLIError("--backup applies to --fix only")
    if args.fix and args.judgments == "-":
        raise CLIError("--fix rewrites the judgments file; it cannot rewrite stdin")
    from ..analysis.drift import drift

    if args.fix and getattr(args, "qrels", None):
        raise CLIError(f"--fix rewrites judgments JSONL, and {args.qrels} is qrels; "
                       "convert it first (retrieval-eval convert --to judgments)")
    if not args.fix:
        source = inputs.load_labels(args)
        args.judgments = source.path
        result = drift(source.frame, _load_corpus(args.corpus))
        fixed, written = None, False
    else:
        _check_fixable(args.judgments)
        result, fixed, written = _drift_fix(args)
    summary = result.summary
    decayed = summary.total - summary.valid
    if args.format and not args.json:
        inputs.write_table(out, inputs.drift_frame(result), args.format, result.to_markdown(), result.to_latex())
    elif args.json:
        payload = result.to_dict()
        if args.fix:
            payload["fix"] = {
                "reanchored": fixed.reanchored if fixed else 0,
                "needs_review": len(fixed.needs_review) if fixed else 0,
                "written": written,
            }
        out.stream.write(_dumps(payload))
    else:
        _render_drift(out, args, result, fixed, written)
    if args.fix:
        # The recoverable labels were re-anchored; what is left is what a human must review.
        # The same status with and without --json (docs/cli.md).
        remaining = len(fixed.needs_review) if fixed else 0
        return EXIT_FINDING if remaining else EXIT_OK
    return EXIT_FINDING if decayed else EXIT_OK


def _check_fixable(path: str) -> None:
    """``--fix`` rewrites judgments JSONL in place; any other labels format is refused, by the
    library's one detection rule (:func:`retrieval_eval.detect.sniff`)."""
    from ..io.detect import sniff

    if path == "-" or not os.path.isfile(path):
        return  # the locked read below names a missing file
    kind = sniff(path).kind
    if kind not in ("judgments", None):
        raise CLIError(f"--fix rewrites judgments JSONL, and {path} is not ({kind}); "
                       "convert it first (retrieval-eval convert --to judgments)")


def _drift_fix(args: argparse.Namespace):
    """Read, fix and rewrite the judgments file under its lock (:mod:`retrieval_eval.safewrite`).

    The file is locked for the whole read-fix-write, so a second ``--fix`` is refused instead
    of overwriting labels it never read, and it is rewritten only when a label changed (a
    re-anchor, or the live fingerprint stamped on a VALID label): otherwise it keeps its bytes
    and its mtime. Only the changed lines are rewritten; comments, blank lines and the other
    labels stay byte for byte (:func:`retrieval_eval.formats.rewrite_judgments`).
    """
    from ..analysis.drift import drift, fix
    from ..io.safewrite import LockedFile

    fm = _formats()
    path = args.judgments
    try:
        with LockedFile(path, read=True) as held:
            if held.data is None:
                raise CLIError(f"{path}: no such file")
            data = held.data
            bom = _BOM if data.startswith(_BOM) else b""
            text = _decode(data, path)
            judgments = fm.parse_judgments(text, label=path)
            result = drift(judgments, _load_corpus(args.corpus))
            fixed = fix(judgments, result)
            new_text = fm.rewrite_judgments(text, judgments, fixed.judgments)
            written = new_text != text
            if written:
                held.replace(bom + new_text.encode("utf-8"), backup=args.backup)
                args.backup_path = held.backup_path  # beside a link's target, not the link
    except OSError as err:
        if isinstance(err, _safewrite().WriteRefused):
            raise CLIError(f"{err}; the file was left as it was") from None
        raise CLIError(
            f"{path}: cannot rewrite ({err.strerror or err}); the file was left as it was"
        ) from None
    return result, fixed, written


def _render_drift(out: _Out, args: argparse.Namespace, result: Any, fixed: Any, written: bool) -> None:
    s = out.s
    summary = result.summary
    out(f"{s('drift', 'bold')}  {args.judgments}  {s('against', 'dim')}  {args.corpus}")
    out(f"  labels' corpus fingerprint: {result.judgments_fingerprint or '(none, or mixed)'}; "
        f"live corpus: {result.corpus_fingerprint or '(none)'}")
    out()
    rows = []
    for status in ("VALID", "RE_ANCHORABLE", "MERGED", "SPLIT", "ORPHANED"):
        count = summary[status.lower()]
        rows.append([s.status(status) if count else status, str(count)])
    out(_term.table(["status", "labels"], rows, style=s))
    out(f"  {_n(summary.total, 'label')}, {summary.invalid_ratio:.1%} not VALID")

    findings = result.findings
    bad = findings[findings["status"] != "VALID"]
    if len(bad):
        out()
        rows = []
        shown = bad.head(50)
        for rec in shown.to_dict(orient="records"):
            split = rec.get("split_into")
            target = rec.get("reanchor_to")
            if split is not None and not _is_missing(split):
                detail = "spans " + ", ".join(map(str, split))
            elif not _is_missing(target):
                detail = f"-> {target}"
            else:
                detail = ""
            cid = rec.get("chunk_id")
            rows.append([
                str(rec["query_id"]), str(rec["doc_uri"]),
                "" if _is_missing(cid) else str(cid), s.status(rec["status"]), detail,
            ])
        out(_term.table(["query_id", "doc_uri", "chunk_id", "status", "detail"], rows,
                        align=["l"] * 5, style=s))
        if len(bad) > len(shown):
            out(f"  ... and {len(bad) - len(shown)} more not VALID (use --json for all)")
    out()
    decayed = summary.total - summary.valid
    if fixed is not None:
        review = len(fixed.needs_review)
        if written:
            bak = getattr(args, "backup_path", f"{args.judgments}.bak")
            wrote = f"rewrote {args.judgments}" + (f" (old file kept as {bak})" if args.backup else "")
        else:
            wrote = f"{args.judgments} left as it was"
        out(f"{s('fix', 'bold')}  re-anchored {_n(fixed.reanchored, 'label')}; {wrote}")
        if review:
            need = f"{_n(review, 'label')} {'needs' if review == 1 else 'need'} review"
            out(f"  {s(need, 'yellow')} (SPLIT or ORPHANED): "
                "left as they are, since guessing would invent ground truth")
        else:
            out(f"  {s('nothing left to review', 'green')}")
    elif args.fix:
        out(f"{s('fix', 'bold')}  nothing to fix; {args.judgments} left as it is")
    elif decayed:
        recoverable = summary.re_anchorable + summary.merged
        hint = f"; {recoverable} can be re-anchored with --fix" if recoverable else ""
        out(f"{s.status('FAIL')}  {_n(decayed, 'label')} decayed{hint}")
    else:
        out(f"{s.status('PASS')}  every label is VALID")


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        import pandas as pd

        if value is pd.NA:
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(value, float) and math.isnan(value)


# -----------------------------------------------------------------------------------------------
# validate
# -----------------------------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace, out: _Out) -> int:
    from ..analysis.validation import validate

    source = inputs.load_labels(args)
    judgments, path = source.frame, source.path
    if args.queries:
        judgments = inputs.with_query_text(judgments, _load_queries(args.queries))
    result = validate(judgments)
    if not source.carries_query_text and not args.queries:
        # qrels cannot carry query text: a warning per query would be about the format
        result = inputs.without_query_text_warnings(result)
    if args.json:
        out.stream.write(_dumps(result.to_dict()))
    else:
        _render_validation(out, path, result)
    return EXIT_OK if result.ok else EXIT_FINDING


def _render_validation(out: _Out, path: str, result: Any) -> None:
    s = out.s
    d = _jsonable(result.to_dict())
    out(f"{s('validate', 'bold')}  {path}")
    out(f"  {_n(d.get('queries', 0), 'query', 'queries')}, {_n(d.get('labels', 0), 'label')} "
        f"({d.get('humanLabels', 0)} human, {d.get('syntheticLabels', 0)} synthetic), "
        f"fingerprint {d.get('fingerprint') or '(none)'}")
    strata = d.get("strata") or {}
    if strata:
        out("  strata: " + ", ".join(f"{name} {count}" for name, count in strata.items()))
    issues = d.get("issues") or []
    if issues:
        out()
        rows = [[s.status(sev), code, message] for sev, code, message in inputs.group_issues(issues)]
        out(_term.table(["severity", "code", "message"], rows, align=["l", "l", "l"], style=s))
    out()
    errors = sum(1 for i in issues if i.get("severity") == "error")
    warnings = len(issues) - errors
    if result.ok:
        tail = f" ({_n(warnings, 'warning')})" if warnings else ""
        out(f"{s.status('PASS')}  no errors{tail}")
    else:
        out(f"{s.status('FAIL')}  {_n(errors, 'error')}, {_n(warnings, 'warning')}: "
            "metrics computed from this set cannot be trusted")


# -----------------------------------------------------------------------------------------------
# convert
# -----------------------------------------------------------------------------------------------


def cmd_convert(args: argparse.Namespace, out: _Out) -> int:
    fm = _formats()
    _check_out_not_input(args)
    if args.run:
        if args.to not in ("run", "trec-run", "parquet"):
            raise CLIError(f"--run converts to run or trec-run, or to parquet with --out, not {args.to}")
        if args.as_chunk_ids:
            raise CLIError("--as-chunk-ids applies to --qrels only")
        run_path = args.run
        args.run = [run_path]
        run = _load_runs(args, args.system)
        if args.to == "parquet":
            return _write_parquet(run, args)
        if args.to == "trec-run":
            name = args.system
            with _naming(run_path):
                text = fm.to_trec_run(run, run_name=name) if name else fm.to_trec_run(run)
        else:
            text = fm.write_run(run)
    else:
        if args.to not in ("judgments", "qrels", "parquet"):
            raise CLIError(f"{'--qrels' if args.qrels else '--judgments'} converts to judgments, qrels or parquet, not {args.to}")
        if args.system:
            raise CLIError("--system applies to --run only")
        judgments, source = _load_labels(args)
        if args.to == "parquet":
            return _write_parquet(judgments, args)
        with _naming(source):
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


def cmd_calibrate(args: argparse.Namespace, out: _Out) -> int:
    from ..analysis.calibration import calibrate

    run = _load_runs(args, args.system)
    judgments, _ = _load_labels(args)
    queries = _load_queries(args.queries)
    _check_negatives(judgments, args.judgments, queries, args.queries, args.threshold)
    if len(run) == 0:
        raise CLIError(f"{', '.join(args.run)}: the run is empty: nothing to calibrate")
    options: dict[str, Any] = {"threshold": args.threshold, "quantile": args.quantile}
    if args.cutoff is not None:
        options["cutoff"] = args.cutoff
    options.update(_trust.calibrate_options(args))
    result = calibrate(judgments, run, queries=queries, **options)
    if args.format and not args.json:
        inputs.write_table(out, result.summary, args.format, result.to_markdown(), result.to_latex())
    elif args.json:
        to_dict = getattr(result, "to_dict", None)
        payload = to_dict() if callable(to_dict) else {
            "summary": _frame_records(result.summary),
            "warnings": list(getattr(result, "warnings", []) or []),
        }
        out.stream.write(_dumps(payload))
    else:
        out(f"{out.s('calibrate', 'bold')}  {', '.join(args.run)}  {out.s('against', 'dim')}  {args.queries}")
        out()
        _render_calibration(out, result)
        _trust.render_guarantee(out, result)
    return EXIT_OK


# -----------------------------------------------------------------------------------------------
# compare
# -----------------------------------------------------------------------------------------------


def cmd_compare(args: argparse.Namespace, out: _Out) -> int:
    from ..analysis.compare import compare

    ks = inputs.cutoffs(args.k)
    if len(ks) > 1:
        raise CLIError(f"compare tests one cutoff at a time; give one -k (got {','.join(map(str, ks))})")
    args.k = ks[0]
    judgments, _ = _load_labels(args)
    run = _load_runs(args)
    options: dict[str, Any] = {}
    if args.metric:
        options["metrics"] = args.metric
    if args.queries:
        options["queries"] = _load_queries(args.queries)
        _check_negatives(judgments, args.judgments, options["queries"], args.queries, args.threshold)
    if run["system"].nunique() < 2:
        raise CLIError(f"{', '.join(args.run)}: comparing needs at least two systems; "
                       f"the {'run has' if len(args.run) == 1 else 'runs have'} {run['system'].nunique()}")
    if not (judgments["relevance"].to_numpy() >= args.threshold).any():
        raise CLIError(f"{args.judgments}: no label has relevance >= {args.threshold}: nothing to compare")
    if args.baseline is not None:
        systems = list(dict.fromkeys(run["system"].tolist()))
        if args.baseline not in systems:
            raise CLIError(f"--baseline: no system '{args.baseline}' in the runs (they have {', '.join(systems)})")
    result = compare(judgments, run, baseline=args.baseline, k=args.k, threshold=args.threshold,
                     test=args.test, correction=args.correction, gain=args.gain, **options)
    if args.format and not args.json:
        inputs.write_table(out, result.table, args.format, result.to_markdown(), result.to_latex())
    elif args.json:
        to_dict = getattr(result, "to_dict", None)
        out.stream.write(_dumps(to_dict() if callable(to_dict) else {"table": _frame_records(result.table)}))
    else:
        out(f"{out.s('compare', 'bold')}  {', '.join(args.run)}  "
            f"(k={args.k}, test={args.test}, correction={args.correction})")
        out()
        out(_markdown_to_text(result.to_markdown(), out.s))
        for warning in result.warnings:
            out(f"  ! {warning}")
    return EXIT_OK


def _markdown_to_text(markdown: str, style: _term.Style) -> str:
    """Render the pipe tables of a Markdown text as aligned terminal tables; other lines as is.

    The comparison formats its own numbers (one place decides their precision); this only
    lines them up, honouring each column's ``---:`` alignment.
    """
    lines = markdown.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and set(lines[i + 1].replace("|", "").strip()) <= set("-: "):
            def cells(line: str) -> list[str]:  # split on unescaped pipes, then undo the Markdown escaping
                return [_md_text(c.strip()) for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]

            headers = cells(lines[i])
            spec = cells(lines[i + 1])
            align = ["r" if c.endswith(":") and not c.startswith(":") else "l" for c in spec]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                row = cells(lines[i])
                rows.append((row + [""] * len(headers))[: len(headers)])
                i += 1
            out.append(_term.table(headers, rows, align=align, style=style))
        else:
            out.append(_md_text(lines[i]))
            i += 1
    return "\n".join(out)


def _md_text(markdown: str) -> str:
    """Text of a Markdown cell or line: backslash escapes and HTML entities undone (the terminal
    shows text; its control characters are escaped for it by ``_term``)."""
    import html

    return html.unescape(re.sub(r"\\(.)", r"\1", markdown))


# -----------------------------------------------------------------------------------------------
# demo
# -----------------------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace, out: _Out) -> int:
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

    headline = pd.read_csv(written["headline.csv"], index_col="system", keep_default_na=False,
                           na_values=[""], dtype={"system": "string"})
    columns = ["ndcg@10", "recall@10", "auroc", "negative_satisfaction"]
    rows = [[str(system)] + [_num(row[c]) for c in columns] + [str(row["calibration"]),
                                                                str(row["gates"])]
            for system, row in headline.iterrows()]
    out(f"{out.s('demo', 'bold')}  the bundled demo at k=10, gates: {', '.join(DEMO_GATES)}")
    out(_term.table(["system"] + columns + ["calibration", "gates"], rows,
                    align=["l"] + ["r"] * len(columns) + ["l", "l"], style=out.s))
    out(f"page   {written['index.html']}")
    out(f"wrote  {_n(len(written), 'file')} to {folder}")
    return EXIT_OK


# -----------------------------------------------------------------------------------------------
# main
# -----------------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _from_a_library(err: BaseException) -> bool:
    """True for a ValueError raised by pandas, numpy or pyarrow themselves (``ArrowInvalid``...):
    that is this tool mishandling data, a bug to report, not input to blame the user for."""
    module = type(err).__module__ or ""
    return module.split(".")[0] in ("pyarrow", "pandas", "numpy")


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it).

    Every expected failure (usage errors, unreadable or malformed files, malformed gates) is
    reported as one ``retrieval-eval: error: ...`` line on stderr with exit code 2.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr

    def fail(message: str, code: int = EXIT_USAGE) -> int:
        stderr.write(f"{PROG}: error: {_term.escape(_one_line(message))}\n")
        stderr.flush()
        return code

    internal: BaseException | None = None
    try:
        if _wants_version(argv):
            stdout.write(f"{PROG} {_version()}\n")
            stdout.flush()
            return EXIT_OK
        argv = _help_argv(argv)
        _check_command(argv)
        parser = build_parser()
        _check_options(parser, argv)
        try:
            with contextlib.redirect_stdout(stdout):  # argparse prints help to sys.stdout
                args = parser.parse_args(_join_negative_numbers(argv))
        except SystemExit as done:  # --help and --version print, then exit 0
            code = done.code
            return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
        _check_file_options(args)
        color = _term.color_enabled(getattr(args, "color", "auto"), stdout)
        out = _Out(stdout, color)
        args.warn = lambda text: stderr.write(f"{PROG}: warning: {_one_line(text)}\n")
        inputs.check_output_flags(args)
        code = args.handler(args, out)
        stdout.flush()
        return code
    except (CLIError, FormatError, GateError, inputs.UsageError) as err:
        return fail(str(err))
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_FINDING
    except UnicodeDecodeError as err:
        return fail(f"not valid UTF-8: {err}")
    except OSError as err:
        if err.filename is not None:
            return fail(f"{err.filename}: {err.strerror or err}")
        return fail(str(err))
    except ValueError as err:
        if not _from_a_library(err):  # the library's own refusal of an input: a usage error
            return fail(str(err))
        internal = err
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # a bug in this tool, not in the input
        internal = err
    assert internal is not None
    if os.environ.get("RETRIEVAL_EVAL_DEBUG"):
        raise internal
    return fail(
        f"internal error: {type(internal).__name__}: {internal} "
        "(this is a bug; set RETRIEVAL_EVAL_DEBUG=1 for the traceback)",
        EXIT_INTERNAL,
    )


