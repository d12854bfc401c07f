"""trec_eval's set_F beta and nDCG gain maps against pytrec_eval (trec_eval 9.0.8), per query."""

from __future__ import annotations

import importlib

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")
trec = importlib.import_module("tests.engine.test_measures_trec")
cat = importlib.import_module("retrieval_eval.engine.measures")


def cases():
    yield trec.EDGE_QRELS, trec.EDGE_RUN
    import numpy as np

    for seed in range(3):
        rng = np.random.default_rng(seed)
        qrels, rows = [], []
        for q in range(20):
            pool = [f"d{i}" for i in rng.choice(120, size=60, replace=False)]
            qrels += [(f"q{q}", d, int(rng.choice([-1, 0, 0, 1, 2, 3]))) for d in pool[: int(rng.integers(1, 40))]]
            docs = list(rng.permutation(pool))[: int(rng.integers(1, 50))]
            rows += [(f"q{q}", d, s) for d, s in zip(docs, np.round(rng.random(len(docs)) * 4) / 4)]
        yield qrels, rows


@pytest.mark.parametrize("beta", ["0.5", "2", "0.25", "3"])
@pytest.mark.parametrize("level", [1, 2])
def test_set_f_with_a_beta_matches_pytrec_eval(beta, level):
    name = cat.parse_measure(f"set_F.{beta}")[0].name
    assert name == f"set_F_{float(beta):g}"
    for qrels, rows in cases():
        want = trec.oracle(qrels, rows, [f"set_F.{beta}"], level)  # pytrec_eval names it set_F
        got = cat.compute(trec.judgments(qrels), trec.run(rows), [f"set_F.{beta}"], level=level)
        got = got.set_index("query_id")[name]
        assert set(got.index) == set(want)
        for q, values in want.items():
            assert got[q] == pytest.approx(values["set_F"], abs=1e-9), q


@pytest.mark.parametrize("gains", [{1: 3, 2: 9}, {0: 1, 3: 1}, {2: 0, 3: 20}])
def test_ndcg_gain_maps_match_pytrec_eval_on_the_mapped_qrels(gains):
    # pytrec_eval aborts on trec_eval's own `ndcg.1=3` (an assertion in its C glue), so the
    # oracle is trec_eval's ndcg on qrels whose grades were mapped: the gain map's definition.
    spec = ",".join(f"{k}={v}" for k, v in gains.items())
    name = cat.parse_measure(f"ndcg.{spec}")[0].name
    for qrels, rows in cases():
        mapped = [(q, d, gains.get(g, g)) for q, d, g in qrels]
        want = trec.oracle(mapped, rows, ["ndcg"])
        got = cat.compute(trec.judgments(qrels), trec.run(rows), [f"ndcg.{spec}"]).set_index("query_id")[name]
        for q, values in want.items():
            assert got[q] == pytest.approx(values["ndcg"], abs=1e-9), q


def test_utility_coefficients_and_unj_are_not_in_the_catalogue():
    # No oracle: pytrec_eval 0.5 returns 0 for utility.a,b,c,d whatever the coefficients, and
    # trec_eval 9.0.8 (the one it wraps) has no unj. Refused rather than unverified.
    for name in ("utility.2,-1,-3,0.5", "unj_10"):
        with pytest.raises(ValueError):
            cat.parse_measure(name)


def test_the_trec_eval_command_takes_them_and_prints_trec_evals_names(tmp_path):
    import io

    from retrieval_eval.cli.app import main

    qrels = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 0), ("q2", "a", 1), ("q2", "d", 3)]
    rows = [("q1", "a", 3.0), ("q1", "x", 2.0), ("q1", "b", 1.0), ("q2", "d", 1.0), ("q2", "y", 0.5)]
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(rows)))
    out = io.StringIO()
    code = main(["trec_eval", "-q", "-m", "set_F.0.5", "-m", "ndcg.1=3,2=9",
                 str(tmp_path / "qrels"), str(tmp_path / "run")], stdout=out, stderr=io.StringIO())
    assert code == 0
    want = trec.oracle(qrels, rows, ["set_F.0.5"])
    mapped = trec.oracle([(q, d, {1: 3, 2: 9}.get(g, g)) for q, d, g in qrels], rows, ["ndcg"])
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    per_query = {(name.strip(), q): float(v) for name, q, v in lines if q != "all"}
    for q in ("q1", "q2"):
        assert per_query[("set_F", q)] == pytest.approx(round(want[q]["set_F"], 4), abs=1e-12)
        assert per_query[("ndcg", q)] == pytest.approx(round(mapped[q]["ndcg"], 4), abs=1e-12)
    assert [name.strip() for name, q, _ in lines if q == "all"] == ["ndcg", "set_F"]  # trec_eval's order
