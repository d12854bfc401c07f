"""trec_eval's ``-Z zscore_file`` (``get_zscores.c``, ``convert_zscores.c``) for the ``trec_eval``
command (:mod:`.trec_eval`).

The file has one line per (query, measure): ``qid measure_name mean stddev``, whitespace
separated. Each query's value of each measure becomes ``(value - mean) / stddev``, before the
summary is taken, so the ``all`` line is the mean of the z-scores (the sum for the counts, the
geometric mean for ``gm_*``), as trec_eval accumulates them. A standard deviation of 0 gives 0
where the value equals the mean; a missing (query, measure), or a stddev of 0 with another
value, gives trec_eval's ``MISSING_ZSCORE_VALUE``, -1000000. The measure is looked up by the
name trec_eval prints (``P_10``, ``set_F``, ``gm_map``).

Every such line is printed with a ``Z`` before the name and the value as ``%6.4f`` (counts
too); ``runid`` and ``relstring`` keep their own lines.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .common import CLIError

#: trec_eval.h's MISSING_ZSCORE_VALUE.
MISSING = -1000000.0


def read_zscores(path: str) -> pd.DataFrame:
    """The z-score file as a frame (``query_id``, ``measure``, ``mean``, ``stddev``).

    Raises
    ------
    CLIError
        The file cannot be read, or a line that is not 4 fields with two numbers, or a
        (query, measure) given twice, naming the file and line.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as err:
        raise CLIError(f"{path}: cannot read the z-score file ({err.__class__.__name__})") from None
    rows: dict[tuple[str, str], tuple[float, float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise CLIError(f"{path}:{number}: expected 'qid measure mean stddev', got {len(fields)} fields")
        try:
            mean, stddev = float(fields[2]), float(fields[3])
        except ValueError:
            raise CLIError(f"{path}:{number}: mean and stddev must be numbers") from None
        if not (math.isfinite(mean) and math.isfinite(stddev)):
            raise CLIError(f"{path}:{number}: mean and stddev must be finite numbers")
        key = (fields[0], fields[1])
        if key in rows:
            raise CLIError(f"{path}:{number}: query {key[0]} measure {key[1]} is given twice")
        rows[key] = (mean, stddev)
    return pd.DataFrame(
        {
            "query_id": pd.Series([k[0] for k in rows], dtype=object),
            "measure": pd.Series([k[1] for k in rows], dtype=object),
            "mean": np.array([v[0] for v in rows.values()], dtype=np.float64),
            "stddev": np.array([v[1] for v in rows.values()], dtype=np.float64),
        }
    )


def to_zscores(per_query: pd.DataFrame, columns: dict[str, str], table: pd.DataFrame) -> pd.DataFrame:
    """``per_query`` with each column of ``columns`` (``{column: printed name}``) as z-scores.

    Parameters
    ----------
    per_query : DataFrame
        The command's per-query values (``query_id`` and one column per measure).
    columns : dict
        The numeric measure columns to convert, with the name trec_eval prints for each.
    table : DataFrame
        :func:`read_zscores`' frame.

    Returns
    -------
    DataFrame
        A new frame; the other columns as they were.
    """
    out = per_query.copy()
    qids = per_query["query_id"].astype(object).to_numpy()
    for column, name in columns.items():  # one step per measure, every query at once
        mine = table[table["measure"].to_numpy() == name].set_index("query_id")
        mean = mine["mean"].reindex(qids).to_numpy(dtype=np.float64)
        stddev = mine["stddev"].reindex(qids).to_numpy(dtype=np.float64)
        value = per_query[column].to_numpy(dtype=np.float64)
        safe = np.where(stddev != 0, stddev, 1.0)
        z = np.where(stddev != 0, (value - mean) / safe, np.where(value == mean, 0.0, MISSING))
        out[column] = np.where(np.isnan(mean), MISSING, z)
    return out
