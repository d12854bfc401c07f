"""``retrieval-eval diff`` and ``retrieval-eval pool`` (issue 29): the JSON shape the issue
gives, values against pytrec_eval, a self-contained page, a to-label file written atomically,
and exit 2 with one line on bad input."""

from __future__ import annotations

import io
import json
import re

import pytest
import pytrec_eval

import retrieval_eval as rev
from retrieval_eval.cli import app as cli
from retrieval_eval.datasets import demo_path

J = str(demo_path("judgments.jsonl"))
RUNS = str(demo_path("runs.jsonl"))
CORPUS = str(demo_path("corpus.json"))


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _split_runs(tmp_path):
    d = rev.load_demo()
    paths = []
    for system in ("dense", "bm25"):
        path = tmp_path / f"{system}.jsonl"
        rev.write_run(d.runs[d.runs["system"] == system], path)
        paths.append(path)
    return paths


def test_diff_json_is_the_issues_shape_and_agrees_with_pytrec_eval(tmp_path):
    a, b = _split_runs(tmp_path)
    code, out, err = run_cli("diff", "--judgments", J, "--run", a, "--run", b, "--metric", "ndcg_cut_10", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["metric", "a", "b", "queries"] and data["metric"] == "ndcg_cut_10"
    assert all(list(q) == ["query_id", "a", "b", "delta", "moves"] for q in data["queries"])
    assert all(list(m) == ["key", "grade", "rank_a", "rank_b"] for q in data["queries"] for m in q["moves"])
    d = rev.load_demo()
    qrel = {}
    for q, k, g in zip(d.judgments["query_id"], d.judgments["chunk_id"], d.judgments["relevance"]):
        qrel.setdefault(q, {})[k] = int(g)
    run = {}
    bm25 = d.runs[d.runs["system"] == "bm25"]
    for q, k, r in zip(bm25["query_id"], bm25["doc_id"], bm25["rank"]):
        run.setdefault(q, {})[k] = -float(r)  # the run's own order, no ties
    want = pytrec_eval.RelevanceEvaluator(qrel, {"ndcg_cut.10"}).evaluate(run)
    got = {q["query_id"]: q["b"] for q in data["queries"]}
    assert got.keys() == want.keys()
    assert all(got[q] == pytest.approx(want[q]["ndcg_cut_10"]) for q in got)
    deltas = [abs(q["delta"]) for q in data["queries"]]
    assert deltas == sorted(deltas, reverse=True)


def test_diff_two_systems_of_one_run(tmp_path):
    code, out, err = run_cli(
        "diff", "--judgments", J, "--run", RUNS, "--system", "dense", "--system", "bm25", "--top", "3"
    )
    assert code == 0, err
    assert out.splitlines()[0] == "ndcg@10: dense (a) 0.7246 -> bm25 (b) 0.6021 over 45 queries"
    assert "dm-11" in out.splitlines()[2] and "42 more" in out


def test_diff_out_writes_one_self_contained_page(tmp_path):
    page = tmp_path / "diff.html"
    code, out, err = run_cli(
        "diff", "--judgments", J, "--run", RUNS, "--system", "dense", "--system", "bm25", "--out", page, "--top", "4"
    )
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 4
    assert "<script" not in text.lower() and not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", text)
    assert f"wrote {page}" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--run", RUNS], "the runs hold 3 (dense, bm25, rrf); choose them with --system A --system B"),
        (["--run", RUNS, "--system", "dense", "--system", "nope"], "unknown system 'nope'"),
        (["--run", RUNS, "--system", "dense"], "--system is given twice"),
        (["--run", RUNS, "--system", "dense", "--system", "bm25", "--metric", "bogus"], "unknown measure 'bogus'"),
        (["--run", RUNS, "--system", "dense", "--system", "bm25", "-k", "0"], "-k"),
        (["--run", RUNS, "--system", "dense", "--system", "bm25", "--json", "--out", "x.html"], "not both"),
        (["--run", RUNS, "--system", "dense", "--system", "bm25", "--out", J], "would destroy that input"),
    ],
)
def test_diff_bad_input_exits_2_with_one_line(args, message):
    code, out, err = run_cli("diff", "--judgments", J, *args)
    assert code == 2 and out == ""
    lines = [x for x in err.splitlines() if "warning" not in x]
    assert len(lines) == 1 and lines[0].startswith("retrieval-eval: error: ") and message in lines[0]


def test_diff_missing_file_exits_2():
    code, _, err = run_cli("diff", "--judgments", "nope.jsonl", "--run", RUNS)
    assert code == 2 and "nope.jsonl" in err


def test_pool_writes_the_to_label_file_atomically_and_it_reads_back(tmp_path):
    path = tmp_path / "to-label.jsonl"
    code, out, err = run_cli(
        "pool", "--judgments", J, "--run", RUNS, "-k", "3", "--corpus", CORPUS, "--limit", "25", "--out", path
    )
    assert code == 0, err
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 25 and all("relevance" not in x and x["chunk_text"] for x in lines)
    assert "wrote" in out and "25 unjudged entries" in out
    path.write_text("".join(json.dumps({**x, "relevance": 0}) + "\n" for x in lines), encoding="utf-8")
    assert len(rev.read_judgments(path)) == 25
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_pool_to_stdout_matches_the_library():
    code, out, err = run_cli("pool", "--judgments", J, "--run", RUNS, "-k", "2")
    assert code == 0, err
    d = rev.load_demo()
    assert out == rev.label_pool(d.judgments, d.runs, k=2).to_jsonl()


def test_pool_bad_measure_exits_2():
    code, out, err = run_cli("pool", "--judgments", J, "--run", RUNS, "--metric", "zz")
    assert code == 2 and "unknown measure 'zz'" in err and out == ""
