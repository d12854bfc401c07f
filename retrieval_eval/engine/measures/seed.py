"""The seed metrics (SPEC A3): ``precision``, ``recall``, ``ndcg``, ``mrr``, ``map``, ``hit_rate``
and ``judged`` at a cutoff k, each declared once with its definition and its formula.

They are computed by the scan itself (:func:`retrieval_eval.engine.scan.scan_run`): each step
reduces its labelled entries to per-ranking sums at every cutoff (:func:`metric_sums`, what
these measures need from the scan), and :func:`retrieval_eval.engine.metrics.compute` applies
each declaration's ``formula`` to the sums spread on the (system x query) grid. With R the
relevant labels of the query (grade >= threshold): precision = hits / k; recall = hits / R;
ndcg = DCG / ideal DCG (gain ``2**g - 1`` or ``g``, discount ``log2(rank + 1)``, ideal list =
every judged grade of the query sorted, cut at k); mrr = 1 / rank of the first hit within k;
map = the sum of each hit's precision at its rank within k, over R; hit_rate = [hits > 0];
judged = labelled entries in the top k, over k. A query without positives scores 0 here and is
excluded from averages by the caller. Verified against a plain-Python definition, pytrec_eval
and ranx (tests/engine/test_metrics.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Seed:
    """A seed metric: its name (the column is ``name@k``) and its formula.

    ``formula(v, k)`` takes the grid values at one cutoff ``k`` (``v.hits``, ``v.dcg``,
    ``v.idcg``, ``v.ap``, ``v.judged``, ``v.first_hit``, ``v.nrel`` and ``v.safe_nrel``, one
    entry per (system, query) cell) and returns the metric per cell.
    """

    name: str
    definition: str
    formula: Callable[[Any, int], np.ndarray]


def _ndcg(v: Any, k: int) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # inf / inf (see discounted) is NaN, not a warning
        return np.where(v.idcg > 0, v.dcg / np.where(v.idcg > 0, v.idcg, 1.0), 0.0)


#: The seed metrics, in the order they appear in every table. (``definition`` is the row of
#: docs/metrics.md's table, :func:`markdown_table`.)
SEED = (
    Seed(
        "precision", "hits / k (k, not the ranking's length: a short ranking is not rewarded)", lambda v, k: v.hits / k
    ),
    Seed("recall", "hits / \\|relevant\\|", lambda v, k: np.where(v.nrel > 0, v.hits / v.safe_nrel, 0.0)),
    Seed(
        "ndcg",
        "DCG@k / IDCG@k, **gain** `2**grade - 1` (exponential, the spec's), **discount** "
        "`log2(rank + 1)`; 0 when IDCG is 0",
        _ndcg,
    ),
    Seed(
        "mrr",
        "1 / rank of the first hit within k, else 0",
        lambda v, k: np.where(v.first_hit < k, 1.0 / (v.first_hit + 1.0), 0.0),
    ),
    Seed(
        "map",
        "(sum over hits within k of precision at that hit's rank) / \\|relevant\\|",
        lambda v, k: np.where(v.nrel > 0, v.ap / v.safe_nrel, 0.0),
    ),
    Seed("hit_rate", "1 if any hit, else 0", lambda v, k: (v.hits > 0).astype(float)),
    Seed("judged", "(top-k entries that have any judgment, grade 0 included) / k", lambda v, k: v.judged / k),
)
#: nDCG with trec_eval's gain: the same declaration, named ``ndcg_linear@k`` (the name says
#: which gain it is).
LINEAR = 'the same with linear gain `grade` (trec_eval\'s), when `gain="linear"`'


def markdown_table() -> str:
    """The seed metrics as docs/metrics.md's table (a test keeps the two equal)."""
    lines = ["| name | definition |", "|---|---|"]
    for s in SEED:
        lines.append(f"| `{s.name}@k` | {s.definition} |")
        if s.name == "ndcg":
            lines.append(f"| `ndcg_linear@k` | {LINEAR} |")
    return "\n".join(lines)


#: The seed metric names, in table order.
NAMES = tuple(s.name for s in SEED)


