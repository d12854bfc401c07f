"""The measure registry: the families each module of :data:`MODULES` declares (its
``FAMILIES``), collected into one table, and the one name parser.

A measure is a value (:class:`Measure`): its family, its parameters and its canonical name.
:func:`parse_measure` turns any name people type into a list of them (a trec_eval family name
with no parameter stands for its default cutoffs, as in trec_eval: ``P`` is ``P_5`` ...
``P_1000``). Four spellings are understood, all through the same table:

* trec_eval's: ``P_10``, ``P.5,10`` (one measure per parameter), ``ndcg_cut_10``, ``map``,
  ``recip_rank``, ``Rprec``, ``bpref``, ``iprec_at_recall_0.10``, ``Rprec_mult_0.20``, ...;
* ir_measures': ``P@10``, ``P(rel=2)@5``, ``nDCG@10``, ``AP``, ``AP@10``, ``RR``, ``R@10``,
  ``Rprec``, ``Bpref``, ``Judged@10``, ``SetP``, ``IPrec@0.1``, ``NumRet`` ...;
* ranx's: ``precision@10``, ``recall@10``, ``hits@10`` (a count), ``hit_rate@10``,
  ``r_precision``, ``mrr``, ``mrr@10``, ``map``, ``map@10``, ``ndcg_burges@10``, ``bpref``;
* this project's own: ``precision@10``, ``recall@10``, ``ndcg@10``, ``ndcg_linear@10``,
  ``mrr@10``, ``map@10``, ``hit_rate@10``, ``judged@10``.

**Canonical names** are trec_eval's output names (``P_10``, ``ndcg_cut_10``), which is what
scripts parsing trec_eval's output already read; a measure trec_eval lacks is named the
ir_measures way (``Judged@10``, ``success_10`` is trec_eval's). A relevance level other than
the default shows in the name (``P(rel=2)_10``).

**The ambiguous name rule.** ``ndcg@k`` means exponential gain (``2**g - 1``) in this project
and in the spec, but linear gain in ranx. This project's meaning wins, so a name means the
same thing in ``evaluate(k=...)`` columns and in ``measures=``: ``ndcg@10`` (and ranx's
``ndcg_burges@10``) is the exponential-gain measure, canonical name ``ndcg_exp_cut_10``;
trec_eval's ``ndcg_cut_10``, ir_measures' ``nDCG@10`` and this project's ``ndcg_linear@10``
are the linear-gain one, canonical name ``ndcg_cut_10``. The column name always says which.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Iterable
from typing import Any, NoReturn, cast

import pandas as pd

from . import (
    ap,
    avgjg,
    bpref,
    compat,
    counts,
    cwl,
    err,
    gains,
    irm,
    judged,
    ndcg,
    prefs,
    ranks,
    ranx_names,
    rbp,
    relstring,
    sets,
    trec_params,
    trec_rbp,
    unjudged,
    variants,
)
from .declare import CUTOFFS, RECALL_LEVELS, RPREC_MULTS, SUCCESS_CUTOFFS, Family, fmt_param, name_of  # noqa: F401  (re-exported: the registry's names)
from .declare import FAMILIES as FAMILIES
from .declare import Measure as Measure
from .declare import make as make

#: The family modules, in the order of :func:`measures`' table. Each declares
#: ``FAMILIES = (Family(...), ...)`` and ``compute(measure, arrays, level) -> np.ndarray``.
MODULES = (counts, ap, bpref, ranks, ndcg, sets, gains, judged, unjudged, relstring, prefs, avgjg)
for _module in MODULES:
    FAMILIES.update({f.name: f for f in _module.FAMILIES})

#: The catalogue's later families (issue 14): each module declares its FAMILIES and parses its
#: own ir_measures call syntax (``RBP(p=0.8)``, ``SDCG(max_rel=3)@10``) with ``parse``.
#: Each ``parse(text, parse_measure)`` reads its syntax or returns None; the registry's own
#: parser is handed in, so a wrapper (``nDCG(judged_only=True)@10``) parses what it wraps
#: without importing the registry.
EXTRA_MODULES = (rbp, trec_rbp, err, cwl, compat, variants, ranx_names, trec_params)
for _mod in EXTRA_MODULES:
    FAMILIES.update({_f.name: _f for _f in _mod.FAMILIES})

#: Measures whose names take a cutoff after ``@`` in ir_measures / ranx / project style.
_AT_NAMES = {
    "p": "P",
    "precision": "P",
    "r": "recall",
    "recall": "recall",
    "success": "success",
    "hits": "hits",
    "hit_rate": "success",
    "ap": "map_cut",
    "map": "map_cut",
    "ndcg": "ndcg_exp_cut",
    "ndcg_burges": "ndcg_exp_cut",
    "ndcg_linear": "ndcg_cut",
    "rr": "recip_rank_cut",
    "mrr": "recip_rank_cut",
    "iprec": "iprec_at_recall",
}
_AT_CASE = {"nDCG": "ndcg_cut", "Judged": "Judged"}  # case-sensitive: ir_measures' nDCG@k is trec_eval's
#: Whole-ranking names in other spellings (case-insensitive unless listed in _PLAIN_CASE).
_PLAIN = {
    "ap": "map",
    "map": "map",
    "gmap": "gm_map",
    "rprec": "Rprec",
    "r_precision": "Rprec",
    "r-precision": "Rprec",
    "bpref": "bpref",
    "rr": "recip_rank",
    "mrr": "recip_rank",
    "recip_rank": "recip_rank",
    "setp": "set_P",
    "setr": "set_recall",
    "setf": "set_F",
    "setap": "set_map",
    "setrelp": "set_relative_P",
    "numq": "num_q",
    "numret": "num_ret",
    "numrel": "num_rel",
    "numrelret": "num_rel_ret",
    "11pt": "11pt_avg",
    "precision": "set_P",  # ranx's precision without k: the whole ranking (plain recall is trec_eval's)
}
_PLAIN_CASE = {"nDCG": "ndcg"}


def _families_by_lower() -> dict[str, str]:
    return {name.lower(): name for name in FAMILIES}


def _split_rel(text: str) -> tuple[str, int | None, str]:
    """``P(rel=2)@5`` -> ("P", 2, "@5"); ir_measures' keyword spellings of the cutoff and of
    beta are read too: ``Judged(cutoff=5)`` -> ("Judged", None, "@5"), ``SetF(beta=0.5)`` ->
    ("SetF", None, "_0.5"). Any other argument is refused, never ignored."""
    m = re.fullmatch(r"([A-Za-z0-9_\-]+)\(([^)]*)\)(.*)", text)
    if not m:
        base, at, cut = text.partition("@")
        return base, None, at + cut
    base, args, rest = m.groups()
    rel = None
    for arg in filter(None, (a.strip() for a in args.split(","))):
        key, _, value = (x.strip() for x in arg.partition("="))
        if key == "rel" and re.fullmatch(r"-?\d+", value):
            rel = int(value)
        elif key == "cutoff" and not rest and re.fullmatch(r"\d+", value):
            rest = f"@{value}"
        elif key == "beta" and not rest and re.fullmatch(r"\d+(\.\d*)?|\.\d+", value):
            rest = f"_{value}"
        else:
            raise UnknownMeasure(text, f"unsupported argument {arg!r}")
    return base, rel, rest


class UnknownMeasure(ValueError):
    """A measure name the registry cannot parse; the message suggests the closest names."""

    def __init__(self, name: str, why: str | None = None):
        close = [] if getattr(_SUGGESTING, "on", False) else _suggest(name)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        why = f" ({why})" if why else ""
        super().__init__(f"unknown measure {name!r}{why}{hint} (rev.measures() lists them all)")


#: Set while :func:`_suggest` tries its candidates (their errors make no suggestions).
_SUGGESTING = threading.local()


def _suggest(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` known names closest to ``name``, each one the parser reads.

    A name with a cutoff (``ndgc@10``, ``precison_5``) is matched on its stem, case aside,
    against every cutoff family's name and aliases, and the closest come back with the
    user's cutoff, in the user's syntax first (``nDCG@10``, ``ndcg@10``, then
    ``ndcg_cut_10``). Then the whole name is matched, case aside, against every spelling.
    """
    text = str(name).strip()
    found: list[str] = []
    m = re.fullmatch(r"(.+?)([@_.])(\d+)", text)
    if m and int(m.group(3)) > 0:
        stem, sep, cut = m.groups()
        spelled: dict[str, list[str]] = {}
        for fam in FAMILIES.values():
            if fam.param != "cutoff":
                continue
            for s in dict.fromkeys((fam.label or fam.name, fam.name, *fam.aliases)):
                if "(" not in s:
                    at = s != fam.name or fam.style == "at"
                    spelled.setdefault(s.lower(), []).append(f"{s}@{cut}" if at else f"{s}_{cut}")
        for key in difflib.get_close_matches(stem.lower(), list(spelled), n=n, cutoff=0.6):
            found.extend(spelled[key])
        found.sort(key=lambda s: ("@" in s) != (sep == "@"))  # stable: the user's syntax first
    lower: dict[str, list[str]] = {}
    for s in _all_spellings():
        lower.setdefault(s.lower(), []).append(s)
    for key in difflib.get_close_matches(text.lower(), list(lower), n=n, cutoff=0.5):
        found.extend(lower[key])
    out: list[str] = []
    _SUGGESTING.on = True
    try:
        for s in dict.fromkeys(found):
            # Never a name that looks like the input, or like one already offered, but differs
            # in case: nDCG@10 and ndcg@10 are two definitions (linear and exponential gain).
            if s == text or irm.same_look(s, text) or any(irm.same_look(s, o) for o in out):
                continue
            try:
                _parse(s)
            except ValueError:
                continue
            out.append(s)
            if len(out) == n:
                break
    finally:
        _SUGGESTING.on = False
    return out


