"""The CLI forms of issue 28: usage errors beside --version, the small-sample warning in
``compare --format markdown``, and what the ``score --queries`` table counts."""

from __future__ import annotations

import pytest
from test_cli import run_cli


@pytest.mark.parametrize(
    "argv",
    [
        ["--version", "--bogus"],
        ["--bogus", "--version"],
        ["-v", "--bogus=1"],
        ["score", "--version", "--bogus"],
        ["drift", "-v", "--judgmnets", "x.jsonl"],
    ],
)
def test_an_unknown_option_is_a_usage_error_even_beside_version(argv):
    code, out, err = run_cli(*argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "unknown option" in err


@pytest.mark.parametrize("argv", [["--version"], ["-v"], ["score", "--version"], ["drift", "--version", "--fix"]])
def test_version_still_wins_over_a_missing_argument(argv):
    code, out, _ = run_cli(*argv)
    assert code == 0 and out.startswith("retrieval-eval ")


DEMO = __import__("pathlib").Path(__file__).resolve().parents[2] / "retrieval_eval" / "datasets" / "demo"


def _small_compare_files(tmp_path):
    import json

    j = tmp_path / "j.jsonl"
    r = tmp_path / "r.jsonl"
    j.write_text(
        "".join(json.dumps({"query_id": f"q{i}", "doc_uri": f"d{i}", "relevance": 1}) + "\n" for i in range(3))
    )
    rows = []
    for system, order in (("a", lambda i: [f"d{i}", "x"]), ("b", lambda i: ["x", f"d{i}"])):
        rows += [json.dumps({"system": system, "query_id": f"q{i}", "ranking": order(i)}) for i in range(3)]
    r.write_text("\n".join(rows) + "\n")
    return j, r


def test_compare_markdown_keeps_the_small_sample_warning(tmp_path):
    j, r = _small_compare_files(tmp_path)
    code, terminal, _ = run_cli("compare", "--judgments", j, "--run", r, "--baseline", "a", "--color", "never")
    assert code == 0
    warned = [line.strip()[2:] for line in terminal.splitlines() if line.strip().startswith("! ")]
    assert any("only 3 paired queries" in w for w in warned)
    code, markdown, _ = run_cli("compare", "--judgments", j, "--run", r, "--baseline", "a", "--format", "markdown")
    assert code == 0
    for w in warned:
        assert f"> **warning:** {w}" in markdown
    code, latex, _ = run_cli("compare", "--judgments", j, "--run", r, "--baseline", "a", "--format", "latex")
    assert any(line.startswith("% warning: only 3 paired queries") for line in latex.splitlines())


def test_score_table_says_what_each_n_counts():
    code, out, _ = run_cli(
        "score",
        "--judgments",
        DEMO / "judgments.jsonl",
        "--run",
        DEMO / "runs.jsonl",
        "--system",
        "dense",
        "--queries",
        DEMO / "queries.jsonl",
        "--color",
        "never",
    )
    assert code == 0
    lines = {
        line.split()[0]: line
        for line in out.splitlines()
        if line.strip() and not line.startswith(" -") and len(line.split()) > 1
    }
    assert "counted over" in out
    # 30 expect_none queries, 45 with positives in the demo (queries.jsonl)
    assert lines["negative_satisfaction"].rstrip().endswith("30 negatives")
    assert lines["positive_retention"].rstrip().endswith("45 positives")
    assert lines["auroc"].rstrip().endswith("75 queries")
    assert lines["recall@10"].split() == ["recall@10", "0.7119"]


def test_a_headline_never_says_separates_when_the_negative_satisfaction_gate_fails():
    import pandas as pd

    from retrieval_eval.cli.demo import calibration_verdict

    # the demo's bm25: AUROC 0.919, its cutoff refuses 70% of the OOD queries, the gate asks 80%
    row = pd.Series(
        {"rank_based": False, "auroc": 0.9189, "n_positive": 45, "n_negative": 30, "negative_satisfaction": 0.7}
    )
    assert calibration_verdict(row) == "separates OOD queries"
    said = calibration_verdict(row, negative_floor=0.8)
    assert "separates" not in said and "70%" in said and "80%" in said
    assert calibration_verdict(row, negative_floor=0.6) == "separates OOD queries"
