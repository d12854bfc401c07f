"""trec_eval 10.0 in the drop-in and the catalogue: what changed from 9.0.8, getopt's syntax,
``rbp`` / ``rbp_resid`` / ``relstring``, and 10.0's ``all_trec``.

The oracles are line-by-line Python transcriptions of trec_eval 10.0's C loops
(``m_iprec_at_recall.c``, ``m_11pt_avg.c``, ``m_rbp.c``, ``m_rbp_resid.c``, ``m_relstring.c``)
over the ranking as trec_eval forms it (``form_res_rels``: score descending, then doc id
descending; an unlabelled document NONPOOL -1, a negative grade UNJUDGED -2), run on generated
data, plus hand-computed cases. 9.0.8's semantics (``compat="9.0.8"``) stay checked against
pytrec_eval by the existing oracle tests (tests/engine/test_measures_trec.py).

trec_eval's own regression test (``make quicktest``: 15 command lines, each output diffed byte
for byte) runs when ``RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR`` names a copy of trec_eval 10.0's
``test/`` folder (its data is not redistributed here); see docs/trec_eval-versions.md.
"""

from __future__ import annotations

import importlib
import io
import math
import os
from pathlib import Path

import numpy as np
import pytest

import retrieval_eval.engine.measures as cat
from retrieval_eval.cli.app import main
from retrieval_eval.cli.common import CLIError
from retrieval_eval.cli.trec_eval import VERSION_NICKNAMES, getopt_argv

trec = importlib.import_module("tests.engine.test_measures_trec")


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(map(str, argv)), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# ---- trec_eval 10.0's C loops, transcribed --------------------------------------------------


def res_rels(qrels, rows, q):
    """trec_eval's results_rel_list for query q: grades in trec order (NONPOOL -1, UNJUDGED -2)."""
    labels = {d: g for qq, d, g in qrels if qq == q}
    ranked = sorted([(s, d) for qq, d, s in rows if qq == q], reverse=True)  # score, doc desc
    return [(-1 if d not in labels else (-2 if labels[d] < 0 else labels[d])) for s, d in ranked]


def c_iprec(rels, num_rel, levels, version, level=1):
    if version == "10.0":
        cutoffs = [int(math.floor(x * num_rel + 0.5)) for x in levels]  # lround, x R >= 0
    else:
        cutoffs = [int(x * num_rel + 0.9) for x in levels]
    num_ret = len(rels)
    num_rel_ret = sum(r >= level for r in rels)
    out = [0.0] * len(levels)
    cur = len(levels) - 1
    while cur >= 0 and cutoffs[cur] > num_rel_ret:
        cur -= 1
    precis = num_rel_ret / num_ret if num_ret else 0.0
    int_precis = precis
    so_far = num_rel_ret
    i = num_ret
    while i > 0 and so_far > 0:
        precis = so_far / i
        int_precis = max(int_precis, precis)
        if rels[i - 1] >= level:
            while cur >= 0 and so_far == cutoffs[cur]:
                out[cur] = int_precis
                cur -= 1
            so_far -= 1
        i -= 1
    while cur >= 0:
        out[cur] = int_precis
        cur -= 1
    return out


def c_rbp(rels, levels_present, p=0.9):
    gains = {g: float(g) for g in range(levels_present)}
    lo, hi = 0.0, max(gains.values(), default=0.0)  # the C's running min starts at 0 (see module)
    lo = min([lo, *gains.values()])
    if lo < 0 or hi > 1:
        gains = {g: (v - lo) / (hi - lo) for g, v in gains.items()}
    total, cur = 0.0, 1.0
    for r in rels:
        gain = gains.get(r, 0.0)
        if gain != 0:
            total += gain * cur
        cur *= p
    return (1.0 - p) * total


def c_rbp_resid(rels, p=0.9):
    unj, total, cur = 0, 0.0, 1.0
    for r in rels:
        if r < 0:
            unj += 1
            total += cur
        cur *= p
    return cur + (1 - p) * total if unj else 0.0


