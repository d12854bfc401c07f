"""``retrieval-eval trec_eval -R prefs | qrels_prefs | qrels_jg``: trec_eval 10.0's preference
judgments and judgment groups, printed as trec_eval prints them.

* ``-R prefs``: QRELS is a preferences file (``qid jg jsg docno rel_level``); ``-R qrels_prefs``:
  a qrels file read as preferences (its iter field the judgment group). Measures: the 14
  ``prefs_*`` (nicknames ``all_prefs``, all of them, and ``prefs``, trec_eval's official six),
  :mod:`retrieval_eval.engine.measures.prefs`.
* ``-R qrels_jg``: a qrels file whose iter field names a judgment group. Measures:
  ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg`` (nickname ``qrels_jg``), with parameters
  (``-m P_avgjg.5,10``), :mod:`retrieval_eval.engine.measures.avgjg`.

``runid`` and ``num_q`` print in the summary, as with qrels. The measures print in trec_eval's
order whatever the order of ``-m``; the counts (``prefs_num_prefs_*``) are summed over the
queries, the others averaged. A query of the judgments that the run does not answer stops
trec_eval 10.0 (``result qid ... not found``): here too, exit 2 naming it, unless ``-c``
scores it as an empty ranking. A measure these judgments cannot give (``map`` with
``-R prefs``, the default ``official``) is refused naming it, as trec_eval cannot calculate it.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ..engine.measures import avgjg, prefs
from ..engine.measures.registry import FAMILIES, parse_measure
from .common import CLIError
from .term import escape
from .trec_text import trec_line, trec_value

#: The formats and the families each gives, in trec_eval's measure order.
FORMATS = {"prefs": prefs.NAMES, "qrels_prefs": prefs.NAMES, "qrels_jg": avgjg.NAMES}
#: trec_eval's nicknames for them (measures.c's ``prefs_names``, ``prefs_off_name``,
#: ``qrels_jg_names``; each with runid and num_q).
NICKNAMES = {"all_prefs": prefs.NAMES, "prefs": prefs.OFFICIAL, "qrels_jg": avgjg.NAMES}


def requested(names: list[str], fmt: str) -> tuple[set[str], list]:
    """(``{"runid", "num_q"}`` asked, the measures in trec_eval's order) of the ``-m`` arguments
    for judgments of format ``fmt``; the first parameters of a family win, as in trec_eval."""
    allowed = FORMATS[fmt]
    marked: set[str] = set()
    given: dict[str, list] = {}
    for name in names or ["official"]:
        base = name.partition(".")[0]
        if name in NICKNAMES:
            marked.update(("runid", "num_q", *NICKNAMES[name]))
            continue
        if name in ("runid", "num_q"):
            marked.add(name)
            continue
        try:
            ms = parse_measure(name)
        except ValueError:
            ms = []
        family = ms[0].family if ms else base
        if family not in allowed:
            known = family in FAMILIES or name in ("official", "all_trec", "set")
            why = f"cannot be calculated from -R {fmt} judgments" if known else "is not a trec_eval measure"
            raise CLIError(
                f"trec_eval: illegal measure '{name}': it {why} (with -R {fmt}: "
                f"{', '.join(n for n, fams in NICKNAMES.items() if fams[0] in allowed)}, "
                f"{', '.join(allowed)})"
            )
        marked.add(family)
        if name != family and family not in given:
            ms = sorted(ms, key=lambda m: float(m.param))
            if any(a.param == b.param for a, b in zip(ms, ms[1:])):
                raise CLIError(f"trec_eval: duplicate cutoffs detected in '{name}'")
            given[family] = ms
    ordered: list = []
    for fam in allowed:
        if fam in marked:
            ordered.extend(given.get(fam) or parse_measure(fam))
    return marked & {"runid", "num_q"}, ordered


def _read(args: argparse.Namespace):
    """The judgments of ``args.qrels`` in format ``args.rel_info_format`` and the run."""
    from ..io import read_trec_run
    from ..io.prefs import read_prefs, read_qrels_jg, read_qrels_prefs

    reader = {"prefs": read_prefs, "qrels_prefs": read_qrels_prefs, "qrels_jg": read_qrels_jg}
    judgments = reader[args.rel_info_format](args.qrels)
    run = read_trec_run(args.run)
    runid = str(run["system"].iloc[0]) if len(run) else ""
    return judgments, run.assign(system=runid), runid


def _evaluate(args: argparse.Namespace, judgments, run, ms):
    """Per-query values, queries in byte order; refusals as one line naming the input."""
    if not args.complete:
        answered = set(pd.unique(run["query_id"]).tolist())
        missing = sorted(set(pd.unique(judgments["query_id"]).tolist()) - answered)
        if missing:
            raise CLIError(
                f"{args.run}: no results for query {missing[0]} of {args.qrels} (trec_eval 10.0 "
                "stops there; -c scores an unanswered query as an empty ranking)"
            )
    try:
        if args.rel_info_format == "qrels_jg":
            return avgjg.evaluate_jg(judgments, run, ms, level=args.level, max_ret=args.max_ret, complete=args.complete)
        return prefs.evaluate_prefs(judgments, run, ms, max_ret=args.max_ret, complete=args.complete)
    except ValueError as err:
        where = args.run if str(err).startswith("run:") else args.qrels
        raise CLIError(f"{where}: {str(err).split(': ', 1)[-1]}") from None


def _summary(values: np.ndarray, aggregate: str) -> float:
    """trec_eval's summary: the queries' values summed in order, averaged unless a count."""
    total = float(np.cumsum(values)[-1]) if len(values) else 0.0
    return total if aggregate == "sum" or not len(values) else total / len(values)


def cmd_rel_info(args: argparse.Namespace, out) -> int:
    """``trec_eval -R prefs | qrels_prefs | qrels_jg``: read, evaluate, print as trec_eval.

    Parameters
    ----------
    args : argparse.Namespace
        The ``trec_eval`` command's arguments (``rel_info_format``, ``qrels``, ``run``,
        ``measure``, ``per_query``, ``complete``, ``no_summary``, ``max_ret``, ``level``), their
        values already checked by the command (:func:`.trec_eval_options.check_options`).
    out : Out
        Where the output goes.

    Returns
    -------
    int
        The exit code: 0 done (a refusal raises :class:`CLIError`: exit 2).
    """
    fmt = args.rel_info_format
    if fmt not in FORMATS:
        raise CLIError(f"trec_eval: Illegal rel_format '{fmt}' (qrels, prefs, qrels_prefs or qrels_jg)")
    wanted, ms = requested(args.measure, fmt)
    judgments, run, runid = _read(args)
    per_query = _evaluate(args, judgments, run, ms)
    if len(per_query) == 0:
        raise CLIError("no queries with both results and relevance info")
    lines: list[str] = []
    if args.per_query:
        kinds = [m.spec.kind for m in ms]
        table = per_query[[m.name for m in ms]].to_numpy(dtype=np.float64).tolist()
        for qid, row in zip(per_query["query_id"].tolist(), table):
            q = escape(qid)
            lines.extend(f"{m.name:<22}\t{q}\t{trec_value(v, k)}" for m, k, v in zip(ms, kinds, row))
    if not args.no_summary:
        if "runid" in wanted:
            lines.append(f"{'runid':<22}\tall\t{escape(runid)}")
        if "num_q" in wanted:
            lines.append(trec_line("num_q", "all", len(per_query), "int"))
        for m in ms:
            value = _summary(per_query[m.name].to_numpy(dtype=np.float64), m.spec.aggregate)
            lines.append(trec_line(m.name, "all", value, m.spec.kind))
    if lines:
        out.stream.write("\n".join(lines) + "\n")
    return 0
