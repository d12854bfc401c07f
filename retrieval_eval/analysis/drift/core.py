"""Which of your labels are still true? (SPEC A5)

A team changes its chunker, the metric moves, and the change gets the credit, when part of the
movement is the labels quietly decaying underneath: a label points at a chunk_id, and a
re-chunk retires ids. :func:`drift` classifies every judgment against the live corpus;
:func:`fix` re-anchors the labels whose judged text is provably still there and leaves the
rest for a human.

Statuses, decided in this order (the first rule that applies wins):

- document-level judgment (no ``chunk_id``): ``VALID`` while its ``doc_uri`` has any live chunk,
  else ``ORPHANED``;
- ``VALID``: the labeled ``chunk_id`` is live;
- ``RE_ANCHORABLE``: the id is stale but the exact text (``text_sha``, else the hash of
  ``chunk_text``) is a live chunk's text;
- ``SPLIT``: with ``chunk_text``, two or more live chunks of the same document occur inside the
  labeled text, so the judged passage now spans several chunks and needs re-judging;
- ``MERGED``: with ``chunk_text``, a live chunk of the same document contains the labeled text
  (a coarser chunk absorbed it), so the label re-anchors to it;
- ``ORPHANED``: the text or its document is gone.

The id and text_sha steps are vectorized (hash-table lookups and merges); substring search runs
only for the judgments those steps leave, and only among the live chunks of the judgment's own
document, so 100,000 judgments against a million chunks take seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...identity import text_sha
from ...io import as_corpus, as_judgments
from ...io.absent import corpus_meaning, judgments_meaning
from ...model import ID as _STRING
from ..handoff import viz
from .drift_match import MERGED as _MERGED
from .drift_match import ORPHANED as _ORPHANED
from .drift_match import RE_ANCHORABLE as _RE_ANCHORABLE
from .drift_match import SPLIT as _SPLIT
from .drift_match import UNDECIDED as _UNDECIDED
from .drift_match import VALID as _VALID
from .drift_match import collisions, match_substrings, match_text_sha, needs_review
from .drift_match import isin as _isin
from .drift_match import missing as _missing
from .drift_match import strings as _strings

__all__ = ["DRIFT_STATUSES", "DriftResult", "DriftSummary", "FixResult", "drift", "fix"]

#: The five statuses, in the order the summary lists them.
DRIFT_STATUSES = ("VALID", "RE_ANCHORABLE", "MERGED", "SPLIT", "ORPHANED")

_FINDING_COLUMNS = ("query_id", "doc_uri", "chunk_id", "status", "reanchor_to", "split_into", "judgment_index")
_HTML_MAX_FINDINGS = 20


# --------------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DriftSummary:
    """Counts per status and ``invalid_ratio``, the share of labels that are not VALID.

    ``invalid_ratio`` is 0.0 for no judgments (nothing decayed) and is rounded to 12 decimals,
    like every number the spec's JSON carries, so two implementations print the same bytes.
    Reads like a dict too (``summary["merged"]``), because the report embeds it as one.
    """

    valid: int = 0
    re_anchorable: int = 0
    merged: int = 0
    split: int = 0
    orphaned: int = 0
    invalid_ratio: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The spec's DriftSummary object, keys in the spec's order."""
        return {
            "valid": self.valid,
            "re_anchorable": self.re_anchorable,
            "merged": self.merged,
            "split": self.split,
            "orphaned": self.orphaned,
            "invalid_ratio": self.invalid_ratio,
        }

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def keys(self):
        """The summary's keys, so ``dict(summary)`` works."""
        return self.to_dict().keys()

    @property
    def total(self) -> int:
        """Number of judgments classified."""
        return self.valid + self.re_anchorable + self.merged + self.split + self.orphaned


