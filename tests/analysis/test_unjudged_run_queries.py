"""The run's queries without a judgment (``Evaluation.unjudged_queries``) are found without a
Python string per run row: at 10M rows, ``r["query_id"].astype(object)`` and a pandas isin
over it took 4 s of a 5 s evaluate and most of its peak memory (issue 30, helper perf).

``analysis/evaluation/result.py`` finds the distinct run queries by ``arrays.codes`` and
``pyarrow.compute.is_in`` against the judged and negative ids.
"""

from __future__ import annotations

import pandas as pd
import pytest

import retrieval_eval as rev


def _data() -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    lines = [f"q{q:03d} Q0 d{d:04d} {d + 1} {1000 - d} sys" for q in range(50) for d in range(100)]
    run = rev.from_trec_run("\n".join(lines) + "\n")
    qrels = "\n".join(f"q{q:03d} 0 d{q:04d} 1" for q in range(0, 50, 5)) + "\n"
    judgments = rev.from_qrels(qrels)
    unjudged = [f"q{q:03d}" for q in range(50) if q % 5]
    return judgments, run, unjudged


def test_unjudged_run_queries_are_listed_in_run_order() -> None:
    judgments, run, unjudged = _data()
    assert rev.evaluate(judgments, run, k=(10,)).unjudged_queries == unjudged


def test_unjudged_run_queries_without_a_python_string_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    judgments, run, unjudged = _data()
    real = pd.Series.astype

    def guarded(self: pd.Series, dtype, *args, **kwargs):  # type: ignore[no-untyped-def]
        if dtype is object and self.name == "query_id" and len(self) == len(run):
            raise AssertionError("the run's query_id column became Python objects, one per row")
        return real(self, dtype, *args, **kwargs)

    monkeypatch.setattr(pd.Series, "astype", guarded)
    assert rev.evaluate(judgments, run, k=(10,)).unjudged_queries == unjudged
