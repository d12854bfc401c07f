"""The ``trec_eval`` command's options beyond the measures (:mod:`.trec_eval`): their declaration
on the parser and the checks of their values, in one place.

What trec_eval 10.0 does with each (``trec_eval.c``) and what this drop-in does:

* ``-D level`` (debug output): trec_eval prints its internal state at level > 0. Level 0 (its
  default) is accepted and changes nothing; another level is refused naming it.
* ``-J`` (judged documents only): every document without a judgment (outside the qrels, or
  judged with a negative grade) leaves the ranking before any measure, after ``-M``
  (``form_res_rels.c``); :func:`~retrieval_eval.engine.measures.compute`'s ``judged_only``.
* ``-T format``: ``trec_results`` is trec_eval's only results format; another is refused.
* ``-R format``: ``qrels`` (the default) here; ``prefs``, ``qrels_prefs`` and ``qrels_jg`` in
  ``retrieval_eval.cli.trec_eval_prefs`` (:func:`rel_info_handler`).
* ``-o``: trec_eval 10.0 reads it and sets a flag nothing reads ("Obsolete, no longer
  supported"): accepted, no effect.
* ``-Z file``: z-scores (:mod:`.trec_eval_zscores`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .common import CLIError

#: trec_eval 10.0's results formats (formats.c's ``te_results_format``).
RESULTS_FORMATS = ("trec_results",)


def add_options(p: argparse.ArgumentParser) -> None:
    """Declare ``-D``, ``-J``, ``-T``, ``-R``, ``-o`` and ``-Z`` on the command's parser."""
    p.add_argument(
        "-D",
        dest="debug",
        metavar="LEVEL",
        default="0",
        help="trec_eval's debug level: only 0 (no debug output, the default)",
    )
    p.add_argument(
        "-J",
        dest="judged_only",
        action="store_true",
        help="judged documents only: documents without a judgment leave each ranking first",
    )
    p.add_argument(
        "-T",
        dest="results_format",
        metavar="FORMAT",
        default="trec_results",
        help="results format: trec_results (trec_eval's only one)",
    )
    p.add_argument(
        "-R",
        dest="rel_info_format",
        metavar="FORMAT",
        default="qrels",
        help="relevance info format: qrels (default), prefs, qrels_prefs, qrels_jg",
    )
    p.add_argument(
        "-o",
        dest="old_format",
        action="store_true",
        help="accepted for trec_eval's command lines; no effect (obsolete in trec_eval 10.0)",
    )
    p.add_argument(
        "-Z",
        dest="zscores",
        metavar="FILE",
        default=None,
        help="print z-scores against FILE's per-query means and deviations (lines: query measure mean stddev)",
    )


def check_options(args: argparse.Namespace) -> None:
    """The values of the options, checked before any file is read.

    Raises
    ------
    CLIError
        A value out of range, a debug level other than 0, or a results format that is not
        ``trec_results``, naming the option.
    """
    if args.level < 1:
        raise CLIError("-l: the relevance level must be >= 1 (an unjudged document has grade 0)")
    if args.max_ret is not None and not 0 <= args.max_ret < 1 << 63:
        raise CLIError("-M: the number of documents must be >= 0 and below 2^63 (the largest int64)")
    if args.num_docs < 0:
        raise CLIError("-N: the number of documents in the collection must be >= 0")
    if args.debug.strip() not in ("0", "+0", "-0"):
        raise CLIError(
            f"option -D (--Debug_level) value {args.debug!r} is not supported: only level 0 "
            "(trec_eval's debug printing is not reproduced)"
        )
    if args.results_format not in RESULTS_FORMATS:
        raise CLIError(
            f"option -T (--Results_format) value {args.results_format!r} is not supported: "
            f"{', '.join(RESULTS_FORMATS)} is trec_eval's results format"
        )


def rel_info_handler(args: argparse.Namespace) -> Callable[..., int] | None:
    """The handler of a ``-R`` format other than ``qrels`` (None for ``qrels``, read here):
    :func:`.trec_eval_prefs.cmd_rel_info`, which reads ``prefs``, ``qrels_prefs`` and
    ``qrels_jg`` and refuses any other format by name."""
    if args.rel_info_format == "qrels":
        return None
    from .trec_eval_prefs import cmd_rel_info  # lazy: the preference readers and measures

    return cmd_rel_info