@dataclass(frozen=True, eq=False, repr=False)
class DriftResult:
    """The outcome of :func:`drift`.

    ``findings``: one row per judgment, in judgment order, with columns ``query_id``,
    ``doc_uri``, ``chunk_id`` (``<NA>`` for a document-level label), ``status`` (one of
    :data:`DRIFT_STATUSES`), ``reanchor_to`` (the live chunk_id, for RE_ANCHORABLE and MERGED),
    ``split_into`` (list of live chunk_ids in ordinal order for SPLIT, else None) and
    ``judgment_index`` (int64, the row position in the judgments frame the finding was made
    for, which is how :func:`fix` applies each finding to its own judgment).

    ``judgments_fingerprint``: the ``corpus_fingerprint`` the judgments were labeled against
    when every judgment that carries one carries the same one; None when none carries one or
    they disagree (a mixed set has no single fingerprint, and naming one would hide that).

    ``corpus_fingerprint``: the live corpus's fingerprint (``corpus.attrs``), else the value
    passed to :func:`drift`; None when neither is known.
    """

    findings: pd.DataFrame
    summary: DriftSummary
    judgments_fingerprint: str | None = None
    corpus_fingerprint: str | None = None

    def to_frame(self) -> pd.DataFrame:
        """A copy of ``findings``."""
        return self.findings.copy()

    def _counts(self) -> tuple[list[str], list[list[Any]], str]:
        rows = [[status, self.summary[status.lower()]] for status in DRIFT_STATUSES]
        note = f"{self.summary.total} labels, {self.summary.invalid_ratio:.1%} not VALID."
        return ["status", "labels"], rows, note

    def to_markdown(self) -> str:
        """The labels per status as Markdown, with the share not VALID as its caption."""
        markdown = viz("markdown")

        headers, rows, note = self._counts()
        return markdown(headers, rows, caption=note)

    def to_latex(self, caption: str | None = None, label: str | None = None) -> str:
        """The labels per status as a booktabs LaTeX ``table`` (no jinja2)."""
        latex = viz("latex")

        headers, rows, note = self._counts()
        return latex(headers, rows, caption=note if caption is None else caption, label=label)

    def to_dict(self) -> dict[str, Any]:
        """Exactly the JSON ``retrieval-eval drift --json`` prints.

        Each finding has ``query_id``, ``doc_uri``, ``chunk_id`` (omitted for a document-level
        label), ``status``, ``reanchor_to`` (only when set) and ``split_into`` (only for SPLIT),
        as the seed's DriftFinding interface declares its optional keys.
        """
        f = self.findings
        qids = f["query_id"].tolist()
        docs = f["doc_uri"].tolist()
        cids = f["chunk_id"].tolist()
        statuses = f["status"].tolist()
        targets = f["reanchor_to"].tolist()
        splits = f["split_into"].tolist()
        out = []
        for qid, doc, cid, status, target, split in zip(qids, docs, cids, statuses, targets, splits, strict=True):
            item: dict[str, Any] = {"query_id": qid, "doc_uri": doc}
            if not _missing(cid):
                item["chunk_id"] = cid
            item["status"] = status
            if not _missing(target):
                item["reanchor_to"] = target
            if split is not None:
                item["split_into"] = list(split)
            out.append(item)
        return {
            "findings": out,
            "summary": self.summary.to_dict(),
            "judgments_fingerprint": self.judgments_fingerprint,
            "corpus_fingerprint": self.corpus_fingerprint,
        }

    def __repr__(self) -> str:
        return (
            f"DriftResult({self.summary!r}, judgments_fingerprint="
            f"{self.judgments_fingerprint!r}, corpus_fingerprint={self.corpus_fingerprint!r})"
        )

    def plot(self, ax=None):
        """Bar chart of the status counts; returns the display, never calls ``plt.show()``."""
        plot_drift = viz("plot_drift")

        return plot_drift(self, ax=ax)

    def _repr_html_(self) -> str:
        """Summary counts first, then at most 20 findings that are not VALID."""
        _html = viz("html")

        s = self.summary
        counts = pd.DataFrame(
            [[s[name.lower()] for name in DRIFT_STATUSES] + [f"{s.invalid_ratio:.1%}"]],
            columns=[*DRIFT_STATUSES, "not VALID"],
            index=pd.Index(["labels"]),
        )
        body = (
            f"<div>labeled against {_html.esc(self.judgments_fingerprint or '(none)')}, "
            f"live corpus {_html.esc(self.corpus_fingerprint or '(none)')}</div>" + _html.table(counts)
        )
        bad = self.findings[self.findings["status"] != "VALID"]
        if len(bad):
            shown = bad.head(_HTML_MAX_FINDINGS)
            detail = []
            for target, split in zip(shown["reanchor_to"], shown["split_into"], strict=True):
                if split is not None:
                    detail.append("spans " + ", ".join(split))
                elif not _missing(target):
                    detail.append("-> " + target)
                else:
                    detail.append("")
            frame = pd.DataFrame(
                {
                    "doc_uri": shown["doc_uri"].to_numpy(dtype=object),
                    "chunk_id": shown["chunk_id"].fillna("").to_numpy(dtype=object),
                    "status": shown["status"].to_numpy(dtype=object),
                    "detail": detail,
                },
                index=pd.Index(shown["query_id"].to_numpy(dtype=object), name="query_id"),
            )
            body += "<div>not VALID</div>" + _html.table(frame, max_rows=_HTML_MAX_FINDINGS)
            more = len(bad) - len(shown)
            if more > 0:
                body += f"<div>… and {more} more not VALID (use .to_frame())</div>"
        return _html.box(f"Drift: {s.total} labels", body)


