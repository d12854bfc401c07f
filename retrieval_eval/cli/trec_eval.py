"""``retrieval-eval trec_eval``: a drop-in for trec_eval's command line and its text output.

``retrieval-eval trec_eval [-q] [-c] [-n] [-J] [-M n] [-l n] [-N n] [-Z file] [-m measure]... [--compat V] QRELS RUN``
prints what trec_eval 10.0 prints (9.0.8 with ``--compat 9.0.8``), so that scripts parsing its
output work unchanged (docs/trec_eval-versions.md says what differs):

* one line per value, ``"%-22s\\t%s\\t%6.4f"`` (measure, query, value); counts (``num_*``)
  as integers; ``runid`` (the run name of the run's first line) and ``num_q`` in the summary;
* measures in trec_eval's own order (its ``te_trec_measures`` table), whatever the order of
  ``-m``; a family with parameters (``-m P.5,10``) prints one line per parameter;
* with ``-q``, each query's values first, queries in qrels order (trec_eval sorts by query id,
  byte order), then the ``all`` rows; ``gm_map`` / ``gm_bpref`` / ``runid`` / ``num_q`` have no
  per-query line (as in trec_eval);
* ``-m official`` (the default), ``-m all_trec`` and ``-m set`` are trec_eval's nicknames, the
  version's lists (10.0's ``all_trec`` has ``unj``, ``rbp``, ``rbp_resid`` and ``relstring``);
  ``relstring`` prints per query only, quoted;
* trec_eval's getopt syntax (``-M100``, ``-qc``, ``-mP.5,10``, ``--measure=map``): see
  :func:`getopt_argv`;
* a single-value measure given with parameters prints as trec_eval names it (its
  ``meas_init.c`` appends the parameter string to the name): its name, ``_`` and the
  parameters as typed, ``-m set_F.0.5`` -> ``set_F_0.5``, ``-m ndcg.1=3,2=9`` ->
  ``ndcg_1=3,2=9``, ``-m utility.2,-1,-3,.5`` -> ``utility_2,-1,-3,.5``, and the gain maps of
  ``G``, ``ndcg_rel``, ``Rndcg`` likewise (``-m G.1=3`` -> ``G_1=3``); without parameters,
  the bare name. ``set_F.0.5,2`` is one measure, beta 0.5, as trec_eval reads only the first;
* a measure given twice with parameters keeps the first parameters (trec_eval's ``meas_arg``
  loop stops at the first match), whatever the order of the ``-m`` and of nicknames:
  ``-m set_F.0.5 -m set_F.2`` prints ``set_F_0.5``, ``-m P.5 -m P`` prints ``P_5``,
  ``-m all_trec -m set_F.0.5`` prints ``set_F_0.5`` among all_trec's measures;
* ``-N n`` is the collection's size that utility's fourth coefficient weighs (trec_eval's
  ``-N``, 0 unless given);
* ``-J`` (judged documents only), ``-Z file`` (z-scores, :mod:`.trec_eval_zscores`), ``-D 0``,
  ``-T trec_results``, ``-o`` and ``-R`` (``qrels`` here; the other formats in
  ``trec_eval_prefs``) as :mod:`.trec_eval_options` says.

Every number comes from the catalogue (:mod:`retrieval_eval.engine.measures`). The command
reads a qrels grade below 0 as trec_eval does ("in the pool, not judged": the library's readers
clamp it to 0 unless ``keep_negative=True``). Where it differs from trec_eval: a qrels line
repeating a (query, doc) pair keeps its last grade (trec_eval refuses the file).
A run that repeats a doc id in a query is refused, as trec_eval refuses it. A value that is
trec_eval's 0 / 0 (Rndcg under a gain map that leaves a query's relevant grades no positive
gain) prints ``nan``, where trec_eval's printf shows the NaN's sign (``-nan`` on x86-64).
"""

from __future__ import annotations

import argparse
import re
from typing import Any, cast

from ..engine.measures.registry import FAMILIES, parse_measure
from .common import CLIError
from .term import escape
from .trec_eval_getopt import GETOPT, OWN_LONG, SUPPORTED, getopt_argv
from .trec_eval_options import add_options, check_options, rel_info_handler
from .trec_eval_zscores import read_zscores, to_zscores
from .trec_text import trec_line, trec_value

__all__ = [
    "GETOPT",
    "NICKNAMES",
    "OWN_LONG",
    "SUPPORTED",
    "TREC_ORDER",
    "VERSION_NICKNAMES",
    "add_command",
    "cmd_trec_eval",
    "getopt_argv",
    "trec_line",
    "trec_value",
]

