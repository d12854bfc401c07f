"""Faces on the metric engine: the DataFrame API (``evaluate``, ``build_report``) and the seed
API (``score``).

Nothing here computes a metric: every number comes from :func:`retrieval_eval.metrics.compute`
and :func:`retrieval_eval.metrics.aggregate`. This module decides only which rows go in, and
how the answer is shaped; the result (:class:`~retrieval_eval.analysis.result.Evaluation`) and
what follows the engine live in :mod:`.result`, the strata in :mod:`.strata`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...engine import metrics as engine
from ...engine.metrics import ID
from .measurement import Measurement
from .result import Evaluation, coerce, finish_evaluation, negative_id_list
from .strata import StrataScores, StratumScore, measurements, stratum_scores
from .ties import public

if TYPE_CHECKING:  # the report is built on an evaluation: decisions sit above evaluation
    from ..decisions.report import Report

__all__ = [
    "DEFAULT_K",
    "DEFAULT_THRESHOLD",
    "Evaluation",
    "ScoreResult",
    "StratumScore",
    "StrataScores",
    "build_report",
    "dedupe",
    "evaluate",
    "judgment_key",
    "query_metrics",
    "relevance_by_query",
    "score",
    "score_by_stratum",
    "stratum_scores",
    "worst_stratum",
]

DEFAULT_K = 10
#: evaluate's cutoffs when ``k`` is not given.
DEFAULT_KS = (1, 5, 10)
DEFAULT_THRESHOLD = 1

# The seed's per-query names for the spec metrics.
_SEED_NAMES = {
    "precision": "precision",
    "recall": "recall",
    "ndcg": "ndcg",
    "mrr": "mrr",
    "map": "ap",
    "hit_rate": "hit_rate",
}


@public
def evaluate(
    judgments,
    run,
    k=None,
    threshold: int = DEFAULT_THRESHOLD,
    gain: str = "exponential",
    queries=None,
    negatives=None,
    measures=None,
    chunk_rows: int | None = None,
    judged=None,
) -> Evaluation:
    """Evaluate one or several systems at several cutoffs in one pass of the engine.

    Parameters
    ----------
    judgments : DataFrame, list of dict or path
        Labels: a frame from the readers, wire-format dicts, or a file.
    run : DataFrame, list of dict, path or mapping
        Rankings; a mapping ``{system: run}`` names several systems.
    k : int or sequence of int, optional
        Cutoffs of the spec's metrics (default 1, 5 and 10). With ``measures`` and no ``k``,
        the summary holds ``n`` and the measures asked for, nothing else.
    threshold : int, default 1
        The least grade that counts as relevant.
    gain : {"exponential", "linear"}
        nDCG's gain: the spec's ``2**g - 1`` or trec_eval's linear one (then named
        ``ndcg_linear@k``).
    queries, negatives : queries file and/or list of query ids, optional
        Declare ``expect_none`` queries, excluded from the positive averages.
    measures : str, ir_measures measure or list of them, optional
        Columns of ``per_query`` and ``summary`` under the names asked for (:mod:`.asked`): a
        spec metric's own name (``recall@10``) is that metric; any other name a catalogue
        measure as ``rev.parse_measure`` reads it (``"nDCG@10"``, ``ir_measures.nDCG@10``,
        ``"P_5"``, ``"map"``), averaged as trec_eval does (every judged query).
        ``Evaluation.counts`` states each column's denominator, ``Evaluation.catalogue``
        each catalogue column's canonical name.
    chunk_rows : int, optional
        Read the run in blocks of about that many rows of whole queries and run the engine
        block by block (:func:`retrieval_eval.streaming.evaluate_streamed`): the same
        numbers, with memory bounded by a block plus the judgments rather than by the run.
    judged : path, DataFrame, list of rows, or a list of those, optional
        LLM judge scores (:func:`retrieval_eval.read_judge_scores`): each judged metric
        (``faithfulness`` ...) becomes a column of ``per_query`` (the mean of the query's
        samples), ``summary`` and ``per_stratum``; ``judged`` and ``judged_strata`` hold its
        query-clustered Measurement (interval, variance components, ICC), which the report
        and the gates use (:mod:`retrieval_eval.analysis.judged`).

    Returns
    -------
    Evaluation
        In its ``per_query``, an excluded query's metric cells are NaN (a value that does not
        exist is not zero), so the per-query means are the summary.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(5, 10))
    >>> sorted(ev.systems)
    ['bm25', 'dense', 'rrf']
    """
    if chunk_rows is not None:
        return _with_judged(
            _streamed(judgments, run, k, threshold, gain, queries, negatives, measures, chunk_rows), judged
        )
    j, r = coerce(judgments, run, keep_negative=True)
    ks = engine.check_ks(DEFAULT_KS if k is None else k)
    asked = None
    if measures is not None:
        from .asked import resolve

        asked = resolve(measures, gain, only=k is None)
    ev = evaluate_frames(j, r, ks, threshold, gain, queries, negative_id_list(queries, negatives), measures=asked)
    return _with_judged(ev, judged)


def _streamed(judgments, run, k, threshold, gain, queries, negatives, measures, chunk_rows) -> Evaluation:
    """:func:`evaluate` block by block (:func:`retrieval_eval.streaming.evaluate_streamed`)."""
    if measures is not None:
        raise ValueError("measures= needs the run whole; it cannot go with chunk_rows=")
    from .streaming import evaluate_streamed

    return evaluate_streamed(
        judgments,
        run,
        k=DEFAULT_KS if k is None else k,
        threshold=threshold,
        gain=gain,
        queries=queries,
        negatives=negatives,
        chunk_rows=chunk_rows,
    )


def _with_judged(ev: Evaluation, judged) -> Evaluation:
    """``ev`` with the judged metrics of ``judged`` attached (:func:`..judged.attach.attach_judged`)."""
    if judged is not None:
        from ..judged.attach import attach_judged

        attach_judged(ev, judged)
    return ev


def _evaluate(
    judgments,
    run,
    k,
    threshold,
    gain="exponential",
    queries=None,
    negatives=None,
    measures=None,
    excluded_as_nan: bool = True,
) -> Evaluation:
    """:func:`evaluate` in memory; with ``excluded_as_nan=False`` an excluded query keeps the
    engine's values (the seed's ``score().per_query`` shows the spec's numbers for every query)."""
    j, r = coerce(judgments, run, keep_negative=True)
    return evaluate_frames(
        j,
        r,
        engine.check_ks(k),
        threshold,
        gain,
        queries,
        negative_id_list(queries, negatives),
        measures=measures,
        excluded_as_nan=excluded_as_nan,
    )