def _all_spellings() -> list[str]:
    out = []
    for fam in FAMILIES.values():
        if fam.param in (None, "beta"):
            out.append(fam.name)
            out.extend(fam.aliases)
        else:
            out.append(fam.name)
            out.append(name_of(fam, fam.defaults[0], None))
            out.extend(f"{a}@{fmt_param(fam, fam.defaults[0])}" for a in fam.aliases)
    return sorted(set(out))


def parse_measure(name: str) -> list[Measure]:
    """Every measure a name stands for, in parameter order.

    ``P_10`` -> [P_10]; ``P.5,10`` -> [P_5, P_10]; ``P`` -> trec_eval's default cutoffs;
    ``nDCG@10`` -> [ndcg_cut_10]; ``P(rel=2)@5`` -> [P(rel=2)_5]. Raises
    :class:`UnknownMeasure` (a ``ValueError``) naming the closest known names.
    """
    if not isinstance(name, str) and irm.is_ir_measure(name):
        name = irm.measure_text(name)  # its repr is its parse string, read with its meaning
    if not isinstance(name, str) or not name.strip():
        raise UnknownMeasure(str(name), "a measure name is a non-empty string or an ir_measures measure")
    text = name.strip()
    try:
        return _parse(text)
    except UnknownMeasure:
        raise
    except ValueError as err:
        raise UnknownMeasure(text, str(err)) from None


