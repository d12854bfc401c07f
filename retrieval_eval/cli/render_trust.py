"""How the command line shows what ``drift`` and ``validate`` found: the drift table and its fix
(re-anchored, collapsed, left to review), and the validation issues grouped by code.

Nothing here computes a number: it lays out what the library returned.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import Any

import pandas as pd

from . import term
from .common import jsonable
from .render import Out, plural

__all__ = ["drift_frame", "group_issues", "render_drift", "render_validation"]

#: validate: a code seen this many times or more is shown once, with up to SHOW_IDS of its ids.
GROUP_AT = 4
SHOW_IDS = 5


def render_drift(out: Out, args: argparse.Namespace, result: Any, fixed: Any, written: bool) -> None:
    """The terminal report of ``drift``: labels per status, the decayed ones, what ``--fix`` did.

    Parameters
    ----------
    out : Out
    args : argparse.Namespace
    result : DriftResult
    fixed : FixResult or None
        With ``--fix``.
    written : bool
        Whether ``--fix`` rewrote the file.
    """
    from ..analysis.drift.core import DRIFT_STATUSES

    s = out.s
    summary = result.summary
    out(f"{s('drift', 'bold')}  {args.judgments}  {s('against', 'dim')}  {args.corpus}")
    out(
        f"  labels' corpus fingerprint: {result.judgments_fingerprint or '(none, or mixed)'}; "
        f"live corpus: {result.corpus_fingerprint or '(none)'}"
    )
    out()
    rows = []
    for status in DRIFT_STATUSES:
        count = summary[status.lower()]
        rows.append([s.status(status) if count else status, str(count)])
    out(term.table(["status", "labels"], rows, style=s))
    out(f"  {plural(summary.total, 'label')}, {summary.invalid_ratio:.1%} not VALID")

    findings = result.findings
    bad = findings[findings["status"] != "VALID"]
    if len(bad):
        out()
        rows = []
        shown = bad.head(50)
        for rec in shown.to_dict(orient="records"):
            split = rec.get("split_into")
            target = rec.get("reanchor_to")
            if split is not None and not _is_missing(split):
                detail = "spans " + ", ".join(map(str, split))
            elif not _is_missing(target):
                detail = f"-> {target}"
            else:
                detail = ""
            cid = rec.get("chunk_id")
            rows.append(
                [
                    str(rec["query_id"]),
                    str(rec["doc_uri"]),
                    "" if _is_missing(cid) else str(cid),
                    s.status(rec["status"]),
                    detail,
                ]
            )
        out(term.table(["query_id", "doc_uri", "chunk_id", "status", "detail"], rows, align=["l"] * 5, style=s))
        if len(bad) > len(shown):
            out(f"  ... and {len(bad) - len(shown)} more not VALID (use --json for all)")
    out()
    _render_fix(out, args, summary, fixed, written)


def _render_fix(out: Out, args: argparse.Namespace, summary: Any, fixed: Any, written: bool) -> None:
    """The last lines of ``drift``: what ``--fix`` did and what is left, or the verdict."""
    s = out.s
    decayed = summary.total - summary.valid
    if fixed is not None:
        review = len(fixed.needs_review)
        if written:
            bak = getattr(args, "backup_path", f"{args.judgments}.bak")
            wrote = f"rewrote {args.judgments}" + (f" (old file kept as {bak})" if args.backup else "")
        else:
            wrote = f"{args.judgments} left as it was"
        out(f"{s('fix', 'bold')}  re-anchored {plural(fixed.reanchored, 'label')}; {wrote}")
        if fixed.collapsed:
            out(
                f"  collapsed {plural(fixed.collapsed, 'label')} into an earlier label of the same "
                "query, chunk and grade"
            )
        if review:
            need = f"{plural(review, 'label')} {'needs' if review == 1 else 'need'} review"
            out(
                f"  {s(need, 'yellow')} (SPLIT, ORPHANED or GRADE_CONFLICT): "
                "left as they are, since guessing would invent ground truth"
            )
            torn = fixed.needs_review[fixed.needs_review["status"] == "GRADE_CONFLICT"]
            for rec in torn.to_dict(orient="records"):
                out(f"    {rec['query_id']}  {rec['chunk_id']}  {s.status('GRADE_CONFLICT')}  {rec['reason']}")
        else:
            out(f"  {s('nothing left to review', 'green')}")
    elif args.fix:
        out(f"{s('fix', 'bold')}  nothing to fix; {args.judgments} left as it is")
    elif not summary.total:
        out(f"{s.status('INDETERMINATE')}  no labels, so no label was checked against the corpus")
    elif decayed:
        recoverable = summary.re_anchorable + summary.merged
        hint = f"; {recoverable} can be re-anchored with --fix" if recoverable else ""
        out(f"{s.status('FAIL')}  {plural(decayed, 'label')} decayed{hint}")
    else:
        out(f"{s.status('PASS')}  every label is VALID")


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def render_validation(out: Out, path: str, result: Any) -> None:
    """The terminal report of ``validate``: counts, issues (repeats folded) and the outcome.

    Parameters
    ----------
    out : Out
    path : str
        The labels file.
    result : ValidationResult
    """
    s = out.s
    d = jsonable(result.to_dict())
    out(f"{s('validate', 'bold')}  {path}")
    out(
        f"  {plural(d.get('queries', 0), 'query', 'queries')}, {plural(d.get('labels', 0), 'label')} "
        f"({d.get('humanLabels', 0)} human, {d.get('syntheticLabels', 0)} synthetic), "
        f"fingerprint {d.get('fingerprint') or '(none)'}"
    )
    strata = d.get("strata") or {}
    if strata:
        out("  strata: " + ", ".join(f"{name} {count}" for name, count in strata.items()))
    issues = d.get("issues") or []
    if issues:
        out()
        rows = [[s.status(sev), code, message] for sev, code, message in group_issues(issues)]
        out(term.table(["severity", "code", "message"], rows, align=["l", "l", "l"], style=s))
    out()
    errors = sum(1 for i in issues if i.get("severity") == "error")
    warnings = len(issues) - errors
    if result.ok:
        tail = f" ({plural(warnings, 'warning')})" if warnings else ""
        out(f"{s.status('PASS')}  no errors{tail}")
    else:
        out(
            f"{s.status('FAIL')}  {plural(errors, 'error')}, {plural(warnings, 'warning')}: "
            "metrics computed from this set cannot be trusted"
        )


def drift_frame(result) -> pd.DataFrame:
    """A drift result's labels per status, as a two-column frame (csv/json output)."""
    from ..analysis.drift.core import DRIFT_STATUSES

    return pd.DataFrame(
        {"status": list(DRIFT_STATUSES), "labels": [int(result.summary[s.lower()]) for s in DRIFT_STATUSES]}
    )


def group_issues(issues: list[dict[str, Any]]) -> list[list[str]]:
    """Rows ``[severity, code, message]`` with an issue that repeats (``GROUP_AT`` times or
    more, e.g. one per query) folded into one row: the count, the first message, and the
    first few query ids. ``--json`` keeps every issue."""
    by_code: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for issue in issues:
        by_code.setdefault((issue["severity"], issue["code"]), []).append(issue)
    rows: list[Any] = []
    for (severity, code), group in by_code.items():
        if len(group) < GROUP_AT:
            rows.extend([severity, code, i["message"]] for i in group)
            continue
        ids = []
        for i in group:
            m = re.search(r"\bquery (\S+)", i["message"])
            if m and m.group(1) not in ids:
                ids.append(m.group(1))
        shown = ", ".join(ids[:SHOW_IDS]) + (", ..." if len(ids) > SHOW_IDS else "")
        message = f"{len(group)} times, e.g. {group[0]['message']}"
        if ids:
            message += f"; queries {shown}"
        rows.append([severity, code, message + " (--json lists every one)"])
    return rows
