"""The ``trec_eval`` command's options beyond the measures: ``-J``, ``-Z``, ``-D``, ``-T``, ``-o``
and ``-R``.

Oracles: pytrec_eval's ``judged_docs_only_flag`` (trec_eval's ``-J``) per query; hand-computed
z-scores (``convert_zscores.c``'s rules); trec_eval 10.0's ``out.test.aqZ`` is in the quicktest
(tests/cli/test_trec_eval_10.py).
"""

from __future__ import annotations

import importlib
import io
import sys
import types

import pytest

import retrieval_eval.engine.measures as cat
from retrieval_eval.cli.app import main
from retrieval_eval.io import read_qrels

trec = importlib.import_module("tests.engine.test_measures_trec")
neg = importlib.import_module("tests.cli.test_trec_eval_negative_grades")

JUDGED = ["map", "P.5", "ndcg", "bpref", "recip_rank", "num_ret", "num_rel_ret", "Rprec", "infAP"]


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(map(str, argv)), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def data(tmp_path):
    qrels, rows = neg.generated(5)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    rp.write_text("".join(f"{q} Q0 {d} 1 {s} sys\n" for q, d, s in rows))
    return qrels, rows, qp, rp


def judged_oracle(qrels, rows, level=1):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrel, runp = {}, {}
    for q, d, g in qrels:
        qrel.setdefault(q, {})[d] = g
    for q, d, s in rows:
        runp.setdefault(q, {})[d] = s
    out: dict = {}
    for m in JUDGED:
        ev = pytrec_eval.RelevanceEvaluator(qrel, {m}, relevance_level=level, judged_docs_only_flag=True)
        for qid, values in ev.evaluate(runp).items():
            out.setdefault(qid, {}).update(values)
    return out


# ---- -J ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2])
def test_judged_only_equals_pytrec_evals_judged_docs_only_flag(data, level):
    qrels, rows, qp, _ = data
    expected = judged_oracle(qrels, rows, level)
    j = read_qrels(qp, keep_negative=True)
    got = cat.compute(j, trec.run(rows), JUDGED, level=level, judged_only=True, compat="9.0.8")
    got = got.set_index("query_id")
    for qid, values in expected.items():
        for name, value in values.items():
            assert got.loc[qid, name] == pytest.approx(value, abs=1e-9), (qid, name)
    alone = cat.compute(j, trec.run(rows), ["P.5"], level=level, judged_only=True).set_index("query_id")
    for qid, values in expected.items():  # a cutoff alone: the top 5 judged, wherever they are
        assert alone.loc[qid, "P_5"] == pytest.approx(values["P_5"], abs=1e-9), qid
    plain = cat.compute(j, trec.run(rows), ["num_ret", "map"], level=level)
    assert (plain["num_ret"].to_numpy() > got.loc[plain["query_id"], "num_ret"].to_numpy()).any()


def test_the_command_reads_J(data):
    qrels, rows, qp, rp = data
    code, out, err = cli("trec_eval", "-q", "-J", "-m", "map", "-m", "num_ret", qp, rp)
    assert (code, err) == (0, "")
    expected = judged_oracle(qrels, rows)
    for name, qid, value in (line.split("\t") for line in out.splitlines()):
        if qid != "all":
            want = expected[qid][name.strip()]
            assert value == (str(int(want)) if name.startswith("num_") else "%6.4f" % want)
    assert out != cli("trec_eval", "-q", "-m", "map", "-m", "num_ret", qp, rp)[1]


def test_J_drops_the_unjudged_after_M(tmp_path):
    # Ranking u1 u2 a b (u: no judgment). -M2 keeps u1 u2, then -J drops both: nothing left.
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("q 0 a 1\nq 0 b 0\n")
    rp.write_text("q Q0 u1 1 4 s\nq Q0 u2 2 3 s\nq Q0 a 3 2 s\nq Q0 b 4 1 s\n")
    out = cli("trec_eval", "-J", "-M2", "-m", "num_ret", "-m", "P.1", qp, rp)[1]
    assert out == "num_ret               \tall\t0\nP_1                   \tall\t0.0000\n"
    out = cli("trec_eval", "-J", "-m", "num_ret", "-m", "P.1", qp, rp)[1]
    assert out == "num_ret               \tall\t2\nP_1                   \tall\t1.0000\n"


# ---- -Z ---------------------------------------------------------------------------------------


