"""trec_eval's set_F beta, nDCG gain maps and utility coefficients against pytrec_eval
(trec_eval 9.0.8), per query; ndcg_cut's refusal of a gain map."""

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


COEFFICIENTS = [
    (2.0, -1.0, -3.0, 0.5),
    (1.0, 0.0, 0.0, 0.0),
    (0.0, 0.0, 1.0, 0.0),
    (0.0, 0.0, 0.0, 1.0),
    (0.25, -2.5, 1.5, -0.001),
]


def utility_cases():
    """cases() plus queries with no relevant label and one-document rankings."""
    yield from cases()
    qrels = [("zero", "a", 0), ("zero", "b", 0), ("neg", "a", -1), ("neg", "b", 1), ("one", "a", 2), ("one", "b", 1)]
    rows = [("zero", "a", 1.0), ("zero", "z", 0.5), ("neg", "a", 1.0), ("one", "z", 1.0)]
    yield qrels, rows


def trec_utility(p, counts, num_docs):
    """trec_eval's m_utility.c on pytrec_eval's counts of one query."""
    a = counts["num_rel_ret"]
    ret, rel = counts["num_ret"], counts["num_rel"]
    return p[0] * a + p[1] * (ret - a) + p[2] * (rel - a) + p[3] * (num_docs + a - ret - rel)


@pytest.mark.parametrize("coef", COEFFICIENTS)
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("num_docs", [0, 1000])
def test_utility_with_coefficients_is_trec_evals_formula_on_pytrec_evals_counts(coef, level, num_docs):
    # pytrec_eval computes utility with the default coefficients only (it returns 0 for
    # utility.a,b,c,d), but it counts num_rel_ret, num_ret and num_rel: trec_eval's formula
    # applied to its counts is the oracle.
    spec = "utility." + ",".join(f"{c:g}" for c in coef)
    name = cat.parse_measure(spec)[0].name
    for qrels, rows in utility_cases():
        want = trec.oracle(qrels, rows, ["num_rel_ret", "num_ret", "num_rel"], level)
        got = cat.compute(trec.judgments(qrels), trec.run(rows), [spec], level=level, num_docs=num_docs).set_index(
            "query_id"
        )[name]
        assert set(got.index) == set(want)
        for q, counts in want.items():
            assert got[q] == pytest.approx(trec_utility(coef, counts, num_docs), abs=1e-9), q


@pytest.mark.parametrize("spelling", ["utility", "utility.1,-1,0,0", "utility.1.0,-1.0,0.0,0.0"])
def test_utility_with_the_default_coefficients_is_pytrec_evals_utility(spelling):
    assert [m.name for m in cat.parse_measure(spelling)] == ["utility"]
    for qrels, rows in utility_cases():
        want = trec.oracle(qrels, rows, ["utility"])
        got = cat.compute(trec.judgments(qrels), trec.run(rows), [spelling], num_docs=500).set_index("query_id")[
            "utility"
        ]  # p4 = 0: N unread
        for q, values in want.items():
            assert got[q] == pytest.approx(values["utility"], abs=1e-9), q


def test_utility_by_hand():
    # q1: relevant a, b (b grade 2), d; c judged 0; e negative (in the pool, unjudged).
    # Retrieved a x b e c. Level 1: a = 2 (a, b), b = 3, c = 1 (d), d = N + 2 - 5 - 3.
    # q2: nothing relevant, retrieved z: a = 0, b = 1, c = 0, d = N - 1.
    qrels = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 0), ("q1", "d", 1), ("q1", "e", -1), ("q2", "a", 0)]
    rows = [("q1", "a", 5), ("q1", "x", 4), ("q1", "b", 3), ("q1", "e", 2), ("q1", "c", 1), ("q2", "z", 1)]
    j, r = trec.judgments(qrels), trec.run(rows)
    name = "utility_2,-1,-3,0.5"
    got = cat.compute(j, r, ["utility.2,-1,-3,.5"], num_docs=100).set_index("query_id")[name]
    assert got.to_dict() == {"q1": 2 * 2 - 3 - 3 * 1 + 0.5 * 94, "q2": -1 + 0.5 * 99}  # 45, 48.5
    assert cat.summarize(cat.compute(j, r, [name], num_docs=100))[name].iloc[0] == 46.75
    # Level 2: only b is relevant: a = 1, b = 4, c = 0, d = 100 + 1 - 5 - 1 = 95.
    got2 = cat.compute(j, r, [name], level=2, num_docs=100).set_index("query_id")[name]
    assert got2["q1"] == 2 - 4 + 0.5 * 95 == 45.5
    # Without -N, N = 0 as in trec_eval: d is negative (q2: d = -1).
    got0 = cat.compute(j, r, [name]).set_index("query_id")[name]
    assert got0.to_dict() == {"q1": 4 - 3 - 3 + 0.5 * -6, "q2": -1 - 0.5}


def test_utility_names_its_coefficients_and_the_name_parses_back():
    m = cat.parse_measure("utility.2.0,-1,-3,.5")[0]
    assert (m.name, m.param) == ("utility_2,-1,-3,0.5", (2.0, -1.0, -3.0, 0.5))
    assert cat.parse_measure(m.name) == [m]
    assert (
        cat.parse_measure("utility.1e-3,-0,0,0.1234567891")[0].name == "utility_0.001,0,0,0.1234567891"
    )  # exact: two coefficients never share a name


