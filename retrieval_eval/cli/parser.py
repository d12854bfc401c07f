"""The command line's grammar: its verbs, their options and help, and the checks that make a
mistyped line fail with one useful sentence (the nearest command or option) before argparse
reads it.

Every choice an option offers is the library's own constant (gains, paired tests, corrections,
metric names, gate measures), so a name the library adds is a name the command line takes.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from ..analysis.decisions.compare import CORRECTIONS, PAIRS, TESTS, ZERO_METHODS
from ..engine.metrics import GAINS, METRIC_NAMES
from . import failure, inputs, trust
from . import fuse as fusion
from .commands import CONVERT_TARGETS, cmd_calibrate, cmd_compare, cmd_convert, cmd_demo, cmd_drift, cmd_validate
from .common import PROG, CLIError, finite_float, positive_int
from .score import cmd_score
from .term import COLOR_MODES
from .trec_eval import add_command as add_trec_eval

#: What ``compare --metric`` takes: the engine's metric names, and trec_eval's linear-gain nDCG.
COMPARE_METRICS = (*METRIC_NAMES, "ndcg_linear")

__all__ = [
    "COMMANDS",
    "build_parser",
    "check_command",
    "check_options",
    "help_argv",
    "join_negative_numbers",
    "version",
    "wants_version",
]


class _Parser(argparse.ArgumentParser):
    """argparse, except that an error is one line and raises instead of exiting.

    argparse's own ``error`` prints the whole usage block and exits; a CI log then shows ten
    lines for a typo. Raising :class:`CLIError` lets :func:`main` print one line and return 2,
    which also keeps ``main`` callable from tests and notebooks without ``SystemExit``.
    """

    commands: Mapping[str, argparse.ArgumentParser]  # set by build_parser

    def error(self, message: str) -> NoReturn:
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
    "trec_eval": "trec_eval's command line and output, line for line (retrieval_eval.cli.trec_eval)",
}
COMMANDS.update(trust.COMMANDS)  # score-shift, label-agreement (.trust)
COMMANDS.update(failure.COMMANDS)  # diff, pool (.failure)
COMMANDS.update(fusion.COMMANDS)  # fuse (.fuse)


def _commands(sub: Any) -> Callable[..., argparse.ArgumentParser]:
    """The function that adds one verb to ``sub``, with the options every verb has."""

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
        p.add_argument(
            "-v", "--version", action="version", version=f"{PROG} {version()}", help="print the version and exit"
        )
        return p

    return command


def output_flags(p: argparse.ArgumentParser, json_help: str) -> None:
    """``--json`` (help ``json_help``) and ``--color``, the output options of most verbs."""
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument(
        "--color",
        choices=COLOR_MODES,
        default="auto",
        help="colour the output: auto (a terminal, unless NO_COLOR is set), always or never",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every command (exposed for documentation and tests).

    Returns
    -------
    argparse.ArgumentParser
        Its ``commands`` attribute maps each verb to its subparser.

    Examples
    --------
    >>> build_parser().parse_args(["validate", "--judgments", "j.jsonl"]).command
    'validate'
    """
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
    parser.add_argument("-v", "--version", action="version", version=f"{PROG} {version()}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", help=argparse.SUPPRESS, parser_class=_Parser)
    parser.commands = sub.choices  # name -> the command's parser (help, option checks)
    command = _commands(sub)
    for add in (_add_score, _add_drift, _add_validate, _add_convert, _add_calibrate, _add_compare, _add_demo):
        add(command)
    trust.add_commands(command, output_flags)
    failure.add_commands(command, output_flags)
    fusion.add_command(command)
    add_trec_eval(command)
    return parser


def _add_score(command) -> None:
    """Declare ``score`` (``command`` makes the subparser, :func:`build_parser`)."""
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
    p.add_argument(
        "--judged",
        metavar="PATH",
        action="append",
        default=[],
        help="LLM judge scores (JSONL, CSV or parquet; tidy or one column per metric), "
        "repeatable: each judged metric gets a query-clustered interval and can be gated",
    )
    inputs.add_cutoffs(p)
    p.add_argument(
        "--threshold",
        metavar="T",
        type=positive_int("--threshold"),
        default=1,
        help="lowest grade that counts as relevant (default 1)",
    )
    p.add_argument(
        "--gain",
        choices=GAINS,
        default="exponential",
        help="nDCG gain: exponential 2^g-1 (the spec's, default) or linear g (trec_eval's)",
    )
    p.add_argument("--system", metavar="NAME", help="score only this system of a multi-system run")
    p.add_argument(
        "--chunk-rows",
        metavar="N",
        type=positive_int("--chunk-rows"),
        help="read the run in blocks of about N rows of whole queries (automatic, "
        "2,000,000, for a run file of 2 GiB or more without --system or --queries)",
    )
    p.add_argument(
        "--quantile",
        metavar="Q",
        type=finite_float("--quantile", 0.0, 1.0),
        help="with --queries: quantile of positive top-1 scores used as the cutoff (default 0.10)",
    )
    p.add_argument(
        "--cutoff",
        metavar="X",
        type=finite_float("--cutoff"),
        help="with --queries: a fixed score cutoff (the one production uses) instead",
    )
    p.add_argument("--out", metavar="FILE", help="also write the JSON report here (atomically)")
    output_flags(
        p,
        "print the JSON report instead of tables (a run with several systems and no "
        '--system gives {"systems": {name: report}})',
    )
    inputs.add_format(p, per_query=True)
    p.set_defaults(handler=cmd_score)


