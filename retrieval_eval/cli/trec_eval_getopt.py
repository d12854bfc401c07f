"""trec_eval's command line read as its ``getopt_long`` reads it (:func:`getopt_argv`), for the
``trec_eval`` command (:mod:`.trec_eval`): attached and separate values, clustered flags, long
forms and their prefixes, ``--``.
"""

from __future__ import annotations

from .common import CLIError

#: trec_eval 10.0's options (trec_eval.c's getopt_long string "hvqm:cl:nD:JN:M:R:T:oZ:" and its
#: long forms): short letter -> (long name, takes a value).
GETOPT = {
    "h": ("help", False),
    "v": ("version", False),
    "q": ("query_eval_wanted", False),
    "m": ("measure", True),
    "c": ("complete_rel_info_wanted", False),
    "l": ("level_for_rel", True),
    "n": ("nosummary", False),
    "D": ("Debug_level", True),
    "J": ("Judged_docs_only", False),
    "N": ("Number_docs_in_coll", True),
    "M": ("Max_retrieved_per_topic", True),
    "R": ("Rel_info_format", True),
    "T": ("Results_format", True),
    "o": ("Output_old_results_format", False),
    "Z": ("Zscore", True),
}
#: The options this drop-in reads: all of trec_eval 10.0's but ``-v`` (its version banner), which
#: is refused naming it (never a silent difference). The values ``-D``, ``-T`` and ``-R`` take are
#: checked by the command (:mod:`.trec_eval_options`).
SUPPORTED = set("hqmclnDJNMRToZ")
#: This command's own long options (not trec_eval's), passed through as they are.
OWN_LONG = ("--compat",)


def getopt_argv(tokens: list[str]) -> list[str]:
    """trec_eval's command line (what follows ``trec_eval``) read as its getopt_long reads it,
    rewritten one option a token (``-M 100``), which the command's argparse parser reads.

    getopt takes a value attached (``-M100``, ``-mP.5,10``) or in the next token (``-M 100``),
    clustered flags (``-qc``, ``-qcM100``), long forms with ``=`` or a separate value
    (``--measure=map``, ``--Max_retrieved_per_topic 100``) and any unambiguous prefix of a long
    name (``--meas=map``); operands may come before options, and ``--`` ends the options.

    Raises
    ------
    CLIError
        An option trec_eval does not have, an option without its value, or one of trec_eval's
        that this drop-in does not implement (named, with what it is).
    """
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok == "--":
            out.extend(tokens[i - 1 :])
            break
        if tok.startswith("--"):
            name, eq, value = tok[2:].partition("=")
            if any(tok.startswith(own) for own in OWN_LONG):
                out.append(tok)
                if not eq and i < len(tokens):
                    out.append(tokens[i])
                    i += 1
                continue
            hits = [k for k, (long, _) in GETOPT.items() if long == name] or [
                k for k, (long, _) in GETOPT.items() if long.startswith(name) and name
            ]
            if len(hits) != 1:
                why = "ambiguous" if hits else "unrecognized"
                raise CLIError(f"trec_eval: {why} option '--{name}'; see 'retrieval-eval trec_eval --help'")
            letter = hits[0]
            if GETOPT[letter][1] and not eq:
                if i >= len(tokens):
                    raise CLIError(f"trec_eval: option '--{GETOPT[letter][0]}' requires an argument")
                value, i = tokens[i], i + 1
            out.extend(_option(letter, value if GETOPT[letter][1] else None))
            continue
        if not tok.startswith("-") or tok == "-":
            out.append(tok)
            continue
        j = 1
        while j < len(tok):
            letter = tok[j]
            j += 1
            if letter not in GETOPT:
                raise CLIError(f"trec_eval: invalid option -- '{letter}'; see 'retrieval-eval trec_eval --help'")
            if not GETOPT[letter][1]:
                out.extend(_option(letter, None))
                continue
            value = tok[j:]
            if not value:
                if i >= len(tokens):
                    raise CLIError(f"trec_eval: option requires an argument -- '{letter}'")
                value, i = tokens[i], i + 1
            out.extend(_option(letter, value))
            break
    return out


def _option(letter: str, value: str | None) -> list[str]:
    """One getopt option as this command's tokens, or the refusal of an unsupported one."""
    if letter not in SUPPORTED:
        long = GETOPT[letter][0]
        raise CLIError(
            f"trec_eval: option -{letter} (--{long}) is not supported by this drop-in "
            "(docs/trec_eval-versions.md lists what is)"
        )
    if letter == "h":
        return ["--help"]
    return [f"-{letter}"] if value is None else [f"-{letter}", value]
