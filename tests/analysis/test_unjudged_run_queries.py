"""The run's queries without a judgment (``Evaluation.unjudged_queries``) are found without a
Python string per run row: at 10M rows, ``r["query_id"].astype(object)`` and a pandas isin
over it took 4 s of a 5 s evaluate and most of its peak memory (issue 30, helper perf).

The engine's scan finds them (``engine.metrics.compute_and_unjudged``: the first query id of
each ranking not among the judged ones); ``analysis/evaluation/result.py`` takes the declared
negatives out.
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


@pytest.mark.parametrize("seed", range(6))
def test_unjudged_run_queries_of_any_run_are_the_definition(seed: int) -> None:
    """Interleaved rows, several systems, a query one system alone ran, negatives declared: the
    listing (found by the engine's scan of the rankings) is the run's distinct query ids in
    the order they first appear, but for the judged and the declared ``expect_none`` ones."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = [
        (system, f"q{q:02d}", f"d{d:03d}", rank + 1)
        for system in ("a", "b")
        for q in rng.choice(40, size=25, replace=False)
        for rank, d in enumerate(rng.choice(300, size=int(rng.integers(1, 8)), replace=False))
    ]
    rows = [rows[i] for i in rng.permutation(len(rows))] if seed % 2 else rows
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "rank"]).assign(score=np.nan)
    run = rev.as_run(run)
    judged = [f"q{q:02d}" for q in rng.choice(40, size=12, replace=False)]
    qrels = "".join(f"{q} 0 d{int(d):03d} {int(g)}\n" for q in judged for d, g in zip(range(5), rng.integers(0, 3, 5)))
    negatives = [f"q{q:02d}" for q in rng.choice(40, size=6, replace=False)]
    ev = rev.evaluate(rev.from_qrels(qrels), run, k=(5,), negatives=negatives)
    seen = list(dict.fromkeys(run["query_id"].astype(object)))
    assert ev.unjudged_queries == [q for q in seen if q not in set(judged) | set(negatives)]