def c_relstring(rels, k=10):
    chars = []
    for r in rels[:k]:
        chars.append(">" if r > 9 else str(r) if r >= 0 else "-" if r == -1 else "." if r == -2 else "<")
    return "".join(chars)


def generated(seed):
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(15):
        pool = [f"d{i}" for i in rng.choice(60, size=30, replace=False)]
        n_lab = int(rng.integers(1, 25))
        qrels += [(f"q{q}", d, int(rng.choice([-1, 0, 0, 1, 1, 2, 3, 12]))) for d in pool[:n_lab]]
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 30))]
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, np.round(rng.random(len(docs)) * 4, 1))]
    return qrels, rows


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_iprec_and_11pt_follow_each_versions_rounding(seed, version):
    qrels, rows = generated(seed)
    levels = [round(0.1 * i, 2) for i in range(11)]
    names = [f"iprec_at_recall.{','.join(f'{x:.2f}' for x in levels)}", "11pt_avg"]
    got = cat.compute(trec.judgments(qrels), trec.run(rows), names, compat=version).set_index("query_id")
    for q in got.index:
        rels = res_rels(qrels, rows, q)
        num_rel = sum(1 for qq, _, g in qrels if qq == q and g >= 1)
        want = c_iprec(rels, num_rel, levels, version)
        for x, w in zip(levels, want):
            assert got.loc[q, f"iprec_at_recall_{x:.2f}"] == pytest.approx(w, abs=1e-12), (q, x)
        assert got.loc[q, "11pt_avg"] == pytest.approx(sum(want) / 11, abs=1e-12)


def test_the_versions_differ_where_lround_and_the_old_cast_differ():
    # R = 2 relevant, x = 0.6: 9.0.8 needs (long)(1.2 + 0.9) = 2 relevant retrieved, 10.0
    # lround(1.2) = 1. One of the two is retrieved, at rank 1.
    qrels = [("q", "a", 1), ("q", "b", 1)]
    rows = [("q", "a", 5.0), ("q", "z", 3.0)]
    old = cat.compute(trec.judgments(qrels), trec.run(rows), ["iprec_at_recall.0.60"], compat="9.0.8")
    new = cat.compute(trec.judgments(qrels), trec.run(rows), ["iprec_at_recall.0.60"])
    assert old["iprec_at_recall_0.60"].iloc[0] == 0.0
    assert new["iprec_at_recall_0.60"].iloc[0] == 1.0
    with pytest.raises(ValueError, match="compat"):
        cat.compute(trec.judgments(qrels), trec.run(rows), ["map"], compat="9.0")


@pytest.mark.parametrize("seed", range(5))
def test_rbp_rbp_resid_and_relstring_are_trec_evals(seed):
    qrels, rows = generated(seed)
    names = ["rbp", "rbp.p=0.5", "rbp_resid", "rbp_resid.p=0.95", "relstring", "relstring.20"]
    got = cat.compute(trec.judgments(qrels), trec.run(rows), names).set_index("query_id")
    assert list(got.columns[1:]) == [
        "rbp",
        "rbp(p=0.5)",
        "rbp_resid",
        "rbp_resid(p=0.95)",
        "relstring_10",
        "relstring_20",
    ]
    for q in got.index:
        rels = res_rels(qrels, rows, q)
        grades = [g for qq, _, g in qrels if qq == q and g >= 0]
        present = max(grades) + 1 if grades else 0
        assert got.loc[q, "rbp"] == pytest.approx(c_rbp(rels, present), abs=1e-12)
        assert got.loc[q, "rbp(p=0.5)"] == pytest.approx(c_rbp(rels, present, 0.5), abs=1e-12)
        assert got.loc[q, "rbp_resid"] == pytest.approx(c_rbp_resid(rels), abs=1e-12)
        assert got.loc[q, "rbp_resid(p=0.95)"] == pytest.approx(c_rbp_resid(rels, 0.95), abs=1e-12)
        assert got.loc[q, "relstring_10"] == c_relstring(rels)
        assert got.loc[q, "relstring_20"] == c_relstring(rels, 20)


