"""Markdown and LaTeX tables on the base install (retrieval_eval.viz.tables): escaping, missing
values, and every result type's to_markdown()/to_latex() without tabulate or jinja2."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from conftest import load_expected, spec_fixtures_dir

import retrieval_eval as rev
from retrieval_eval.viz import tables


def test_markdown_escapes_pipes_and_line_breaks():
    # a line break is a control character: shown as a visible escape (its backslash escaped
    # for Markdown, so it renders as \n), and the row stays whole
    out = tables.markdown(["name", "value"], [["a|b", 1.5], ["two\nlines", 2]])
    assert out == (
        "| name | value |\n| --- | ---: |\n| a\\|b | 1.5000 |\n| two\\\\nlines | 2 |\n"
    )  # renders as two\nlines


def test_latex_escapes_every_special_character():
    out = tables.latex(["metric"], [["hit_rate@10 & 50% of $#{x}~^\\<>"]])
    assert (
        r"hit\_rate@10 \& 50\% of \$\#\{x\}\textasciitilde{}\textasciicircum{}"
        r"\textbackslash{}\textless{}\textgreater{} \\"
    ) in out
    assert out.startswith("\\begin{table}[t]\n\\centering\n\\begin{tabular}{l}\n\\toprule\n")
    assert out.endswith("\\bottomrule\n\\end{tabular}\n\\end{table}\n")


def test_a_missing_value_is_na_not_zero():
    assert tables.cell(np.nan) == "n/a" and tables.cell(None) == "n/a" and tables.cell(pd.NA) == "n/a"
    assert tables.cell(0.0) == "0.0000" and tables.cell(True) == "yes" and tables.cell(np.int64(3)) == "3"


def test_evaluation_markdown_has_the_spec_numbers():
    fx = spec_fixtures_dir() / "basic"
    expected = load_expected("basic")["metrics"]
    ev = rev.evaluate(fx / "judgments.jsonl", fx / "run.jsonl", k=(3,))
    lines = ev.to_markdown().splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    row = [c.strip() for c in lines[2].strip("|").split("|")]
    got = dict(zip(header, row))
    assert got["system"] == "run" and got["n"] == "2"
    for name, value in expected.items():
        assert got[name] == f"{value:.4f}"


def test_evaluation_with_nothing_scored_shows_na_not_zero():
    ev = rev.evaluate(
        [{"query_id": "q1", "doc_uri": "d1", "relevance": 0}], [{"query_id": "q1", "ranking": ["d1"]}], k=(1,)
    )
    row = ev.to_markdown().splitlines()[2]
    assert row.startswith("| run | 0 | n/a | n/a |")  # no query had a positive: no number exists


def test_evaluation_tables_by_name_and_unknown_name_refused():
    fx = spec_fixtures_dir() / "basic"
    ev = rev.evaluate(fx / "judgments.jsonl", fx / "run.jsonl", k=(3,))
    assert ev.to_markdown("per_query").splitlines()[0].startswith("| system | query_id | stratum |")
    assert "\\begin{tabular}" in ev.to_latex("per_stratum", caption="c", label="tab:s")
    with pytest.raises(ValueError, match="table must be one of summary, per_stratum, per_query"):
        ev.to_markdown("everything")


def test_every_result_writes_markdown_and_latex_without_tabulate_or_jinja2():
    """tabulate and jinja2 made unimportable: the four results still write both formats."""
    code = textwrap.dedent("""
        import sys
        sys.modules["tabulate"] = None
        sys.modules["jinja2"] = None
        import retrieval_eval as rev
        from retrieval_eval.datasets import load_demo
        d = load_demo()
        results = [
            rev.evaluate(d.judgments, d.runs, k=(5, 10), queries=d.queries),
            rev.calibrate(d.judgments, d.runs, queries=d.queries),
            rev.drift(d.judgments, d.corpus_v2),
            rev.compare(d.judgments, d.runs, baseline="bm25", queries=d.queries),
        ]
        for r in results:
            md, tex = r.to_markdown(), r.to_latex()
            assert md.startswith("| ") and "\\\\begin{tabular}" in tex, type(r).__name__
        try:
            results[0].summary.to_markdown()
        except ImportError:
            print("pandas-needs-tabulate")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pandas-needs-tabulate", "ok"]


def test_drift_markdown_writes_one_row_per_status_and_the_share_not_valid():
    d = rev.load_demo()
    result = rev.drift(d.judgments, d.corpus_v2)
    md = result.to_markdown()
    for status in ("VALID", "RE_ANCHORABLE", "MERGED", "SPLIT", "ORPHANED"):
        assert f"| {status} | {result.summary[status.lower()]} |" in md
    assert f"{len(d.judgments)} labels, {result.summary.invalid_ratio:.1%} not VALID." in md
