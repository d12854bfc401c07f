"""What a measure family declares: :class:`Family` (its name, parameter, aggregate, definition,
aliases ...) and :class:`Measure` (a family with its parameters bound: one column of results).

Each family module of this package declares its families (``FAMILIES = (Family(...), ...)``)
next to the code that computes them; :mod:`.registry` collects them into :data:`FAMILIES`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

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
    defaults: tuple[Any, ...] = ()
    aggregate: str = "mean"  # "mean", "gmean" (trec_eval's gm_*) or "sum" (num_*)
    kind: str = "float"  # "float", or "int" (trec_eval prints it as an integer)
    definition: str = ""
    aliases: tuple[str, ...] = ()  # other spellings (ir_measures, ranx, this project)
    verified: str = "pytrec_eval (trec_eval 9.0.8)"
    gain: str | None = None  # ndcg: "linear" or "exponential"
    style: str = "trec"  # canonical name: "trec" (P_10) or "at" (ir_measures' Judged@10)
    #: What it reads of a ranking: "whole" (R-precision, bpref, num_ret ...), or "cutoff" (only
    #: the top k, k its parameter): the scan reads no deeper than the measures asked need.
    reads: str = "whole"
    #: The base of its canonical names when that is not ``name`` (``RR@10`` for the family
    #: ``recip_rank_cut``, whose plain ``RR`` would be trec_eval's ``recip_rank``).
    label: str | None = None
    #: A parameter the plain name goes without (``param`` None), for the table of
    #: :func:`.registry.measures`: ``"gains: grade=gain,... (default: the grade)"``.
    optional: str = ""
    #: Whether its value depends on the relevance level (``rel=``): a family that does not read
    #: it (``num_ret``, ``Judged``) refuses ``rel=`` rather than ignore it.
    reads_rel: bool = True


@dataclass(frozen=True)
class Measure:
    """One measure with its parameters bound: what a column of results is.

    ``name`` is the canonical name (the column name); ``param`` the cutoff, recall level,
    multiplier or beta; ``rel`` the relevance level (None: the caller's, 1 by default).
    """

    family: str
    # a number for trec_eval's families; a tuple, a gain map or the wrapped Measure for the
    # ir_measures calls and the variants (each family's own code reads its own shape)
    param: Any = None
    rel: int | None = None
    name: str = field(default="", compare=False)

    @property
    def spec(self) -> Family:
        return FAMILIES[self.family]  # the registry's table (filled by .registry)

    @property
    def depth(self) -> int | None:
        """How far down a ranking this measure reads: its cutoff, or None (the whole ranking)."""
        return int(self.param) if self.spec.reads == "cutoff" else None

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"


#: Every family by canonical name: filled by :mod:`.registry` from its modules' declarations.
FAMILIES: dict[str, Family] = {}


def fmt_param(family: Family, value: float) -> str:
    if family.param == "level":
        return f"{float(value):.2f}"
    if family.param == "beta":
        return "" if float(value) == 1.0 else f"_{float(value):g}"
    return str(int(value))


def name_of(family: Family, param: Any, rel: int | None) -> str:
    base = family.label or family.name
    if rel is not None:
        base = f"{base}(rel={rel})"
    if family.param is None:
        return base
    if family.param == "beta":
        return base + fmt_param(family, param)
    if family.style == "at":
        return f"{base}@{fmt_param(family, param)}"
    sep = "" if base.endswith("_") else "_"
    return f"{base}{sep}{fmt_param(family, param)}"


#: The largest cutoff, and the largest gain of a gain map: what a 32-bit signed int holds
#: (past any ranking's length; the arrays are int64, so nothing computed with one overflows).
MAX_PARAM = 2**31 - 1


def _finite(value: Any) -> float | None:
    """``value`` as a finite float, else None (not a number, NaN or infinite)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def make(family: str, param: Any = None, rel: int | None = None) -> Measure:
    """The measure of ``family`` with ``param`` bound (checked), named canonically."""
    fam = FAMILIES[family]
    if fam.param is None:
        param = None
    elif param is None:
        raise ValueError(f"{family} needs a parameter")
    elif fam.param == "cutoff":
        x = _finite(param)
        if x is None or x != int(x) or not 1 <= x <= MAX_PARAM:
            raise ValueError(f"{family}: the cutoff must be a positive integer up to {MAX_PARAM:,}, got {param!r}")
        param = int(x)
    else:
        x = _finite(param)
        if x is None:
            raise ValueError(f"{family}: the parameter must be a number, got {param!r}")
        param = round(x, 2) if fam.param == "level" else x
        if fam.param == "level" and family == "iprec_at_recall" and not 0.0 <= param <= 1.0:
            raise ValueError(f"{family}: the recall level must be within [0, 1], got {param!r}")
        if param < 0:
            raise ValueError(f"{family}: the parameter must be >= 0, got {param!r}")
        if fam.param == "beta" and param != 1.0:
            raise ValueError(f"{family}: only beta 1 is in the catalogue (the one checked against trec_eval)")
    if rel is not None and not fam.reads_rel:
        raise ValueError(f"{family} does not read a relevance level: rel={rel!r} would be ignored")
    if rel is not None and (isinstance(rel, bool) or int(rel) != rel or rel < 1):
        raise ValueError(f"rel must be an integer >= 1, got {rel!r}")
    return Measure(family, param, None if rel is None else int(rel), name=name_of(fam, param, rel))
