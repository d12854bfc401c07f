"""LLM judge scores in: JSONL, CSV, parquet or a DataFrame, tidy or wide, to one tidy frame.

Two shapes are read:

* **tidy**, one score a row: ``query_id``, ``metric``, ``value`` (a finite number), optional
  ``system``, ``sample`` (the repeat index), ``judge`` (the model), ``labeled_by``
  (``human:...`` / ``synthetic:...``) and a key (``chunk_id`` or ``doc_uri``) for per-passage
  metrics such as context relevance;
* **wide**, one column per metric: ``query_id``, optional ``system`` / ``sample``, then
  ``faithfulness``, ``answer_relevancy``, ... What ragas' ``EvaluationResult.to_pandas()`` and
  most home-grown judge loops write. A ragas frame has no ``query_id``: its rows are matched to
  queries by the query text (``user_input`` or ``question``) against the judgments' ``query``,
  and a row whose text matches no judged query is an error naming it.

Every problem is one line naming the file and line (a DataFrame's row counts from 1, a CSV's
lines from the header as line 1): a value that is missing, not a number, NaN or infinite; a
value outside the metric's declared range (``ranges=``); the same (system, query, metric,
key, sample) twice. A query the judgments do not know is a warning, not an error: its scores
are kept, but no judged metric is averaged over it unless it is judged.
"""

from __future__ import annotations

import io as _stdio
import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..errors import FormatError
from ..model import ID
from .jsontext import json_lines, not_object
from .text import decode, is_path, read_bytes

__all__ = ["JUDGE_SCORE_COLUMNS", "TEXT_COLUMNS", "read_judge_scores"]

#: The tidy frame's columns, in order.
JUDGE_SCORE_COLUMNS = ("system", "query_id", "metric", "key", "sample", "value", "judge", "labeled_by")

#: Columns of a wide frame that are not metrics: ids, and the text columns ragas and the
#: usual judge loops carry beside the scores.
TEXT_COLUMNS = frozenset(
    {
        "query_id",
        "system",
        "sample",
        "judge",
        "chunk_id",
        "doc_uri",
        "key",
        "labeled_by",
        "labeled_at",
        "stratum",
        "notes",
        "query",
        "user_input",
        "question",
        "response",
        "answer",
        "retrieved_contexts",
        "contexts",
        "reference",
        "ground_truth",
        "ground_truths",
        "reference_contexts",
        "retrieved_context_ids",
        "reference_context_ids",
        "multi_responses",
        "rubrics",
        "reference_tool_calls",
        "reasoning",
    }
)

_QUERY_TEXT = ("user_input", "question")
_LINE = "\x00line"


def _records(source: Any, label: str) -> tuple[pd.DataFrame, bool]:
    """The raw rows with their line numbers in column ``_LINE``; True when they came from CSV
    (every cell a string)."""
    if isinstance(source, pd.DataFrame):
        return source.assign(**{_LINE: np.arange(1, len(source) + 1)}).reset_index(drop=True), False
    if isinstance(source, list):
        bad = next((i for i, r in enumerate(source) if not isinstance(r, Mapping)), None)
        if bad is not None:
            raise FormatError(label, bad + 1, not_object(source[bad]))
        return pd.DataFrame.from_records(source).assign(**{_LINE: np.arange(1, len(source) + 1)}), False
    if not is_path(source):
        raise TypeError(f"judge scores: expected a path, a DataFrame or a list of dicts, got {type(source).__name__}")
    from .detect import sniff

    kind = sniff(source).kind if os.path.exists(source) else None
    if kind == "parquet":
        try:
            frame = pd.read_parquet(source)
        except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
            raise FormatError(label, None, f"not a readable parquet file ({str(err).splitlines()[0]})") from None
        return frame.assign(**{_LINE: np.arange(1, len(frame) + 1)}), False
    text = decode(read_bytes(source), label)
    if kind == "csv" or str(source).lower().endswith(".csv"):
        try:
            frame = pd.read_csv(_stdio.StringIO(text), dtype=str, keep_default_na=False)
        except (ValueError, pd.errors.ParserError) as err:
            raise FormatError(label, None, f"not a readable CSV file ({str(err).splitlines()[0]})") from None
        return frame.assign(**{_LINE: np.arange(2, len(frame) + 2)}), True
    lines, rows = [], []
    for line, obj in json_lines(text, label):
        if not isinstance(obj, dict):
            raise FormatError(label, line, not_object(obj))
        lines.append(line)
        rows.append(obj)
    return pd.DataFrame.from_records(rows).assign(**{_LINE: np.asarray(lines, dtype=np.int64)}), False


