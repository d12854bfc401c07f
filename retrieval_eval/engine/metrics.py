"""The seed metrics: SPEC A3, once, vectorized over long DataFrames.

Every number the toolkit reports about rankings comes from :func:`compute` (the seed metrics,
precision@k ... judged@k) or from :func:`retrieval_eval.engine.measures.compute` (the trec_eval
catalogue); both read the run through :mod:`.scan`, where order, duplicates and the label join
are decided. The seed API (``score``, ``query_metrics``), the DataFrame API (``evaluate``), the
report, the CLI and the notebooks are thin faces on them.

**Definitions** (:data:`METRIC_NAMES`, :func:`metric_name`): each metric is declared once, in
:mod:`.measures.seed`, with its cutoff, relevance threshold and gain stated in its name when
they differ from the spec's defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..arrays import arrow as _arrow
from ..arrays import codes as _codes

# re-exported: callers read them here
from ..model import ID as ID
from ..model import UNSTRATIFIED as UNSTRATIFIED
from ..model import judgment_keys as judgment_keys
from . import scan

# Re-exported: the engine's public names as callers have always imported them.
from .labels import relevance_table as relevance_table
from .labels import strata_in_order as strata_in_order
from .labels import strata_of
from .labels import strata_span_queries as strata_span_queries
from .measures.seed import NAMES, SEED, metric_sums
from .scan import dedupe_run as dedupe_run

GAINS = ("exponential", "linear")
#: Per-query metrics, in the order they appear in every table (declared in :mod:`.measures.seed`).
METRIC_NAMES = NAMES
#: The six metrics the spec defines; ``judged`` is this project's addition.
SPEC_METRICS = METRIC_NAMES[:6]


def metric_name(metric: str, k: int, gain: str = "exponential") -> str:
    """The name a metric carries: ``ndcg@10``; ``ndcg_linear@10`` for trec_eval's gain.

    The name says what the number is, so a linear-gain nDCG can never be compared with (or
    gated as) the spec's exponential one by accident.
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    base = "ndcg_linear" if metric == "ndcg" and gain == "linear" else metric
    return f"{base}@{int(k)}"


#: The largest cutoff: ranks and cutoffs are int64 in the engine, and a larger k (which no
#: ranking can reach anyway) cannot be held, so it is refused rather than overflowing.
MAX_K = 2**63 - 1


#: The most distinct cutoffs one call scores. Every cutoff is a column of every measure, and the
#: report, gates and tables built on them grow with it (3,000 cutoffs took half a minute on the
#: 225 rankings of the demo); a report needs a handful, and a curve over every rank is a
#: per-rank question (``score_rows``), not thousands of cutoffs.
MAX_CUTOFFS = 100


def check_ks(k: int | np.integer | Iterable[int | np.integer]) -> tuple[int, ...]:
    """Normalize ``k`` (an int or an iterable of ints) to a sorted tuple of distinct cutoffs.

    Each cutoff is an integer from 1 to :data:`MAX_K`, and there are at most
    :data:`MAX_CUTOFFS` distinct ones; anything else raises ValueError."""
    ks = (k,) if isinstance(k, (int, np.integer)) else tuple(k)
    if not ks:
        raise ValueError("at least one cutoff k is needed")
    out = []
    for value in ks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"k must be a positive integer, got {value!r}")
        if value > MAX_K:
            raise ValueError(f"k must be at most {MAX_K} (the largest int64), got {value!r}")
        out.append(int(value))
    distinct = tuple(sorted(set(out)))
    if len(distinct) > MAX_CUTOFFS:
        raise ValueError(
            f"at most {MAX_CUTOFFS} cutoffs can be scored at once, got {len(distinct)}; "
            "ask for the cutoffs the report needs"
        )
    return distinct