@dataclass(frozen=True, eq=False)
class FixResult:
    """The outcome of :func:`fix`.

    ``judgments``: a new judgments frame (the input's rows, order and columns, less the
    ``collapsed`` repeats). ``reanchored``: number of RE_ANCHORABLE and MERGED labels moved to a
    live chunk. ``needs_review``: the labels left untouched because only a human can say what
    they should point at now, in judgment order: the SPLIT and ORPHANED findings, and as
    ``GRADE_CONFLICT`` the re-anchors that would have put two labels of different grades of one
    query on one chunk (rows of ``DriftResult.findings`` plus ``reason``, which says why, and for
    a conflict the chunk and the grades). ``collapsed``: labels removed because their re-anchor
    made them repeat another label of the same query, chunk and grade.
    """

    judgments: pd.DataFrame
    reanchored: int
    needs_review: pd.DataFrame
    collapsed: int = 0

    def __repr__(self) -> str:
        return (
            f"FixResult(reanchored={self.reanchored}, collapsed={self.collapsed}, "
            f"needs_review={len(self.needs_review)}, judgments=<{len(self.judgments)} rows>)"
        )

    def review_records(self) -> list[dict[str, Any]]:
        """``needs_review`` as the list of dicts ``drift --fix --json`` prints under ``review``."""
        cols = ["query_id", "doc_uri", "chunk_id", "status", "reason"]
        records = self.needs_review[cols].astype(object).to_dict(orient="records")
        return [{k: v for k, v in r.items() if not _missing(v)} for r in records]

    def _repr_html_(self) -> str:
        _html = viz("html")

        body = (
            f"<div>{self.collapsed} collapsed into an equal label; {len(self.needs_review)} "
            "need review (SPLIT, ORPHANED or GRADE_CONFLICT)</div>"
        )
        if len(self.needs_review):
            shown = self.needs_review[["query_id", "doc_uri", "chunk_id", "status", "reason"]]
            body += _html.table(shown.set_index("query_id"), max_rows=_HTML_MAX_FINDINGS)
        return _html.box(f"Fix: {self.reanchored} labels re-anchored", body)


# --------------------------------------------------------------------------------------------
# Input coercion
# --------------------------------------------------------------------------------------------


def _live_chunks(corpus: pd.DataFrame) -> pd.DataFrame:
    """The live chunks: chunk_id, doc_uri, text, text_sha (computed when absent), order keys.

    ``pos`` is the corpus row position; ``ord`` the ordinal, a missing one sorting as ordinal 0
    (SPEC A5: a chunker that numbers nothing puts every chunk at the start, in corpus order).
    Chunks without a chunk_id cannot be anchored to and are left out.
    """
    n = len(corpus)
    live = pd.DataFrame(
        {
            "chunk_id": _strings(corpus, "chunk_id").array,
            "doc_uri": _strings(corpus, "doc_uri").array,
            "text": _strings(corpus, "text").array,
            "text_sha": _strings(corpus, "text_sha").array,
            "pos": np.arange(n, dtype=np.int64),
        }
    )
    if "ordinal" in corpus.columns:
        ordinal = pd.to_numeric(corpus["ordinal"].reset_index(drop=True), errors="coerce")
        live["ord"] = ordinal.astype("Float64").fillna(0.0).to_numpy(dtype=np.float64)
    else:
        live["ord"] = 0.0
    has_id = live["chunk_id"].notna().to_numpy(dtype=bool)
    if not has_id.all():
        live = live[has_id]
    need = (live["text_sha"].isna() & live["text"].notna()).to_numpy(dtype=bool)
    if need.any():
        live = live.copy()
        live.loc[need, "text_sha"] = [text_sha(t) for t in live.loc[need, "text"]]
    return live