@pytest.mark.parametrize(
    "name", ["utility.1,2,3", "utility.1,2,3,4,5", "utility.a,b,c,d", "utility.1,,2,3", "utility.1e999,0,0,0"]
)
def test_utility_takes_exactly_four_finite_coefficients(name):
    with pytest.raises(ValueError, match="utility") as err:
        cat.parse_measure(name)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10", None])
def test_num_docs_is_a_non_negative_integer(bad):
    with pytest.raises(ValueError, match="num_docs"):
        cat.compute(trec.judgments(trec.EDGE_QRELS), trec.run(trec.EDGE_RUN), ["utility"], num_docs=bad)


@pytest.mark.parametrize("name", ["ndcg_cut.1=3", "ndcg_cut.1=3,2=9", "ndcg_cut_10.1=3"])
def test_ndcg_cut_with_a_gain_map_is_refused_saying_why_and_how(name):
    # trec_eval's m_ndcg_cut.c takes cutoffs only; its gains are the qrels' grades.
    with pytest.raises(ValueError) as err:
        cat.parse_measure(name)
    text = str(err.value)
    assert "\n" not in text
    assert "ndcg_cut takes cutoffs only" in text and "gains are the qrels' grades" in text
    pairs = "1:3,2:9" if "2=9" in name else "1:3"
    assert f"nDCG(gains={{{pairs}}})@10" in text
    assert cat.parse_measure(f"nDCG(gains={{{pairs}}})@10")  # the spelling it points at works


def test_the_trec_eval_command_takes_them_and_prints_trec_evals_names(tmp_path):
    import io

    from retrieval_eval.cli.app import main

    qrels = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 0), ("q2", "a", 1), ("q2", "d", 3)]
    rows = [("q1", "a", 3.0), ("q1", "x", 2.0), ("q1", "b", 1.0), ("q2", "d", 1.0), ("q2", "y", 0.5)]
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(rows)))
    out = io.StringIO()
    code = main(
        ["trec_eval", "-q", "-m", "set_F.0.5", "-m", "ndcg.1=3,2=9", str(tmp_path / "qrels"), str(tmp_path / "run")],
        stdout=out,
        stderr=io.StringIO(),
    )
    assert code == 0
    want = trec.oracle(qrels, rows, ["set_F.0.5"])
    mapped = trec.oracle([(q, d, {1: 3, 2: 9}.get(g, g)) for q, d, g in qrels], rows, ["ndcg"])
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    per_query = {(name.strip(), q): float(v) for name, q, v in lines if q != "all"}
    # Values: pytrec_eval's. Names: trec_eval's meas_init.c, append_string(tm->name,
    # printable_params), the parameters as typed (pytrec_eval keys these by the bare name, so
    # it cannot speak for them: tests/cli/test_trec_eval_names.py).
    for q in ("q1", "q2"):
        assert per_query[("set_F_0.5", q)] == pytest.approx(round(want[q]["set_F"], 4), abs=1e-12)
        assert per_query[("ndcg_1=3,2=9", q)] == pytest.approx(round(mapped[q]["ndcg"], 4), abs=1e-12)
    assert [name.strip() for name, q, _ in lines if q == "all"] == ["ndcg_1=3,2=9", "set_F_0.5"]  # trec_eval's order


def test_the_trec_eval_command_takes_utility_coefficients_and_N(tmp_path):
    import io

    from retrieval_eval.cli.app import main

    qrels = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 0), ("q1", "d", 1), ("q2", "a", 0)]
    rows = [("q1", "a", 5), ("q1", "x", 4), ("q1", "b", 3), ("q1", "c", 1), ("q2", "z", 1)]
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(rows)))
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "trec_eval",
            "-q",
            "-N",
            "100",
            "-m",
            "utility.2,-1,-3,.5",
            "-m",
            "num_ret",
            str(tmp_path / "qrels"),
            str(tmp_path / "run"),
        ],
        stdout=out,
        stderr=err,
    )
    assert (code, err.getvalue()) == (0, "")
    # q1: a = 2, b = 2, c = 1, d = 100 + 2 - 4 - 3 = 95: 4 - 2 - 3 + 47.5 = 46.5.
    # q2: a = 0, b = 1, c = 0, d = 99: -1 + 49.5 = 48.5. trec_eval names it as typed.
    name = "utility_2,-1,-3,.5"
    assert out.getvalue().splitlines() == [
        f"{'num_ret':<22}\tq1\t4",
        f"{name:<22}\tq1\t46.5000",
        f"{'num_ret':<22}\tq2\t1",
        f"{name:<22}\tq2\t48.5000",
        f"{'num_ret':<22}\tall\t5",
        f"{name:<22}\tall\t47.5000",
    ]
    for argv, why in (
        (["-N", "-1", "-m", "utility"], "-N"),
        (["-m", "utility.1,2,3"], "exactly 4"),
        (["-m", "ndcg_cut.1=3"], "nDCG(gains={1:3})@10"),
    ):
        err = io.StringIO()
        code = main(
            ["trec_eval", *argv, str(tmp_path / "qrels"), str(tmp_path / "run")], stdout=io.StringIO(), stderr=err
        )
        assert code == 2 and err.getvalue().count("\n") == 1 and why in err.getvalue(), argv