#: trec_eval 10.0's measure order (measures.c's ``te_trec_measures``), restricted to the catalogue.
TREC_ORDER = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj",
)
#: The versions' nicknames (measures.c's ``te_trec_measure_nicknames``), restricted to the
#: catalogue. trec_eval 10.0's all_trec adds unj, rbp and rbp_resid to 9.0.8's; relstring is in
#: both versions' lists, but pytrec_eval (9.0.8's oracle) has no relstring, so the 9.0.8 list
#: here leaves it out (docs/trec_eval-versions.md).
_ALL_TREC_9 = tuple(f for f in TREC_ORDER if f not in ("relstring", "rbp", "rbp_resid", "unj"))
_OFFICIAL = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
_SET = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
)
VERSION_NICKNAMES = {
    "10.0": {"official": _OFFICIAL, "all_trec": TREC_ORDER, "set": _SET},
    "9.0.8": {"official": _OFFICIAL, "all_trec": _ALL_TREC_9, "set": _SET},
}
#: trec_eval 10.0's nicknames (the default version's).
NICKNAMES = VERSION_NICKNAMES["10.0"]
#: trec_eval's single-value measures with parameters (``meas_init.c``'s
#: ``te_init_meas_s_float_p_float`` / ``_p_pair``) that the catalogue reads: one value, printed
#: as ``name_<parameters as typed>`` (``append_string``). Cutoff families (``P.5,10``) print one
#: value per cutoff, named as the catalogue names it (``P_5``).
NAMED_BY_PARAMETERS = ("set_F", "utility", "ndcg", "G", "ndcg_rel", "Rndcg", "relstring", "11pt_avg")
#: Measures trec_eval prints only in the summary, and only per query.
SUMMARY_ONLY = {"runid", "num_q", "gm_map", "gm_bpref"}
PER_QUERY_ONLY = {"relstring"}

DESCRIPTION = (
    "Evaluate a TREC run against TREC qrels and print trec_eval's output, line for line:\n"
    "measure<TAB>query<TAB>value, trec_eval's measure order and 4-decimal format, runid and\n"
    "num_q lines and the 'all' summary. Ties are ordered as trec_eval orders them (score\n"
    "descending, then doc id descending).\n\n"
    "exit: 0 done, 2 usage error or malformed input"
)
EPILOG = (
    "examples:\n"
    "  retrieval-eval trec_eval qrels.txt run.txt\n"
    "  retrieval-eval trec_eval -q -m map -m P.5,10 -m ndcg_cut.10 qrels.txt run.txt\n"
    "  retrieval-eval trec_eval -c -l 2 -M 100 -m all_trec qrels.txt run.txt\n"
    "  retrieval-eval trec_eval -N 500000 -m utility.2,-1,-1,0.001 -m unj.10 qrels.txt run.txt"
)


def add_command(command) -> None:
    """Declare the ``trec_eval`` command on the CLI's parser (``command`` makes a subparser)."""
    p = command("trec_eval", DESCRIPTION, EPILOG)
    p.add_argument("-q", dest="per_query", action="store_true", help="print each query's values, then the summary")
    p.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="average over every query of the qrels; a query the run misses scores 0",
    )
    p.add_argument("-n", dest="no_summary", action="store_true", help="no summary ('all') lines")
    p.add_argument(
        "-M", dest="max_ret", metavar="N", type=int, default=None, help="read only the top N documents of each query"
    )
    p.add_argument(
        "-l", dest="level", metavar="N", type=int, default=1, help="lowest grade that counts as relevant (default 1)"
    )
    p.add_argument(
        "-N",
        dest="num_docs",
        metavar="N",
        type=int,
        default=0,
        help="number of documents in the collection, for utility's fourth coefficient (default 0, as trec_eval)",
    )
    p.add_argument(
        "-m",
        dest="measure",
        metavar="MEASURE",
        action="append",
        default=[],
        help="a measure, a family with parameters (P.5,10) or a nickname (official, "
        "all_trec, set); repeatable; default official",
    )
    p.add_argument(
        "--compat",
        dest="compat",
        choices=list(VERSION_NICKNAMES),
        default="10.0",
        help="whose definitions and nicknames: trec_eval 10.0 (default) or 9.0.8 (what pytrec_eval embeds)",
    )
    add_options(p)
    p.add_argument("qrels", metavar="QRELS", help="TREC qrels file (or -R's format)")
    p.add_argument("run", metavar="RUN", help="TREC run file")
    p.set_defaults(handler=cmd_trec_eval, color="never", json=False)


