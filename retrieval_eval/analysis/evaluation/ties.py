"""Tied scores in a run read by rank: the one check the command line and the Python API share.

A run given in its own order (a frame, wire lines, a file read with ``--order rank``) is read by
rank; where its scores tie, the order of the tied documents is the given one, and trec_eval or
ranx, which order by score then doc id descending, can give other numbers. A ranking counts when
its tied documents are not already in that order (ties in trec_eval's order change nothing).

The command line warns naming the file (``--order score`` fixes it) and marks the frame it read
(``attrs["ties_reported"]``), so the API does not warn about it again. The Python API warns with
:class:`TiedScoresWarning`, once per public call (:func:`public`), at the user's line;
:func:`in_given_order` marks a run whose order is meant (no warning, the order kept).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from contextvars import ContextVar

import numpy as np
import pandas as pd

from ...arrays import arrow as _arrow
from ...arrays import codes as _codes
from ...arrays import take as _take
from ...engine.remembered import found_once
from .heads import run_of

__all__ = [
    "TiedScoresWarning",
    "in_given_order",
    "note_tied_scores",
    "public",
    "tie_message",
    "tied_rankings",
    "warn_tied_scores",
]

#: The frame's mark: the order is meant (:func:`in_given_order`) or the command line warned already.
MEANT, REPORTED = "order_meant", "ties_reported"


class TiedScoresWarning(UserWarning):
    """A run read by rank has tied scores out of trec_eval's order: its numbers can differ from
    trec_eval's and ranx's. ``retrieval_eval.rerank_by_score(run)`` orders ties as trec_eval
    does; ``retrieval_eval.in_given_order(run)`` says the given order is meant."""


def tied_rankings(run: pd.DataFrame) -> tuple[int, int]:
    """``(rankings whose tied scores are out of trec_eval's order, rankings)`` of a run frame.

    Within a ranking (the rows of one (system, query), by rank, equal ranks in the frame's
    order: the scan's order), documents of one score must come in doc id descending order
    (trec_eval's tie order, by code point) for the given order to be trec_eval's; NaN scores
    never tie. Doc ids are compared by arrow (UTF-8 bytes order strings by code point).

    No row is sorted in the usual case, a frame of whole rankings in rank order whose scores
    never go up: tied documents are then neighbours, and only neighbours are compared. Any
    other frame has only its rows whose (ranking, score) repeats sorted.
    """
    from ...engine.scan import whole_ranking_starts

    n = len(run)
    if n == 0:
        return 0, 0
    score = run["score"].to_numpy(dtype=np.float64)
    starts = None if np.isnan(score).any() else whole_ranking_starts(run)
    if starts is not None:
        inside = np.ones(n - 1, dtype=bool)  # neighbours i, i + 1 in one ranking
        inside[starts[1:] - 1] = False
        if bool(np.all((score[1:] <= score[:-1]) | ~inside)):  # scores never go up
            pair = np.flatnonzero(inside & (score[1:] == score[:-1]))
            block = np.searchsorted(starts, pair, side="right") - 1
            return _rising(run, pair, pair + 1, block), len(starts)
    return _tied_by_sorting(run, score)


def _tied_by_sorting(run: pd.DataFrame, score: np.ndarray) -> tuple[int, int]:
    """:func:`tied_rankings` of any frame: the rows whose (ranking, score) repeats, sorted by
    (ranking, score, rank, frame order); tied documents are then neighbours."""
    sys_code, _ = _codes(_arrow(run["system"]))
    q_code, queries = _codes(_arrow(run["query_id"]))
    cell = sys_code.astype(np.int64) * max(len(queries), 1) + q_code
    n_all = int(np.count_nonzero(np.bincount(cell)))
    scored = np.flatnonzero(~np.isnan(score))
    # Candidates: a (cell, score) seen twice. Keyed by a hash, so a collision only adds rows.
    key = cell[scored].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ score[scored].view(np.uint64)
    rows = scored[pd.Series(key).duplicated(keep=False).to_numpy()]
    if len(rows) < 2:
        return 0, n_all
    rank = run["rank"].to_numpy(dtype=np.int64)
    rows = rows[np.lexsort((rows, rank[rows], score[rows], cell[rows]))]
    tied = (cell[rows[1:]] == cell[rows[:-1]]) & (score[rows[1:]] == score[rows[:-1]])
    pair = np.flatnonzero(tied)
    return _rising(run, rows[pair], rows[pair + 1], cell[rows[pair]]), n_all


def _rising(run: pd.DataFrame, before: np.ndarray, after: np.ndarray, ranking: np.ndarray) -> int:
    """How many rankings hold a tied pair (row ``after`` ranked below row ``before``) whose
    later document has the larger id: trec_eval would put it first."""
    import pyarrow.compute as pc

    if not len(before):
        return 0
    doc = _arrow(run["doc_id"])
    larger = pc.fill_null(pc.greater(_take(doc, after), _take(doc, before)), False)
    return len(np.unique(ranking[larger.to_numpy(zero_copy_only=False)]))


def tie_message(run: pd.DataFrame, label: str, order: str, fix: str) -> str | None:
    """One line when rankings read by rank hold tied scores out of trec_eval's order: how many,
    in which order they are read and how to order ties the way trec_eval does; None without.
    The CLI's ``--run`` warning and the API's :class:`TiedScoresWarning` are this line."""
    n_tied, n_all = tied_rankings(run)
    if not n_tied:
        return None
    return f"{label}: {n_tied} of {n_all} rankings have tied scores; they are read by rank ({order}); {fix}"


def _read_by_rank(obj) -> bool:
    """Whether ``obj`` is a run read in its own order (a frame, wire lines, a dict of them), as
    opposed to one ranked by score on reading (a pytrec_eval/ranx dict or ``Run``: its ties
    are already in trec_eval's order), a marked frame, or a path (the command line warns about
    files)."""
    from ...io.interop import is_score_dict

    if isinstance(obj, pd.DataFrame):
        return not (obj.attrs.get(MEANT) or obj.attrs.get(REPORTED))
    if isinstance(obj, (list, tuple)):
        return bool(obj) and isinstance(obj[0], dict) and not is_score_dict(obj[0])
    if isinstance(obj, dict) and not is_score_dict(obj):
        return any(_read_by_rank(v) for v in obj.values())
    return False


def _message(given, run: pd.DataFrame) -> str | None:
    """The tie line of ``run`` (read from ``given``), counting only the rankings of the systems
    given in their own order and unmarked (a ``{system: run}`` mapping can mix them)."""
    given = run_of(given)
    if not _read_by_rank(given):
        return None
    if isinstance(given, dict):
        unmarked = [str(name) for name, part in given.items() if _read_by_rank(part)]
        run = run[run["system"].astype(object).isin(unmarked)]
    return tie_message(
        run,
        "run",
        "the given order",
        "retrieval_eval.rerank_by_score(run) orders ties by doc id descending, as trec_eval does; "
        "retrieval_eval.in_given_order(run) says the given order is meant",
    )


#: The messages of the public call under way (None outside one): the outermost call warns once.
_SCOPE: ContextVar[list[str] | None] = ContextVar("tie_scope", default=None)


def note_tied_scores(given, run: pd.DataFrame) -> pd.DataFrame:
    """Check ``run`` (the frame read from ``given``) once inside a public call (:func:`public`),
    noting its tie message for the call's one warning; outside one, nothing. Returns the frame marked as
    checked, so what reads it again (an Evaluation's run, calibration inside compare) does not
    warn again."""
    scope = _SCOPE.get()
    if scope is None:  # not a public call's input (calibrate, fuse ...): nothing to say here
        return run
    message = _message(given, run)
    if message is not None and not scope:
        scope.append(message)
    run = run.copy(deep=False)  # checked once: what reads this frame again says nothing more
    run.attrs[REPORTED] = True
    return run


def warn_tied_scores(given, run: pd.DataFrame) -> None:
    """Warn (:class:`TiedScoresWarning`) when a run given in its own order has tied scores out
    of trec_eval's order: the metrics read it by rank (the given order), where trec_eval (and
    ranx) would order ties by score and doc id, so the numbers can differ from theirs."""
    message = _message(given, run)
    if message:
        warnings.warn(message, TiedScoresWarning, stacklevel=2)


def public(fn):
    """Make ``fn`` a public call for the tie check: whatever it reads, nested public calls
    included, gives at most one :class:`TiedScoresWarning`, pointing at the caller's line."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _SCOPE.get() is not None:  # inside another public call: that one warns
            return fn(*args, **kwargs)
        messages: list[str] = []
        token = _SCOPE.set(messages)
        try:
            with found_once():  # the tie check and the engine find a run's rankings once
                result = fn(*args, **kwargs)
        finally:
            _SCOPE.reset(token)
        if messages:
            warnings.warn(messages[0], TiedScoresWarning, stacklevel=2)
        return result

    return call


def in_given_order(run):
    """``run`` marked as meant in its given order: read by rank, ties kept as given, no
    :class:`TiedScoresWarning`. A frame (copied, never changed in place), a mapping
    ``{system: run}`` (each marked), or anything :func:`retrieval_eval.as_run` reads (read, then
    marked)."""
    if isinstance(run, Mapping) and not _is_score_mapping(run):
        return {name: in_given_order(r) for name, r in run.items()}
    if not isinstance(run, pd.DataFrame):
        from ...io import as_run

        run = as_run(run)
    run = run.copy(deep=False)
    run.attrs[MEANT] = True
    return run


def _is_score_mapping(obj) -> bool:
    from ...io.interop import is_score_dict

    return isinstance(obj, dict) and is_score_dict(obj)
