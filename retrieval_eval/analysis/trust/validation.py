"""Structural and statistical sanity checks on a judgment set (SPEC A4).

The warnings matter as much as the errors: a judgment set with no positives, no human labels
or a two-label stratum produces confident-looking numbers that mean nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from ...engine.metrics import ID, UNSTRATIFIED, judgment_keys
from ..handoff import viz

CHUNK_ID_PATTERN = r"^c1:[0-9a-f]{32}$"
TEXT_SHA_PATTERN = r"^t1:[0-9a-f]{32}$"
THIN_STRATUM = 5


@dataclass(frozen=True)
class ValidationIssue:
    severity: str  # "error" | "warning"
    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"severity": self.severity, "code": self.code, "message": self.message}


@dataclass
class ValidationResult:
    """Issues (errors first by row, then set-level findings, in the spec's fixed order) and counts."""

    issues: list[ValidationIssue] = field(default_factory=list)
    queries: int = 0
    labels: int = 0
    human_labels: int = 0
    synthetic_labels: int = 0
    fingerprint: str | None = None
    strata: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No errors. Warnings describe a set that is unsound rather than invalid."""
        return not any(i.severity == "error" for i in self.issues)

    @property
    def errors(self) -> list[ValidationIssue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[ValidationIssue]:
        return [i for i in self.issues if i.severity == "warning"]

    def to_dict(self) -> dict[str, Any]:
        """Exactly what ``retrieval-eval validate --json`` prints."""
        return {
            "issues": [i.to_dict() for i in self.issues],
            "queries": self.queries,
            "labels": self.labels,
            "humanLabels": self.human_labels,
            "syntheticLabels": self.synthetic_labels,
            "fingerprint": self.fingerprint,
            "strata": dict(self.strata),
            "ok": self.ok,
        }

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([i.to_dict() for i in self.issues], columns=["severity", "code", "message"]).astype(ID)

    def _repr_html_(self) -> str:
        validation_html = viz("validation_html")

        return validation_html(self)


def _previous_text_differs(qid: pd.Series, text: pd.Series) -> np.ndarray:
    """Per row: the query text differs from the last text seen earlier for the same query."""
    has = text.notna()
    prev = text[has].groupby(qid[has], sort=False).shift(1)
    out = np.zeros(len(text), dtype=bool)
    differs = prev.notna() & (prev != text[has])
    out[np.flatnonzero(has.to_numpy())[differs.to_numpy(dtype=bool)]] = True
    return out


def _in_file_order(j: pd.DataFrame) -> pd.DataFrame:
    """The labels in file order: by their ``line`` when every label carries one (a frame the
    caller sorted still reports against the file), else as given."""
    if "line" in j.columns and len(j) and j["line"].notna().all():
        line = pd.to_numeric(j["line"], errors="coerce")
        if line.notna().all() and not line.is_monotonic_increasing:
            j = j.iloc[np.argsort(line.to_numpy(dtype=np.float64), kind="stable")]
    return j.reset_index(drop=True)


def _row_issues(j: pd.DataFrame, qid: pd.Series, keys: pd.Series) -> list[ValidationIssue]:
    """The per-label errors: in file order, and within one label by code."""
    dup = pd.DataFrame({"q": qid, "k": keys}).duplicated().to_numpy()
    inconsistent = _previous_text_differs(qid, j["query"].astype(ID))
    chunk = j["chunk_id"].astype(ID)
    bad_chunk = (chunk.notna() & ~chunk.str.match(CHUNK_ID_PATTERN).fillna(False)).to_numpy(bool)
    sha = j["text_sha"].astype(ID)
    bad_sha = (sha.notna() & ~sha.str.match(TEXT_SHA_PATTERN).fillna(False)).to_numpy(bool)
    issues: list[ValidationIssue] = []
    for i in cast("Iterable[int]", np.flatnonzero(dup | inconsistent | bad_chunk | bad_sha)):
        q = qid.iat[i]
        if bad_chunk[i]:
            issues.append(ValidationIssue("error", "bad-chunk-id", f"malformed chunk_id on query {q}: {chunk.iat[i]}"))
        if bad_sha[i]:
            issues.append(ValidationIssue("error", "bad-text-sha", f"malformed text_sha on query {q}: {sha.iat[i]}"))
        if dup[i]:
            issues.append(
                ValidationIssue(
                    "error", "duplicate-label", f"duplicate judgment for query {q} and target {keys.iat[i]}"
                )
            )
        if inconsistent[i]:
            issues.append(
                ValidationIssue("error", "inconsistent-query-text", f"query {q} has two different query strings")
            )
    return issues


def _set_issues(
    j: pd.DataFrame,
    qid: pd.Series,
    human: np.ndarray,
    synthetic: np.ndarray,
    fingerprints: Any,
    strata: dict[str, int],
    other,
) -> list[ValidationIssue]:
    """The findings about the set as a whole, in the spec's fixed order."""
    n = len(j)
    issues: list[ValidationIssue] = []
    with_text = set(qid[j["query"].notna()].tolist())
    for q in sorted(set(qid.tolist()) - with_text):
        issues.append(ValidationIssue("warning", "missing-query-text", f"query {q} has no query text on any row"))
    if n == 0:
        issues.append(ValidationIssue("error", "empty", "no judgments"))
    if n and not (j["relevance"].to_numpy() >= 1).any():
        issues.append(
            ValidationIssue(
                "error", "no-positives", "no judgment has relevance >= 1, so recall is undefined for every query"
            )
        )
    if not human.any() and synthetic.any():
        issues.append(
            ValidationIssue(
                "warning",
                "no-human-labels",
                "every label is synthetic. Without human labels you cannot measure judge "
                "calibration, and synthetic labels quietly become ground truth",
            )
        )
    if len(fingerprints) > 1:
        issues.append(
            ValidationIssue(
                "warning",
                "mixed-fingerprints",
                f"judgments span {len(fingerprints)} corpus fingerprints; run 'drift' before trusting any metric",
            )
        )
    for name, count in strata.items():
        if name != UNSTRATIFIED and count < THIN_STRATUM:
            issues.append(
                ValidationIssue(
                    "warning", "thin-stratum", f"stratum '{name}' has only {count} labels, too few to gate on"
                )
            )
    with_chunk = int(j["chunk_id"].notna().sum())
    if 0 < with_chunk < n:
        issues.append(
            ValidationIssue(
                "warning", "mixed-granularity", f"{with_chunk}/{n} labels have chunk_id; the rest are document-level"
            )
        )
    if with_chunk == 0 and n:
        issues.append(
            ValidationIssue(
                "warning", "no-chunk-ids", "no label has a chunk_id, so drift can only work at document granularity"
            )
        )
    if n:
        from .agreement import agreement_warning

        low = agreement_warning(j, other)
        if low is not None:
            issues.append(ValidationIssue("warning", "low-label-agreement", low))
    return issues


def validate(judgments, other=None) -> ValidationResult:
    """Check a judgment set. Errors per label, in file order and within a label by code:
    bad-chunk-id, bad-text-sha, duplicate-label, inconsistent-query-text; then empty,
    no-positives. Warnings: missing-query-text (per query, code-point order), no-human-labels,
    mixed-fingerprints, thin-stratum (code-point order), mixed-granularity, no-chunk-ids, and
    last low-label-agreement: two labelers share 20+ labels (in ``judgments``, or with
    ``other``, a second label set) with a binary kappa below 0.6
    (:func:`retrieval_eval.agreement.agreement_warning`).

    File order is the ``line`` each label was read from, so a person can walk the file from
    top to bottom beside the report; sorted orders are locale-independent, so ``--json`` output
    agrees across machines.

    Parameters
    ----------
    judgments : DataFrame, list of dict or path
        The judgment set.
    other : DataFrame, list of dict or path, optional
        A second label set, for the agreement check.

    Returns
    -------
    ValidationResult

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> rev.validate(rev.load_demo().judgments).ok
    True
    """
    from ...io import as_judgments
    from ...io.absent import judgments_meaning

    # An empty optional field is an absent one (SPEC A2): no stratum '', no fingerprint ''.
    j = _in_file_order(judgments_meaning(as_judgments(judgments)))
    qid = j["query_id"].astype(ID)
    labeled_by = j["labeled_by"].astype(ID).fillna("")
    human = labeled_by.str.startswith("human:").to_numpy(dtype=bool)
    synthetic = labeled_by.str.startswith("synthetic:").to_numpy(dtype=bool)
    strata_series = j["stratum"].astype(ID).fillna(UNSTRATIFIED)
    strata = {str(k): int(v) for k, v in sorted(strata_series.value_counts(sort=False).items())}
    fingerprints = pd.unique(j["corpus_fingerprint"].dropna())
    issues = _row_issues(j, qid, judgment_keys(j))
    issues += _set_issues(j, qid, human, synthetic, fingerprints, strata, other)
    return ValidationResult(
        issues=issues,
        queries=int(qid.nunique()),
        labels=len(j),
        human_labels=int(human.sum()),
        synthetic_labels=int(synthetic.sum()),
        fingerprint=str(fingerprints[0]) if len(fingerprints) == 1 else None,
        strata=strata,
    )