def _add_drift(command) -> None:
    """Declare ``drift`` (``command`` makes the subparser, :func:`build_parser`)."""
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
    p.add_argument("--fix", action="store_true", help="rewrite the judgments file with recoverable labels re-anchored")
    p.add_argument("--backup", action="store_true", help="with --fix: keep the old file as FILE.bak")
    output_flags(p, "print the drift result as JSON")
    inputs.add_format(p)
    p.set_defaults(handler=cmd_drift)


def _add_validate(command) -> None:
    """Declare ``validate`` (``command`` makes the subparser, :func:`build_parser`)."""
    p = command(
        "validate",
        "Check a judgment set: errors (duplicate labels, conflicting query texts, malformed ids,\n"
        "no positives) make every number computed from it untrustworthy; warnings (thin strata,\n"
        "no human labels, mixed fingerprints) make them fragile.\n\n"
        "exit: 0 no error (warnings allowed), 1 an error, 2 usage error or malformed input",
        "example:\n  retrieval-eval validate --judgments judgments.jsonl",
    )
    inputs.add_labels(p)
    p.add_argument(
        "--queries",
        metavar="FILE",
        help="queries JSONL: supplies query text to labels that carry none (qrels), so it is checked",
    )
    output_flags(p, "print the validation result as JSON")
    p.set_defaults(handler=cmd_validate)


def _add_convert(command) -> None:
    """Declare ``convert`` (``command`` makes the subparser, :func:`build_parser`)."""
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
    p.add_argument("--to", required=True, choices=CONVERT_TARGETS, help="output format (parquet needs --out)")
    p.add_argument(
        "--system", metavar="NAME", help="with --run: keep only this system (and name the TREC run after it)"
    )
    p.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    p.set_defaults(handler=cmd_convert)


def _add_calibrate(command) -> None:
    """Declare ``calibrate`` (``command`` makes the subparser, :func:`build_parser`)."""
    p = command(
        "calibrate",
        "Out-of-distribution robustness from absolute relevance scores. Retrieval never abstains,\n"
        "so rank order says nothing about an off-topic query; the top-1 score does. A cutoff is\n"
        "set at a quantile of the positives' top-1 scores (or given), and the negatives\n"
        "(expect_none queries) are scored against it.\n\n"
        "exit: 0 computed, 2 usage error or malformed input",
        "example:\n  retrieval-eval calibrate --run scored.jsonl --judgments j.jsonl --queries queries.jsonl",
    )
    inputs.add_runs(p)
    inputs.add_labels(p)
    p.add_argument(
        "--queries", metavar="FILE", required=True, help="queries JSONL; expect_none: true marks the negatives"
    )
    p.add_argument(
        "--quantile",
        metavar="Q",
        type=finite_float("--quantile", 0.0, 1.0),
        default=0.10,
        help="quantile of positive top-1 scores used as the cutoff (default 0.10)",
    )
    p.add_argument(
        "--cutoff", metavar="X", type=finite_float("--cutoff"), help="a fixed score cutoff (the one production uses)"
    )
    p.add_argument(
        "--threshold",
        metavar="T",
        type=positive_int("--threshold"),
        default=1,
        help="lowest grade that makes a query a positive (default 1)",
    )
    p.add_argument("--system", metavar="NAME", help="only this system of a multi-system run")
    trust.calibrate_flags(p)  # --alpha (split-conformal cutoff), --by-stratum (Mondrian)
    output_flags(p, "print the calibration table as JSON")
    inputs.add_format(p)
    p.set_defaults(handler=cmd_calibrate)