def compute(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    k: int | Iterable[int] = (10,),
    threshold: int = 1,
    gain: str = "exponential",
) -> pd.DataFrame:
    """Per-query metrics for every system of ``run`` at every cutoff in ``k``: SPEC A3.

    ``judgments`` and ``run`` are the frames the readers return (``docs/data-model.md``).
    Returns one row per (system, query_id) for every judged query of every system, systems in
    first-appearance order, queries in the order they first appear in the judgments, with:

    * ``system``, ``query_id``, ``stratum`` (the query's stratum, ``_unstratified`` without);
    * ``n_judged``, ``n_relevant`` (labels at or above ``threshold``), ``retrieved``
      (deduplicated ranking length, up to the largest cutoff);
    * ``missing`` (the system has no ranking for the query: it scores zero, never dropped),
      ``no_positives`` (nothing at the threshold: excluded from averages), ``duplicates``
      (the ranking repeated a key anywhere, past the largest cutoff too; only the first
      occurrence counted);
    * ``top1_score``: the score of the first entry of the deduplicated ranking (NaN without
      scores), the signal out-of-distribution calibration works from;
    * one float column per metric and cutoff, named by :func:`metric_name`:
      precision (hits / k), recall (hits / relevant), ndcg (gain ``2**g - 1`` or ``g``,
      discount ``log2(rank + 1)``, ideal list = every judged grade of the query, sorted,
      cut at k), mrr (1 / rank of the first hit within k), map (average precision within k,
      over all relevant), hit_rate, judged (share of the top k that has any judgment: how far
      the closed-world assumption "unjudged = not relevant" is being trusted).

    Runs' queries without judgments are ignored, as trec_eval ignores them. ``threshold`` is
    an integer >= 1: an unjudged entry counts as grade 0, so a lower threshold would count
    every unjudged entry as relevant.
    """
    return compute_and_unjudged(judgments, run, k, threshold, gain)[0]


def compute_and_unjudged(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    k: int | Iterable[int] = (10,),
    threshold: int = 1,
    gain: str = "exponential",
) -> tuple[pd.DataFrame, pd.Index]:
    """:func:`compute`, and the run's queries it ignored (no judgment), in the order they first
    appear in the run: the scan found them, so no caller reads the run's query column again."""
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)) or threshold < 1:
        raise ValueError(f"threshold must be an integer >= 1, got {threshold!r}")
    ks = check_ks(k)
    label_codes, queries, found = _first_reads(judgments, run)
    sc = scan.scan_run(
        run, ks[-1], judgments, queries, label_codes, threshold, sums=metric_sums(ks, threshold, gain), found=found
    )
    rk = sc.rankings
    systems = rk.systems if len(rk.systems) else pd.Index(["run"], dtype=ID)
    nq, ns = len(queries), len(systems)
    # The scan's sums per ranking (and per query), with no step at all when nothing is judged.
    sums = {name: sc.sums.get(name, np.zeros((0, len(ks)))) for name in ("hits", "dcg", "ap", "judged", "idcg")}
    first_hit = sc.sums.get("first_hit", np.zeros(0))
    n_relevant = sc.sums.get("n_relevant", np.zeros(0, dtype=np.int64))
    n_judged = sc.sums.get("n_judged", np.zeros(0, dtype=np.int64))

    cell = rk.system[sc.block] * nq + rk.query[sc.block]
    grid = ns * nq
    present, dup_grid, retrieved, top1 = _ranking_facts(sc, run, cell, grid)
    nrel = np.tile(n_relevant, ns)
    ordered = _columns(sums, first_hit, cell, grid, nrel, ns, ks, gain)
    strata = strata_of(judgments, label_codes, nq)
    frame = pd.DataFrame(
        {
            "system": pd.array(np.repeat(systems.to_numpy(), nq), dtype=ID),
            "query_id": pd.array(np.tile(queries.to_numpy(), ns), dtype=ID),
            "stratum": pd.array(np.tile(strata, ns), dtype=ID),
            "n_judged": np.tile(n_judged, ns).astype(np.int64),
            "n_relevant": nrel.astype(np.int64),
            "retrieved": retrieved,
            "missing": ~present,
            "no_positives": nrel == 0,
            "duplicates": dup_grid,
            "top1_score": top1,
            **ordered,
        }
    )
    frame.attrs["systems"] = list(systems)
    return frame, rk.unjudged