def evaluate_frames(
    j: pd.DataFrame,
    r: pd.DataFrame,
    ks: tuple[int, ...],
    threshold,
    gain,
    queries,
    negs: list[str],
    measures=None,
    excluded_as_nan: bool = True,
) -> Evaluation:
    """:func:`evaluate` of frames already checked and converted (:func:`coerce`), with checked
    cutoffs ``ks`` and the negatives' ids: what a face that took the input itself calls.
    ``measures`` as :func:`evaluate` takes them, or already read (:func:`.asked.resolve`); the
    cutoff of a spec metric named there joins ``ks``.

    A negative grade in ``j`` (trec_eval's "in the pool, not judged") is 0 to the engine's
    metrics, as the readers read it, and stays -1 for the catalogue ``measures`` (infAP,
    ``unj``, ``num_nonrel_judged_ret`` read it as trec_eval does).
    """
    if measures is not None:
        from .asked import Asked, resolve

        measures = measures if isinstance(measures, Asked) else resolve(measures, gain)
        ks = tuple(sorted({*ks, *measures.cutoffs}))
    labels = j
    if len(j) and (j["relevance"].to_numpy() < 0).any():
        labels = j.assign(relevance=np.maximum(j["relevance"].to_numpy(), 0))
    per_query, unjudged = engine.compute_and_unjudged(labels, r, k=ks, threshold=threshold, gain=gain)
    return finish_evaluation(
        labels,
        r,
        per_query,
        ks,
        threshold,
        gain,
        queries,
        negs,
        measures=measures,
        excluded_as_nan=excluded_as_nan,
        measure_labels=j,
        unjudged=unjudged,
    )


# --------------------------------------------------------------------------------------------
# The seed API (``seeds/001``): same names in snake_case, same semantics, all on the engine.


def judgment_key(judgment) -> str:
    """Key that matches a judgment to a ranking entry: ``chunk_id`` when present, else ``doc_uri``."""
    chunk = judgment.get("chunk_id") if isinstance(judgment, Mapping) else judgment["chunk_id"]
    if (
        chunk is not None and not (isinstance(chunk, float) and np.isnan(chunk)) and chunk is not pd.NA and chunk != ""
    ):  # an empty chunk_id is no chunk_id (SPEC A2)
        return str(chunk)
    return str(judgment["doc_uri"])