def _parse(text: str) -> list[Measure]:
    lower = _families_by_lower()
    for module in EXTRA_MODULES:
        found = module.parse(text, parse_measure)
        if found is not None:
            return found
    # trec_eval parameter syntax: P.5,10 ; iprec_at_recall.0.1,0.5
    if "." in text and "(" not in text and "@" not in text:
        base, _, params = text.partition(".")
        fam: Any = FAMILIES.get(base)  # (the name is reused below for a family's name)
        if fam is not None and fam.param is not None:
            return [make(base, p) for p in params.split(",") if p.strip()] or _bad(text)
    base, rel, rest = _split_rel(text)
    if rest.startswith("@"):
        cut = rest[1:]
        fam = _AT_CASE.get(base) or _AT_NAMES.get(base.lower())
        if fam is None:
            _bad(text, "no such measure with a cutoff")
        return [make(fam, cut, rel)]
    family = _PLAIN_CASE.get(base) or (base if base in FAMILIES else _PLAIN.get(base.lower()))
    if rest.startswith("_") and family is not None and FAMILIES[family].param == "beta":
        out = _parse(f"{family}{rest}")  # SetF(beta=0.5) is set_F_0.5
        if rel is not None and not 1 <= rel == int(rel):
            _bad(text, f"rel must be an integer >= 1, got {rel}")
        return (
            out
            if rel is None
            else [Measure(m.family, m.param, rel, name=name_of(FAMILIES[m.family], m.param, rel)) for m in out]
        )
    if rest:
        _bad(text)
    if base.lower() == "numret" and rel is not None:
        return [make("num_rel_ret", None, rel)]  # ir_measures: NumRet(rel=r) counts grades >= r
    if family is not None:
        fam = FAMILIES[family]
        return [make(family, None, rel)] if fam.param is None else [make(family, p, rel) for p in fam.defaults]
    # P_10, ndcg_cut_10, iprec_at_recall_0.10, Rprec_mult_0.20, set_F_0.5
    m = re.fullmatch(r"(.+?)_(\d+(?:\.\d+)?)", base)
    if m and m.group(1) in FAMILIES and FAMILIES[m.group(1)].param is not None:
        return [make(m.group(1), m.group(2), rel)]
    if base.lower() in lower and FAMILIES[lower[base.lower()]].param is None:
        return [make(lower[base.lower()], None, rel)]
    _bad(text)


