"""The paper's table: ``Comparison.to_latex(layout="wide")`` / ``to_markdown(layout="wide")``
(issue 33 item 2). Means are checked against ``evaluate``'s summary and ranx, marks against ranx's
superscript rule, and the LaTeX is compiled when a TeX is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as rev
from retrieval_eval.viz import metric_label, paper_table


def _data(n_queries: int = 30, seed: int = 3):
    rng = np.random.default_rng(seed)
    jrows, rrows = [], []
    systems = ["bm25", "dense", "rrf", "x_&%$#y"]
    for q in range(n_queries):
        qid = f"q{q:02d}"
        grades = {f"d{d}": int(g) for d, g in enumerate(rng.choice([0, 1, 2, 3], size=15, p=[0.5, 0.3, 0.1, 0.1]))}
        grades["d0"] = max(grades["d0"], 1)
        jrows += [{"query_id": qid, "doc_id": d, "relevance": g} for d, g in grades.items()]
        for i, s in enumerate(systems):
            docs = [f"d{d}" for d in rng.permutation(40)[:20]]
            score = np.array([grades.get(d, 0) * (0.2 + 0.4 * i) for d in docs]) + rng.random(20)
            rrows += [
                {"system": s, "query_id": qid, "doc_id": docs[o], "score": float(score[o])} for o in np.argsort(-score)
            ]
    return pd.DataFrame(jrows), pd.DataFrame(rrows), systems


J, R, SYSTEMS = _data()


@pytest.fixture(scope="module")
def cmp_all():
    return rev.compare(
        J,
        R,
        k=[5, 10],
        metrics=["ndcg_linear", "ndcg", "recall", "map@20", "P_5"],
        pairs="all",
        test="t",
        correction="holm",
    )


def _cells(md: str):
    lines = md.splitlines()
    header = lines[0].strip("| ").split(" | ")
    rows = [line.strip("| ").split(" | ") for line in lines[2:] if line.startswith("|")]
    return header, rows


def test_a_row_a_system_a_column_a_metric_grouped_by_cutoff(cmp_all):
    header, rows = _cells(cmp_all.to_markdown(layout="wide"))
    assert header[:2] == ["#", "System"]
    assert header[2:] == [
        "nDCG@5",
        "nDCG@5 (exp)",
        "Recall@5",
        "P@5",
        "nDCG@10",
        "nDCG@10 (exp)",
        "Recall@10",
        "MAP@20",
    ]
    assert [r[0] for r in rows] == ["a", "b", "c", "d"]
    assert [r[1] for r in rows] == ["bm25", "dense", "rrf", "x_&amp;%$#y"]  # HTML-escaped in Markdown


def test_values_are_the_evaluations_means_and_the_best_of_each_column_is_bold(cmp_all):
    header, rows = _cells(cmp_all.to_markdown(layout="wide"))
    summary = rev.evaluate(J, R, k=(5, 10, 20), measures=["P_5"]).summary
    lin = rev.evaluate(J, R, k=(5, 10), gain="linear").summary
    col_of = {
        "nDCG@5": ("lin", "ndcg_linear@5"),
        "nDCG@5 (exp)": ("exp", "ndcg@5"),
        "Recall@5": ("exp", "recall@5"),
        "P@5": ("exp", "P_5"),
        "nDCG@10": ("lin", "ndcg_linear@10"),
        "nDCG@10 (exp)": ("exp", "ndcg@10"),
        "Recall@10": ("exp", "recall@10"),
        "MAP@20": ("exp", "map@20"),
    }
    for j, h in enumerate(header[2:], start=2):
        which, col = col_of[h]
        means = (lin if which == "lin" else summary)[col]
        best = means.round(4).max()
        for system, row in zip(SYSTEMS, rows):
            text = row[j]
            value = float(re.sub(r"<sup>.*</sup>|\*", "", text))
            assert value == pytest.approx(means[system], abs=5e-5)
            assert text.startswith("**") == (round(means[system], 4) == best), (h, system)


def test_superscripts_follow_ranx_rule_on_the_same_data(cmp_all):
    ranx = pytest.importorskip("ranx")
    qrels = {q: dict(zip(g["doc_id"], g["relevance"].astype(int))) for q, g in J.groupby("query_id")}
    runs = [
        ranx.Run({q: dict(zip(g["doc_id"], g["score"])) for q, g in R[R["system"] == s].groupby("query_id")}, name=s)
        for s in SYSTEMS
    ]
    # ranx marks a value significant at max_p without correction: compare ours without one
    c = rev.compare(J, R, metrics=["ndcg_linear@10", "recall@10"], pairs="all", test="t", correction="none", alpha=0.05)
    rep = ranx.compare(ranx.Qrels(qrels), runs, metrics=["ndcg@10", "recall@10"], stat_test="student", max_p=0.05)
    header, rows = _cells(c.to_markdown(layout="wide"))
    latex_marks = re.findall(r"(?:\}|\d)(\$\^\{[a-d]+\}\$)?(?: &| \\\\)", c.to_latex(layout="wide"))
    letters = dict(zip(SYSTEMS, "abcd"))
    seen = 0
    for row, system in zip(rows, SYSTEMS):
        for h, text, metric in zip(header[2:], row[2:], ["ndcg@10", "recall@10"]):
            ours = re.search(r"<sup>(\w+)</sup>", text)
            theirs = "".join(
                letters[o]
                for o in SYSTEMS
                if o != system
                and rep.comparisons[system, o][metric]["significant"]
                and rep.results[system][metric] > rep.results[o][metric]
            )
            assert (ours.group(1) if ours else "") == theirs, (system, h)
            seen += bool(theirs)
    assert seen >= 2  # the data do have significant differences
    assert sum(bool(m) for m in latex_marks) == seen


def test_with_a_baseline_only_pairs_with_it_are_marked():
    c = rev.compare(J, R, metrics=["ndcg_linear@10"], baseline="bm25", test="t")
    _, rows = _cells(c.to_markdown(layout="wide"))
    marks = {r[1]: re.findall(r"<sup>(\w+)</sup>", r[2]) for r in rows}
    assert all(set("".join(m)) <= {"a"} for s, m in marks.items() if s != "bm25")
    assert "each system against bm25" in c.to_markdown(layout="wide")


def test_the_caption_states_test_correction_alpha_queries_and_every_gain(cmp_all):
    md = cmp_all.to_markdown(layout="wide")
    caption = md.strip().splitlines()[-1]
    for part in (
        "paired t-test",
        "Holm correction across 48 comparisons",
        "alpha 0.05",
        "30 queries with positives",
        "every pair of systems",
        "nDCG@5 (exp), nDCG@10 (exp): exponential gain 2^g - 1",
        "nDCG@5, nDCG@10: linear gain g (trec_eval's)",
    ):
        assert part in caption, part
    tex = cmp_all.to_latex(layout="wide", caption=None, label="tab:x")
    assert r"exponential gain $2^g - 1$" in tex and r"\label{tab:x}" in tex
    assert r"\multicolumn{4}{c}{@5}" in tex and r"\cmidrule(lr){3-6}" in tex


def test_nDCG_says_its_gain_wherever_it_is_not_linear():
    assert metric_label("ndcg@10") == ("nDCG@10 (exp)", 10, "exponential")
    assert metric_label("ndcg_linear@10") == ("nDCG@10", 10, "linear")
    assert metric_label("ndcg_cut_10") == ("nDCG@10", 10, "linear")
    assert metric_label("faithfulness") == ("faithfulness", None, None)


def test_labels_rename_systems_and_metrics_and_escape_them():
    c = rev.compare(J, R, metrics=["ndcg@10"], pairs="all", test="t")
    md = c.to_markdown(layout="wide", labels={"bm25": "BM25 | lexical", "ndcg@10": "nDCG@10 (2^g)"})
    assert r"BM25 \| lexical" in md and "nDCG@10 (2^g)" in md
    tex = c.to_latex(layout="wide", labels={"dense": "Dense_v2"})
    assert r"Dense\_v2" in tex and r"x\_\&\%\$\#y" in tex


def test_one_cutoff_has_no_group_row_and_a_bad_layout_is_refused():
    c = rev.compare(J, R, metrics=["ndcg@10", "recall@10"], pairs="all", test="t")
    assert r"\multicolumn" not in c.to_latex(layout="wide")
    with pytest.raises(ValueError, match="layout"):
        c.to_markdown(layout="tall")
    with pytest.raises(ValueError, match="fmt"):
        paper_table(c, "html")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex installed")
def test_the_latex_compiles(cmp_all, tmp_path):
    doc = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + cmp_all.to_latex(layout="wide", labels={"bm25": "BM25"})
        + cmp_all.to_latex()
        + "\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_labels_reach_the_comparisons_plots():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = rev.compare(J, R, metrics=["ndcg@10"], pairs="all", test="t")
    labels = {"bm25": "BM25", "dense": "Dense", "ndcg@10": "nDCG@10 (exp)"}
    forest = c.plot("forest", labels=labels)
    ticks = [t.get_text() for t in forest.ax_.get_yticklabels()]
    assert ticks[0] == "Dense \u2212 BM25 \u00b7 nDCG@10 (exp)" and len(ticks) == len(c.table)
    per_query = c.plot("per_query", system="dense", labels=labels)
    assert "Dense" in per_query.ax_.get_title() and "BM25" in per_query.ax_.get_title()
    base = rev.compare(J, R, metrics=["ndcg@10"], baseline="bm25", test="t").plot("forest", labels=labels)
    assert "BM25" in base.ax_.get_xlabel()
    plt.close("all")
