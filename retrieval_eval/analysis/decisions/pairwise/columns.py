"""Which per-query columns a comparison's metric names stand for, and the cutoffs they need."""

from __future__ import annotations

from collections.abc import Sequence

from ....engine.measures.seed import parse_metric
from ....engine.metrics import metric_name

__all__ = ["INFO_COLUMNS", "cutoffs_of", "metric_columns"]

#: The per-query frame's columns that describe a query rather than measure it.
INFO_COLUMNS = frozenset(
    (
        "system",
        "query_id",
        "stratum",
        "n_judged",
        "n_relevant",
        "retrieved",
        "missing",
        "no_positives",
        "duplicates",
        "negative",
        "top1_score",
    )
)


def metric_columns(metrics, ks: Sequence[int], gain: str, have=None) -> tuple[list[str], list[str]]:
    """The columns ``metrics`` name, and the catalogue measures among them.

    A spec metric's bare name (``ndcg``) stands for that metric at every cutoff of ``ks``; a name
    with a cutoff (``map@100``) for that cutoff alone; any other name is read by the measure
    catalogue (``nDCG@10``, ``P_5``, ``P.5,10``), whose canonical names are the columns. With
    ``have`` (an evaluation's per-query columns) a name that is a column is that column, whatever
    it is (an LLM-judged ``faithfulness`` too).
    """
    from ....engine.measures import parse_measure

    if isinstance(metrics, str):
        metrics = (metrics,)
    cols: list[str] = []
    catalogue: list[str] = []
    for m in metrics:
        if have is not None and m in have:
            cols.append(m)
            continue
        try:
            base, at, g = parse_metric(m)
        except ValueError as seed_err:
            try:
                found = parse_measure(m)
            except ValueError as err:
                raise ValueError(
                    f"metric {m!r} is neither a spec metric ({seed_err}) nor a catalogue measure ({err})"
                ) from None
            catalogue.append(m)
            cols.extend(x.name for x in found)
            continue
        cols.extend(metric_name(base, c, g or gain) for c in ((at,) if at is not None else ks))
    if not cols:
        raise ValueError("name at least one metric")
    return list(dict.fromkeys(cols)), catalogue


def cutoffs_of(cols: Sequence[str], ks: Sequence[int]) -> tuple[int, ...]:
    """Every cutoff the engine must compute: ``ks`` and the cutoff of each spec metric column."""
    found = {int(k) for k in ks}
    for c in cols:
        try:
            found.add(int(parse_metric(c)[1] or ks[0]))
        except ValueError:
            pass
    return tuple(sorted(found))
