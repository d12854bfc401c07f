"""CI gates over a report: PASS, FAIL or INDETERMINATE (SPEC A6).

Four forms, because an absolute threshold alone gets tuned until it passes::

    recall@5:0.8                  absolute floor
    recall@5:-0.02                delta against a baseline report (regression tolerance)
    worst-stratum:recall@5:0.7    floor on the weakest query class
    auroc:ci-lower:0.8            floor on the lower end of the metric's interval
    score-shift:psi:0.1           ceiling on score drift between two runs (score_shift)
    label-agreement:kappa_binary:0.6  floor on agreement between labelers (label_agreement)

A third outcome, INDETERMINATE, exists because "I cannot tell" is not "it failed" and must not
be "it passed" either: a gate on a metric that was never computed, on a delta with no baseline,
or on an interval that does not exist refuses to decide rather than guess.

Reports are the spec's JSON dicts (``spec-fixtures/schemas/report.schema.json``), or objects whose ``to_dict()`` is one.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ...errors import FormatError

__all__ = [
    "Gate",
    "GateError",
    "GateEvaluation",
    "GateResult",
    "Status",
    "apply_gates",
    "check_report",
    "evaluate_gates",
    "parse_gate",
    "worse_status",
]

Status = Literal["PASS", "FAIL", "INDETERMINATE"]
GateKind = Literal["absolute", "delta", "worst-stratum", "ci-lower", "score-shift", "label-agreement"]

_SEVERITY = {"PASS": 0, "INDETERMINATE": 1, "FAIL": 2}

#: A finite decimal: optional sign, digits with an optional fraction (or a bare fraction such
#: as ``.5``), optional exponent. ``float()`` alone would accept ``nan``, ``inf``, ``1_000`` and
#: surrounding whitespace; a threshold two readers could understand differently is refused.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

#: Decimals both sides of a delta comparison are rounded to: report values carry 12 decimals,
#: so a drop of exactly the tolerance must pass whatever binary rounding made of it.
_DECIMALS = 12


class GateError(ValueError):
    """A malformed gate expression; ``str(err)`` is the one-line message a user sees."""


@dataclass(frozen=True)
class Gate:
    """A parsed gate expression: ``raw`` as written, its ``kind``, ``metric`` and ``threshold``.

    For ``absolute``, ``worst-stratum`` and ``ci-lower`` the threshold is a floor; for ``delta``
    it is the smallest acceptable change against the baseline (``-0.02``: may drop by at most
    0.02; ``+0.01``: must rise by at least 0.01).
    """

    raw: str
    kind: GateKind
    metric: str
    threshold: float

    def __str__(self) -> str:
        return self.raw


@dataclass(frozen=True)
class GateResult:
    """One gate's outcome. ``observed`` is the number the gate compared (the metric value, the
    worst stratum's value, or the interval's lower end); ``baseline`` the baseline value of a
    delta gate. Either is None when there was nothing to observe."""

    expression: str
    status: Status
    observed: float | None = None
    baseline: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report's ``verdict.gates`` item; unset numbers are omitted."""
        out: dict[str, Any] = {"expression": self.expression, "status": self.status}
        if self.observed is not None:
            out["observed"] = self.observed
        if self.baseline is not None:
            out["baseline"] = self.baseline
        return out


@dataclass(frozen=True)
class GateEvaluation:
    """Every gate's result, the combined status (the worst of them; PASS when there are no
    gates) and one reason per gate that did not pass, in gate order."""

    status: Status
    results: list[GateResult]
    reasons: list[str]

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "results": [r.to_dict() for r in self.results], "reasons": list(self.reasons)}


def worse_status(a: Status, b: Status) -> Status:
    """The more serious of two verdicts: FAIL beats INDETERMINATE beats PASS.

    A gate only knows about the numbers it was pointed at. It cannot clear a finding it never
    looked at, such as a judgment set ``validate`` rejects, so combining a passing gate with a
    worse verdict keeps the worse one.
    """
    for status in (a, b):
        if status not in _SEVERITY:
            raise ValueError(f"unknown status {status!r}; expected PASS, FAIL or INDETERMINATE")
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


