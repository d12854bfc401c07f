"""pytrec_eval and ranx shapes in: ``{qid: {doc: score}}`` runs, ``{qid: {doc: grade}}`` qrels,
and ranx ``Run``/``Qrels`` objects (anything whose ``to_dict()`` gives such a dict).

A run dict has no order of its own, so it is ranked by score descending then doc id
descending, the order trec_eval (and so pytrec_eval) evaluates in; a negative grade is read as
0, as :func:`retrieval_eval.io.qrels.from_qrels` reads TREC's "judged, harmful". No import of
ranx or pytrec_eval: the objects are read through the methods they document.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from ..model import DEFAULT_SYSTEM, ID, JUDGMENT_COLUMNS, empty_run
from .frames import judgments_from_frame
from .trec import order_trec

__all__ = ["is_score_dict", "judgments_from_dict", "labels_from_object", "run_from_dict", "run_from_object"]


def is_score_dict(obj: Any) -> bool:
    """True for ``{qid: {doc: number}}`` (pytrec_eval/ranx), as opposed to ``{system: run}``."""
    if not isinstance(obj, Mapping) or not obj:
        return False
    first = next(iter(obj.values()))
    if not isinstance(first, Mapping):
        return False
    inner = next(iter(first.values()), None)
    return inner is None or isinstance(inner, (int, float, np.integer, np.floating))


def _flatten(d: Mapping[Any, Any], label: str, what: str) -> tuple[list[Any], list[Any], list[Any]]:
    for q, inner in d.items():
        if not isinstance(q, str) or not q:
            raise FormatError(label, None, f"query id {q!r} must be a non-empty string")
        if not isinstance(inner, Mapping):
            raise FormatError(label, None, f"query {q}: expected {{doc: {what}}}, found {type(inner).__name__}")
    counts = [len(v) for v in d.values()]
    qids = np.repeat(np.array(list(d.keys()), dtype=object), counts)
    docs = list(chain.from_iterable(v.keys() for v in d.values()))
    values = list(chain.from_iterable(v.values() for v in d.values()))
    kind = pd.api.types.infer_dtype(docs, skipna=False) if docs else "string"
    if kind != "string" or "" in docs:
        bad = next(i for i, x in enumerate(docs) if not isinstance(x, str) or not x)
        raise FormatError(label, None, f"query {qids[bad]}: doc id {docs[bad]!r} must be a non-empty string")
    return qids.tolist(), docs, values


def _bad_value(qids: list[Any], docs: list[Any], values: list[Any], ok: np.ndarray, label: str, what: str) -> None:
    bad = int(np.flatnonzero(~ok)[0])
    raise FormatError(label, None, f"query {qids[bad]}, doc {docs[bad]}: {what}, got {values[bad]!r}")


def _numbers(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The values as float64 and a mask of those that were real numbers (not bool, not text)."""
    arr = np.asarray(values, dtype=object)
    is_num = np.fromiter(
        (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) for v in arr),
        dtype=bool,
        count=len(arr),
    )
    out = np.full(len(arr), np.nan)
    out[is_num] = arr[is_num].astype(np.float64)
    return out, is_num


def run_from_dict(d: Mapping[Any, Any], system: str | None = None, label: str = "run") -> pd.DataFrame:
    """The run frame of a pytrec_eval/ranx run ``{qid: {doc: score}}``, ranked by score
    descending then doc id descending (trec_eval's order: the dict has no order of its own)."""
    qids, docs, values = _flatten(d, label, "score")
    scores, ok = _numbers(values)
    if len(ok) and not (ok & np.isfinite(scores)).all():
        _bad_value(qids, docs, values, ok & np.isfinite(scores), label, "score must be a finite number")
    if not qids:
        return empty_run()
    name = system or DEFAULT_SYSTEM
    return order_trec(
        name,
        pa.array(qids, pa.large_string()),
        pa.array(docs, pa.large_string()),
        np.zeros(len(qids), np.int64),
        scores,
        "score",
    )


