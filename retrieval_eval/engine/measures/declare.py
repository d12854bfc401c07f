"""What a measure family declares: :class:`Family` (its name, parameter, aggregate, definition,
aliases ...) and :class:`Measure` (a family with its parameters bound: one column of results).

Each family module of this package declares its families (``FAMILIES = (Family(...), ...)``)
next to the code that computes them; :mod:`.registry` collects them into :data:`FAMILIES`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    #: What it reads of a ranking: "whole" (R-precision, bpref, num_ret ...), or "cutoff" (only
    #: the top k, k its parameter): the scan reads no deeper than the measures asked need.
    reads: str = "whole"


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
        return FAMILIES[self.family]  # the registry's table (filled by .registry)

    @property
    def depth(self) -> int | None:
        """How far down a ranking this measure reads: its cutoff, or None (the whole ranking)."""
        return int(self.param) if self.spec.reads == "cutoff" else None

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"


#: Every family by canonical name: filled by :mod:`.registry` from its modules' declarations.
FAMILIES: dict[str, Family] = {}