def _fail(label: str, raw: pd.DataFrame, mask: Any, detail: Callable[..., str]) -> None:
    """Raise on the first row of ``mask``; ``detail(i)`` words the problem of row ``i``."""
    mask = np.asarray(mask, dtype=bool)
    if mask.any():
        i = int(np.flatnonzero(mask)[0])
        raise FormatError(label, int(raw[_LINE].iloc[i]), detail(i))


def _numbers(
    col: pd.Series, raw: pd.DataFrame, label: str, what: str, csv: bool, where: Callable[[int], str] | None = None
) -> np.ndarray:
    """The column as float64, refusing a missing, non-numeric (a boolean too) or non-finite
    cell; ``where(i)``, when given, adds to the message which column row ``i`` came from."""
    values = col.to_numpy(dtype=object)

    def fail(mask: Any, detail: Callable[[int], str]) -> None:
        _fail(label, raw, mask, lambda i: detail(i) + (where(i) if where is not None else ""))

    if csv:
        fail((col.astype(str).str.strip() == "").to_numpy(), lambda i: f"{what} is empty")
        parsed = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        fail(
            np.isnan(parsed) & ~col.str.strip().str.lower().isin(["nan"]).to_numpy(),
            lambda i: f"{what} must be a number, got {values[i]!r}",
        )
    else:
        kinds = (
            np.array(
                [
                    isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating))
                    for v in values
                ],
                dtype=bool,
            )
            if col.dtype == object
            else np.zeros(len(col), bool)
        )
        if col.dtype == bool:
            kinds[:] = True
        fail(kinds & pd.notna(col).to_numpy(), lambda i: f"{what} must be a number, got {values[i]!r}")
        fail(pd.isna(col).to_numpy(), lambda i: f"{what} is missing")
        parsed = col.to_numpy(dtype=float)
    fail(~np.isfinite(parsed), lambda i: f"{what} must be a finite number, got {values[i]!r}")
    return parsed


def _strings(col: pd.Series | None, n: int) -> Any:
    if col is None:
        return pd.array([None] * n, dtype=ID)
    values = col.to_numpy(dtype=object)
    out = values.astype(str).astype(object) if n else values
    out[pd.isna(values) | (values == "")] = None
    return pd.array(out, dtype=ID)


def _to_tidy(raw: pd.DataFrame, label: str, csv: bool) -> pd.DataFrame:
    """Wide rows melted to tidy ones (the metric columns); tidy rows as they are."""
    if "metric" in raw.columns or "value" in raw.columns:
        for need in ("metric", "value"):
            if need not in raw.columns:
                raise FormatError(label, None, f"missing column {need} (a tidy row needs metric and value)")
        return raw
    metrics = [c for c in raw.columns if c != _LINE and str(c) not in TEXT_COLUMNS]
    if not metrics:
        raise FormatError(
            label,
            None,
            "no score column: expected tidy rows (query_id, metric, value) "
            "or one column per metric (faithfulness, answer_relevancy, ...)",
        )
    ids = [c for c in raw.columns if c not in metrics]
    tidy = raw.melt(id_vars=ids, value_vars=metrics, var_name="metric", value_name="value")
    # Keep the file's order: every metric of line 1, then of line 2 ...
    order = np.argsort(tidy[_LINE].to_numpy(), kind="stable")
    return tidy.iloc[order].reset_index(drop=True)