def _run_frame(rankings: Mapping[str, Sequence[str]], system: str = "run") -> pd.DataFrame:
    qids: list[Any]
    docs: list[Any]
    ranks: list[Any]
    qids, docs, ranks = [], [], []
    for qid, ranking in rankings.items():
        ranking = list(ranking)
        qids.extend([qid] * len(ranking))
        docs.extend(ranking)
        ranks.extend(range(1, len(ranking) + 1))
    return pd.DataFrame(
        {
            "system": pd.array([system] * len(qids), dtype=ID),
            "query_id": pd.array(qids, dtype=ID),
            "rank": np.asarray(ranks, dtype=np.int64),
            "doc_id": pd.array(docs, dtype=ID),
            "score": np.full(len(qids), np.nan),
        }
    )


def dedupe(ranking: Sequence[str]) -> list[str]:
    """Drop repeated keys from a ranking, keeping the first occurrence.

    A retriever that returns the same chunk twice is routine (a hybrid merges two indexes, a
    multi-query expansion unions results). Counted naively the repeat scores as a second hit
    and pushes recall, AP and nDCG above 1, so only the first occurrence counts.
    """
    return engine.dedupe_run(_run_frame({"q": ranking}))["doc_id"].tolist()


def relevance_by_query(judgments) -> dict[str, dict[str, int]]:
    """Group judgments by query, as ``query_id -> (key -> relevance)``; the last label wins."""
    from ...io import as_judgments
    from ...io.absent import judgments_meaning

    table = engine.relevance_table(judgments_meaning(as_judgments(judgments)))
    out: dict[str, dict[str, int]] = {}
    for qid, sub in table.groupby("query_id", sort=False):
        out[str(qid)] = dict(zip(sub["key"].tolist(), sub["relevance"].astype(int).tolist()))
    return out


def query_metrics(
    relevance: Mapping[str, int], ranking: Sequence[str], k: int = DEFAULT_K, threshold: int = DEFAULT_THRESHOLD
) -> dict[str, float]:
    """Metrics for a single query: keys absent from ``relevance`` count as grade 0.

    Unjudged means not relevant: the closed-world assumption. It is a real limitation of
    shallow pools, which is why ``evaluate`` also reports ``judged@k``.
    """
    judgments = pd.DataFrame(
        {
            "query_id": pd.array(["q"] * len(relevance), dtype=ID),
            "doc_uri": pd.array(list(relevance.keys()), dtype=ID),
            "chunk_id": pd.array([None] * len(relevance), dtype=ID),
            "relevance": np.asarray(list(relevance.values()), dtype=np.int64),
            "stratum": pd.array([None] * len(relevance), dtype=ID),
        }
    )
    if judgments.empty:
        judgments = pd.DataFrame(
            {
                "query_id": pd.array(["q"], dtype=ID),
                "doc_uri": pd.array(["\x00none"], dtype=ID),
                "chunk_id": pd.array([None], dtype=ID),
                "relevance": np.asarray([0], dtype=np.int64),
                "stratum": pd.array([None], dtype=ID),
            }
        )
    row = engine.compute(judgments, _run_frame({"q": ranking}), k=(k,), threshold=threshold).iloc[0]
    return {seed: float(row[engine.metric_name(m, k)]) for m, seed in _SEED_NAMES.items()}


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


def _single_system(ev: Evaluation) -> str:
    if len(ev.systems) > 1:
        raise ValueError(f"score takes one system; the run has {', '.join(ev.systems)}")
    return ev.systems[0]


def _spec_names(k: int) -> list[str]:
    return [engine.metric_name(m, k) for m in engine.SPEC_METRICS]


@public
def score(judgments, run, k: int = DEFAULT_K, threshold: int = DEFAULT_THRESHOLD) -> ScoreResult:
    """Macro-average the spec's six metrics over queries (seed ``score``).

    Judged queries with no run entry score zero rather than being dropped (skipping them
    inflates every metric); queries with no label at the threshold are excluded rather than
    scored zero (there was nothing to find). When no query is left, no metric is emitted.

    Parameters
    ----------
    judgments, run
        As for :func:`evaluate`; the run holds one system.
    k : int, default 10
        The cutoff.
    threshold : int, default 1
        The least grade that counts as relevant.

    Returns
    -------
    ScoreResult

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> result = rev.score(demo.judgments, demo.runs[demo.runs["system"] == "bm25"], k=10)
    >>> sorted(result.metrics)[:2]
    ['hit_rate@10', 'map@10']
    """
    ev = _evaluate(judgments, run, k=(k,), threshold=threshold, excluded_as_nan=False)
    system = _single_system(ev)
    pq = ev.per_query[ev.per_query["system"] == system]
    names = _spec_names(k)
    metrics = measurements(ev.summary.loc[system], names) if ev.summary.loc[system, "n"] else {}
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


