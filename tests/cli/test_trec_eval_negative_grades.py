"""Negative qrels grades as trec_eval reads them: -1 is "in the pool, not judged".

The library's readers clamp a negative grade to 0 by default (SPEC A2); ``keep_negative=True``
keeps it, and the ``trec_eval`` command reads qrels so. ``evaluate()`` accepts a judgments frame
carrying one: its catalogue measures read it as trec_eval does, its own metrics as 0.
Oracle: pytrec_eval (trec_eval 9.0.8's C code, which reads a negative grade the same way in
every measure compared here), per query.
"""

from __future__ import annotations

import importlib
import io

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as rev
import retrieval_eval.engine.measures as cat
from retrieval_eval.cli.app import main
from retrieval_eval.io import from_qrels, read_qrels

pytrec_eval = pytest.importorskip("pytrec_eval")
trec = importlib.import_module("tests.engine.test_measures_trec")

#: Measures whose value reads a negative grade (infAP's sampled pool, the judged counts, bpref's
#: judged non-relevant) and some that must not change.
MEASURES = ["infAP", "num_nonrel_judged_ret", "bpref", "map", "ndcg", "P.5", "num_rel"]


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(map(str, argv)), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def generated(seed):
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(10):
        pool = [f"d{i}" for i in rng.choice(40, size=20, replace=False)]
        qrels += [(f"q{q}", d, int(rng.choice([-1, -1, 0, 1, 2]))) for d in pool[: int(rng.integers(3, 20))]]
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 20))]
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, np.round(rng.random(len(docs)) * 3, 2))]
    return qrels, rows


@pytest.fixture
def data(tmp_path):
    qrels, rows = generated(11)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    rp.write_text("".join(f"{q} Q0 {d} 1 {s} sys\n" for q, d, s in rows))
    return qrels, rows, qp, rp


def test_readers_clamp_by_default_and_keep_on_request(data, tmp_path):
    qrels, _, qp, _ = data
    want = [g for _, _, g in qrels]
    assert min(want) == -1
    assert read_qrels(qp)["relevance"].tolist() == [max(g, 0) for g in want]
    assert read_qrels(qp, keep_negative=True)["relevance"].tolist() == want
    commented = tmp_path / "c.txt"  # a comment line: the careful (Python) reader
    commented.write_text("# pool\n" + qp.read_text())
    assert read_qrels(commented, keep_negative=True)["relevance"].tolist() == want
    assert read_qrels(commented)["relevance"].tolist() == [max(g, 0) for g in want]
    assert from_qrels(qp.read_bytes(), keep_negative=True)["relevance"].tolist() == want


@pytest.mark.parametrize("level", [1, 2])
def test_catalogue_on_kept_negative_grades_equals_pytrec_eval(data, level):
    qrels, rows, qp, _ = data
    expected = trec.oracle(qrels, rows, MEASURES, level)
    got = cat.compute(read_qrels(qp, keep_negative=True), trec.run(rows), MEASURES, level=level, compat="9.0.8")
    got = got.set_index("query_id")
    for qid, values in expected.items():
        for name, value in values.items():
            assert got.loc[qid, name] == pytest.approx(value, abs=1e-9), (qid, name)
    clamped = cat.compute(read_qrels(qp), trec.run(rows), ["infAP", "num_nonrel_judged_ret"], level=level)
    assert not np.allclose(clamped["infAP"], got["infAP"].to_numpy())  # the data has a -1 that counts


def test_the_command_prints_pytrec_evals_values_for_negative_grades(data):
    qrels, rows, qp, rp = data
    code, out, err = cli("trec_eval", "-q", "-l2", *[a for m in MEASURES for a in ("-m", m)], qp, rp)
    assert (code, err) == (0, "")
    expected = trec.oracle(qrels, rows, MEASURES, 2)
    lines = [line.split("\t") for line in out.splitlines()]
    checked = 0
    for name, qid, value in lines:
        if qid == "all":
            continue
        want = expected[qid][name.strip()]
        assert value == (str(int(want)) if name.startswith("num_") else "%6.4f" % want), (name, qid)
        checked += 1
    assert checked == len(expected) * len(MEASURES)


def test_evaluate_accepts_a_frame_with_negative_grades(data):
    qrels, rows, qp, _ = data
    j = read_qrels(qp, keep_negative=True)
    run = trec.run(rows).assign(score=np.nan)  # the run's rank order, as evaluate reads it
    ev = rev.evaluate(j, run, k=(5,), measures=["infAP", "num_nonrel_judged_ret"])
    want = cat.compute(j, run, ["infAP", "num_nonrel_judged_ret"], order="rank", complete=True)
    got = ev.per_query.set_index("query_id").loc[want["query_id"]]
    assert np.allclose(got["infAP"].to_numpy(), want["infAP"].to_numpy(), atol=1e-12)
    assert np.array_equal(got["num_nonrel_judged_ret"].to_numpy(), want["num_nonrel_judged_ret"].to_numpy())
    # the engine's own metrics read a negative grade as 0, as the readers do
    plain = rev.evaluate(read_qrels(qp), run, k=(5,))
    pd.testing.assert_series_equal(ev.per_query["ndcg@5"], plain.per_query["ndcg@5"])
    with pytest.raises(Exception, match="non-negative"):
        rev.evaluate([{"query_id": "q", "doc_uri": "d", "relevance": -1}], run, k=(5,))
