"""Faces on the metric engine: the DataFrame API (``evaluate``) and the seed API (``score``).

Nothing here computes a metric: every number comes from :func:`retrieval_eval.metrics.compute`
and :func:`retrieval_eval.metrics.aggregate`. This module decides only which rows go in, and
how the answer is shaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..engine import metrics as engine
from .measurement import Measurement
from ..engine.metrics import ID, UNSTRATIFIED
from .handoff import viz

DEFAULT_K = 10
DEFAULT_THRESHOLD = 1

# The seed's per-query names for the spec metrics.
_SEED_NAMES = {"precision": "precision", "recall": "recall", "ndcg": "ndcg", "mrr": "mrr",
               "map": "ap", "hit_rate": "hit_rate"}


def _coerce(judgments, run):
    from ..io.absent import judgments_meaning
    from ..io import as_judgments, as_run

    return judgments_meaning(as_judgments(judgments)), as_run(run)


def _negative_ids(queries, negatives) -> list[str]:
    if queries is None and negatives is None:
        return []
    from .calibration import negative_ids

    return list(negative_ids(queries, negatives))


def _query_strata_from(queries) -> pd.Series:
    """``query_id -> stratum`` from a queries file (queries without one are left out)."""
    from ..io.absent import queries_meaning
    from ..io import as_queries

    q = queries_meaning(as_queries(queries))
    q = q[q["stratum"].notna()].drop_duplicates("query_id")
    return pd.Series(q["stratum"].to_numpy(dtype=object), index=q["query_id"].to_numpy(dtype=object))


def _stratum_order(names, counts: Mapping[str, int]) -> list[str]:
    """Scored strata first, then unscored ones, each in Unicode code-point order.

    Code-point order is what Python's ``sorted`` gives and does not change with the machine's
    locale, so two implementations (and two machines) list strata the same way.
    """
    names = list(names)
    return sorted(n for n in names if counts.get(n, 0) > 0) + sorted(
        n for n in names if counts.get(n, 0) == 0
    )


def _stratum_keys(judgments: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgments keyed by (stratum, query), and the map ``query_id -> composite``."""
    strata = judgments["stratum"].astype(ID).fillna(UNSTRATIFIED)
    sep = "\x1f"
    composite = (strata + sep + judgments["query_id"].astype(ID)).astype(ID)
    j2 = judgments.assign(query_id=composite)
    mapping = pd.DataFrame({"query_id": judgments["query_id"].astype(ID),
                            "composite": composite}).drop_duplicates()
    return j2, mapping


def _stratum_run(run: pd.DataFrame, mapping: pd.DataFrame) -> pd.DataFrame:
    """The run keyed by (stratum, query): a run query's ranking is matched once per stratum
    its labels fall in."""
    r2 = run.merge(mapping, on="query_id", how="inner")
    return r2.assign(query_id=r2["composite"]).drop(columns="composite")


