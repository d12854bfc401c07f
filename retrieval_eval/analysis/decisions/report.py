"""The portable report (SPEC A6): what any CI job or dashboard reads.

``per_stratum`` is mandatory when judgments carry strata, because averages hide broken query
classes; every metric carries its cutoff in its name; the verdict says why it is what it is.
"""

from __future__ import annotations

import copy
import json
import math
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from ..evaluation.measurement import Measurement
from ..evaluation.strata import stratum_scores
from ..handoff import viz

TOOL_NAME = "retrieval-eval"
TOOL_VERSION = "0.1.0"
SPEC_VERSION = "1"


class Report:
    """A report: the spec JSON (``to_dict``) with a notebook face (``_repr_html_``).

    ``Report.from_dict`` reads one back (a ``--baseline``), keeping every measurement's
    interval, so ``ci-lower`` gates work on a report read from disk.
    """

    def __init__(self, data: dict[str, Any]):
        self._data = data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        from .gates import check_report

        return cls(copy.deepcopy(check_report(data)))

    @classmethod
    def read(cls, path) -> Report:
        """Read a report JSON file (a ``--baseline``), by the rule the CLI reads it with.

        A BOM is accepted; ``NaN``, a duplicate key, nesting deeper than
        :data:`~retrieval_eval.formats.MAX_JSON_DEPTH` or a file that is not a report raises
        :class:`~retrieval_eval.errors.FormatError` naming the path.
        """
        from ...io import read_json
        from .gates import check_report

        return cls(copy.deepcopy(check_report(read_json(path), label=str(path))))

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self._data, indent=indent, ensure_ascii=False) + "\n"

    @property
    def verdict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data["verdict"])

    @property
    def status(self) -> str:
        return self._data["verdict"]["status"]

    @property
    def metrics(self) -> dict[str, Measurement]:
        return {k: Measurement.from_dict(v) for k, v in self._data["metrics"].items()}

    def with_gates(self, gates, baseline=None) -> Report:
        """A new report whose verdict includes ``gates`` (a gate never upgrades a verdict)."""
        from .gates import apply_gates

        base = baseline.to_dict() if isinstance(baseline, Report) else baseline
        return Report(apply_gates(self._data, gates, base))

    def _repr_html_(self) -> str:
        report_html = viz("report_html")

        return report_html(self._data)

    def __repr__(self) -> str:
        return f"Report(status={self.status!r}, metrics={list(self._data['metrics'])})"


def _timestamp(now: datetime | None) -> str:
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    return now.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def report_from_evaluation(
    ev, system: str, corpus=None, drift_result=None, calibration=None, queries=None, now=None
) -> Report:
    """Assemble the report of one system of an :class:`~retrieval_eval.evaluation.Evaluation`.

    The steps, in the order of the report: the retrieval metrics, the corpus and its drift,
    the judgments, the reasons (SPEC A6 order), strata, calibration, judged metrics, verdict.

    Parameters
    ----------
    ev : Evaluation
        Any evaluation (in memory, streamed, Dask); read, never imported here, so the
        report does not depend on how it was made.
    system : str
        The system to report on.
    corpus, drift_result, calibration, queries, now
        As for :func:`~retrieval_eval.analysis.evaluation.build_report`.

    Returns
    -------
    Report

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=10)
    >>> report_from_evaluation(ev, "bm25").status in ("PASS", "INDETERMINATE")
    True
    """
    validation = ev.validation
    pq = ev.per_query[ev.per_query["system"] == system]
    positive = pq[~pq["no_positives"] & ~pq["negative"]]
    queries_scored = len(positive)
    names = [c for c in ev.summary.columns if c != "n" and c not in set(ev.judged_metrics)]
    metrics, not_computed = _metrics(ev.summary.loc[system], names, queries_scored)
    for name in metrics:  # a column averaged over another number of queries says how many
        counted = int(pq[name].notna().sum()) if name in pq.columns else queries_scored
        if counted != queries_scored:
            metrics[name]["queries"] = counted
    corpus_info, drift_result = _corpus(ev, corpus, drift_result)
    judgments_info: dict[str, Any] = {
        "queries": validation.queries,
        "queries_scored": queries_scored,
        "labels": validation.labels,
        "fingerprint": validation.fingerprint,
        "human_labels": validation.human_labels,
        "synthetic_labels": validation.synthetic_labels,
    }
    reasons: list[str] = []
    if drift_result is not None:
        summary_d = drift_result.to_dict()["summary"]
        judgments_info["drift"] = summary_d
        if summary_d["invalid_ratio"] > 0:
            reasons.append(f"{round(summary_d['invalid_ratio'] * 100)}% of judgments no longer match the live corpus")
    unanswered = queries_scored > 0 and bool(positive["missing"].all())
    reasons += _query_reasons(ev, pq, queries_scored, unanswered)
    data: dict[str, Any] = {
        "spec_version": SPEC_VERSION,
        "tool": {"name": TOOL_NAME, "version": TOOL_VERSION},
        "generated_at": _timestamp(now),
        "corpus": corpus_info,
        "judgments": judgments_info,
        "metrics": metrics,
    }
    if ev.has_strata:
        data["per_stratum"] = {name: s.to_dict() for name, s in stratum_scores(ev, system, names).items()}
        # First-appearance order: the tie order of the worst stratum (SPEC A3), which a
        # report read back from disk needs for its worst-stratum gates.
        judgments_info["strata"] = list(ev.strata)
    reasons += _calibration(data, ev, system, calibration, queries)
    _judged(data, ev, system)
    if not_computed:
        reasons.append(
            f"{', '.join(not_computed)} could not be computed (NaN), so "
            f"{_plural(len(not_computed), 'it', 'they')} cannot pass"
        )
    status = "INDETERMINATE" if queries_scored == 0 or unanswered or not validation.ok or not_computed else "PASS"
    data["verdict"] = {"status": status, "reasons": reasons}
    return Report(data)