def _requested(names: list[str], version: str = "10.0"):
    """The measures the ``-m`` arguments ask for, as trec_eval reads them.

    trec_eval marks a measure once, however many ``-m`` name it (directly or through a
    nickname), and takes its parameters from the first ``-m name.params`` (the ``meas_arg`` loop
    of ``meas_init.c`` breaks at the first match): so the order of the arguments changes nothing
    but which parameters come first, and a plain ``-m P`` never adds the default cutoffs back
    to ``-m P.5``. Every argument is still parsed, so a malformed later one is an error here
    (trec_eval never reads it).

    Parameters
    ----------
    names : list of str
        The ``-m`` arguments in command-line order (empty: ``official``).
    version : {"10.0", "9.0.8"}
        Whose nicknames (``all_trec`` differs).

    Returns
    -------
    tuple
        ``(runid?, num_q?, measures, shown)``: whether ``runid`` and ``num_q`` print, the
        measures in trec_eval's order (:data:`TREC_ORDER`), and ``{column: printed name}`` for
        the measures whose printed name is not their column name (see :func:`_printed`).

    Raises
    ------
    ValueError
        A name that is not trec_eval's (with the closest ones), or malformed parameters.
    """
    nicknames = VERSION_NICKNAMES[version]
    marked: set[str] = set()
    given: dict[str, tuple[str, list]] = {}  # family -> (parameters as typed, its measures)
    for name in names or ["official"]:
        base, dot, params = name.partition(".")
        if base in nicknames and not dot:
            marked.update(nicknames[base])
            continue
        if name in ("runid", "num_q"):
            marked.add(name)
            continue
        if base not in FAMILIES or base not in TREC_ORDER:
            # trec_eval's own spelling only: this is its command line.
            close = [m for m in TREC_ORDER if m.lower().startswith(base.lower()[:3])]
            hint = f"; did you mean {', '.join(close[:3])}?" if close else ""
            raise ValueError(f"trec_eval: illegal measure '{name}'{hint}")
        if dot and FAMILIES[base].param == "cutoff":
            # get_long_cutoffs reads each cutoff with atol: ndcg_cut.23.4 is cutoff 23.
            params = ",".join(re.sub(r"^(\s*[-+]?\d+)\.\d*$", r"\1", c) for c in params.split(","))
            name = f"{base}.{params}"
        ms = parse_measure(name)
        marked.add(base)
        if dot:
            given.setdefault(base, (params, ms))  # the first parameters win
    ordered, shown = [], {}
    for fam in TREC_ORDER:
        if fam not in marked or fam in ("runid", "num_q"):
            continue
        if fam not in given:
            ordered.extend(parse_measure(fam))
            if fam in PER_QUERY_ONLY:
                shown[ordered[-1].name] = fam  # relstring: the bare name, as trec_eval prints it
            continue
        params, ms = given[fam]
        if FAMILIES[fam].param in ("cutoff", "level"):
            # get_long_cutoffs / get_double_cutoffs: sorted ascending, a repeat refused.
            ms = sorted(ms, key=lambda m: float(m.param))
            if any(a.param == b.param for a, b in zip(ms, ms[1:])):
                raise ValueError(f"trec_eval: duplicate cutoffs detected in '{fam}.{params}'")
        if fam in NAMED_BY_PARAMETERS:
            ms = ms[:1]  # one value: set_F.0.5,2 is beta 0.5, trec_eval's param_values[0]
            shown[ms[0].name] = f"{fam}_{params}"
        ordered.extend(ms)
    return "runid" in marked, "num_q" in marked, ordered, shown


def _printed(m, shown: dict[str, str]) -> str:
    """The name trec_eval prints for measure ``m``.

    Parameters
    ----------
    m : Measure
        A measure of :func:`_requested`.
    shown : dict
        :func:`_requested`'s ``{column: printed name}``.

    Returns
    -------
    str
        ``shown``'s name for a single-value measure given with parameters (``set_F_0.5``,
        ``ndcg_1=3,2=9``, ``G_1=3``, ``utility_2,-1,-3,.5``: the parameters as typed, so that a script
        finds the name it asked for, as with trec_eval); otherwise the column name, which is
        trec_eval's (``map``, ``P_5``, ``iprec_at_recall_0.10``, plain ``set_F``).
    """
    return shown.get(m.name, m.name)


