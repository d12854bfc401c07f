"""The ``diff`` and ``pool`` commands (registered by :mod:`retrieval_eval.cli.parser`): failure
analysis from the command line.

``diff`` compares two runs (or two systems of one run) query by query: a terminal table of the
queries that moved most, ``--json`` (``{"metric", "a", "b", "queries": [{"query_id", "a", "b",
"delta", "moves": [{"key", "grade", "rank_a", "rank_b"}]}]}``) or ``--out page.html`` (one
self-contained page, static HTML and SVG). ``pool`` writes the unjudged top-k entries worth
labelling next as a to-label judgments file. Both: exit 0 computed, 2 usage error or malformed
input (one line on stderr, never a traceback); every file is written atomically.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..engine.metrics import GAINS
from . import inputs
from .common import EXIT_OK, CLIError, atomic_write_text, check_out_not_input, dumps, positive_int
from .term import fmt_number

__all__ = ["COMMANDS", "add_commands", "cmd_diff", "cmd_pool"]

COMMANDS = {
    "diff": "two runs query by query: what moved, where each relevant passage went (page, JSON)",
    "pool": "the unjudged top-k entries worth labelling next, as a to-label judgments file",
}


def _common(p: argparse.ArgumentParser) -> None:
    inputs.add_labels(p)
    p.add_argument(
        "--metric",
        metavar="M",
        default="ndcg@10",
        help="a seed metric (ndcg@10, recall@5; bare ndcg is at -k) or one trec_eval measure "
        "(P_10, ndcg_cut_10); default ndcg@10",
    )
    p.add_argument("-k", metavar="K", type=positive_int("-k"), default=10, help="depth of the top lists (default 10)")
    p.add_argument(
        "--gain",
        choices=GAINS,
        default="exponential",
        help="gain of a bare 'ndcg': exponential 2^g-1 (default) or linear g",
    )
    p.add_argument(
        "--threshold",
        metavar="T",
        type=positive_int("--threshold"),
        default=1,
        help="lowest grade that counts as relevant (default 1)",
    )


def add_commands(
    command: Callable[..., argparse.ArgumentParser], output_flags: Callable[[argparse.ArgumentParser, str], None]
) -> None:
    """Add ``diff`` and ``pool`` through the CLI's own ``command`` and ``output_flags`` helpers.

    Parameters
    ----------
    command : callable
        ``command(name, description, epilog)`` makes a verb's subparser.
    output_flags : callable
        ``output_flags(p, json_help)`` adds ``--json`` and ``--color``.
    """
    p = command(
        "diff",
        "Compare two runs (or two systems of one run, --system twice) query by query on the same\n"
        "judgments: each query's value in both and the difference, largest first; where every\n"
        "relevant passage is ranked in each run. --out writes one self-contained HTML page (the\n"
        "queries that moved most as two ranked columns joined by lines; no script).\n\n"
        "exit: 0 computed, 2 usage error or malformed input",
        "examples:\n"
        "  retrieval-eval diff --judgments j.jsonl --run bm25.jsonl --run dense.jsonl --json\n"
        "  retrieval-eval diff --judgments j.jsonl --run runs.jsonl --system dense --system bm25 --out diff.html",
    )
    _common(p)
    inputs.add_runs(p)
    p.add_argument(
        "--system",
        metavar="NAME",
        action="append",
        help="a system to compare, given twice (a then b) when the runs hold more than two",
    )
    p.add_argument(
        "--top",
        metavar="N",
        type=positive_int("--top"),
        default=20,
        help="queries shown in the terminal and drawn on the page (default 20)",
    )
    p.add_argument("--out", metavar="FILE", help="write the diff as one HTML page here (atomically)")
    output_flags(p, "print the diff as JSON")
    p.set_defaults(handler=cmd_diff)

    p = command(
        "pool",
        "The unjudged entries of the top k of every run, pooled by (query, document) and ranked by\n"
        "how much labelling them could move the metric (each ranking's judgment bounds, shared out\n"
        'over its holes). Written as judgments JSONL without relevance: add "relevance": <grade>\n'
        "to each line and the file reads as judgments (an ungraded line is refused, naming it).\n\n"
        "exit: 0 computed, 2 usage error or malformed input",
        "example:\n"
        "  retrieval-eval pool --judgments j.jsonl --run runs.jsonl -k 10 --corpus corpus.json --out to-label.jsonl",
    )
    _common(p)
    inputs.add_runs(p)
    p.add_argument("--corpus", metavar="FILE", help="corpus JSON: the passages' text and documents")
    p.add_argument("--queries", metavar="FILE", help="queries JSONL: the query text")
    p.add_argument("--limit", metavar="N", type=positive_int("--limit"), help="keep the N entries that weigh most")
    p.add_argument("--out", metavar="FILE", help="write the to-label file here (atomically); default stdout")
    p.set_defaults(handler=cmd_pool, json=False)


def cmd_diff(args: argparse.Namespace, out) -> int:
    """Run ``diff``.

    Parameters
    ----------
    args : argparse.Namespace
    out : Out

    Returns
    -------
    int
        0 computed.
    """
    from ..analysis.failure import diff_runs
    from ..viz.failure import diff_html, page

    if args.json and args.out:
        raise CLIError("give --json or --out, not both")
    check_out_not_input(args)
    systems = args.system
    if systems is not None and len(systems) != 2:
        raise CLIError(f"--system is given twice, a then b (got {len(systems)})")
    judgments = inputs.load_labels(args).frame
    run = inputs.load_runs(args)
    names = list(dict.fromkeys(run["system"].tolist()))
    if systems is None and len(names) != 2:
        raise CLIError(
            f"{', '.join(args.run)}: diff compares two systems and the runs hold {len(names)} "
            f"({', '.join(names)}); choose them with --system A --system B"
        )
    diff = diff_runs(
        judgments,
        run,
        measure=args.metric,
        k=args.k,
        systems=systems or names,
        threshold=args.threshold,
        gain=args.gain,
    )
    if args.json:
        out.stream.write(dumps(diff.to_dict()) + "\n")
        return EXIT_OK
    if args.out:
        title = f"{diff.names[0]} vs {diff.names[1]}: {diff.metric}"
        atomic_write_text(args.out, page(title, diff_html(diff, top=args.top)))
    out(
        f"{diff.metric}: {diff.names[0]} (a) {fmt_number(diff.a)} -> {diff.names[1]} (b) {fmt_number(diff.b)} "
        f"over {len(diff.queries)} queries"
    )
    shown = diff.queries.head(args.top).round(4)
    out(shown.to_string(index=False))
    if len(diff.queries) > args.top:
        out(f"... {len(diff.queries) - args.top} more (--top N, or --json)")
    if args.out:
        out(f"wrote {args.out}")
    return EXIT_OK


def cmd_pool(args: argparse.Namespace, out) -> int:
    """Run ``pool``.

    Parameters
    ----------
    args : argparse.Namespace
    out : Out

    Returns
    -------
    int
        0 computed.
    """
    from ..analysis.failure import label_pool

    check_out_not_input(args)
    judgments = inputs.load_labels(args).frame
    run = inputs.load_runs(args)
    corpus = inputs.load_corpus(args.corpus) if args.corpus else None
    queries = inputs.load_queries(args.queries) if args.queries else None
    pool = label_pool(
        judgments,
        run,
        k=args.k,
        measure=args.metric,
        corpus=corpus,
        queries=queries,
        gain=args.gain,
        threshold=args.threshold,
        limit=args.limit,
    )
    text = pool.to_jsonl()
    if not args.out:
        out.stream.write(text)
        return EXIT_OK
    atomic_write_text(args.out, text)
    out(
        f"wrote {args.out}: {len(pool)} unjudged entries of {pool.frame['query_id'].nunique()} queries "
        f'(top {pool.k}, weighted by {pool.measure}); add "relevance" to each line, then read it as judgments'
    )
    return EXIT_OK
