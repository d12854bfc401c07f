"""The names ``retrieval-eval trec_eval`` prints for measures given with parameters.

trec_eval 9.0.8 names a value in ``meas_init.c``: a cutoff family (``P.5,10``) gets one value
per cutoff, ``append_long`` / ``append_double`` (``P_5``, ``P_10``); a single-value measure
with parameters (``te_init_meas_s_float_p_float`` for ``set_F`` and ``utility``, ``_p_pair``
for ``ndcg``, ``G``, ``ndcg_rel``, ``Rndcg``) gets one value named ``append_string(tm->name, printable_params)``: the name,
``_`` and the parameter string as typed. Without parameters ``printable_params`` is NULL and
the bare name prints. A measure's parameters come from the first ``-m name.params`` (the
``meas_arg`` loop breaks at the first match); a measure is marked once however many ``-m``
(or nicknames) name it.

Oracles. pytrec_eval (0.5, trec_eval 9.0.8) keys a cutoff family's values by trec_eval's own
value names (``q_eval.values[...].name``), so for ``P.5,10``, ``ndcg_cut.5`` and the plain
names its keys are the oracle. For a single-value measure it keys the bare measure name
(``te_trec_measures[i]->name`` in ``pytrec_eval.cpp``), parameters or not: ``set_F.0.5`` comes
back as ``set_F`` (with beta 0.5's value), so it cannot speak for those names; ``ndcg.1=3``
aborts it (an assertion in its C glue) and ``utility.2,-1,-3,.5`` returns 0 ("improper number
of coefficients"). Those names are pinned from trec_eval's C source, and the values on their
lines still checked against pytrec_eval where it computes them (``set_F``).
"""

from __future__ import annotations

import io

import pytest

from retrieval_eval.cli.app import main

pytrec_eval = pytest.importorskip("pytrec_eval")

QRELS = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 0), ("q2", "a", 1), ("q2", "d", 3)]
RUN = [("q1", "a", 3.0), ("q1", "x", 2.0), ("q1", "b", 1.0), ("q2", "d", 1.0), ("q2", "y", 0.5)]


@pytest.fixture
def paths(tmp_path):
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS))
    rp.write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(RUN)))
    return str(qp), str(rp)


def run_cli(paths, *measures, per_query=True):
    """The command's lines as (name, query, value) for ``-m`` arguments ``measures``."""
    argv = ["trec_eval", *(["-q"] if per_query else [])]
    for m in measures:
        argv += ["-m", m]
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, *paths], stdout=out, stderr=err)
    assert (code, err.getvalue()) == (0, ""), measures
    return [tuple(line.split("\t")) for line in out.getvalue().splitlines()]


def names(lines, qid="all"):
    return [name.rstrip() for name, q, _ in lines if q == qid]


def pytrec_keys(measure):
    qrels, run = {}, {}
    for q, d, g in QRELS:
        qrels.setdefault(q, {})[d] = g
    for q, d, s in RUN:
        run.setdefault(q, {})[d] = s
    return pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)


@pytest.mark.parametrize(
    "measure", ["set_F", "ndcg", "utility", "P.5,10", "ndcg_cut.5", "recall.3,7", "iprec_at_recall.0.2,0.7"]
)
def test_plain_names_and_cutoff_names_are_pytrec_evals_keys(paths, measure):
    want = pytrec_keys(measure)
    lines = run_cli(paths, measure)
    for q in ("q1", "q2"):
        assert names(lines, q) == list(want[q]), q  # pytrec_eval keeps trec_eval's order here


@pytest.mark.parametrize(
    "measure, printed",
    [
        ("set_F.0.5", "set_F_0.5"),
        ("set_F.1", "set_F_1"),
        ("set_F.1.0", "set_F_1.0"),
        ("set_F.2", "set_F_2"),
        ("set_F..25", "set_F_.25"),
        ("ndcg.1=3,2=9", "ndcg_1=3,2=9"),
        ("ndcg.1=3", "ndcg_1=3"),
        ("G.1=3", "G_1=3"),
        ("ndcg_rel.1=3,2=9", "ndcg_rel_1=3,2=9"),
        ("Rndcg.0=1,1=3", "Rndcg_0=1,1=3"),
        ("G.2=9,1=3", "G_2=9,1=3"),
        ("G.1=-1", "G_1=-1"),
        ("utility.2,-1,-3,.5", "utility_2,-1,-3,.5"),
        ("utility.1,-1,0,0", "utility_1,-1,0,0"),
    ],
)
def test_a_single_value_measure_with_parameters_prints_its_name_and_the_parameters_as_typed(paths, measure, printed):
    # trec_eval's C source (meas_init.c: append_string(tm->name, printable_params), printed by
    # meas_print_single.c / meas_print_final.c); pytrec_eval keys these by the bare name.
    # Even the defaults (set_F.1, utility.1,-1,0,0) print with their parameters: the rule
    # looks at the string, not at the values.
    lines = run_cli(paths, measure)
    assert names(lines, "q1") == names(lines, "q2") == names(lines) == [printed]