def test_rbp_by_hand():
    # grades 0, 2 (a query whose top grade is 2: gains rescaled to g / 2), unlabelled, 1.
    qrels = [("q", "a", 0), ("q", "b", 2), ("q", "d", 1)]
    rows = [("q", "a", 4.0), ("q", "b", 3.0), ("q", "c", 2.0), ("q", "d", 1.0)]
    got = cat.compute(trec.judgments(qrels), trec.run(rows), ["rbp", "rbp_resid", "relstring"])
    assert got["rbp"].iloc[0] == pytest.approx(0.1 * (0.9 * 1.0 + 0.729 * 0.5))
    assert got["rbp_resid"].iloc[0] == pytest.approx(0.9**4 + 0.1 * 0.81)
    assert got["relstring_10"].iloc[0] == "02-1"
    summary = cat.summarize(got)
    assert "relstring_10" not in summary.columns and "rbp" in summary.columns


# ---- the command line --------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    qrels, rows = generated(7)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {max(g, 0)}\n" for q, d, g in qrels))
    rp.write_text("".join(f"{q} Q0 {d} 1 {s} sys\n" for q, d, s in rows))
    return qp, rp


@pytest.mark.parametrize(
    "getopt, plain",
    [
        (["-M10", "-l2"], ["-M", "10", "-l", "2"]),
        (["-qc"], ["-q", "-c"]),
        (["-qcM10"], ["-q", "-c", "-M", "10"]),
        (["-mP.5,10", "-mmap"], ["-m", "P.5,10", "-m", "map"]),
        (["--measure=P.5", "--query_eval_wanted"], ["-m", "P.5", "-q"]),
        (["--meas", "P.5", "--Max_ret=3"], ["-m", "P.5", "-M", "3"]),
        (["-miprec_at_recall..10,.20"], ["-m", "iprec_at_recall..10,.20"]),
    ],
)
def test_getopt_syntax_reads_as_the_plain_one(files, getopt, plain):
    qp, rp = files
    assert getopt_argv(getopt) == plain
    a = cli("trec_eval", *getopt, qp, rp)
    b = cli("trec_eval", *plain, qp, rp)
    assert a[0] == 0 and a == b


def test_options_after_the_files_and_the_double_dash(files):
    qp, rp = files
    assert cli("trec_eval", qp, rp, "-m", "map") == cli("trec_eval", "-m", "map", qp, rp)
    assert getopt_argv(["-q", "--", "-x"]) == ["-q", "--", "-x"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-qv"], "option -v (--version) is not supported"),
        (["-x"], "invalid option -- 'x'"),
        (["--bogus"], "unrecognized option '--bogus'"),
        (["--Re"], "ambiguous option '--Re'"),
        (["-m"], "option requires an argument -- 'm'"),
    ],
)
def test_an_option_not_read_is_an_error_naming_it(files, argv, message):
    qp, rp = files
    with pytest.raises(CLIError, match=None) as err:
        getopt_argv([*argv, str(qp), str(rp)] if argv != ["-m"] else argv)
    assert message in str(err.value)
    code, out, errtext = cli("trec_eval", *argv, *(() if argv == ["-m"] else (qp, rp)))
    assert code == 2 and out == "" and message in errtext


def test_all_trec_is_the_versions_list(files):
    qp, rp = files
    new = cli("trec_eval", "-m", "all_trec", qp, rp)[1]
    old = cli("trec_eval", "--compat", "9.0.8", "-m", "all_trec", qp, rp)[1]
    for name in ("rbp ", "rbp_resid ", "unj_5 ", "unj_10 ", "unj_20 "):
        assert name in new and name not in old
    assert "relstring" not in new  # per query only
    per_query = cli("trec_eval", "-q", "-m", "all_trec", qp, rp)[1]
    assert per_query.count("relstring             \t") == len({line.split()[0] for line in qp.read_text().splitlines()})
    assert set(VERSION_NICKNAMES["10.0"]["all_trec"]) - set(VERSION_NICKNAMES["9.0.8"]["all_trec"]) == {
        "relstring",
        "rbp",
        "rbp_resid",
        "unj",
    }


# ---- trec_eval's own regression test, where a copy of it is at hand --------------------------