def cmd_trec_eval(args: argparse.Namespace, out) -> int:
    """Run ``trec_eval``: trec_eval's measures and output, line for line.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`.parser.build_parser`).
    out : Out
        Where the output goes (stdout, coloured when wanted).

    Returns
    -------
    int
        The exit code: 0 done.
    """
    check_options(args)
    handler = rel_info_handler(args)  # -R prefs, qrels_prefs, qrels_jg: another reader
    if handler is not None:
        return handler(args, out)
    try:
        want_runid, want_num_q, ms, shown = _requested(args.measure, args.compat)
    except ValueError as err:
        raise CLIError(str(err)) from None
    zscores = read_zscores(args.zscores) if args.zscores is not None else None
    per_query, runid = _evaluate(args, ms)
    if zscores is not None:
        numeric = {m.name: _printed(m, shown) for m in ms if m.spec.kind != "str"}
        per_query = to_zscores(per_query, numeric, zscores)
    lines = _query_lines(per_query, ms, shown, args.zscores is not None) if args.per_query else []
    if not args.no_summary:
        lines += _summary_lines(
            per_query, ms, shown, runid if want_runid else None, want_num_q, args.zscores is not None
        )
    if lines:
        # Written as is: the tabs are the format. Ids had their control characters escaped
        # (_term.escape), as every line the CLI prints does.
        out.stream.write("\n".join(lines) + "\n")
    return 0


def _evaluate(args: argparse.Namespace, ms: list) -> tuple[Any, str]:
    """The per-query values of measures ``ms`` for the command's files, queries in trec_eval's
    order (by query id, byte order), and the run's name."""
    import numpy as np

    from ..arrays import arrow
    from ..engine.kernels import one_value
    from ..engine.measures import compute
    from ..io import read_qrels, read_trec_run

    judgments = read_qrels(args.qrels, keep_negative=True)  # -1: "in the pool, not judged"
    run = read_trec_run(args.run)
    runid = str(run["system"].iloc[0]) if len(run) else ""
    if len(run) and not one_value(arrow(run["system"])):
        run = run.assign(system=runid)  # one run: trec_eval reads every line of the file as one
    per_query = compute(
        judgments,
        run,
        ms,
        level=args.level,
        max_ret=args.max_ret,
        complete=args.complete,
        num_docs=args.num_docs,
        compat=args.compat,
        judged_only=args.judged_only,
    )
    repeats = per_query.attrs.get("repeats", [])
    per_query.attrs.clear()  # (pandas deep-copies attrs on every operation below)
    if repeats:  # the scan found them; the message names the first repeated line
        mine = run[run["query_id"].isin([q for _, q in repeats]).to_numpy()]
        first = mine[mine.duplicated(["query_id", "doc_id"]).to_numpy()].iloc[0]
        raise CLIError(
            f"{args.run}: query {first['query_id']} repeats doc {first['doc_id']} (trec_eval refuses duplicate docs)"
        )
    if len(per_query) == 0:
        raise CLIError("no queries with both results and relevance info")
    order = np.argsort(per_query["query_id"].to_numpy(dtype=object).astype(str), kind="stable")
    return per_query.iloc[order], runid


def _kind(m, z: bool) -> str:
    """How measure ``m``'s value prints: under ``-Z`` every number as ``%6.4f``."""
    return "float" if z and m.spec.kind == "int" else m.spec.kind


def _head(m, shown: dict[str, str], z: bool) -> str:
    """A line's start: the printed name (``Z`` before it under ``-Z``, but relstring's), a tab."""
    name = _printed(m, shown)
    return ("Z" if z and m.spec.kind != "str" else "") + f"{name:<22}\t"


def _query_lines(per_query, ms: list, shown: dict[str, str], z: bool) -> list[str]:
    """``-q``: each query's lines, in trec_eval's measure order."""
    cols = [m for m in ms if m.family not in SUMMARY_ONLY]
    table = per_query[[m.name for m in cols]].to_numpy(dtype=object)
    # trec_line's format, with what is the same on every line made once (900k lines for
    # 10,000 queries of all_trec).
    heads = [_head(m, shown, z) for m in cols]
    kinds = [_kind(m, z) for m in cols]
    lines: list[str] = []
    for qid, row in zip(per_query["query_id"].tolist(), table.tolist()):
        q = escape(qid) + "\t"
        lines.extend(h + q + trec_value(v, k) for h, k, v in zip(heads, kinds, row))
    return lines


def _summary_lines(
    per_query, ms: list, shown: dict[str, str], runid: str | None, want_num_q: bool, z: bool
) -> list[str]:
    """The ``all`` lines: ``runid`` (when asked), ``num_q`` and each measure's summary."""
    from ..engine.measures import summarize

    summary = summarize(per_query, [m for m in ms if m.family != "num_q"])
    lines = [] if runid is None else [f"{'runid':<22}\tall\t{escape(runid)}"]
    if want_num_q:
        lines.append(("Z" if z else "") + trec_line("num_q", "all", len(per_query), "float" if z else "int"))
    row = cast(Any, summary.iloc[0] if len(summary) else None)  # -m runid alone: no measure, no row
    lines.extend(
        _head(m, shown, z) + "all\t" + trec_value(row[m.name], _kind(m, z))
        for m in ms
        if m.family not in PER_QUERY_ONLY
    )
    return lines