def _metrics(summary: pd.Series, names: list[str], queries_scored: int) -> tuple[dict[str, Any], list[str]]:
    """The retrieval metrics' measurements (none when no query was scored) and the names of
    those the engine could not compute (NaN is not a number a verdict can rest on)."""
    metrics = {name: Measurement(value=float(summary[name])).to_dict() for name in names} if queries_scored else {}
    not_computed = [name for name, m in metrics.items() if not math.isfinite(m["value"])]
    for name in not_computed:
        metrics[name]["indeterminate"] = "could not be computed (NaN)"
    return metrics, not_computed


def _corpus(ev, corpus, drift_result):
    """The report's ``corpus`` block, and the drift of the judgments against it (computed here
    when a corpus is given without a drift result)."""
    if corpus is None:
        return {"fingerprint": None}, drift_result
    from ...io import as_corpus
    from ...io.absent import corpus_meaning

    c = corpus_meaning(as_corpus(corpus))
    info = {
        "fingerprint": c.attrs.get("corpus_fingerprint"),
        "documents": int(c["doc_uri"].nunique()),
        "chunks": len(c),
    }
    if drift_result is None:
        from ..drift import drift

        drift_result = drift(ev.judgments, c)
    return info, drift_result


def _query_reasons(ev, pq: pd.DataFrame, queries_scored: int, unanswered: bool) -> list[str]:
    """The verdict's reasons about the queries: missing from the run, excluded, an unanswered
    run, nothing scored, repeated keys, an unsound judgment set (SPEC A6 order)."""
    validation = ev.validation
    reasons: list[str] = []
    missing_scored = int((pq["missing"] & ~pq["no_positives"] & ~pq["negative"]).sum())
    if missing_scored:
        reasons.append(
            f"{missing_scored} judged {_plural(missing_scored, 'query', 'queries')} had no run entry and scored zero"
        )
    excluded = int((pq["no_positives"] & ~pq["negative"]).sum())
    if excluded and queries_scored:
        reasons.append(
            f"{excluded} judged {_plural(excluded, 'query has', 'queries have')} no "
            f"label at relevance >= {ev.threshold} and "
            f"{_plural(excluded, 'was', 'were')} excluded from the averages"
        )
    # An empty run (or one that answers no judged query) measured nothing: zeros there are
    # not a number about retrieval, so the verdict cannot be PASS.
    if unanswered:
        reasons.append(
            "the run has no ranking for any judged query (is it empty?), so nothing about retrieval was measured"
        )
    if queries_scored == 0:
        if validation.queries == 0:
            reasons.append("no judged queries, so no metric was computed")
        else:
            reasons.append(f"no query had a label at relevance >= {ev.threshold}, so no metric was computed")
    dups = int(pq["duplicates"].sum())
    if dups:
        reasons.append(f"{dups} queries repeated a key in their ranking; only the first occurrence of each was counted")
    if not validation.ok:
        codes = sorted({i.code for i in validation.errors})
        reasons.append(
            f"the judgment set is unsound ({', '.join(codes)}); run 'retrieval-eval "
            "validate' for detail. No metric computed from it can be trusted"
        )
    return reasons