def parse_metric(name: str) -> tuple[str, int | None, str | None]:
    """The seed metric a column name stands for: ``(metric, k, gain)``.

    Parameters
    ----------
    name : str
        A seed metric's name, with or without its cutoff: ``recall@10``, ``ndcg_linear@5``,
        ``mrr``.

    Returns
    -------
    tuple
        ``metric`` (one of :data:`NAMES`), ``k`` (None for a bare name) and ``gain``
        (``"linear"`` for ``ndcg_linear``, else None: the caller's gain).

    Raises
    ------
    ValueError
        ``name`` is no seed metric (the message lists them).

    Examples
    --------
    >>> parse_metric("ndcg_linear@10")
    ('ndcg', 10, 'linear')
    >>> parse_metric("recall")
    ('recall', None, None)
    """
    found = re.fullmatch(r"([a-z_]+)(?:@([1-9][0-9]*))?", str(name))
    base = found.group(1) if found else None
    gain = None
    if base == "ndcg_linear":
        base, gain = "ndcg", "linear"
    if base not in NAMES:
        raise ValueError(f"unknown metric {name!r}; use {', '.join(NAMES)}")
    assert found is not None  # a known base was matched
    return base, None if found.group(2) is None else int(found.group(2)), gain


def metric_sums(ks: tuple[int, ...], threshold: int, gain: str) -> Callable[..., dict[str, np.ndarray]]:
    """What :func:`scan_run` keeps of a step: each metric's sum per ranking at every cutoff.

    The returned function takes a step's labelled entries ``(block, position, grade)`` (rows in
    ranking order, blocks numbered from 0 in the step), its number of rankings, its queries'
    ideal rankings ``(query, position, grade)`` and its number of queries. It returns, per
    ranking, ``hits``, ``dcg``, ``ap`` (the sum of each hit's precision at its rank) and
    ``judged`` (one column per cutoff) and ``first_hit`` (0-based position, inf without one);
    per query, ``idcg``. Only labelled entries add to a sum: an unjudged entry has grade 0.
    """

    def discounted(grade: np.ndarray, position: np.ndarray) -> np.ndarray:
        term = grade.astype(float)
        if gain == "exponential":
            with np.errstate(over="ignore"):  # readers cap grades (MAX_RELEVANCE); a raw frame
                np.exp2(term, out=term)  # above it gives NaN, and the verdict says so
            term -= 1.0
        term /= np.log2(position + 2.0)
        return term

    def sums(
        rows: tuple[np.ndarray, np.ndarray, np.ndarray],
        n_blocks: int,
        ideal: tuple[np.ndarray, np.ndarray, np.ndarray],
        n_queries: int,
    ) -> dict[str, np.ndarray]:
        block, position, grade = rows
        hit = grade >= threshold
        h_block, h_pos = block[hit], position[hit]
        n_hits = len(h_block)
        h_start = np.flatnonzero(np.r_[True, h_block[1:] != h_block[:-1]]) if n_hits else np.zeros(0, dtype=np.int64)
        # AP's term: a hit's precision at its rank, (hits up to it) / rank.
        ap_term = np.arange(1.0, n_hits + 1.0) - np.repeat(h_start, np.diff(np.r_[h_start, n_hits]))
        ap_term /= h_pos + 1.0
        first_hit = np.full(n_blocks, np.inf)
        first_hit[h_block[h_start]] = h_pos[h_start]
        gained = grade != 0
        g_block, g_pos = block[gained], position[gained]
        dcg_term = discounted(grade[gained], g_pos)
        i_query, i_pos, i_grade = ideal
        i_term = discounted(i_grade, i_pos)
        out: dict[str, np.ndarray] = {name: np.zeros((n_blocks, len(ks))) for name in ("hits", "dcg", "ap", "judged")}
        out["idcg"] = np.zeros((n_queries, len(ks)))
        for c, kk in enumerate(ks):
            # Rows are in rank order within each ranking: "within k" is a mask on position.
            h_in, g_in, i_in = h_pos < kk, g_pos < kk, i_pos < kk
            out["hits"][:, c] = np.bincount(h_block[h_in], minlength=n_blocks)
            out["ap"][:, c] = np.bincount(h_block[h_in], weights=ap_term[h_in], minlength=n_blocks)
            out["dcg"][:, c] = np.bincount(g_block[g_in], weights=dcg_term[g_in], minlength=n_blocks)
            out["judged"][:, c] = np.bincount(block[position < kk], minlength=n_blocks)
            out["idcg"][:, c] = np.bincount(i_query[i_in], weights=i_term[i_in], minlength=n_queries)
        out["first_hit"] = first_hit
        return out

    return sums