def _first_reads(
    judgments: pd.DataFrame, run: pd.DataFrame
) -> tuple[np.ndarray, pd.Index, tuple[np.ndarray, bool] | None]:
    """Each label's query code, the judged queries, and (for a large run) the run's ranking
    boundaries (:func:`.scan.ranking_starts`; None: the scan finds them)."""
    (label_codes, queries), found = scan.beside_starts(run, lambda: _codes(_arrow(judgments["query_id"])))
    return label_codes, queries, found


def _ranking_facts(sc: scan.Scan, run: pd.DataFrame, cell: np.ndarray, grid: int) -> tuple[np.ndarray, ...]:
    """Per ranking (block) figures of the scan, scattered onto the (system x query) grid:
    whether the system answered, repeated a key, how many entries it kept, its top-1 score."""
    rk = sc.rankings
    present = np.zeros(grid, dtype=bool)
    present[cell] = True
    dup_grid = np.zeros(grid, dtype=bool)
    dup_grid[cell] = sc.block_dup
    retrieved = np.zeros(grid, dtype=np.int64)
    retrieved[cell] = sc.block_kept
    top1 = np.full(grid, np.nan)
    first_row = rk.starts[sc.block]
    if rk.order is not None:
        first_row = rk.order[first_row]
    top1[cell] = run["score"].to_numpy(dtype=np.float64)[first_row]
    return present, dup_grid, retrieved, top1


def _columns(
    sums: dict[str, np.ndarray],
    first_hit: np.ndarray,
    cell: np.ndarray,
    grid: int,
    nrel: np.ndarray,
    ns: int,
    ks: tuple[int, ...],
    gain: str,
) -> dict[str, np.ndarray]:
    """Each seed metric at each cutoff, one value per (system, query) cell, in table order:
    the scan's per-ranking sums spread on the grid, then each declaration's formula."""

    def spread(values: np.ndarray, fill: float = 0.0) -> np.ndarray:
        out = np.full(grid, fill)
        out[cell] = values
        return out

    safe_nrel = np.where(nrel > 0, nrel, 1.0)
    fh = spread(first_hit, np.inf)
    at = [
        SimpleNamespace(
            hits=spread(sums["hits"][:, c]),
            dcg=spread(sums["dcg"][:, c]),
            idcg=np.tile(sums["idcg"][:, c], ns),
            ap=spread(sums["ap"][:, c]),
            judged=spread(sums["judged"][:, c]),
            first_hit=fh,
            nrel=nrel,
            safe_nrel=safe_nrel,
        )
        for c in range(len(ks))
    ]
    return {metric_name(s.name, kk, gain): s.formula(at[c], kk) for s in SEED for c, kk in enumerate(ks)}


def metric_columns(per_query: pd.DataFrame) -> list[str]:
    """The metric columns of a per-query frame, in table order."""
    return [c for c in per_query.columns if "@" in c]


def aggregate(per_query: pd.DataFrame, by: Sequence[str] = ("system",)) -> pd.DataFrame:
    """Macro means over the scored queries (those with positives), with ``n`` = their count.

    Queries without positives are excluded, not scored zero: there was nothing for retrieval
    to find. Values are rounded to 12 decimals as the spec's report is. Groups with no scored
    query have ``n`` 0 and NaN means (a metric that was not computed is absent, not zero).
    """
    cols = metric_columns(per_query)
    by = list(by)
    scored = per_query[~per_query["no_positives"]]
    means = scored.groupby(by, sort=False, observed=True)[cols].mean()
    counts = (~per_query["no_positives"]).groupby([per_query[c] for c in by], sort=False, observed=True).sum()
    out = means.reindex(counts.index).round(12)
    out.insert(0, "n", counts.astype(np.int64))
    return out
