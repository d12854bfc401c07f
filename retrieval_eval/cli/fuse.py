"""``retrieval-eval fuse``: the systems of one or more runs fused into one run file
(:func:`retrieval_eval.analysis.fusion.fuse`, ranx's methods and normalisations)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from . import inputs
from .common import CLIError, atomic_write_text, check_out_not_input, finite_float

__all__ = ["COMMANDS", "add_command", "cmd_fuse"]

COMMANDS = {"fuse": "fuse the systems of one or more runs into one run: RRF, CombSUM, CombMNZ, ..."}

#: ``--out`` names ending so are written as TREC runs; anything else as JSONL.
TREC_SUFFIXES = (".trec", ".txt", ".run", ".tsv")


def add_command(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Add ``fuse`` through the CLI's ``command`` helper (:func:`.parser.build_parser`)."""
    from ..analysis.fusion import FUSION_METHODS, NORMALIZATIONS

    p = command(
        "fuse",
        "Fuse the systems of the runs into one run, as ranx's fuse does: each ranking's scores\n"
        "normalised (--norm), then each document scored by --method over the rankings that\n"
        "retrieved it. rrf reads ranks only: its run is rank-based (no absolute relevance), and\n"
        "calibrate says so.\n\n"
        "exit: 0 written, 2 usage error or malformed input",
        "examples:\n"
        "  retrieval-eval fuse --run bm25.trec --run dense.trec --method rrf --out fused.trec\n"
        "  retrieval-eval fuse --run runs.jsonl --method mnz --norm zmuv --out fused.jsonl\n"
        "  retrieval-eval fuse --run a.trec --run b.trec --method wsum --weight a=0.3 --weight b=0.7 "
        "--out w.trec",
    )
    inputs.add_runs(p)
    p.add_argument(
        "--method",
        choices=tuple(FUSION_METHODS),
        default="rrf",
        help="rrf (default), sum (CombSUM), mnz (CombMNZ), max, min, med, anz, wsum",
    )
    p.add_argument(
        "--norm",
        choices=(*NORMALIZATIONS, "none"),
        default="min-max",
        help="per-ranking score normalisation (default min-max, as ranx; rrf ignores it)",
    )
    p.add_argument(
        "--rrf-k", metavar="K", type=finite_float("--rrf-k"), default=60.0, help="RRF's constant (default 60)"
    )
    p.add_argument(
        "--weight",
        metavar="SYSTEM=W",
        action="append",
        default=[],
        help="wsum's weight of a system, repeatable (default 1 each)",
    )
    p.add_argument("--name", metavar="NAME", help="the fused system's name (default the method's)")
    p.add_argument(
        "--out",
        metavar="FILE",
        required=True,
        help="the fused run: TREC when FILE ends in .trec, .txt, .run or .tsv, else JSONL",
    )
    p.set_defaults(handler=cmd_fuse)


def _weights(items: list[str]) -> dict[str, float] | None:
    if not items:
        return None
    out = {}
    for item in items:
        name, eq, value = item.rpartition("=")
        try:
            out[name] = float(value)
        except ValueError:
            name = ""
        if not eq or not name:
            raise CLIError(f"--weight expects SYSTEM=NUMBER, got '{item}'")
    return out


def cmd_fuse(args: argparse.Namespace, out) -> int:
    """Run ``fuse``: read the runs, fuse their systems, write the fused run to ``--out``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the summary line goes.

    Returns
    -------
    int
        0 (written); a bad method, weight or run raises a one-line error (exit 2).
    """
    from ..analysis.fusion import fuse
    from ..io import to_trec_run, write_run

    check_out_not_input(args)
    run = inputs.load_runs(args)
    try:
        fused = fuse(
            run,
            method=args.method,
            norm=None if args.norm == "none" else args.norm,
            k=args.rrf_k,
            weights=_weights(args.weight),
            name=args.name,
        )
    except ValueError as e:
        raise CLIError(str(e)) from None
    name = str(fused["system"].iloc[0]) if len(fused) else (args.name or args.method)
    trec = str(args.out).lower().endswith(TREC_SUFFIXES)
    atomic_write_text(args.out, to_trec_run(fused, run_name=name) if trec else write_run(fused))
    sources = fused.attrs["fusion"][name]["systems"] if len(fused) else []
    out(
        f"fused {', '.join(sources)} by {args.method}: {len(fused)} hits over "
        f"{fused['query_id'].nunique()} queries -> {args.out}"
    )
    if fused.attrs.get("rank_based"):
        out(
            "note: the fused scores are a function of rank (no absolute relevance); calibrate "
            "reports such a run as rank-based"
        )
    return 0