QUICKTEST = [  # trec_eval 10.0's Makefile, `make quicktest`: (arguments, expected output file)
    (["test/qrels.test", "test/results.test"], "out.test"),
    (["test/qrels.test.with-comments", "test/results.test"], "out.test"),
    (["test/qrels.comment.test", "test/results.comment.test"], "out.comment.test"),
    (["-m", "all_trec", "test/qrels.test", "test/results.test"], "out.test.a"),
    (["-m", "all_trec", "-q", "test/qrels.test", "test/results.test"], "out.test.aq"),
    (["-m", "all_trec", "-q", "-c", "test/qrels.test", "test/results.trunc"], "out.test.aqc"),
    (["-m", "all_trec", "-q", "-c", "-M100", "test/qrels.test", "test/results.trunc"], "out.test.aqcM"),
    (["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "test/qrels.rel_level", "test/results.test"], "out.test.aql"),
    (
        [
            "-q",
            "-miprec_at_recall..10,.20,.25,.75,.50",
            "-m",
            "P.5,7,3",
            "-m",
            "recall.20,2000",
            "-m",
            "Rprec_mult.5.0,0.2,0.35",
            "-mutility.2,-1,0,0",
            "-m",
            "11pt_avg..25,.5,.75",
            "-mndcg.1=3,2=9,4=4.5",
            "-mndcg_cut.10,20,23.4",
            "-msuccess.2,5,20",
            "test/qrels.test",
            "test/results.test",
        ],
        "out.test.meas_params",
    ),
    (["-q", "-m", "all_trec", "-Z", "test/zscores_file", "test/qrels.test", "test/results.test"], "out.test.aqZ"),
]
TEST_DIR = os.environ.get("RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR")


@pytest.mark.skipif(
    not TEST_DIR,
    reason="RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR names no copy of "
    "trec_eval 10.0's test/ folder (docs/trec_eval-versions.md)",
)
@pytest.mark.parametrize("argv, expected", QUICKTEST, ids=[e for _, e in QUICKTEST])
def test_trec_evals_quicktest_byte_for_byte(argv, expected):
    folder = Path(TEST_DIR)
    paths = [str(folder / a[len("test/") :]) if a.startswith("test/") else a for a in argv]
    code, out, err = cli("trec_eval", *paths)
    assert (code, err) == (0, "")
    assert out == (folder / expected).read_text()


@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_11pt_avg_over_given_recall_levels_is_their_iprec_mean(version):
    qrels, rows = generated(3)
    levels = [0.25, 0.5, 0.75]
    got = cat.compute(trec.judgments(qrels), trec.run(rows), ["11pt_avg..25,.5,.75"], compat=version).set_index(
        "query_id"
    )
    assert list(got.columns) == ["system", "11pt_avg_0.25,0.5,0.75"]
    for q in got.index:
        rels = res_rels(qrels, rows, q)
        num_rel = sum(1 for qq, _, g in qrels if qq == q and g >= 1)
        want = sum(c_iprec(rels, num_rel, levels, version)) / 3
        assert got.loc[q, "11pt_avg_0.25,0.5,0.75"] == pytest.approx(want, abs=1e-12)
    assert cat.parse_measure("11pt_avg_0.25,0.5,0.75") == cat.parse_measure("11pt_avg..25,.5,.75")
    assert cat.parse_measure("11pt_avg.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1") == cat.parse_measure("11pt_avg")
    with pytest.raises(ValueError, match="within"):
        cat.parse_measure("11pt_avg.1.5")


def test_the_command_names_11pt_avg_as_typed_and_reads_cutoffs_as_atol(files):
    qp, rp = files
    code, out, err = cli("trec_eval", "-m", "11pt_avg..25,.5,.75", "-mndcg_cut.10,23.4", qp, rp)
    assert (code, err) == (0, "")
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names == ["11pt_avg_.25,.5,.75", "ndcg_cut_10", "ndcg_cut_23"]
    same = cli("trec_eval", "-m", "ndcg_cut.23", qp, rp)[1]
    assert out.splitlines()[2] == same.splitlines()[0]