def _calibration(data: dict[str, Any], ev, system: str, calibration, queries) -> list[str]:
    """Calibration's figures into ``metrics``, ``per_stratum`` and a ``calibration`` block
    (computed here when negatives are declared and the run has scores); its warnings as reasons."""
    if calibration is None and (queries is not None or ev.negatives) and ev.run is not None:
        has_scores = ev.run.loc[ev.run["system"] == system, "score"].notna().any()
        if has_scores:
            from ..calibration import calibrate

            calibration = calibrate(
                ev.judgments, ev.run, queries=queries, negatives=ev.negatives or None, threshold=ev.threshold
            )
    if calibration is None or system not in set(calibration.summary.index):
        return []
    for name, m in calibration.metrics(system).items():
        data["metrics"][name] = m.to_dict() if isinstance(m, Measurement) else dict(m)
    _calibration_strata(data, calibration, system)
    block = calibration.report_block(system)
    data["calibration"] = block
    return [f"calibration: {warning}" for warning in block.get("warnings", [])]


def _judged(data: dict[str, Any], ev, system: str) -> None:
    """The LLM-judged metrics' query-clustered measurements (``deterministic: false``, ``n``
    queries, ``stdev``, ``ci``, and ``samples``, ``var_between``, ``var_within``, ``icc``) into
    ``metrics`` and, per stratum, into ``per_stratum``."""
    if ev.judged is None:
        return
    from ..judged.measurement import judged_measurements

    rows = ev.judged[ev.judged["system"] == system]
    for name, m in zip(rows["metric"].astype(str), judged_measurements(rows)):
        data["metrics"][name] = m.to_dict()
    if "per_stratum" not in data:
        return
    rows = ev.judged_strata[ev.judged_strata["system"] == system]
    for stratum, name, m in zip(rows["stratum"].astype(str), rows["metric"].astype(str), judged_measurements(rows)):
        entry = data["per_stratum"].setdefault(stratum, {"n": 0, "metrics": {}})
        entry.setdefault("metrics", {})[name] = m.to_dict()


def _calibration_strata(data: dict[str, Any], calibration, system: str) -> None:
    """Put each stratum's calibration figure in ``per_stratum`` (negatives' strata get
    ``negative_satisfaction``, positives' ``positive_retention``), with its Wilson interval.

    So ``worst-stratum:negative_satisfaction:0.8`` gates the weakest class of OOD queries. A
    stratum's ``n`` is the queries it scored; a negatives-only stratum's is its negatives. A
    figure from fewer than 10 queries, or from rank-based scores, carries ``indeterminate``
    so a gate on it cannot PASS.
    """
    table = calibration.per_stratum
    table = table[table["system"] == system]
    if table.empty:
        return
    top = data["metrics"]
    per_stratum = data.setdefault("per_stratum", {})
    for row in table.itertuples(index=False):
        if pd.isna(row.share):
            continue
        m: dict[str, Any] = {"value": float(round(row.share, 12)), "n": int(row.n)}
        if pd.notna(row.share_ci_low):
            m["ci"] = [float(round(row.share_ci_low, 12)), float(round(row.share_ci_high, 12))]
        m["deterministic"] = True
        why = (top.get(row.figure) or {}).get("indeterminate")
        if why is None and row.n < 10:
            why = f"only {int(row.n)} {row.kind} queries in stratum '{row.stratum}' (fewer than 10)"
        if why:
            m["indeterminate"] = why
        entry = per_stratum.setdefault(str(row.stratum), {"n": int(row.n), "metrics": {}})
        entry.setdefault("metrics", {})[row.figure] = m