def _number(text: str, expression: str) -> float:
    if not _NUMBER.fullmatch(text):
        raise GateError(f"gate '{expression}': '{text}' is not a number")
    value = float(text)
    if not math.isfinite(value):  # e.g. 1e999
        raise GateError(f"gate '{expression}': '{text}' is not a finite number")
    return value


def _metric(text: str, expression: str) -> str:
    if not text or text != text.strip():
        raise GateError(f"gate '{expression}': expected metric:threshold, the metric is empty")
    return text


def parse_gate(expression: str) -> Gate:
    """Parse one gate expression into a :class:`Gate`.

    ``metric:floor`` is absolute; a leading ``+`` or ``-`` on the number (``metric:-0.02``)
    makes it a delta against a baseline, so a negative absolute floor cannot be written (none
    of the metrics can go below zero); ``worst-stratum:metric:floor`` and
    ``metric:ci-lower:floor`` are the other two forms. Metric names may contain ``@`` and
    ``_`` (``ndcg@10``, ``fpr@95tpr``) but no ``:``. Numbers must be finite decimals
    (``0.8``, ``.5``, ``1e-1``); anything else raises :class:`GateError`.

    Parameters
    ----------
    expression : str
        ``recall@10:0.8``, ``ndcg@10:-0.02``, ``worst-stratum:recall@10:0.6``,
        ``recall@10:ci-lower:0.7``, or a trust gate (``score-shift:...``, ``label-agreement:...``).

    Returns
    -------
    Gate

    Raises
    ------
    GateError
        A malformed expression, with a one-line message.

    Examples
    --------
    >>> from retrieval_eval.analysis.decisions.gates import parse_gate
    >>> parse_gate("recall@10:0.8").threshold
    0.8
    """
    if not isinstance(expression, str):
        raise GateError(f"gate {expression!r}: expected a string such as 'recall@10:0.8'")
    parts = expression.split(":")
    if parts[0] in ("score-shift", "label-agreement"):
        return _trust_gate(expression, parts)
    if parts[0] == "worst-stratum":
        if len(parts) != 3:
            raise GateError(f"gate '{expression}': expected worst-stratum:metric:floor")
        metric = _metric(parts[1], expression)
        return Gate(expression, "worst-stratum", metric, _number(parts[2], expression))
    if len(parts) == 3 and parts[1] == "ci-lower":
        metric = _metric(parts[0], expression)
        return Gate(expression, "ci-lower", metric, _number(parts[2], expression))
    if len(parts) != 2:
        raise GateError(f"gate '{expression}': expected metric:threshold")
    metric = _metric(parts[0], expression)
    kind: GateKind = "delta" if parts[1][:1] in ("+", "-") else "absolute"
    return Gate(expression, kind, metric, _number(parts[1], expression))


def _trust_gate(expression: str, parts: list[str]) -> Gate:
    """``score-shift:<metric>:<ceiling>`` (FAIL above it) or ``label-agreement:<measure>:<floor>``
    (FAIL below it), read from a result's ``score_shift`` / ``label_agreement`` block."""
    from ..calibration.shift import SHIFT_GATE_METRICS
    from ..trust.agreement import AGREEMENT_GATE_MEASURES

    kind, known = (parts[0], SHIFT_GATE_METRICS) if parts[0] == "score-shift" else (parts[0], AGREEMENT_GATE_MEASURES)
    if len(parts) != 3:
        what = "ceiling" if kind == "score-shift" else "floor"
        raise GateError(f"gate '{expression}': expected {kind}:metric:{what}")
    metric = _metric(parts[1], expression)
    if metric not in known:
        raise GateError(f"gate '{expression}': {kind} gates read {', '.join(known)}, not '{metric}'")
    return Gate(expression, cast(GateKind, kind), metric, _number(parts[2], expression))


