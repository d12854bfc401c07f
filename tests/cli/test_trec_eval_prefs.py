"""``retrieval-eval trec_eval -R prefs | qrels_prefs | qrels_jg``: trec_eval 10.0's quicktest lines
for them byte for byte (when ``RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR`` names a copy of its ``test/``
folder; fetched data, never committed), the output's shape on small files, and bad input as one
line naming the file and line, exit 2."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from retrieval_eval.cli.app import main
from retrieval_eval.engine.measures.prefs import NAMES

TEST_DIR = os.environ.get("RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR")

#: trec_eval 10.0's Makefile, target quicktest: its -R lines.
QUICKTEST = [
    ("-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R prefs test/prefs.comment.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test", "out.test.qrels_prefs"),
    ("-m qrels_jg -q -R qrels_jg  test/qrels.123 test/results.test", "out.test.qrels_jg"),
    ("-m qrels_jg -q -R qrels_jg  test/qrels.comments.123 test/results.test", "out.test.qrels_jg"),
]


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["trec_eval", *map(str, argv)], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.skipif(not TEST_DIR, reason="RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR names no copy of trec_eval 10.0's test/")
@pytest.mark.parametrize("line, expected", QUICKTEST, ids=[f"{e}-{i}" for i, (_, e) in enumerate(QUICKTEST)])
def test_trec_evals_quicktest_lines_byte_for_byte(line, expected):
    folder = Path(TEST_DIR)
    argv = [str(folder / a[len("test/") :]) if a.startswith("test/") else a for a in line.split()]
    code, out, err = cli(*argv)
    assert (code, err) == (0, "")
    assert out == (folder / expected).read_text()


PREFS = """# user u1 ranks a > b > c; user u2 prefers c to a
q1 u1 s a 2
q1 u1 s b 1
q1 u1 s c 0
q1 u2 s c 1
q1 u2 s a 0
q2 u1 s a 1
q2 u1 s b 0
"""
RUN = "q1 Q0 a 1 3.0 sys\nq1 Q0 c 2 2.0 sys\nq1 Q0 x 3 1.0 sys\nq2 Q0 b 1 1.0 sys\n"


@pytest.fixture
def files(tmp_path):
    p, r = tmp_path / "prefs.txt", tmp_path / "run.txt"
    p.write_text(PREFS)
    r.write_text(RUN)
    return p, r


def test_all_prefs_prints_each_query_then_the_summary_in_trec_evals_order(files):
    p, r = files
    code, out, err = cli("-q", "-m", "all_prefs", "-R", "prefs", p, r)
    assert (code, err) == (0, "")
    lines = [line.split("\t") for line in out.splitlines()]
    assert [(n.strip(), q) for n, q, _ in lines[:14]] == [(n, "q1") for n in NAMES]
    assert [(n.strip(), q) for n, q, _ in lines[14:28]] == [(n, "q2") for n in NAMES]
    assert [n.strip() for n, _, _ in lines[28:]] == ["runid", "num_q", *NAMES]
    assert lines[28][2] == "sys" and lines[29][2] == "2"
    value = {(n.strip(), q): v for n, q, v in lines}
    # q1: u1 a>b (implied, fulfilled), a>c fulfilled, b>c (implied, failed); u2 c>a failed
    assert value[("prefs_num_prefs_poss", "q1")] == "4" and value[("prefs_num_prefs_ful", "q1")] == "2"
    assert value[("prefs_simp", "q1")] == "0.5000"
    # q2: a > b, only b retrieved: failed
    assert value[("prefs_num_prefs_poss", "all")] == "5" and value[("prefs_simp", "all")] == "0.2500"
    assert value[("prefs_avgjg", "q1")] == "%6.4f" % ((2 / 3 + 0) / 2)


def test_getopt_forms_nicknames_and_no_summary(files):
    p, r = files
    full = cli("-q", "-m", "all_prefs", "-R", "prefs", p, r)[1]
    assert cli("-qmall_prefs", "-Rprefs", p, r)[1] == full
    assert cli("-q", "--measure=all_prefs", "--Rel_info_format=prefs", p, r)[1] == full
    code, out, _ = cli("-m", "prefs", "-R", "prefs", p, r)
    assert code == 0 and [line.split("\t")[0].strip() for line in out.splitlines()] == ["runid", "num_q", *NAMES[:6]]
    code, out, _ = cli("-n", "-q", "-m", "prefs_simp", "-R", "prefs", p, r)
    assert code == 0 and [line.split("\t")[1] for line in out.splitlines()] == ["q1", "q2"]


def test_qrels_jg_measures_with_parameters_first_ones_win(tmp_path, files):
    _, r = files
    q = tmp_path / "qrels.jg"
    q.write_text("q1 1 a 1\nq1 1 c 0\nq1 2 c 1\nq2 1 b 1\n")
    code, out, err = cli("-m", "P_avgjg.2,1", "-m", "P_avgjg.5", "-m", "map_avgjg", "-R", "qrels_jg", q, r)
    assert (code, err) == (0, "")
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == ["map_avgjg", "P_avgjg_1", "P_avgjg_2"]
    # q1: group 1 a at rank 1, group 2 c at rank 2; q2: b at rank 1
    assert out.splitlines()[0].split("\t")[2] == "%6.4f" % (((1 + 1 / 2) / 2 + 1) / 2)


def test_an_unanswered_query_stops_as_in_trec_eval_unless_c(tmp_path, files):
    p, _ = files
    r = tmp_path / "run1.txt"
    r.write_text("q1 Q0 a 1 3.0 sys\n")
    code, out, err = cli("-m", "all_prefs", "-R", "prefs", p, r)
    assert code == 2 and out == "" and "no results for query q2" in err and len(err.splitlines()) == 1
    code, out, err = cli("-c", "-m", "all_prefs", "-R", "prefs", p, r)
    assert (code, err) == (0, "") and "num_q                 \tall\t2" in out


@pytest.mark.parametrize(
    "text, fmt, where, what",
    [
        ("q1 u1 s a 2\nq1 u1 a 1\n", "prefs", ":2:", "expected 5 fields"),
        ("q1 u1 s a 2\nq1 u1 s b high\n", "prefs", ":2:", "not a finite number"),
        ("# c\nq1 0 a 1\nq1 0 b\n", "qrels_prefs", ":3:", "expected 4 fields"),
        ("q1 0 a 1\nq1 0 a 0\n", "qrels_jg", ":2:", "already judged"),
        ("q1 0 a 1.5\n", "qrels_jg", ":1:", "not an integer"),
        ("", "prefs", "", "no judgment lines"),
    ],
)
def test_bad_judgments_are_one_line_naming_file_and_line(tmp_path, files, text, fmt, where, what):
    _, r = files
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    code, out, err = cli("-R", fmt, "-m", "all_prefs" if fmt != "qrels_jg" else "qrels_jg", bad, r)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and f"{bad}{where}" in err and what in err


@pytest.mark.parametrize(
    "argv, what",
    [
        (["-R", "prefs"], "illegal measure 'official'"),
        (["-R", "prefs", "-m", "map"], "illegal measure 'map': it cannot be calculated from -R prefs"),
        (["-R", "qrels_jg", "-m", "prefs_simp"], "illegal measure 'prefs_simp'"),
        (["-R", "prefs", "-m", "nosuch"], "is not a trec_eval measure"),
        (["-R", "bogus", "-m", "all_prefs"], "Illegal rel_format 'bogus'"),
        (["-R", "qrels_jg", "-m", "P_avgjg.5,5"], "duplicate cutoffs"),
    ],
)
def test_measures_the_format_cannot_give_are_refused(files, argv, what):
    p, r = files
    code, out, err = cli(*argv, p, r)
    assert (code, out) == (2, "") and what in err and len(err.splitlines()) == 1


def test_inconsistent_preferences_name_the_file(tmp_path, files):
    _, r = files
    bad = tmp_path / "cycle.txt"
    bad.write_text("q1 u 1 a 2\nq1 u 1 c 1\nq1 u 2 c 2\nq1 u 2 a 1\n")
    code, out, err = cli("-m", "all_prefs", "-R", "prefs", "-c", bad, r)
    assert (code, out) == (2, "") and f"{bad}: " in err and "inconsistent preferences" in err
