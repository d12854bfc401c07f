"""``compare`` on the command line: every pair, several cutoffs, catalogue names, the paper's table
(issue 33 items 1-2, issue 28 item 3). Each number is checked against the library call it faces
(itself checked against ranx, scipy and statsmodels in tests/analysis/test_compare_pairs.py)."""

from __future__ import annotations

import io
import json

import pytest

import retrieval_eval as rev
from retrieval_eval.cli import app as cli
from retrieval_eval.datasets import demo_path


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


J, RUNS, QUERIES = demo_path("judgments.jsonl"), demo_path("runs.jsonl"), demo_path("queries.jsonl")
BASE = ["compare", "--judgments", J, "--run", RUNS, "--test", "t"]


def test_pairs_all_with_several_cutoffs_and_catalogue_names_in_one_call():
    code, out, err = run_cli(
        *BASE,
        "--pairs",
        "all",
        "-k",
        "5,10",
        "-k",
        "100",
        "--metric",
        "ndcg",
        "--metric",
        "nDCG@10",
        "--metric",
        "P_5",
        "--metric",
        "map@100",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    rows = data["comparisons"]
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    assert metrics == ["ndcg@5", "ndcg@10", "ndcg@100", "nDCG@10", "P_5", "map@100"]
    assert {frozenset((r["system"], r["baseline"])) for r in rows} == {
        frozenset(p) for p in (("bm25", "dense"), ("bm25", "rrf"), ("dense", "rrf"))
    }
    ref = rev.compare(
        rev.read_judgments(J),
        rev.read_run(RUNS),
        k=[5, 10, 100],
        test="t",
        pairs="all",
        metrics=["ndcg", "nDCG@10", "P_5", "map@100"],
    )
    assert [r["p_adjusted"] for r in rows] == pytest.approx(ref.table["p_adjusted"].tolist(), rel=1e-12)
    assert data["pairs"] == "all" and data["ks"] == [5, 10, 100]


def test_the_terminal_report_names_both_systems_and_lists_queries_left_out(tmp_path):
    judgments = tmp_path / "j.jsonl"
    text = J.read_text(encoding="utf-8")
    extra = json.loads(text.splitlines()[0])  # a label of the demo's, moved to a query without positives
    extra.update(query_id="zz-none", relevance=0)
    judgments.write_text(text + json.dumps(extra) + "\n", encoding="utf-8")
    code, out, err = run_cli(
        "compare", "--judgments", judgments, "--run", RUNS, "--test", "t", "--pairs", "all", "--metric", "recall"
    )
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.split()[:3] == ["system", "baseline", "metric"])
    assert "baseline mean" in header
    assert "every pair" in out
    assert "zz-none" in out and "left out" in out


@pytest.mark.parametrize("fmt, marker", [("markdown", "<sup>"), ("latex", "$^{")])
def test_layout_wide_writes_the_paper_table(fmt, marker):
    code, out, err = run_cli(
        *BASE,
        "--pairs",
        "all",
        "--metric",
        "ndcg_linear@10",
        "--metric",
        "ndcg@10",
        "--format",
        fmt,
        "--layout",
        "wide",
    )
    assert code == 0, err
    assert marker in out and "nDCG@10 (exp)" in out
    assert "exponential" in out and "linear" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--metric", "nonsense@10"], "--metric: metric 'nonsense@10' is neither"),
        (["--pairs", "some"], "--pairs"),
        (["--zero-method", "drop"], "--zero-method"),
        (["--layout", "tall"], "--layout"),
    ],
)
def test_bad_compare_options_are_one_line_usage_errors(args, message):
    code, _, err = run_cli(*BASE, *args)
    assert code == 2 and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1


def test_zero_method_reaches_the_wilcoxon_test():
    rows = {}
    for zm in ("wilcox", "zsplit"):
        code, out, err = run_cli(
            *BASE[:-2], "--test", "wilcoxon", "--zero-method", zm, "--metric", "hit_rate", "--json"
        )
        assert code == 0, err
        rows[zm] = json.loads(out)["comparisons"][0]["p_value"]
        ref = rev.compare(
            rev.read_judgments(J), rev.read_run(RUNS), test="wilcoxon", zero_method=zm, metrics=["hit_rate"]
        )
        assert rows[zm] == pytest.approx(float(ref.table["p_value"].iloc[0]), rel=1e-12)
    assert rows["wilcox"] != rows["zsplit"]  # hit_rate ties often: the choice matters