def _single_fingerprint(values: pd.Series) -> str | None:
    present: Any = values.dropna()
    present = present[present != ""].unique()
    return str(present[0]) if len(present) == 1 else None


# --------------------------------------------------------------------------------------------
# drift
# --------------------------------------------------------------------------------------------


def drift(judgments: Any, corpus: Any, corpus_fingerprint: str | None = None) -> DriftResult:
    """Classify every judgment against a live corpus (SPEC A5); returns a :class:`DriftResult`.

    ``judgments`` and ``corpus`` are frames as ``docs/data-model.md`` describes (or anything
    ``formats.as_judgments`` / ``as_corpus`` accept). ``corpus_fingerprint`` is recorded when
    the corpus itself carries none.

    Rules, in order (see the module docstring for what each status means):

    - An empty optional field is an absent one (SPEC A2): a ``""`` chunk_id makes a
      document-level label, a ``""`` text_sha falls back to the hash of chunk_text, a ``""``
      fingerprint is unknown. The findings show the label's fields as written.
    - The identity of a label's text is its ``text_sha``, else ``text_sha(chunk_text)``. A
      corpus chunk's is its ``text_sha``, else the hash of its ``text``.
    - RE_ANCHORABLE prefers a live chunk in the label's own document, the first in corpus
      order when the text occurs twice there (two equal chunks are equal evidence, and corpus
      order is the one order every corpus has); when only other documents hold the text, the
      first such chunk in corpus order. Identical text is identical evidence, wherever it lives.
    - The *labeled text* is ``chunk_text``, normalized (SPEC A1). A label with only a
      ``text_sha`` carries no text to search for, so when its hash matches nothing it is
      ORPHANED: SPLIT and MERGED cannot be decided from a hash.
    - SPLIT and MERGED look only at live chunks of the label's own document, by normalized
      text. A live chunk whose normalized text is empty never counts as occurring inside the
      labeled text (the empty string occurs inside everything), and an empty labeled text is
      contained in nothing.
    - SPLIT lists every such chunk, in ordinal order (a missing ordinal sorts as 0; equal
      ordinals in corpus order), the order the passage reads in. It is checked before MERGED
      because a passage now spread over several chunks cannot be re-anchored to one.
    - MERGED re-anchors to the shortest containing chunk (by normalized length; tie: the first
      in corpus order): the tightest chunk that still holds the judged text.

    Parameters
    ----------
    judgments : DataFrame, list of dict or path
        The labels, as the readers give them.
    corpus : DataFrame, list of dict or path
        The live corpus (chunks with ``chunk_id``, ``doc_uri``, ``text``).
    corpus_fingerprint : str, optional
        The live corpus's fingerprint (default: the one the corpus carries, if any).

    Returns
    -------
    DriftResult
        One finding per judgment, in judgment order, and the summary counts.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> result = rev.drift(demo.judgments, demo.corpus_v2)
    >>> result.summary.total == len(demo.judgments)
    True
    """
    j = as_judgments(judgments)
    c = corpus_meaning(as_corpus(corpus))
    meaning = judgments_meaning(j)
    n = len(j)
    codes, reanchor, split_into = _decide(j, meaning, _live_chunks(c))
    statuses = np.asarray(DRIFT_STATUSES, dtype=object)[codes]
    findings = pd.DataFrame(
        {
            "query_id": _strings(j, "query_id"),
            "doc_uri": _strings(j, "doc_uri"),
            "chunk_id": _strings(j, "chunk_id"),  # as written
            "status": pd.array(statuses, dtype=_STRING),
            "reanchor_to": pd.array(reanchor, dtype=_STRING),
            "split_into": pd.Series(split_into, dtype=object),
            "judgment_index": np.arange(n, dtype=np.int64),
        },
        columns=list(_FINDING_COLUMNS),
    )
    corpus_fp = c.attrs.get("corpus_fingerprint") or corpus_fingerprint
    return DriftResult(
        findings=findings,
        summary=_summary(codes),
        judgments_fingerprint=_single_fingerprint(_strings(meaning, "corpus_fingerprint")),
        corpus_fingerprint=None if corpus_fp is None else str(corpus_fp),
    )


