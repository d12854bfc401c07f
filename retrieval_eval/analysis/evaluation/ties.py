"""Tied scores in a run read by rank: the one check the command line and the Python API share.

A run given in its own order (a frame, wire lines) is read by rank; where its scores tie, the
order of the tied documents is the given one, and trec_eval or ranx, which order by score then
doc id, can give other numbers. The command line warns naming the file (``--order score``
fixes it). :func:`warn_tied_scores` is the Python API's warning of the same line; it is not yet
called on the evaluate/compare/calibrate path (``analysis.result.coerce`` and
``analysis.calibration_input.run_frame`` are where it goes): the bundled demo's runs tie in
100 of 225 rankings, so every notebook's output would change with it.
"""

from __future__ import annotations

import pandas as pd

from .heads import run_of

__all__ = ["tie_message", "tied_rankings", "warn_tied_scores"]


def tied_rankings(run: pd.DataFrame) -> tuple[int, int]:
    """``(rankings with tied scores, rankings)`` of a run frame (NaN scores never tie)."""
    scored = run[run["score"].notna()]
    n_all = int(run[["system", "query_id"]].drop_duplicates().shape[0])
    if not len(scored):
        return 0, n_all
    tied = scored.duplicated(["system", "query_id", "score"], keep=False)
    return int(scored.loc[tied, ["system", "query_id"]].drop_duplicates().shape[0]), n_all


def tie_message(run: pd.DataFrame, label: str, order: str, fix: str) -> str | None:
    """One line when the run's rankings hold tied scores and are read by rank: how many, in
    which order they are read and how to order ties the way trec_eval does; None without ties.
    The CLI's ``--run`` warning and :func:`warn_tied_scores` are this line."""
    n_tied, n_all = tied_rankings(run)
    if not n_tied:
        return None
    return f"{label}: {n_tied} of {n_all} rankings have tied scores; they are read by rank ({order}); {fix}"


def _read_by_rank(obj) -> bool:
    """Whether ``obj`` is a run read in its own order (a frame, wire lines, a dict of them), as
    opposed to one ranked by score on reading (a pytrec_eval/ranx dict or ``Run``: its ties
    are already in trec_eval's order) or a path (the command line warns about files)."""
    from ...io.interop import is_score_dict

    if isinstance(obj, pd.DataFrame):
        return not obj.attrs.get("ties_reported", False)
    if isinstance(obj, (list, tuple)):
        return bool(obj) and isinstance(obj[0], dict) and not is_score_dict(obj[0])
    if isinstance(obj, dict) and not is_score_dict(obj):
        return any(_read_by_rank(v) for v in obj.values())
    return False


def warn_tied_scores(given, run: pd.DataFrame) -> None:
    """Warn (``UserWarning``) when a run given in its own order has tied scores: the metrics
    read it by rank (the given order), where trec_eval (and ranx) would order ties by score
    and doc id, so the numbers can differ from theirs. A frame the command line read carries
    ``attrs["ties_reported"]`` (it warned already, naming the file)."""
    import warnings

    if not _read_by_rank(run_of(given)):
        return
    message = tie_message(run, "run", "the given order", "retrieval_eval.rerank_by_score(run) orders "
                          "ties by doc id descending, as trec_eval does")
    if message:
        warnings.warn(message, UserWarning, stacklevel=4)