def test_zscores_by_hand(tmp_path):
    qp, rp, zp = tmp_path / "q", tmp_path / "r", tmp_path / "z"
    qp.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 1\n")
    rp.write_text("q1 Q0 a 1 2 run7\nq1 Q0 b 2 1 run7\nq2 Q0 d 1 2 run7\nq2 Q0 x 2 1 run7\n")
    # q1: P_1 = 1, num_ret 2; q2: P_1 = 1, num_ret 2. q2 has no num_ret line: missing.
    zp.write_text("q1 P_1 0.5 0.25\nq1 num_ret 2 0\nq2 P_1 1 0\n\nq2 map 0 0\n")
    code, out, err = cli(
        "trec_eval", "-q", "-Z", zp, "-m", "P.1", "-m", "num_ret", "-m", "runid", "-m", "num_q", "-m", "map", qp, rp
    )
    assert (code, err) == (0, "")
    # map: q1 1.0, q2 0.5; q1 has no map line; q2's mean 0 with stddev 0 and value 0.5: missing.
    assert out.splitlines() == [
        "Znum_ret               \tq1\t0.0000",  # stddev 0, value == mean
        "Zmap                   \tq1\t-1000000.0000",
        "ZP_1                   \tq1\t2.0000",  # (1 - 0.5) / 0.25
        "Znum_ret               \tq2\t-1000000.0000",
        "Zmap                   \tq2\t-1000000.0000",
        "ZP_1                   \tq2\t0.0000",
        "runid                 \tall\trun7",
        "Znum_q                 \tall\t2.0000",
        "Znum_ret               \tall\t-1000000.0000",  # the sum
        "Zmap                   \tall\t-1000000.0000",  # the mean
        "ZP_1                   \tall\t1.0000",
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("q1 P_1 0.5\n", ":1: expected 'qid measure mean stddev', got 3 fields"),
        ("q1 P_1 0.5 0.1\nq1 P_1 x 1\n", ":2: mean and stddev must be numbers"),
        ("q1 P_1 0.5 0.1\nq1 P_1 1 1\n", ":2: query q1 measure P_1 is given twice"),
    ],
)
def test_a_malformed_zscore_file_is_one_line_naming_it(data, tmp_path, text, message):
    _, _, qp, rp = data
    zp = tmp_path / "z"
    zp.write_text(text)
    code, out, err = cli("trec_eval", "-Z", zp, qp, rp)
    assert code == 2 and out == "" and message in err and str(zp) in err and err.count("\n") == 1
    code, _, err = cli("trec_eval", "-Z", tmp_path / "absent", qp, rp)
    assert code == 2 and "cannot read the z-score file" in err


# ---- -D, -T, -o, -R ---------------------------------------------------------------------------


def test_options_without_effect_are_accepted(data):
    _, _, qp, rp = data
    plain = cli("trec_eval", "-q", qp, rp)
    assert plain[0] == 0
    for argv in (["-D", "0"], ["-D0"], ["-T", "trec_results"], ["-o"], ["-R", "qrels"], ["--Debug_level=0"]):
        assert cli("trec_eval", "-q", *argv, qp, rp) == plain, argv


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-D", "1"], "option -D (--Debug_level) value '1' is not supported"),
        (["-D", "0.301"], "option -D (--Debug_level) value '0.301' is not supported"),
        (["-T", "prefs_results"], "option -T (--Results_format) value 'prefs_results' is not supported"),
    ],
)
def test_option_values_not_read_are_refused_naming_them(data, argv, message):
    _, _, qp, rp = data
    code, out, err = cli("trec_eval", *argv, qp, rp)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_R_other_than_qrels_goes_to_the_preferences_module(data, monkeypatch):
    _, _, qp, rp = data
    seen = {}

    def cmd_rel_info(args, out):
        seen["format"] = args.rel_info_format
        out.stream.write("prefs here\n")
        return 0

    fake = types.ModuleType("retrieval_eval.cli.trec_eval_prefs")
    fake.cmd_rel_info = cmd_rel_info  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "retrieval_eval.cli.trec_eval_prefs", fake)
    assert cli("trec_eval", "-R", "qrels_jg", qp, rp) == (0, "prefs here\n", "")
    assert seen == {"format": "qrels_jg"}
    monkeypatch.undo()  # the real module: a format it does not read is refused, naming it
    code, out, err = cli("trec_eval", "-Rbogus", qp, rp)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "Illegal rel_format 'bogus'" in err