def _decide(j: pd.DataFrame, meaning: pd.DataFrame, live: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each label's status code, re-anchor target and split pieces: SPEC A5's rules in order."""
    n = len(j)
    doc = _strings(j, "doc_uri")
    cid = _strings(meaning, "chunk_id")
    chunk_text = _strings(meaning, "chunk_text")
    codes = np.full(n, _UNDECIDED, dtype=np.int8)
    reanchor = np.full(n, None, dtype=object)
    split_into = np.full(n, None, dtype=object)

    # Document-level labels: valid while the document has any live chunk.
    has_doc = _isin(doc, live["doc_uri"])
    doc_level = cid.isna().to_numpy(dtype=bool)
    codes[doc_level] = np.where(has_doc[doc_level], _VALID, _ORPHANED)

    # The labeled chunk_id is still live.
    id_live = _isin(cid, live["chunk_id"]) & ~doc_level
    codes[id_live] = _VALID

    # Exact text still present under another id.
    rest = np.flatnonzero(codes == _UNDECIDED)
    if len(rest):
        match_text_sha(rest, doc, _strings(meaning, "text_sha"), chunk_text, live, codes, reanchor)

    # The two re-chunk shapes, by substring within the label's own document.
    rest = np.flatnonzero((codes == _UNDECIDED) & chunk_text.notna().to_numpy(dtype=bool) & has_doc)
    if len(rest):
        match_substrings(rest, doc, chunk_text, live, codes, reanchor, split_into)

    codes[codes == _UNDECIDED] = _ORPHANED
    return codes, reanchor, split_into


def _summary(codes: np.ndarray) -> DriftSummary:
    """The counts per status code and the share not VALID."""
    n = len(codes)
    counts = np.bincount(codes.astype(np.int64), minlength=5)
    return DriftSummary(
        valid=int(counts[_VALID]),
        re_anchorable=int(counts[_RE_ANCHORABLE]),
        merged=int(counts[_MERGED]),
        split=int(counts[_SPLIT]),
        orphaned=int(counts[_ORPHANED]),
        invalid_ratio=0.0 if n == 0 else round((n - int(counts[_VALID])) / n, 12),
    )


# --------------------------------------------------------------------------------------------
# fix
# --------------------------------------------------------------------------------------------


def _findings_in_row_order(j: pd.DataFrame, findings: pd.DataFrame) -> pd.DataFrame:
    """The findings in judgment row order, refused unless they are those of ``j``'s rows."""
    n = len(j)
    idx = findings["judgment_index"].to_numpy(dtype=np.int64)
    if len(findings) != n or not np.array_equal(np.sort(idx), np.arange(n)):
        raise ValueError(
            f"fix: the drift result has {len(findings)} findings for {n} judgments; run drift on these judgments first"
        )
    order = np.argsort(idx, kind="stable")
    f = findings.iloc[order].reset_index(drop=True)
    if not (
        _strings(j, "query_id").equals(f["query_id"].astype(_STRING))
        and _strings(j, "chunk_id").equals(f["chunk_id"].astype(_STRING))
    ):
        raise ValueError("fix: the drift result was computed for other judgments; run drift on these first")
    return f


def _reanchor(j: pd.DataFrame, target: np.ndarray, moved: np.ndarray, exact: np.ndarray) -> pd.DataFrame:
    """A copy of ``j`` with the ``moved`` labels on ``target``; ``exact`` ones get a text_sha."""
    out = j.copy()
    if not moved.any():
        return out
    cid = _strings(out, "chunk_id").to_numpy(dtype=object)
    cid[moved] = target[moved]
    out["chunk_id"] = pd.array(cid, dtype=_STRING)
    sha = _strings(out, "text_sha")
    text = _strings(out, "chunk_text")
    # An empty text_sha or chunk_text is an absent one (SPEC A2).
    fill = exact & sha.fillna("").eq("").to_numpy(dtype=bool) & text.fillna("").ne("").to_numpy(dtype=bool)
    if fill.any():
        values = sha.to_numpy(dtype=object)
        values[fill] = [text_sha(t) for t in text.to_numpy(dtype=object)[fill]]
        out["text_sha"] = pd.array(values, dtype=_STRING)
    return out


def _collisions(j: pd.DataFrame, target: np.ndarray, moved: np.ndarray) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """The labels the planned moves make collide (:func:`.drift_match.collisions`): each label's
    chunk after the move (``target`` where ``moved``, else the one it names) checked against
    the others of its query; returns the rows to drop, the moves to undo and the conflicts."""
    written = _strings(judgments_meaning(j), "chunk_id").fillna(_strings(j, "doc_uri"))
    key = written.to_numpy(dtype=object).copy()
    key[moved] = target[moved]
    return collisions(_strings(j, "query_id"), pd.Series(key, dtype=object), moved, j["relevance"].to_numpy(), written)


def _stamp(out: pd.DataFrame, stamp: np.ndarray, fingerprint: str) -> None:
    """Set ``corpus_fingerprint`` of the ``stamp`` rows of ``out`` to the live corpus's."""
    fp = _strings(out, "corpus_fingerprint").to_numpy(dtype=object)
    fp[stamp] = fingerprint
    out["corpus_fingerprint"] = pd.array(fp, dtype=_STRING)


def fix(judgments: Any, result: DriftResult) -> FixResult:
    """Re-anchor the recoverable labels and stamp the live corpus fingerprint (SPEC A5).

    Returns a :class:`FixResult` whose ``judgments`` is a new frame; the input is never
    mutated. Each finding is applied to the row it was made for (``judgment_index``), so two
    labels that share a query and chunk_id are handled independently. ``judgments`` must be
    the frame ``result`` was computed from (same rows, same order); anything else is refused.

    - RE_ANCHORABLE: ``chunk_id`` becomes ``reanchor_to``. Its ``text_sha`` is the live
      chunk's by construction (the match was on it); when the label had none, the hash of its
      ``chunk_text`` (equal to the live chunk's) is filled in.
    - MERGED: ``chunk_id`` becomes ``reanchor_to``; ``chunk_text`` and ``text_sha`` are kept
      as labeled. The human judged the smaller passage, not the coarser chunk that now holds
      it: writing the coarse chunk's text or hash into the label would claim a judgment nobody
      made. The label stays sound because the chunk it now points at contains the judged text,
      and a later re-chunk can still find it by that text.
    - Collisions: re-anchoring two labels of one query onto one chunk would make a duplicate
      label, which ``validate`` rejects. One grade: one judgment said twice, so the first in
      row order stays, with its provenance, and the others are removed (``collapsed``).
      Different grades: none moves; each stays as it was and is listed in ``needs_review`` as
      ``GRADE_CONFLICT`` with the chunk and the grades, since picking one invents a judgment.
    - RE_ANCHORABLE, MERGED and VALID rows get ``corpus_fingerprint`` = the live corpus's
      fingerprint when it is known: each was just verified against that corpus (a VALID label
      points at a live chunk), so afterwards a fingerprint other than the live one marks
      exactly the labels that still need review.
    - SPLIT and ORPHANED rows are left untouched and listed in ``needs_review``: guessing at
      them would fabricate ground truth, the failure drift exists to expose.

    Every other column (``extra`` included), the row order and the caller's index are kept
    (the frame is otherwise the one ``formats.as_judgments`` returns). Running :func:`drift`
    again on the fixed labels finds RE_ANCHORABLE or MERGED labels only among the conflicts.

    Parameters
    ----------
    judgments : DataFrame, list of dict or path
        The labels ``result`` was computed from.
    result : DriftResult
        :func:`drift` of those labels.

    Returns
    -------
    FixResult

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> fixed = rev.fix(demo.judgments, rev.drift(demo.judgments, demo.corpus_v2))
    >>> len(fixed.judgments) + fixed.collapsed == len(demo.judgments)
    True
    >>> rev.validate(fixed.judgments).ok
    True
    """
    j = as_judgments(judgments)
    n = len(j)
    f = _findings_in_row_order(j, result.findings)

    status = f["status"].to_numpy(dtype=object)
    moved = (status == "RE_ANCHORABLE") | (status == "MERGED")
    drop, unmove, conflicts = _collisions(j, f["reanchor_to"].to_numpy(dtype=object), moved)
    moved &= ~unmove
    exact = moved & (status == "RE_ANCHORABLE")
    stamp = moved | (status == "VALID")

    out = _reanchor(j, f["reanchor_to"].to_numpy(dtype=object), moved, exact)
    if result.corpus_fingerprint is not None and stamp.any():
        _stamp(out, stamp, result.corpus_fingerprint)
    if isinstance(judgments, pd.DataFrame) and len(judgments) == n:
        out.index = judgments.index.copy()  # the caller's row labels, so it can join back
    if drop.any():
        out = out[~drop]
    return FixResult(
        judgments=out,
        reanchored=int((moved & ~drop).sum()),
        needs_review=needs_review(f, conflicts),
        collapsed=int(drop.sum()),
    )