def judgments_from_dict(d: Mapping[Any, Any], label: str = "judgments") -> pd.DataFrame:
    """The judgments frame of pytrec_eval/ranx qrels ``{qid: {doc: grade}}``, in dict order;
    ``line`` is the 1-based position of the pair in that order."""
    qids, docs, values = _flatten(d, label, "grade")
    grades, ok = _numbers(values)
    integral = ok & np.isfinite(grades) & (grades == np.round(grades))
    if len(ok) and not integral.all():
        if ok.all():
            raise FormatError(
                label,
                None,
                "grades must be integers, and these are fractional "
                "scores: {qid: {doc: score}} is a run; pass it as the run (--run, as_run)",
            )
        _bad_value(qids, docs, values, integral, label, "relevance must be an integer")
    frame = pd.DataFrame(
        {
            "query_id": pd.array(qids, dtype=ID),
            "doc_uri": pd.array(docs, dtype=ID),
            "relevance": np.maximum(grades, 0).astype(np.int64),
            "line": np.arange(1, len(qids) + 1, dtype=np.int64),
        }
    )
    out = judgments_from_frame(frame, label)
    return out[list(JUDGMENT_COLUMNS)]


def run_from_object(obj: Any, system: str | None, label: str) -> pd.DataFrame | None:
    """A ranx ``Run`` (or anything whose ``to_dict()`` gives ``{qid: {doc: score}}``) as a run
    frame, its ``name`` as the system unless ``system`` is given; None for other objects."""
    to_dict_ = getattr(obj, "to_dict", None)
    if isinstance(obj, (pd.DataFrame, pd.Series)) or not callable(to_dict_):
        return None
    d = to_dict_()
    if not isinstance(d, Mapping):
        return None
    name = getattr(obj, "name", None)
    return run_from_dict(d, system or (name if isinstance(name, str) and name else None), label)


def labels_from_object(obj: Any, label: str) -> pd.DataFrame | None:
    """Judgments from a ``{qid: {doc: grade}}`` dict or a ranx ``Qrels`` (``to_dict()``)."""
    if isinstance(obj, Mapping):
        return judgments_from_dict(obj, label)
    to_dict_ = getattr(obj, "to_dict", None)
    if isinstance(obj, (pd.DataFrame, pd.Series)) or not callable(to_dict_):
        return None
    d = to_dict_()
    return judgments_from_dict(d, label) if isinstance(d, Mapping) else None


def runs_from_objects(items: Any) -> dict[str, Any] | None:
    """``{name: run}`` for a list of ranx ``Run`` objects (ranx's usual form for several
    systems), each named by its ``name`` (``run1``, ``run2``... in list order when it has
    none); None when the list holds anything else. Two runs of one name are refused: their
    rows would merge into one system."""
    if not isinstance(items, (list, tuple)) or not items:
        return None
    if not all(
        callable(getattr(o, "to_dict", None)) and not isinstance(o, (Mapping, pd.DataFrame, pd.Series)) for o in items
    ):
        return None
    out: dict[str, Any] = {}
    for i, o in enumerate(items, start=1):
        name = getattr(o, "name", None)
        name = name if isinstance(name, str) and name else f"run{i}"
        if name in out:
            raise ValueError(
                f"two runs of the list are named {name!r}; give them distinct names "
                "(Run(..., name=...)) or pass a dict {name: run}"
            )
        out[name] = o
    return out


def rank_marks(runs: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """``{name: why}`` for the frames of a dict of runs that carry a rank-based mark
    (``attrs["rank_based"]``, set by :func:`retrieval_eval.analysis.fusion.fuse`), each under
    the name the dict gives it: reading the dict makes one frame, and the mark must follow."""
    return (
        {"rank_based": marks}
        if (
            marks := {
                n: "; ".join(map(str, r.attrs["rank_based"].values()))
                for n, r in runs.items()
                if isinstance(r, pd.DataFrame) and r.attrs.get("rank_based")
            }
        )
        else {}
    )