def _evaluate_trust(gate: Gate, report: Mapping[str, Any]) -> tuple[GateResult, str | None]:
    """A score-shift ceiling or a label-agreement floor; INDETERMINATE without the number."""
    raw, metric, threshold = gate.raw, gate.metric, gate.threshold
    block_name = "score_shift" if gate.kind == "score-shift" else "label_agreement"
    block = report.get(block_name)
    m = block.get(metric) if isinstance(block, Mapping) else None
    if not (isinstance(m, Mapping) and _is_number(m.get("value"))):
        return GateResult(raw, "INDETERMINATE"), (
            f"{raw}: no '{metric}' in a '{block_name}' block (run "
            f"{'score-shift' if block_name == 'score_shift' else 'label-agreement'} first)"
        )
    value = float(m["value"])
    why = _indeterminate(m)
    if why is not None:
        return GateResult(raw, "INDETERMINATE", value), f"{raw}: '{metric}' cannot be gated: {why}"
    if gate.kind == "score-shift":
        observed = abs(value) if metric == "cutoff_shift" else value  # drift either way
        if _at_least(threshold, observed):
            return GateResult(raw, "PASS", observed), None
        return GateResult(raw, "FAIL", observed), (
            f"{raw}: {metric} is {_fmt(observed)}, above the ceiling {threshold!r}"
        )
    if _at_least(value, threshold):
        return GateResult(raw, "PASS", value), None
    return GateResult(raw, "FAIL", value), (f"{raw}: {metric} is {_fmt(value, threshold)}, below {threshold!r}")


# -- reading reports ---------------------------------------------------------------------------


