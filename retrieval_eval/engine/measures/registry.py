"""The measure registry: every catalogue measure declared once, and the one name parser.

A measure is a value (:class:`Measure`): its family, its parameters and its canonical name.
:func:`parse_measure` turns any name people type into a list of them (a trec_eval family name
with no parameter stands for its default cutoffs, as in trec_eval: ``P`` is ``P_5`` ...
``P_1000``). Four spellings are understood, all through the same table:

* trec_eval's: ``P_10``, ``P.5,10`` (one measure per parameter), ``ndcg_cut_10``, ``map``,
  ``recip_rank``, ``Rprec``, ``bpref``, ``iprec_at_recall_0.10``, ``Rprec_mult_0.20``, ...;
* ir_measures': ``P@10``, ``P(rel=2)@5``, ``nDCG@10``, ``AP``, ``AP@10``, ``RR``, ``R@10``,
  ``Rprec``, ``Bpref``, ``Judged@10``, ``SetP``, ``IPrec@0.1``, ``NumRet`` ...;
* ranx's: ``precision@10``, ``recall@10``, ``hits@10``, ``hit_rate@10``, ``r_precision``,
  ``mrr``, ``map``, ``map@10``, ``ndcg_burges@10``, ``bpref``;
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
import importlib
import re
from dataclasses import dataclass, field

import pandas as pd

#: trec_eval's default parameters of its cutoff families (measures.c of trec_eval 9.0.8).
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(round(0.1 * i, 2) for i in range(11))
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
SUCCESS_CUTOFFS = (1, 5, 10)


@dataclass(frozen=True)
class Family:
    """One measure family: its trec_eval name and how its parameter is spelled."""

    name: str  # canonical (trec_eval) base name
    module: str  # the module of retrieval_eval.measures that computes it
    param: str | None  # None, "cutoff" (int), "level" (float, 2 decimals), "beta"
    defaults: tuple = ()
    aggregate: str = "mean"  # "mean", "gmean" (trec_eval's gm_*) or "sum" (num_*)
    kind: str = "float"  # "float", or "int" (trec_eval prints it as an integer)
    definition: str = ""
    aliases: tuple[str, ...] = ()  # other spellings (ir_measures, ranx, this project)
    verified: str = "pytrec_eval (trec_eval 9.0.8)"
    gain: str | None = None  # ndcg: "linear" or "exponential"
    style: str = "trec"  # canonical name: "trec" (P_10) or "at" (ir_measures' Judged@10)


@dataclass(frozen=True)
class Measure:
    """One measure with its parameters bound: what a column of results is.

    ``name`` is the canonical name (the column name); ``param`` the cutoff, recall level,
    multiplier or beta; ``rel`` the relevance level (None: the caller's, 1 by default).
    """

    family: str
    param: float | int | None = None
    rel: int | None = None
    name: str = field(default="", compare=False)

    @property
    def spec(self) -> Family:
        return FAMILIES[self.family]

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"


def _fmt_param(family: Family, value) -> str:
    if family.param == "level":
        return f"{float(value):.2f}"
    if family.param == "beta":
        return "" if float(value) == 1.0 else f"_{float(value):g}"
    return str(int(value))


def _name(family: Family, param, rel: int | None) -> str:
    base = family.name
    if rel is not None:
        base = f"{base}(rel={rel})"
    if family.param is None:
        return base
    if family.param == "beta":
        return base + _fmt_param(family, param)
    if family.style == "at":
        return f"{base}@{_fmt_param(family, param)}"
    sep = "" if base.endswith("_") else "_"
    return f"{base}{sep}{_fmt_param(family, param)}"


def make(family: str, param=None, rel: int | None = None) -> Measure:
    """The measure of ``family`` with ``param`` bound (checked), named canonically."""
    fam = FAMILIES[family]
    if fam.param is None:
        param = None
    elif param is None:
        raise ValueError(f"{family} needs a parameter")
    elif fam.param == "cutoff":
        if float(param) != int(float(param)) or int(float(param)) < 1:
            raise ValueError(f"{family}: the cutoff must be a positive integer, got {param!r}")
        param = int(float(param))
    else:
        param = round(float(param), 2) if fam.param == "level" else float(param)
        if fam.param == "level" and family == "iprec_at_recall" and not 0.0 <= param <= 1.0:
            raise ValueError(f"{family}: the recall level must be within [0, 1], got {param!r}")
        if param < 0:
            raise ValueError(f"{family}: the parameter must be >= 0, got {param!r}")
        if fam.param == "beta" and param != 1.0:
            raise ValueError(f"{family}: only beta 1 is in the catalogue (the one checked "
                             "against trec_eval)")
    if rel is not None and (isinstance(rel, bool) or int(rel) != rel or rel < 1):
        raise ValueError(f"rel must be an integer >= 1, got {rel!r}")
    return Measure(family, param, None if rel is None else int(rel), name=_name(fam, param, rel))


_F = Family
FAMILIES: dict[str, Family] = {f.name: f for f in [
    _F("num_q", "counts", None, aggregate="count", kind="int",
       definition="Number of queries evaluated (trec_eval prints only its 'all' value).",
       aliases=("NumQ",)),
    _F("num_ret", "counts", None, aggregate="sum", kind="int",
       definition="Number of documents retrieved (after -M).", aliases=("NumRet",)),
    _F("num_rel", "counts", None, aggregate="sum", kind="int",
       definition="Number of relevant documents judged (grade >= the relevance level).",
       aliases=("NumRel",)),
    _F("num_rel_ret", "counts", None, aggregate="sum", kind="int",
       definition="Number of relevant documents retrieved.", aliases=("NumRelRet",)),
    _F("map", "ap", None,
       definition="Average precision: the sum of the precision at each relevant document "
                  "retrieved, over the number relevant.",
       aliases=("AP", "map")),
    _F("gm_map", "ap", None, aggregate="gmean",
       definition="Average precision; its summary is the geometric mean (each query's AP "
                  "floored at 1e-5); the per-query value printed is log(max(AP, 1e-5)).",
       aliases=("GMAP",)),
    _F("Rprec", "ap", None,
       definition="Precision at rank R, R the number of relevant documents.",
       aliases=("Rprec", "r_precision", "R-precision", "rprec")),
    _F("bpref", "bpref", None,
       definition="Binary preference: mean over relevant documents of 1 - (judged "
                  "non-relevant ranked above it, at most R) / min(R, N).",
       aliases=("Bpref",)),
    _F("gm_bpref", "bpref", None, aggregate="gmean",
       definition="bpref; its summary is the geometric mean (each query's floored at 1e-5); "
                  "the per-query value is log(max(bpref, 1e-5)).",
       aliases=()),
    _F("infAP", "bpref", None,
       definition="Inferred AP (Yilmaz & Aslam 2006): AP estimated from a judged sample; "
                  "negative grades mark pool documents left unjudged.",
       aliases=("infAP",)),
    _F("recip_rank", "ranks", None,
       definition="Reciprocal rank of the first relevant document (0 without one).",
       aliases=("RR", "mrr", "MRR")),
    _F("iprec_at_recall", "ap", "level", RECALL_LEVELS,
       definition="Interpolated precision at a recall level: the highest precision at any "
                  "rank whose recall reaches the level.",
       aliases=("IPrec",)),
    _F("11pt_avg", "ap", None,
       definition="Mean of the interpolated precision at recall 0.0, 0.1, ..., 1.0.",
       aliases=("11pt",)),
    _F("P", "ranks", "cutoff", CUTOFFS,
       definition="Precision at k: relevant retrieved in the top k, over k.",
       aliases=("P", "precision")),
    _F("relative_P", "ranks", "cutoff", CUTOFFS,
       definition="Relative precision at k: relevant in the top k over min(R, k).",
       aliases=()),
    _F("recall", "ranks", "cutoff", CUTOFFS,
       definition="Recall at k: relevant retrieved in the top k, over R.",
       aliases=("R", "recall")),
    _F("success", "ranks", "cutoff", SUCCESS_CUTOFFS,
       definition="1 if a relevant document is in the top k, else 0.",
       aliases=("Success", "hits", "hit_rate")),
    _F("map_cut", "ap", "cutoff", CUTOFFS,
       definition="Average precision over the top k only (divided by R, not by min(R, k)).",
       aliases=("AP",)),
    _F("Rprec_mult", "ap", "level", RPREC_MULTS,
       definition="Precision at rank m * R (rounded), R the number relevant.",
       aliases=()),
    _F("ndcg", "ndcg", None, gain="linear",
       definition="nDCG over the whole ranking: gain = grade, discount log2(rank + 1), ideal "
                  "= every judged grade sorted.",
       aliases=("nDCG",)),
    _F("ndcg_rel", "ndcg", None, gain="linear",
       definition="trec_eval's ndcg_rel: nDCG averaged over the ranks of the relevant "
                  "documents (the unretrieved ones taking the final nDCG).",
       aliases=()),
    _F("Rndcg", "ndcg", None, gain="linear",
       definition="trec_eval's Rndcg: nDCG averaged over the ranks where the ideal gain drops.",
       aliases=()),
    _F("ndcg_cut", "ndcg", "cutoff", CUTOFFS, gain="linear",
       definition="nDCG at k with trec_eval's linear gain (the grade).",
       aliases=("nDCG", "ndcg_linear")),
    _F("ndcg_exp_cut", "ndcg", "cutoff", CUTOFFS, gain="exponential",
       definition="nDCG at k with the spec's exponential gain 2**grade - 1.",
       aliases=("ndcg", "ndcg_burges"), verified="hand-computed values (tests)"),
    _F("set_P", "sets", None,
       definition="Precision of the retrieved set: relevant retrieved over retrieved.",
       aliases=("SetP",)),
    _F("set_recall", "sets", None,
       definition="Recall of the retrieved set: relevant retrieved over R.",
       aliases=("SetR",)),
    _F("set_relative_P", "sets", None,
       definition="Relevant retrieved over min(R, retrieved).",
       aliases=("SetRelP",)),
    _F("set_map", "sets", None,
       definition="set_P * set_recall.",
       aliases=("SetAP",)),
    _F("set_F", "sets", "beta", (1.0,),
       definition="F-measure of the retrieved set: (1 + b^2) P R / (b^2 P + R), beta 1.",
       aliases=("SetF",)),
    _F("G", "gains", None,
       definition="trec_eval's G: gain discounted by log2 of the ideal cost so far minus the "
                  "gain so far, over the ideal total gain.",
       aliases=()),
    _F("binG", "gains", None,
       definition="G with binary gain: mean over relevant documents of 1 / log2(2 + "
                  "non-relevant retrieved before it).",
       aliases=()),
    _F("utility", "gains", None,
       definition="Set utility with trec_eval's default coefficients (1, -1, 0, 0): relevant "
                  "retrieved minus non-relevant retrieved.",
       aliases=()),
    _F("Judged", "judged", "cutoff", (10,), style="at",
       definition="Share of the top k retrieved (k, or fewer when the ranking is shorter) that "
                  "has a label for the query (ir_measures' Judged@k).",
       aliases=("Judged",), verified="ir_measures 0.4 (its judged provider)"),
    _F("num_nonrel_judged_ret", "counts", None, aggregate="sum", kind="int",
       definition="Number of retrieved documents judged non-relevant (0 <= grade < level).",
       aliases=()),
]}

#: The catalogue's later families (issue 14): each module declares its FAMILIES and parses its
#: own ir_measures call syntax (``RBP(p=0.8)``, ``SDCG(max_rel=3)@10``) with ``parse``.
EXTRA_MODULES = tuple(importlib.import_module(f".{_m}", __package__)
                      for _m in ("rbp", "err", "cwl", "compat", "variants", "ranx_names", "trec_params"))
for _mod in EXTRA_MODULES:
    FAMILIES.update({_f.name: _f for _f in _mod.FAMILIES})

#: Measures whose names take a cutoff after ``@`` in ir_measures / ranx / project style.
_AT_NAMES = {
    "p": "P", "precision": "P", "r": "recall", "recall": "recall", "success": "success",
    "hits": "success", "hit_rate": "success", "ap": "map_cut", "map": "map_cut",
    "ndcg": "ndcg_exp_cut", "ndcg_burges": "ndcg_exp_cut", "ndcg_linear": "ndcg_cut",
    "rr": "recip_rank_cut", "mrr": "recip_rank_cut", "iprec": "iprec_at_recall",
}
_AT_CASE = {"nDCG": "ndcg_cut", "Judged": "Judged"}  # case-sensitive: ir_measures' nDCG@k is trec_eval's
#: Whole-ranking names in other spellings (case-insensitive unless listed in _PLAIN_CASE).
_PLAIN = {
    "ap": "map", "map": "map", "gmap": "gm_map", "rprec": "Rprec", "r_precision": "Rprec",
    "r-precision": "Rprec", "bpref": "bpref", "rr": "recip_rank", "mrr": "recip_rank",
    "recip_rank": "recip_rank", "setp": "set_P", "setr": "set_recall", "setf": "set_F",
    "setap": "set_map", "setrelp": "set_relative_P", "numq": "num_q", "numret": "num_ret",
    "numrel": "num_rel", "numrelret": "num_rel_ret", "11pt": "11pt_avg",
}
_PLAIN_CASE = {"nDCG": "ndcg"}


def _families_by_lower() -> dict[str, str]:
    return {name.lower(): name for name in FAMILIES}


def _split_rel(text: str) -> tuple[str, int | None, str]:
    """``P(rel=2)@5`` -> ("P", 2, "@5"); ``RBP(p=0.8)`` keeps args it does not know."""
    m = re.fullmatch(r"([A-Za-z0-9_\-]+)\(([^)]*)\)(.*)", text)
    if not m:
        base, at, cut = text.partition("@")
        return base, None, at + cut
    base, args, rest = m.groups()
    rel = None
    for arg in filter(None, (a.strip() for a in args.split(","))):
        key, _, value = arg.partition("=")
        if key.strip() != "rel" or not re.fullmatch(r"-?\d+", value.strip()):
            raise UnknownMeasure(text, f"unsupported argument {arg!r}")
        rel = int(value)
    return base, rel, rest


class UnknownMeasure(ValueError):
    """A measure name the registry cannot parse; the message suggests the closest names."""

    def __init__(self, name: str, why: str | None = None):
        close = difflib.get_close_matches(name, _all_spellings(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        why = f" ({why})" if why else ""
        super().__init__(f"unknown measure {name!r}{why}{hint} (rev.measures() lists them all)")


def _all_spellings() -> list[str]:
    out = []
    for fam in FAMILIES.values():
        if fam.param in (None, "beta"):
            out.append(fam.name)
            out.extend(fam.aliases)
        else:
            out.append(fam.name)
            out.append(_name(fam, fam.defaults[0], None))
            out.extend(f"{a}@{_fmt_param(fam, fam.defaults[0])}" for a in fam.aliases)
    return sorted(set(out))


def parse_measure(name: str) -> list[Measure]:
    """Every measure a name stands for, in parameter order.

    ``P_10`` -> [P_10]; ``P.5,10`` -> [P_5, P_10]; ``P`` -> trec_eval's default cutoffs;
    ``nDCG@10`` -> [ndcg_cut_10]; ``P(rel=2)@5`` -> [P(rel=2)_5]. Raises
    :class:`UnknownMeasure` (a ``ValueError``) naming the closest known names.
    """
    if not isinstance(name, str) or not name.strip():
        raise UnknownMeasure(str(name), "a measure name is a non-empty string")
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
        found = module.parse(text)
        if found is not None:
            return found
    # trec_eval parameter syntax: P.5,10 ; iprec_at_recall.0.1,0.5
    if "." in text and "(" not in text and "@" not in text:
        base, _, params = text.partition(".")
        fam = FAMILIES.get(base)
        if fam is not None and fam.param is not None:
            return [make(base, p) for p in params.split(",") if p.strip()] or _bad(text)
    base, rel, rest = _split_rel(text)
    if rest.startswith("@"):
        cut = rest[1:]
        fam = _AT_CASE.get(base) or _AT_NAMES.get(base.lower())
        if fam == "recip_rank_cut" or fam is None:
            _bad(text, "no such measure with a cutoff" if fam is None else
                 "reciprocal rank with a cutoff is not in the catalogue yet")
        return [make(fam, cut, rel)]
    if rest:
        _bad(text)
    family = base if base in FAMILIES else _PLAIN_CASE.get(base) or _PLAIN.get(base.lower())
    if family is not None:
        fam = FAMILIES[family]
        return [make(family, None, rel)] if fam.param is None else [
            make(family, p, rel) for p in fam.defaults]
    # P_10, ndcg_cut_10, iprec_at_recall_0.10, Rprec_mult_0.20, set_F_0.5
    m = re.fullmatch(r"(.+?)_(\d+(?:\.\d+)?)", base)
    if m and m.group(1) in FAMILIES and FAMILIES[m.group(1)].param is not None:
        return [make(m.group(1), m.group(2), rel)]
    if base.lower() in lower and FAMILIES[lower[base.lower()]].param is None:
        return [make(lower[base.lower()], None, rel)]
    _bad(text)


def _bad(text: str, why: str | None = None):
    raise UnknownMeasure(text, why)


def parse_measures(names) -> list[Measure]:
    """Parse a name or a list of names (or :class:`Measure` values, kept as they are);
    duplicates (same canonical name) kept once, in order."""
    if isinstance(names, (str, Measure)):
        names = [names]
    out: dict[str, Measure] = {}
    for n in names:
        for m in ([n] if isinstance(n, Measure) else parse_measure(n)):
            out.setdefault(m.name, m)
    return list(out.values())


def measures() -> pd.DataFrame:
    """Every measure family of the catalogue, one row each.

    Columns: ``name`` (canonical, trec_eval's), ``aliases`` (other spellings, comma
    separated), ``parameter`` (what its parameter is, with trec_eval's defaults), ``cutoff``
    (whether the parameter is a rank cutoff), ``aggregate`` (how trec_eval summarizes it),
    ``definition`` (one line) and ``verified_against`` (the oracle of its tests).
    """
    rows = []
    for fam in FAMILIES.values():
        if fam.param is None:
            param = ""
        else:
            param = f"{fam.param}: " + ",".join(_fmt_param(fam, d).lstrip("_") or "1" for d in fam.defaults)
        rows.append({
            "name": fam.name,
            "aliases": ", ".join(dict.fromkeys(a for a in fam.aliases if a != fam.name)),
            "parameter": param,
            "cutoff": fam.param == "cutoff",
            "aggregate": fam.aggregate,
            "definition": fam.definition,
            "verified_against": fam.verified,
        })
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
    for row in table.itertuples(index=False):
        aliases = ", ".join(f"`{a}`" for a in row.aliases.split(", ") if a)
        lines.append(f"| `{row.name}` | {aliases} | {row.parameter} | {row.aggregate} | "
                     f"{row.definition} | {row.verified_against} |")
    return "\n".join(lines)