def _add_compare(command) -> None:
    """Declare ``compare`` (``command`` makes the subparser, :func:`build_parser`)."""
    p = command(
        "compare",
        "Compare systems (the systems of one run file, or several run files) on the same\n"
        "judgments, with paired significance tests and a multiple-comparison correction.\n\n"
        "exit: 0 computed, 2 usage error or malformed input",
        "example:\n  retrieval-eval compare --judgments j.jsonl --run bm25.jsonl --run hybrid.jsonl --baseline bm25",
    )
    inputs.add_labels(p)
    inputs.add_runs(p)
    p.add_argument("--baseline", metavar="SYSTEM", help="the system the others are compared with")
    p.add_argument(
        "--pairs",
        choices=PAIRS,
        default="baseline",
        help="compare each system with the baseline (default) or every pair of systems",
    )
    inputs.add_cutoffs(p, "cutoffs of a bare --metric, e.g. -k 5,10 or -k 5 -k 10 (default 10)")
    p.add_argument(
        "--threshold",
        metavar="T",
        type=positive_int("--threshold"),
        default=1,
        help="lowest grade that counts as relevant (default 1)",
    )
    p.add_argument(
        "--queries",
        metavar="FILE",
        help="queries JSONL: expect_none queries are left out (and, with scores, compared on OOD)",
    )
    p.add_argument(
        "--metric",
        metavar="NAME",
        action="append",
        help=f"a metric to compare, repeatable: {', '.join(COMPARE_METRICS)} (at every -k, "
        "or with its own cutoff: map@100), or any measure score takes (nDCG@10, P_5)",
    )
    p.add_argument(
        "--gain",
        choices=GAINS,
        default="exponential",
        help="gain of a bare 'ndcg': exponential 2^g-1 (default) or linear g; 'ndcg_linear' is always linear",
    )
    p.add_argument(
        "--judged",
        metavar="PATH",
        action="append",
        default=[],
        help="LLM judge scores (repeatable): their metrics can be compared with --metric NAME",
    )
    p.add_argument(
        "--test", choices=TESTS, default="randomization", help="paired significance test (default randomization)"
    )
    p.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="multiple-comparison correction across all rows (default holm)",
    )
    p.add_argument(
        "--zero-method",
        choices=ZERO_METHODS,
        default="wilcox",
        help="the Wilcoxon test's zero differences: dropped (wilcox, scipy's default), "
        "ranked then dropped (pratt) or split between the signs (zsplit)",
    )
    p.add_argument(
        "--layout",
        choices=("long", "wide"),
        default="long",
        help="with --format markdown/latex: a row a comparison (long) or the paper's table, "
        "a row a system and a column a metric (wide)",
    )
    output_flags(p, "print the comparison table as JSON")
    inputs.add_format(p)
    p.set_defaults(handler=cmd_compare)


def _add_demo(command) -> None:
    """Declare ``demo`` (``command`` makes the subparser, :func:`build_parser`)."""
    p = command(
        "demo",
        "Run the bundled demo data end to end: score, drift, calibration, and write report.json,\n"
        "plots and an index.html listing them into --out.",
        "example:\n  retrieval-eval demo --out demo-output",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        default="retrieval-eval-demo",
        help="folder to write into (default ./retrieval-eval-demo)",
    )
    p.add_argument("--color", choices=COLOR_MODES, default="auto", help="colour the output: auto, always or never")
    p.set_defaults(handler=cmd_demo, json=False)


def version() -> str:
    """The installed package's version (``0.1.0`` from a source checkout not installed).

    Returns
    -------
    str

    Examples
    --------
    >>> version().count(".") >= 1
    True
    """
    try:
        from importlib.metadata import version as installed

        return installed("retrieval-eval")
    except Exception:  # not installed (a source checkout on sys.path)
        return "0.1.0"


_VERSION_FLAGS = ("-v", "--version")


def help_argv(argv: Sequence[str]) -> list[str]:
    """``help`` and ``help VERB`` as the ``--help`` and ``VERB --help`` they mean."""
    argv = list(argv)
    if argv[:1] == ["help"]:
        return [argv[1], "--help"] if len(argv) > 1 else ["--help"]
    return argv


def wants_version(argv: Sequence[str]) -> bool:
    """``-v``/``--version`` anywhere before ``--``, before or after the verb: the version wins
    over everything else on the line (a missing argument included), as in git or pip."""
    for token in argv:
        if token == "--":
            return False
        if token in _VERSION_FLAGS:
            return True
    return False


def check_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Refuse an option the command does not have, naming it, before argparse sees the line.

    argparse reports a missing required argument first and an unknown option only after, so
    ``score --judgmnets j.jsonl`` would complain about a missing --judgments, not the typo.
    """
    command = next((t for t in argv if not t.startswith("-")), None)
    sub = getattr(parser, "commands", {}).get(command)
    if sub is None:
        return
    known = {s for action in sub._actions for s in action.option_strings}
    for token in argv[argv.index(command) + 1 :]:
        if token == "--":
            return
        if token == "-" or not token.startswith("-") or re.fullmatch(r"-[0-9.].*", token):
            continue  # a value ("-" is stdin), or a negative number
        name = token.split("=", 1)[0]
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
            hint = f"; did you mean '{close[0]}'?" if close else f"; see '{PROG} {command} --help'"
            raise CLIError(f"unknown option '{name}' for '{command}'{hint}")


def check_command(argv: Sequence[str]) -> None:
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


def join_negative_numbers(argv: list[str]) -> list[str]:
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