def _as_report(report: Any) -> Mapping[str, Any]:
    if report is None:
        return {}
    if isinstance(report, Mapping):
        return report
    to_dict = getattr(report, "to_dict", None)
    if callable(to_dict):
        out = to_dict()
        if isinstance(out, Mapping):
            return out
    raise TypeError(f"expected a report dict or an object with to_dict(), got {type(report).__name__}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_report(data: Any, label: str = "baseline") -> dict[str, Any]:
    """Check that ``data`` (parsed JSON) is a report a gate can read, and return it.

    Only what gates rely on is checked: an object with a ``metrics`` object whose measurements
    each carry a finite numeric ``value`` (and, when present, a two-number ``ci``), and the
    same inside ``per_stratum``. A baseline that is not a report would otherwise make every
    delta gate quietly INDETERMINATE, or worse, compare against garbage. Raises
    :class:`~retrieval_eval.errors.FormatError` naming ``label``.
    """
    if not isinstance(data, Mapping):
        raise FormatError(label, None, f"not a report: expected a JSON object, got {_json_type(data)}")
    metrics = data.get("metrics")
    if not isinstance(metrics, Mapping):
        raise FormatError(label, None, "not a report: no 'metrics' object")
    _check_measurements(metrics, label, "metrics")
    strata = data.get("per_stratum")
    if strata is not None:
        if not isinstance(strata, Mapping):
            raise FormatError(label, None, "'per_stratum' must be an object")
        for name, stratum in strata.items():
            if not isinstance(stratum, Mapping):
                raise FormatError(label, None, f"per_stratum.{name} must be an object")
            n = stratum.get("n")
            if not (isinstance(n, int) and not isinstance(n, bool) and n >= 0):
                raise FormatError(label, None, f"per_stratum.{name}.n must be a non-negative integer")
            inner = stratum.get("metrics", {})
            if not isinstance(inner, Mapping):
                raise FormatError(label, None, f"per_stratum.{name}.metrics must be an object")
            _check_measurements(inner, label, f"per_stratum.{name}.metrics")
    return dict(data)


def _check_measurements(metrics: Mapping[str, Any], label: str, where: str) -> None:
    for name, m in metrics.items():
        if not isinstance(m, Mapping):
            raise FormatError(label, None, f"{where}.{name} must be an object with a 'value'")
        if "value" not in m:
            raise FormatError(label, None, f"{where}.{name} has no 'value'")
        if not _is_number(m["value"]):
            raise FormatError(label, None, f"{where}.{name}.value must be a finite number")
        ci = m.get("ci")
        if ci is not None and not (isinstance(ci, (list, tuple)) and len(ci) == 2 and all(_is_number(x) for x in ci)):
            raise FormatError(label, None, f"{where}.{name}.ci must be two finite numbers")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return type(value).__name__


def _measurement(report: Mapping[str, Any], metric: str) -> Mapping[str, Any] | None:
    metrics = report.get("metrics") or {}
    m = metrics.get(metric) if isinstance(metrics, Mapping) else None
    if isinstance(m, Mapping) and _is_number(m.get("value")):
        return m
    return None


def _not_computed(report: Mapping[str, Any], metric: str) -> str | None:
    """Why a measurement that is present has no number (null, NaN or inf: a metric that could not
    be computed), or None. Such a gate is INDETERMINATE: a missing number proves nothing."""
    metrics = report.get("metrics") or {}
    m = metrics.get(metric) if isinstance(metrics, Mapping) else None
    if not isinstance(m, Mapping) or "value" not in m or _is_number(m.get("value")):
        return None
    return f"'{metric}' could not be computed (its value is {m['value']!r})"


def _indeterminate(m: Mapping[str, Any] | None) -> str | None:
    """The measurement's own reason it cannot be trusted (a calibration metric over fewer
    negatives than it needs), or None."""
    if m is None:
        return None
    why = m.get("indeterminate")
    if why in (None, False, ""):
        return None
    return str(why) if why is not True else "the measurement is marked indeterminate"


# -- evaluating ---------------------------------------------------------------------------------


def _at_least(value: float, threshold: float) -> bool:
    """``value >= threshold`` at the report's precision (12 decimals), so a number exactly at
    the threshold passes whatever binary rounding made of it (0.50 - 0.52 is
    -0.020000000000000018, and a drop of exactly 0.02 must pass a ``-0.02`` gate)."""
    return round(value, _DECIMALS) >= round(threshold, _DECIMALS)


def _fmt(value: float, threshold: float | None = None) -> str:
    """Four decimals, or as many as it takes to show why ``value`` fell short of ``threshold``."""
    text = f"{value:.4f}"
    if threshold is not None and float(text) >= threshold > value:
        text = f"{value:.12g}"
    return text


def worst_of(values: Mapping[str, float], order: Sequence[str] = ()) -> str | None:
    """The name with the lowest value; on a tie, the first in ``order``.

    ``order`` is the strata in the order they first appear in the judgments (SPEC A3; a report
    carries it as ``judgments.strata``); names it does not list come after, in the mapping's
    order. ``worst_stratum``, ``Evaluation.worst_stratum``, ``worst-stratum:`` gates and the
    CLI's per-stratum table all pick through here, so they name the same stratum.
    """
    if not values:
        return None
    rank = {name: i for i, name in enumerate(order)}
    at = {name: rank.get(name, len(rank) + i) for i, name in enumerate(values)}
    return min(values, key=lambda name: (values[name], at[name]))


def strata_order(report: Mapping[str, Any]) -> list[str]:
    """The strata of a report in first-appearance order (``judgments.strata``; empty when the
    report does not say)."""
    judgments = report.get("judgments")
    order = judgments.get("strata") if isinstance(judgments, Mapping) else None
    return [str(s) for s in order] if isinstance(order, list) else []


def _undecided(raw: str, reason: str, observed: float | None = None, base: float | None = None):
    return GateResult(raw, "INDETERMINATE", observed, base), f"{raw}: {reason}"


def _nearest(report: Mapping[str, Any], metric: str) -> str:
    """`` (nearest in the report: a, b, c)``: the report's closest metric names, or ``""``."""
    metrics = report.get("metrics") or {}
    close = difflib.get_close_matches(
        metric, [str(n) for n in metrics] if isinstance(metrics, Mapping) else [], n=3, cutoff=0.0
    )
    return f" (nearest in the report: {', '.join(close)})" if close else ""


def _evaluate_worst_stratum(gate: Gate, report: Mapping[str, Any]) -> tuple[GateResult, str | None]:
    """The lowest scored stratum; one whose measurement cannot be trusted makes a pass INDETERMINATE."""
    raw, metric, threshold = gate.raw, gate.metric, gate.threshold
    strata = report.get("per_stratum") or {}
    scored = {
        name: s for name, s in strata.items() if isinstance(s, Mapping) and isinstance(s.get("n"), int) and s["n"] > 0
    }
    if strata and not scored:
        return _undecided(raw, f"no stratum was scored for '{metric}'")
    values: dict[str, float] = {}
    unsure: dict[str, str] = {}
    for name, s in scored.items():
        m = _measurement(s, metric)
        if m is None:
            why = _not_computed(s, metric)
            if why is not None:
                unsure[name] = why
            continue
        why = _indeterminate(m)
        if why is not None:
            unsure[name] = why
        else:
            values[name] = float(m["value"])
    if not values and not unsure:
        return _undecided(raw, f"no per-stratum data for '{metric}'")
    observed = None
    if values:
        worst = worst_of(values, strata_order(report))
        observed = values[cast(str, worst)]  # values is not empty: there is a worst
        if not _at_least(observed, threshold):
            return GateResult(raw, "FAIL", observed), (
                f"{raw}: worst stratum '{worst}' has {metric} {_fmt(observed, threshold)}, below {threshold!r}"
            )
    if unsure:
        name = next(iter(unsure))
        return _undecided(raw, f"'{metric}' in stratum '{name}' cannot be gated: {unsure[name]}", observed)
    return GateResult(raw, "PASS", observed), None


def _evaluate_ci_lower(gate: Gate, m: Mapping[str, Any], value: float) -> tuple[GateResult, str | None]:
    """The interval's lower end; no interval (one sample in all, a deterministic metric) is INDETERMINATE."""
    raw, metric, threshold = gate.raw, gate.metric, gate.threshold
    ci = m.get("ci")
    if not (isinstance(ci, (list, tuple)) and len(ci) == 2 and _is_number(ci[0])):
        return _undecided(raw, f"no confidence interval on '{metric}', sample it more than once", value)
    lower = float(ci[0])
    if _at_least(lower, threshold):
        return GateResult(raw, "PASS", lower), None
    return GateResult(raw, "FAIL", lower), (
        f"{raw}: the lower end of the interval on {metric} is {_fmt(lower, threshold)}, below {threshold!r}"
    )


def _evaluate_delta(gate: Gate, value: float, baseline: Mapping[str, Any] | None) -> tuple[GateResult, str | None]:
    """``metric:+d`` / ``metric:-d`` against the baseline report's value of the same metric."""
    raw, metric, threshold = gate.raw, gate.metric, gate.threshold
    previous = _measurement(baseline, metric) if baseline is not None else None
    lost = _not_computed(baseline, metric) if previous is None and baseline is not None else None
    if lost is not None:
        return _undecided(raw, f"the baseline's {lost}", value)
    if previous is None:
        return _undecided(raw, f"no baseline value for '{metric}'", value)
    base = float(previous["value"])
    why = _indeterminate(previous)
    if why is not None:
        return _undecided(raw, f"the baseline's '{metric}' cannot be gated: {why}", value, base)
    change = round(value - base, _DECIMALS)
    if _at_least(change, threshold):
        return GateResult(raw, "PASS", value, base), None
    moved = f"fell {-change:.4f}" if change < 0 else f"rose only {change:.4f}"
    return GateResult(raw, "FAIL", value, base), (
        f"{raw}: {metric} {moved}, from {base:.4f} to {value:.4f}, beyond the allowed change of {threshold:+}"
    )


def _evaluate_one(gate: Gate, report: Mapping[str, Any], baseline: Mapping | None) -> tuple[GateResult, str | None]:
    """One gate, after the checks all kinds share. A metric the report lacks is INDETERMINATE
    naming the report's nearest names (SPEC A6), never a usage error: a judged metric not
    judged this time, a cutoff not computed, a typo; the gate is right for the next report."""
    raw, metric, threshold = gate.raw, gate.metric, gate.threshold
    if gate.kind in ("score-shift", "label-agreement"):
        return _evaluate_trust(gate, report)
    if gate.kind == "worst-stratum":
        return _evaluate_worst_stratum(gate, report)
    judgments = report.get("judgments") or {}
    m = _measurement(report, metric)
    if m is None:
        why = _not_computed(report, metric)
        if why is not None:
            return _undecided(raw, why)
        if isinstance(judgments, Mapping) and judgments.get("queries_scored") == 0:
            return _undecided(raw, f"no query was scored, so '{metric}' was not computed")
        return _undecided(raw, f"metric '{metric}' not present in the report{_nearest(report, metric)}")
    value = float(m["value"])
    why = _indeterminate(m)
    if why is not None:
        return _undecided(raw, f"'{metric}' cannot be gated: {why}", value)
    if gate.kind == "ci-lower":
        return _evaluate_ci_lower(gate, m, value)
    if gate.kind == "delta":
        return _evaluate_delta(gate, value, baseline)
    if _at_least(value, threshold):
        return GateResult(raw, "PASS", value), None
    return GateResult(raw, "FAIL", value), f"{raw}: {metric} is {_fmt(value, threshold)}, below {threshold!r}"


def evaluate_gates(report: Any, gates: Iterable[Gate | str], baseline: Any = None) -> GateEvaluation:
    """Evaluate every gate against ``report`` (and ``baseline`` for delta gates).

    Returns a :class:`GateEvaluation`: one :class:`GateResult` per gate in order, the combined
    status (the worst; PASS for no gates) and a reason for every gate that did not pass. A gate
    is INDETERMINATE rather than FAIL when its number does not exist (metric absent, nothing
    scored, no baseline value, no interval, no scored stratum) or the measurement says it is
    too thin to trust (``"indeterminate": "<why>"``, e.g. too few negatives for a calibration
    metric): failing would blame the system for a missing measurement, passing would certify
    one that was never made. Gates given as strings are parsed with :func:`parse_gate`.

    Parameters
    ----------
    report : Report or dict
        The spec report the gates read.
    gates : iterable of Gate or str
        The gates, in order.
    baseline : Report or dict, optional
        The report delta gates compare with.

    Returns
    -------
    GateEvaluation

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> report = rev.build_report(demo.judgments, demo.runs, system="bm25")
    >>> rev.evaluate_gates(report, ["recall@10:0.0"]).status in ("PASS", "INDETERMINATE")
    True
    """
    rep = _as_report(report)
    base = _as_report(baseline) if baseline is not None else None
    results: list[GateResult] = []
    reasons: list[str] = []
    status: Status = "PASS"
    for gate in gates:
        if not isinstance(gate, Gate):
            gate = parse_gate(gate)
        result, reason = _evaluate_one(gate, rep, base)
        results.append(result)
        if reason is not None:
            reasons.append(reason)
        status = worse_status(status, result.status)
    return GateEvaluation(status, results, reasons)


def apply_gates(report: Any, gates: Iterable[Gate | str], baseline: Any = None) -> dict[str, Any]:
    """A new report dict with the gates folded into its verdict; ``report`` is not modified.

    The verdict's status becomes the worse of its own and the gates' (a gate never upgrades a
    verdict: it cannot clear a finding such as an unsound judgment set that it never looked
    at), the gates' reasons are appended to the verdict's reasons, and ``verdict.gates`` lists
    every gate's result. With no gates the verdict is returned unchanged.

    Parameters
    ----------
    report, gates, baseline
        As for :func:`evaluate_gates`.

    Returns
    -------
    dict
        The report's data with the gates in its verdict.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> report = rev.build_report(demo.judgments, demo.runs, system="bm25")
    >>> sorted(apply_gates(report, ["recall@10:0.0"])["verdict"])
    ['gates', 'reasons', 'status']
    """
    out = copy.deepcopy(dict(_as_report(report)))
    gate_list = list(gates)
    if not gate_list:
        return out
    evaluation = evaluate_gates(out, gate_list, baseline)
    verdict = dict(out.get("verdict") or {})
    verdict["status"] = worse_status(verdict.get("status", "PASS"), evaluation.status)
    verdict["reasons"] = list(verdict.get("reasons") or []) + evaluation.reasons
    verdict["gates"] = [r.to_dict() for r in evaluation.results]
    out["verdict"] = verdict
    return out