def _bad(text: str, why: str | None = None) -> NoReturn:
    raise UnknownMeasure(text, why)


def parse_measures(names: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse a name or a list of names (or :class:`Measure` values, kept as they are);
    duplicates (same canonical name) kept once, in order."""
    if isinstance(names, (str, Measure)) or irm.is_ir_measure(names):
        names = [cast("str | Measure", names)]
    out: dict[str, Measure] = {}
    for n in names:
        for m in [n] if isinstance(n, Measure) else parse_measure(n):
            out.setdefault(m.name, m)
    return list(out.values())


def measures() -> pd.DataFrame:
    """Every measure family of the catalogue, one row each.

    Columns: ``name`` (canonical, trec_eval's), ``aliases`` (other spellings, comma
    separated), ``parameter`` (what its parameter is, with trec_eval's defaults; an optional
    one, such as a gain map, with what the plain name means), ``cutoff``
    (whether the parameter is a rank cutoff), ``aggregate`` (how trec_eval summarizes it),
    ``definition`` (one line) and ``verified_against`` (the oracle of its tests).
    """
    rows = []
    for fam in FAMILIES.values():
        if fam.param is None:
            param = fam.optional
        else:
            param = f"{fam.param}: " + ",".join(fmt_param(fam, d).lstrip("_") or "1" for d in fam.defaults)
        rows.append(
            {
                "name": fam.name,
                "aliases": ", ".join(dict.fromkeys(a for a in fam.aliases if a != fam.name)),
                "parameter": param,
                "cutoff": fam.param == "cutoff",
                "aggregate": fam.aggregate,
                "definition": fam.definition,
                "verified_against": fam.verified,
            }
        )
    out = pd.DataFrame(rows)
    for col in ("name", "aliases", "parameter", "aggregate", "definition", "verified_against"):
        out[col] = out[col].astype(pd.StringDtype())
    out["cutoff"] = out["cutoff"].astype(bool)
    return out


def markdown_table() -> str:
    """:func:`measures` as the Markdown table of ``docs/metrics.md`` (a test keeps them equal)."""
    table = measures()
    head = "| name | aliases | parameter (trec_eval defaults) | aggregate | definition | verified against |"
    lines = [head, "|---|---|---|---|---|---|"]
    row: Any  # itertuples' rows are namedtuples the stubs cannot know the fields of
    for row in table.itertuples(index=False):
        aliases = ", ".join(f"`{a}`" for a in row.aliases.split(", ") if a)
        lines.append(
            f"| `{row.name}` | {aliases} | {row.parameter} | {row.aggregate} | "
            f"{row.definition} | {row.verified_against} |"
        )
    return "\n".join(lines)