@public
def score_by_stratum(judgments, run, k: int = DEFAULT_K, threshold: int = DEFAULT_THRESHOLD) -> StrataScores:
    """Per-stratum scores: a system can improve on the mean while failing a query class.

    Judgments without a stratum (or with ``""``) fall in ``_unstratified``. Scored strata come
    first, then unscored ones (n = 0, no metrics), each in code-point order; ``appearance`` on
    the result lists them in the order they first appear in the judgments (the tie order of
    :func:`worst_stratum`).

    Parameters
    ----------
    judgments, run, k, threshold
        As for :func:`score`.

    Returns
    -------
    StrataScores
        ``{stratum: StratumScore}``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> strata = rev.score_by_stratum(demo.judgments, demo.runs[demo.runs["system"] == "bm25"])
    >>> worst = rev.worst_stratum(strata, "recall@10")
    """
    ev = evaluate(judgments, run, k=(k,), threshold=threshold)
    return stratum_scores(ev, _single_system(ev), _spec_names(k))


def worst_stratum(per_stratum: Mapping[str, StratumScore], metric: str) -> dict[str, Any] | None:
    """The lowest-scoring stratum with n > 0 for ``metric``: what gates should watch.

    Strata with no scored query are skipped rather than treated as zero; a class with nothing
    to find must not fail a build. Ties go to the stratum that appears first in the judgments
    (SPEC A3; ``per_stratum.appearance`` as :func:`score_by_stratum` returns it, else the
    mapping's own order), the same stratum the report's gates and tables name.

    Parameters
    ----------
    per_stratum : mapping of str to StratumScore
        :func:`score_by_stratum`'s result.
    metric : str
        A seed metric name (``recall``, ``ndcg``, ``ap`` ...).

    Returns
    -------
    dict or None
        ``{"name", "value", "n"}``, or None when no stratum scored the metric.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> strata = rev.score_by_stratum(demo.judgments, demo.runs[demo.runs["system"] == "bm25"])
    >>> sorted(rev.worst_stratum(strata, "recall@10"))
    ['n', 'name', 'value']
    """
    from ..decisions.gates import worst_of

    values = {name: s.metrics[metric].value for name, s in per_stratum.items() if s.n > 0 and metric in s.metrics}
    name = worst_of(values, getattr(per_stratum, "appearance", ()))
    if name is None:
        return None
    return {"name": name, "value": values[name], "n": per_stratum[name].n}


@public
def build_report(
    judgments,
    run,
    k: int = 10,
    threshold: int = 1,
    corpus=None,
    drift_result=None,
    queries=None,
    calibration=None,
    gain: str = "exponential",
    system: str | None = None,
    negatives=None,
    now=None,
    judged=None,
) -> Report:
    """Score a run and assemble the spec report (seed ``buildReport``).

    The verdict is INDETERMINATE when nothing was scored (there is no number, so it cannot
    PASS) or when ``validate`` finds an error (a number computed from ground truth that
    contradicts itself proves nothing). Its reasons name drift, judged queries missing from the
    run, excluded queries, repeated keys, an unsound set and calibration caveats.

    Parameters
    ----------
    judgments, run, k, threshold, gain, queries, negatives
        As for :func:`evaluate` (one cutoff ``k``).
    corpus, drift_result : optional
        The live corpus (drift is measured against it) or a drift result already computed.
    calibration : Calibration, optional
        Its figures join the report; by default computed when negatives are declared.
    system : str, optional
        The system to report on (required when the run has several).
    now : datetime, optional
        The report's ``generated_at`` (default: now, UTC).
    judged : optional
        LLM judge scores, as for :func:`evaluate`: their query-clustered Measurements join
        ``metrics`` and ``per_stratum``.

    Returns
    -------
    Report

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> report = rev.build_report(demo.judgments, demo.runs, system="bm25")
    >>> report.status in ("PASS", "INDETERMINATE")
    True
    """
    ev = evaluate(
        judgments, run, k=(k,), threshold=threshold, gain=gain, queries=queries, negatives=negatives, judged=judged
    )
    return ev.report(
        system=system, corpus=corpus, drift_result=drift_result, calibration=calibration, queries=queries, now=now
    )