def _per_stratum(judgments: pd.DataFrame, run: pd.DataFrame, ks, threshold, gain,
                 per_query: pd.DataFrame, by_stratum: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each stratum scored on its own rows, one row per (system, stratum) with ``n``.

    When every query carries one stratum (the usual case) this is the per-query frame grouped
    by stratum. A query labelled in several strata is scored once per stratum, on that
    stratum's labels only, by running the engine on (stratum, query) pairs (``by_stratum``:
    that engine's frame, when the caller already ran it, as streamed evaluation does).
    """
    if by_stratum is not None:
        pq = by_stratum
    elif engine.strata_span_queries(judgments):
        j2, mapping = _stratum_keys(judgments)
        pq = engine.compute(j2, _stratum_run(run, mapping), k=ks, threshold=threshold, gain=gain)
    else:
        pq = per_query
    out = engine.aggregate(pq, by=("system", "stratum"))
    order = []
    for system in pd.unique(out.index.get_level_values("system")):
        sub = out.xs(system, level="system")
        counts = dict(zip(sub.index, sub["n"]))
        order.extend((system, s) for s in _stratum_order(sub.index, counts))
    return out.loc[order]


class Evaluation:
    """The result of :func:`evaluate`.

    * ``per_query``: one row per (system, query_id) of every judged query (see
      :func:`retrieval_eval.metrics.compute` for the columns), plus ``negative`` (the query is
      declared ``expect_none``; it never enters the positive averages). The metric cells of
      a query excluded from the averages (``no_positives`` or ``negative``; the flags stay)
      are NaN: there was nothing to find, so there is no value, and
      ``per_query.groupby("system")[metrics].mean()`` is ``summary``.
    * ``summary``: system x metric macro means over the scored queries, with ``n``.
    * ``per_stratum``: (system, stratum) x metric, with ``n``; strata scored on their own rows.
    """

    def __init__(self, judgments, run, per_query, summary, per_stratum, ks, threshold, gain,
                 queries=None, negatives=(), strata=None):
        self.judgments = judgments
        self.run = run
        self.per_query = per_query
        self.summary = summary
        self.per_stratum = per_stratum
        self.ks = ks
        self.threshold = threshold
        self.gain = gain
        self.queries = queries
        self.negatives = list(negatives)
        #: The strata in first-appearance order in the judgments (then the queries file's):
        #: the tie order of the worst stratum.
        self.strata = list(strata) if strata is not None else [
            str(s) for s in pd.unique(per_query["stratum"].astype(object))]

    @property
    def systems(self) -> list[str]:
        return list(self.summary.index)

    @property
    def has_strata(self) -> bool:
        return bool((self.per_query["stratum"] != UNSTRATIFIED).any())

    def metric(self, name: str, k: int | None = None) -> str:
        """The column name of a metric at a cutoff (the largest one by default)."""
        return engine.metric_name(name, k or self.ks[-1], self.gain)

    def worst_stratum(self, metric: str, system: str | None = None) -> dict[str, Any] | None:
        """The lowest-scoring stratum for ``metric`` (a column name such as ``recall@10``).

        Strata with no scored query are skipped rather than treated as zero: reporting an
        empty class as the worst would fail a build over an empty set. Ties go to the stratum
        that appears first in the judgments (SPEC A3), as in the report's gates and tables.
        """
        from .gates import worst_of

        system = self._system(system)
        if system not in set(self.per_stratum.index.get_level_values("system")):
            return None  # nothing judged: no stratum
        table = self.per_stratum.xs(system, level="system")
        table = table[table["n"] > 0]
        if metric not in table.columns or table.empty:
            return None
        values = table[metric].dropna()
        name = worst_of(dict(zip(values.index, values.to_numpy(dtype=float))), self.strata)
        if name is None:
            return None
        return {"name": name, "value": float(values[name]), "n": int(table.loc[name, "n"])}

    def _system(self, system: str | None) -> str:
        if system is None:
            if len(self.systems) != 1:
                raise ValueError(
                    f"the run has {len(self.systems)} systems ({', '.join(self.systems)}); "
                    "name one with system="
                )
            return self.systems[0]
        if system not in self.systems:
            raise ValueError(f"no system {system!r} in the run; it has {', '.join(self.systems)}")
        return system

    def report(self, system: str | None = None, corpus=None, drift_result=None,
               calibration=None, queries=None, now=None):
        """The spec report (SPEC A6) for one system, as a :class:`retrieval_eval.report.Report`."""
        from .report import report_from_evaluation

        return report_from_evaluation(
            self, system=self._system(system), corpus=corpus, drift_result=drift_result,
            calibration=calibration, queries=queries if queries is not None else self.queries,
            now=now,
        )

    def to_frame(self) -> pd.DataFrame:
        return self.per_query.copy()

    def _table(self, table: str) -> pd.DataFrame:
        tables = {"summary": self.summary, "per_stratum": self.per_stratum, "per_query": self.per_query}
        if table not in tables:
            raise ValueError(f"table must be one of {', '.join(tables)}, got {table!r}")
        return tables[table]

    def to_markdown(self, table: str = "summary") -> str:
        """``summary`` (default), ``per_stratum`` or ``per_query`` as a Markdown pipe table.

        Written by :mod:`retrieval_eval.tables` (the base install: no tabulate); a metric that
        does not exist is ``n/a``, not 0.
        """
        frame_markdown = viz("frame_markdown")

        return frame_markdown(self._table(table), index=table != "per_query")

    def to_latex(self, table: str = "summary", caption: str | None = None, label: str | None = None) -> str:
        """The same table as a booktabs LaTeX ``table`` (no jinja2; needs ``booktabs``)."""
        frame_latex = viz("frame_latex")

        return frame_latex(self._table(table), index=table != "per_query", caption=caption, label=label)

    def plot(self, kind: str = "strata", ax=None, metric: str | None = None, **kwargs):
        """Draw this evaluation: ``"strata"``, ``"metric_at_k"`` or ``"delta"`` (two systems).

        Returns the display (:mod:`retrieval_eval.plotting`); never calls ``plt.show()``.
        """
        plot_evaluation = viz("plot_evaluation")

        return plot_evaluation(self, kind=kind, ax=ax, metric=metric, **kwargs)

    def _repr_html_(self) -> str:
        evaluation_html = viz("evaluation_html")

        return evaluation_html(self)

    def __repr__(self) -> str:
        return (f"Evaluation(systems={self.systems}, k={list(self.ks)}, "
                f"threshold={self.threshold}, gain={self.gain!r}, "
                f"queries={self.per_query['query_id'].nunique()})")


def evaluate(judgments, run, k=(1, 5, 10), threshold: int = DEFAULT_THRESHOLD,
             gain: str = "exponential", queries=None, negatives=None,
             measures=None, chunk_rows: int | None = None) -> Evaluation:
    """Evaluate one or several systems at several cutoffs in one pass of the engine.

    ``judgments`` and ``run`` are frames from the readers, lists of wire-format dicts, or
    paths; ``run`` may also be a mapping ``{system: run}``. ``queries`` (a queries file) and
    ``negatives`` (query ids) declare ``expect_none`` queries, which are excluded from the
    positive averages. ``gain`` is ``"exponential"`` (the spec's ``2**g - 1``) or
    ``"linear"`` (trec_eval's); a linear-gain nDCG is named ``ndcg_linear@k``.
    ``measures``: names from the measure catalogue (``["map", "P.5,10", "nDCG@10",
    "bpref"]``, any spelling ``rev.parse_measure`` reads), added to ``per_query`` and
    ``summary`` under their canonical names with trec_eval's aggregate
    (:func:`retrieval_eval.measures.attach`); not to ``per_stratum``.
    ``chunk_rows``: read the run in blocks of about that many rows of whole queries and run
    the engine block by block (:func:`retrieval_eval.streaming.evaluate_streamed`): the same
    numbers, with memory bounded by a block plus the judgments rather than by the run.

    Returns an :class:`Evaluation`. In its ``per_query``, an excluded query's metric cells
    are NaN (a value that does not exist is not zero), so the per-query means are the summary.
    """
    if chunk_rows is not None:
        if measures is not None:
            raise ValueError("measures= needs the run whole; it cannot go with chunk_rows=")
        from .streaming import evaluate_streamed

        return evaluate_streamed(judgments, run, k=k, threshold=threshold, gain=gain,
                                 queries=queries, negatives=negatives, chunk_rows=chunk_rows)
    return _evaluate(judgments, run, k=k, threshold=threshold, gain=gain, queries=queries,
                     negatives=negatives, measures=measures, excluded_as_nan=True)


def _evaluate(judgments, run, k, threshold, gain="exponential", queries=None, negatives=None,
              measures=None, excluded_as_nan: bool = True) -> Evaluation:
    """:func:`evaluate` in memory; with ``excluded_as_nan=False`` an excluded query keeps the
    engine's values (the seed's ``score().per_query`` shows the spec's numbers for every query)."""
    j, r = _coerce(judgments, run)
    ks = engine.check_ks(k)
    negs = _negative_ids(queries, negatives)
    per_query = engine.compute(j, r, k=ks, threshold=threshold, gain=gain)
    return _evaluation(j, r, per_query, ks, threshold, gain, queries, negs, measures=measures,
                       excluded_as_nan=excluded_as_nan)


def _evaluation(j, r, per_query, ks, threshold, gain, queries, negs, empty=None,
                by_stratum=None, measures=None, excluded_as_nan: bool = True) -> Evaluation:
    """The :class:`Evaluation` of the engine's per-query frame: strata from ``queries``,
    empty rankings (``empty``, else the run's ``attrs``), negatives, summary, strata,
    catalogue ``measures`` (which need the run), excluded queries' cells as NaN.

    Everything after the engine runs here, so the in-memory, streamed and Dask paths build
    one and the same object from one and the same per-query frame. ``r`` may be None when
    the run was never held whole (``by_stratum`` then carries the (stratum, query) frame).
    """
    if queries is not None:
        # Judgments' strata win; a query without one takes the queries file's.
        extra = _query_strata_from(queries)
        if len(extra):
            ids = per_query["query_id"].to_numpy(dtype=object)
            current = per_query["stratum"].to_numpy(dtype=object)
            filled = extra.reindex(ids).to_numpy(dtype=object)
            use = (current == UNSTRATIFIED) & pd.notna(filled)
            per_query["stratum"] = pd.array(np.where(use, filled, current), dtype=ID)
    if empty is None:
        empty = r.attrs.get("empty_rankings") or []
    if empty:
        # A ranking written as [] answered nothing: it scores zero, but it is not missing.
        answered = pd.MultiIndex.from_tuples([(str(s_), str(q_)) for s_, q_ in empty])
        cells = pd.MultiIndex.from_arrays([per_query["system"].astype(object),
                                           per_query["query_id"].astype(object)])
        per_query["missing"] = per_query["missing"].to_numpy() & ~cells.isin(answered)
    negative = per_query["query_id"].isin(negs).to_numpy()
    per_query.insert(per_query.columns.get_loc("duplicates") + 1, "negative", negative)
    scored = per_query.assign(no_positives=per_query["no_positives"] | per_query["negative"])
    systems = pd.Index(per_query.attrs["systems"], dtype=ID, name="system")
    summary = engine.aggregate(scored)
    summary.index = pd.Index(summary.index, dtype=ID, name="system")
    # A system with no judged query still has a row: n = 0 and no metric.
    summary = summary.reindex(systems)
    summary["n"] = summary["n"].fillna(0).astype(np.int64)
    if measures is not None:
        from ..engine.measures import attach

        attach(j, r, per_query, summary, measures, threshold)
    per_stratum = _per_stratum(j, r, ks, threshold, gain, scored, by_stratum=by_stratum)
    if excluded_as_nan:
        excluded = scored["no_positives"].to_numpy(dtype=bool)
        if excluded.any():
            per_query.loc[excluded, engine.metric_columns(per_query)] = np.nan
    strata = engine.strata_in_order(j)
    strata += [s for s in pd.unique(per_query["stratum"].astype(object)) if s not in strata]
    return Evaluation(j, r, per_query, summary, per_stratum, ks, threshold, gain,
                      queries=queries, negatives=negs, strata=strata)


# --------------------------------------------------------------------------------------------
# The seed API (``seeds/001``): same names in snake_case, same semantics, all on the engine.


def judgment_key(judgment) -> str:
    """Key that matches a judgment to a ranking entry: ``chunk_id`` when present, else ``doc_uri``."""
    chunk = judgment.get("chunk_id") if isinstance(judgment, Mapping) else judgment["chunk_id"]
    if chunk is not None and not (isinstance(chunk, float) and np.isnan(chunk)) and chunk is not pd.NA \
            and chunk != "":  # an empty chunk_id is no chunk_id (SPEC A2)
        return str(chunk)
    return str(judgment["doc_uri"])


def _run_frame(rankings: Mapping[str, Sequence[str]], system: str = "run") -> pd.DataFrame:
    qids, docs, ranks = [], [], []
    for qid, ranking in rankings.items():
        ranking = list(ranking)
        qids.extend([qid] * len(ranking))
        docs.extend(ranking)
        ranks.extend(range(1, len(ranking) + 1))
    return pd.DataFrame({
        "system": pd.array([system] * len(qids), dtype=ID),
        "query_id": pd.array(qids, dtype=ID),
        "rank": np.asarray(ranks, dtype=np.int64),
        "doc_id": pd.array(docs, dtype=ID),
        "score": np.full(len(qids), np.nan),
    })


def dedupe(ranking: Sequence[str]) -> list[str]:
    """Drop repeated keys from a ranking, keeping the first occurrence.

    A retriever that returns the same chunk twice is routine (a hybrid merges two indexes, a
    multi-query expansion unions results). Counted naively the repeat scores as a second hit
    and pushes recall, AP and nDCG above 1, so only the first occurrence counts.
    """
    return engine.dedupe_run(_run_frame({"q": ranking}))["doc_id"].tolist()


def relevance_by_query(judgments) -> dict[str, dict[str, int]]:
    """Group judgments by query, as ``query_id -> (key -> relevance)``; the last label wins."""
    from ..io.absent import judgments_meaning
    from ..io import as_judgments

    table = engine.relevance_table(judgments_meaning(as_judgments(judgments)))
    out: dict[str, dict[str, int]] = {}
    for qid, sub in table.groupby("query_id", sort=False):
        out[str(qid)] = dict(zip(sub["key"].tolist(), sub["relevance"].astype(int).tolist()))
    return out


def query_metrics(relevance: Mapping[str, int], ranking: Sequence[str], k: int = DEFAULT_K,
                  threshold: int = DEFAULT_THRESHOLD) -> dict[str, float]:
    """Metrics for a single query: keys absent from ``relevance`` count as grade 0.

    Unjudged means not relevant: the closed-world assumption. It is a real limitation of
    shallow pools, which is why ``evaluate`` also reports ``judged@k``.
    """
    judgments = pd.DataFrame({
        "query_id": pd.array(["q"] * len(relevance), dtype=ID),
        "doc_uri": pd.array(list(relevance.keys()), dtype=ID),
        "chunk_id": pd.array([None] * len(relevance), dtype=ID),
        "relevance": np.asarray(list(relevance.values()), dtype=np.int64),
        "stratum": pd.array([None] * len(relevance), dtype=ID),
    })
    if judgments.empty:
        judgments = pd.DataFrame({"query_id": pd.array(["q"], dtype=ID),
                                  "doc_uri": pd.array(["\x00none"], dtype=ID),
                                  "chunk_id": pd.array([None], dtype=ID),
                                  "relevance": np.asarray([0], dtype=np.int64),
                                  "stratum": pd.array([None], dtype=ID)})
    row = engine.compute(judgments, _run_frame({"q": ranking}), k=(k,), threshold=threshold).iloc[0]
    return {seed: float(row[engine.metric_name(m, k)]) for m, seed in _SEED_NAMES.items()}


@dataclass
class StratumScore:
    """One stratum's scores: ``n`` queries scored and their metrics."""

    n: int
    metrics: dict[str, Measurement] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "metrics": {k: m.to_dict() for k, m in self.metrics.items()}}


@dataclass
class ScoreResult:
    """The seed's ``score`` result.

    ``metrics`` are macro means over queries with positives; ``per_query`` is indexed by
    ``query_id`` with the seed's column names (``ap`` for average precision). The three lists
    name, in judgment order, the queries the run missed (scored zero, never dropped), the
    queries with nothing at the threshold (excluded: recall is undefined without a positive),
    and the queries whose ranking repeated a key (counted once, and said so).
    """

    metrics: dict[str, Measurement]
    per_query: pd.DataFrame
    missing_queries: list[str]
    queries_without_positives: list[str]
    queries_with_duplicates: list[str]


def _measurements(row: pd.Series, names) -> dict[str, Measurement]:
    return {name: Measurement(value=float(row[name]), n=1, deterministic=True)
            for name in names if pd.notna(row[name])}


def _single_system(ev: Evaluation) -> str:
    if len(ev.systems) > 1:
        raise ValueError(f"score takes one system; the run has {', '.join(ev.systems)}")
    return ev.systems[0]


def _spec_names(k: int) -> list[str]:
    return [engine.metric_name(m, k) for m in engine.SPEC_METRICS]


def score(judgments, run, k: int = DEFAULT_K, threshold: int = DEFAULT_THRESHOLD) -> ScoreResult:
    """Macro-average the spec's six metrics over queries (seed ``score``).

    Judged queries with no run entry score zero rather than being dropped (skipping them
    inflates every metric); queries with no label at the threshold are excluded rather than
    scored zero (there was nothing to find). When no query is left, no metric is emitted.
    """
    ev = _evaluate(judgments, run, k=(k,), threshold=threshold, excluded_as_nan=False)
    system = _single_system(ev)
    pq = ev.per_query[ev.per_query["system"] == system]
    names = _spec_names(k)
    metrics = _measurements(ev.summary.loc[system], names) if ev.summary.loc[system, "n"] else {}
    per_query = pd.DataFrame(
        {seed: pq[engine.metric_name(m, k)].to_numpy() for m, seed in _SEED_NAMES.items()},
        index=pd.Index(pq["query_id"].to_numpy(), dtype=ID, name="query_id"),
    )
    return ScoreResult(
        metrics=metrics,
        per_query=per_query,
        missing_queries=pq.loc[pq["missing"], "query_id"].tolist(),
        queries_without_positives=pq.loc[pq["no_positives"], "query_id"].tolist(),
        queries_with_duplicates=pq.loc[pq["duplicates"], "query_id"].tolist(),
    )


class StrataScores(dict):
    """``{stratum: StratumScore}`` in the table's order (scored strata first, each group in
    code-point order), with ``appearance``: the strata in the order they first appear in the
    judgments, which :func:`worst_stratum` uses to break a tie."""

    def __init__(self, items=(), appearance=()):
        super().__init__(items)
        self.appearance = list(appearance)


def stratum_scores(ev: Evaluation, system: str, names) -> StrataScores:
    """The per-stratum table of one system as the seed's ``{stratum: StratumScore}`` (empty
    when nothing was judged: there is no stratum to score)."""
    systems = ev.per_stratum.index.get_level_values("system")
    if system not in set(systems):
        return StrataScores((), appearance=ev.strata)
    table = ev.per_stratum.xs(system, level="system")
    return StrataScores(
        ((str(name), StratumScore(n=int(row["n"]),
                                  metrics=_measurements(row, names) if row["n"] else {}))
         for name, row in table.iterrows()),
        appearance=ev.strata,
    )


def score_by_stratum(judgments, run, k: int = DEFAULT_K,
                     threshold: int = DEFAULT_THRESHOLD) -> StrataScores:
    """Per-stratum scores: a system can improve on the mean while failing a query class.

    Judgments without a stratum (or with ``""``) fall in ``_unstratified``. Scored strata come
    first, then unscored ones (n = 0, no metrics), each in code-point order; ``appearance`` on
    the result lists them in the order they first appear in the judgments (the tie order of
    :func:`worst_stratum`).
    """
    ev = evaluate(judgments, run, k=(k,), threshold=threshold)
    return stratum_scores(ev, _single_system(ev), _spec_names(k))


def worst_stratum(per_stratum: Mapping[str, StratumScore], metric: str) -> dict[str, Any] | None:
    """The lowest-scoring stratum with n > 0 for ``metric``: what gates should watch.

    Strata with no scored query are skipped rather than treated as zero; a class with nothing
    to find must not fail a build. Ties go to the stratum that appears first in the judgments
    (SPEC A3; ``per_stratum.appearance`` as :func:`score_by_stratum` returns it, else the
    mapping's own order), the same stratum the report's gates and tables name.
    """
    from .gates import worst_of

    values = {name: s.metrics[metric].value for name, s in per_stratum.items()
              if s.n > 0 and metric in s.metrics}
    name = worst_of(values, getattr(per_stratum, "appearance", ()))
    if name is None:
        return None
    return {"name": name, "value": values[name], "n": per_stratum[name].n}