def _query_ids(raw: pd.DataFrame, judgments: pd.DataFrame | None, label: str) -> pd.Series:
    """The rows' query ids, from ``query_id`` or matched by query text to the judgments."""
    if "query_id" in raw.columns:
        qid = raw["query_id"]
        bad = ~qid.map(lambda v: isinstance(v, str) and v != "").to_numpy(dtype=bool)
        _fail(label, raw, bad, lambda i: "missing query_id")
        return qid.astype(str)
    text_col = next((c for c in _QUERY_TEXT if c in raw.columns), None)
    if text_col is None:
        raise FormatError(
            label, None, "missing column query_id (or user_input / question to match the judgments' query text)"
        )
    if judgments is None:
        raise FormatError(
            label, None, f"no query_id column: pass the judgments to match {text_col} to their query text"
        )
    j = judgments[judgments["query"].notna()] if "query" in judgments.columns else judgments.iloc[:0]
    by_text = dict(zip(j["query"].astype(str).str.strip(), j["query_id"].astype(str)))
    text = raw[text_col].astype(object).map(lambda v: v.strip() if isinstance(v, str) else v)
    qid = text.map(by_text)
    shown = raw[text_col].to_numpy(dtype=object)
    _fail(
        label, raw, qid.isna().to_numpy(), lambda i: f"{text_col} {str(shown[i])[:80]!r} matches no judged query's text"
    )
    return qid.astype(str)


def _metric(tidy: pd.DataFrame, label: str) -> pd.Series:
    """Each tidy row's metric name; a row without one is an error naming its line."""
    metric = tidy["metric"]
    _fail(
        label,
        tidy,
        ~metric.map(lambda v: isinstance(v, str) and v != "").to_numpy(dtype=bool),
        lambda i: "missing metric",
    )
    return metric


def _key(tidy: pd.DataFrame) -> pd.Series | None:
    """The key of a per-passage score: ``chunk_id`` when present, else ``doc_uri`` (SPEC A2's
    rule); None when the rows name neither."""
    key_col = tidy.get("chunk_id")
    if "doc_uri" in tidy.columns:
        key_col = (
            tidy["doc_uri"] if key_col is None else key_col.where(key_col.notna() & (key_col != ""), tidy["doc_uri"])
        )
    return key_col


def read_judge_scores(
    source: Any,
    judgments: Any = None,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    system: str | None = None,
    label: str | None = None,
) -> pd.DataFrame:
    """Read LLM judge scores into one tidy frame.

    Parameters
    ----------
    source : path, DataFrame or list of dict
        JSONL, CSV or parquet (detected as every input of the package is,
        :func:`retrieval_eval.io.detect.sniff`), a DataFrame (ragas' ``to_pandas()`` too) or
        a list of row dicts; tidy or wide rows (see the module).
    judgments : judgments, optional
        Anything :func:`retrieval_eval.io.as_judgments` reads. Needed to match rows without a
        ``query_id`` by their query text; with it, a query the judgments lack is warned about.
    ranges : mapping of metric to (low, high), optional
        Declared ranges (``{"faithfulness": (0, 1)}``): a value outside is an error, because a
        judge that answered 7 on a 0-1 scale parsed its own output wrong.
    system : str, optional
        The system of rows without a ``system`` column (default: none; an evaluation assigns
        them to its only system).
    label : str, optional
        How errors name the input (default: the path, or ``judge scores``).

    Returns
    -------
    DataFrame
        :data:`JUDGE_SCORE_COLUMNS`: string ids (``system``, ``query_id``, ``metric``, ``key``,
        ``judge``, ``labeled_by``; NA when absent), ``sample`` int64 (given, else the row's
        order among the same (system, query, metric, key)), ``value`` float64. ``attrs``
        ``"unjudged"`` lists query ids the judgments do not have.

    Raises
    ------
    FormatError
        ``<file>:<line>: <problem>``, for the first bad row.

    Examples
    --------
    >>> rows = [{"query_id": "q1", "faithfulness": 0.9}, {"query_id": "q1", "faithfulness": 0.7}]
    >>> read_judge_scores(rows)[["query_id", "metric", "sample", "value"]].to_dict("list")
    {'query_id': ['q1', 'q1'], 'metric': ['faithfulness', 'faithfulness'], 'sample': [0, 1], 'value': [0.9, 0.7]}
    """
    label = label or (str(source) if is_path(source) else "judge scores")
    raw, csv = _records(source, label)
    if raw.empty or len(raw.columns) == 1:
        raise FormatError(label, None, "no judge scores")
    if judgments is not None:
        from .convert import as_judgments

        judgments = as_judgments(judgments)
    tidy = _to_tidy(raw, label, csv)
    n = len(tidy)
    qid = _query_ids(tidy, judgments, label)
    metric = _metric(tidy, label)
    wide = "metric" not in raw.columns  # a wide row's value came from the metric's column
    value = _numbers(
        tidy["value"], tidy, label, "value", csv, where=(lambda i: f" (column {metric.iloc[i]})") if wide else None
    )
    key_col = _key(tidy)
    out = pd.DataFrame(
        {
            "system": _strings(tidy["system"], n) if "system" in tidy.columns else pd.array([system] * n, dtype=ID),
            "query_id": pd.array(qid.to_numpy(dtype=object), dtype=ID),
            "metric": pd.array(metric.astype(str).to_numpy(dtype=object), dtype=ID),
            "key": _strings(key_col, n),
            "sample": np.zeros(n, dtype=np.int64),
            "value": value,
            "judge": _strings(tidy.get("judge"), n),
            "labeled_by": _strings(tidy.get("labeled_by"), n),
        }
    )
    _check_ranges(out, tidy, ranges, label)
    out["sample"] = _samples(out, tidy, label, csv)
    out.attrs["unjudged"] = _unjudged(out, judgments, label)
    return out