@pytest.mark.parametrize("beta", ["0.5", "2", "0.25"])
def test_set_F_with_parameters_prints_pytrec_evals_value_under_trec_evals_name(paths, beta):
    want = pytrec_keys(f"set_F.{beta}")  # {"q1": {"set_F": value at this beta}, ...}
    lines = run_cli(paths, f"set_F.{beta}")
    for name, q, value in lines:
        if q != "all":
            assert name.rstrip() == f"set_F_{beta}"
            assert float(value) == pytest.approx(round(want[q]["set_F"], 4), abs=1e-12)


def test_set_F_with_several_betas_is_one_measure_with_the_first_as_trec_eval_reads_it(paths):
    # m_set_F.c reads param_values[0] only; the name is the whole parameter string (C source).
    # pytrec_eval reads it the same way: its value for set_F.0.5,2 is beta 0.5's.
    want = pytrec_keys("set_F.0.5,2")
    assert want == pytrec_keys("set_F.0.5")
    lines = run_cli(paths, "set_F.0.5,2")
    assert names(lines) == names(lines, "q1") == ["set_F_0.5,2"]
    per_query = {q: float(v) for _, q, v in lines if q != "all"}
    assert per_query == {q: pytest.approx(round(want[q]["set_F"], 4), abs=1e-12) for q in want}


@pytest.mark.parametrize(
    "measures, printed",
    [
        (["set_F.0.5", "set_F.2"], ["set_F_0.5"]),
        (["set_F.2", "set_F.0.5"], ["set_F_2"]),
        (["set_F", "set_F.0.5"], ["set_F_0.5"]),
        (["set_F.0.5", "set_F"], ["set_F_0.5"]),
        (["ndcg.1=3", "ndcg", "ndcg.2=9"], ["ndcg_1=3"]),
        (["Rndcg", "Rndcg.1=3"], ["Rndcg_1=3"]),
        (["utility.2,-1,-3,.5", "utility.1,0,0,0"], ["utility_2,-1,-3,.5"]),
        (["P.5", "P.10"], ["P_5"]),
        (["P.5", "P"], ["P_5"]),
        (["P", "P.5,10"], ["P_5", "P_10"]),
    ],
)
def test_a_measure_given_twice_keeps_its_first_parameters_as_trec_eval(paths, measures, printed):
    # trec_eval's C source: mark_measure marks a measure once; its init (meas_init.c) walks
    # epi->meas_arg in command-line order and breaks at the first entry with its name.
    # (pytrec_eval takes a set of names, in no order: it cannot speak for this.)
    assert names(run_cli(paths, *measures)) == printed


@pytest.mark.parametrize("order", ["nickname first", "parameters first"])
def test_a_nickname_and_parameters_print_the_nicknames_measures_with_those_parameters(paths, order):
    # all_trec marks set_F and P; the -m with parameters gives them their parameters, in
    # either order (trec_eval's C source, as above). Every other measure is all_trec's own.
    args = ["all_trec", "set_F.0.5", "P.5"]
    if order == "parameters first":
        args = args[1:] + args[:1]
    got = names(run_cli(paths, *args, per_query=False))
    plain = names(run_cli(paths, "all_trec", per_query=False))
    want = ["set_F_0.5" if n == "set_F" else n for n in plain if not n.startswith("P_") or n == "P_5"]
    assert "set_F" in plain and "P_10" in plain
    assert got == want


def test_a_later_malformed_parameter_is_still_refused(paths):
    # trec_eval never reads a later -m's parameters; this command parses every -m, so a typo
    # is an error rather than silently ignored (docs/cli.md says so).
    err = io.StringIO()
    code = main(["trec_eval", "-m", "set_F.0.5", "-m", "set_F.x", *paths], stdout=io.StringIO(), stderr=err)
    assert code == 2 and "set_F.x" in err.getvalue() and err.getvalue().count("\n") == 1


def test_cutoffs_print_in_ascending_order_whatever_order_they_are_typed(paths):
    # meas_init.c's get_long_cutoffs / get_double_cutoffs qsort the parameters ascending.
    assert names(run_cli(paths, "P.10,5,1")) == ["P_1", "P_5", "P_10"]
    assert names(run_cli(paths, "iprec_at_recall.0.7,0.2")) == ["iprec_at_recall_0.20", "iprec_at_recall_0.70"]
    # pytrec_eval computes the same cutoffs (its keys are a set: only the names are compared)
    assert set(names(run_cli(paths, "P.10,5,1"))) == set(pytrec_keys("P.10,5,1")["q1"])


@pytest.mark.parametrize("measure", ["P.5,5", "ndcg_cut.10,5,10", "iprec_at_recall.0.5,0.50"])
def test_a_repeated_cutoff_is_refused_as_trec_eval_refuses_it(paths, measure):
    # get_long_cutoffs: "trec_eval: duplicate cutoffs detected" (and trec_eval exits).
    out, err = io.StringIO(), io.StringIO()
    code = main(["trec_eval", "-m", measure, *paths], stdout=out, stderr=err)
    assert code == 2 and out.getvalue() == ""
    assert "duplicate cutoffs" in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1
