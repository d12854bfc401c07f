"""Calibration made concrete: the queries on the wrong side of each calibrated cutoff, with the
passage that put them there.

A positive (a covered query) whose top-1 score falls below the cutoff is refused in production
although the answer was there; an ``expect_none`` query whose top-1 clears it gets an answer
that should not exist. Listing each with its top-1 passage and score shows *why*: a passage
that nearly answers, a lexical match on the wrong sense, a score scale that drifted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...io.convert import as_corpus, as_judgments
from ...model import ID, empty_judgments
from .entries import texts

__all__ = ["calibration_cases"]

COLUMNS = (
    "system",
    "case",
    "query_id",
    "stratum",
    "query",
    "top1_doc_id",
    "top1_score",
    "cutoff",
    "margin",
    "top1_text",
)


def calibration_cases(calibration, corpus=None, judgments=None, system=None) -> pd.DataFrame:
    """Returns the positives a cutoff rejects and the ``expect_none`` queries it lets through.

    Parameters
    ----------
    calibration : Calibration
        A :func:`~retrieval_eval.calibrate` result (its ``top1`` table says which side of the
        cutoff each query is on: a per-stratum cutoff is applied as calibrated).
    corpus, judgments : DataFrame or path, optional
        Where the top-1 passage's text is found (the corpus, else the labels' ``chunk_text``).
    system : str, optional
        One system (default: every calibrated system).

    Returns
    -------
    DataFrame
        One row per query on the wrong side: ``system``, ``case`` (``"rejected positive"`` or
        ``"accepted negative"``), ``query_id``, ``stratum``, ``query``, ``top1_doc_id``,
        ``top1_score``, ``cutoff`` (the system's), ``margin`` (score - cutoff), ``top1_text``
        (NA when unknown); the closest calls (smallest ``|margin|``) first per system and case.

    Raises
    ------
    ValueError
        An unknown system.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> d = rev.load_demo()
    >>> cal = rev.calibrate(d.judgments, d.runs, queries=d.queries)
    >>> sorted(set(rev.calibration_cases(cal, corpus=d.corpus)["case"]))
    ['accepted negative', 'rejected positive']
    """
    top = calibration.top1
    if system is not None:
        if str(system) not in calibration.systems:
            raise ValueError(f"unknown system {system!r}: the calibration has {', '.join(calibration.systems)}")
        top = top[top["system"] == str(system)]
    top = top[~top["missing"]]
    above = top["above_cutoff"].fillna(False).to_numpy(dtype=bool)
    positive = (top["kind"] == "positive").to_numpy()
    wrong = top[(positive & ~above) | (~positive & above)].copy()
    wrong["case"] = np.where(wrong["kind"] == "positive", "rejected positive", "accepted negative")
    cutoffs = {s: float(calibration.cutoff(s)) for s in calibration.systems}
    wrong["cutoff"] = wrong["system"].map(cutoffs).to_numpy(dtype=np.float64)
    wrong["margin"] = wrong["top1_score"].to_numpy(dtype=np.float64) - wrong["cutoff"].to_numpy()
    labels = empty_judgments() if judgments is None else as_judgments(judgments)
    text = texts(labels, None if corpus is None else as_corpus(corpus))
    wrong["top1_text"] = pd.array(text.reindex(wrong["top1_doc_id"]).to_numpy(), dtype=ID)
    order = pd.Series(range(len(calibration.systems)), index=calibration.systems)
    wrong["_s"] = wrong["system"].map(order).to_numpy()
    wrong["_m"] = wrong["margin"].abs().to_numpy()
    wrong = wrong.sort_values(["_s", "case", "_m"], kind="stable")
    out = wrong[list(COLUMNS)].reset_index(drop=True)
    for c in ("system", "case", "query_id", "stratum", "query", "top1_doc_id"):
        out[c] = out[c].astype(ID)
    return out