def _samples(out: pd.DataFrame, tidy: pd.DataFrame, label: str, csv: bool) -> np.ndarray:
    """The repeat index of every row, refusing a duplicate (system, query, metric, key,
    labeled_by, sample) with the line of its first occurrence.

    Rows without a sample are numbered in order among the others of their group; a numbered
    row that collides with a given one is a duplicate."""
    n = len(out)
    group = [out[c].astype(object).fillna("\x00") for c in ("system", "query_id", "metric", "key", "labeled_by")]
    given = tidy["sample"].notna().to_numpy() if "sample" in tidy.columns else np.zeros(n, dtype=bool)
    order = out.groupby(group, sort=False).cumcount().to_numpy(dtype=np.int64)
    if given.any():
        sample = np.zeros(n)
        sample[given] = _numbers(tidy["sample"][given], tidy[given], label, "sample", csv)
        _fail(
            label,
            tidy,
            given & ((sample < 0) | (sample != np.floor(sample))),
            lambda i: f"sample must be a non-negative integer, got {tidy['sample'].iloc[i]!r}",
        )
        before = pd.Series(given).groupby([g.to_numpy() for g in group]).cumsum().to_numpy() - given
        order = np.where(given, sample, order - before)
    order = order.astype(np.int64)
    keys = pd.DataFrame({f"k{i}": g.to_numpy() for i, g in enumerate(group)}).assign(sample=order)
    by = keys.groupby(list(keys.columns), sort=False)
    dup = by.cumcount().to_numpy() > 0
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        first = int(tidy[_LINE].groupby(by.ngroup().to_numpy()).transform("first").iloc[i])
        raise FormatError(
            label,
            int(tidy[_LINE].iloc[i]),
            f"duplicate score for query {out['query_id'].iloc[i]}, metric "
            f"{out['metric'].iloc[i]}, sample {order[i]}, already on line {first}",
        )
    return order


def _check_ranges(out: pd.DataFrame, tidy: pd.DataFrame, ranges: Mapping[str, Any] | None, label: str) -> None:
    for name, (low, high) in (ranges or {}).items():
        at = (out["metric"] == name).to_numpy(dtype=bool)
        bad = at & ((out["value"].to_numpy() < low) | (out["value"].to_numpy() > high))
        _fail(
            label,
            tidy,
            bad,
            lambda i, name=name, low=low, high=high: (
                f"{name} value {float(out['value'].iloc[i])!r} is outside its declared range [{low}, {high}]"
            ),
        )


def _unjudged(out: pd.DataFrame, judgments: pd.DataFrame | None, label: str) -> list[str]:
    """Query ids with scores but no judgment, warned about once (their scores are kept)."""
    if judgments is None:
        return []
    known = set(judgments["query_id"].astype(str))
    ids = [q for q in pd.unique(out["query_id"].astype(object)) if q not in known]
    if ids:
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        warnings.warn(
            f"{label}: {len(ids)} scored {'query has' if len(ids) == 1 else 'queries have'} no judgments ({shown})",
            UserWarning,
            stacklevel=3,
        )
    return ids
