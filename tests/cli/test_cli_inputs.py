"""The CLI takes what the library takes (docs/cli.md): every labels and run format through
every verb, -k lists, --order, --per-query, --format, gate hints, and validate's grouping.
Bad input runs as real processes (``python -m retrieval_eval``): exit codes and stderr lines as
CI sees them; the rest calls ``main`` in-process (the same code path, without start-up)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import spec_fixtures_dir

import retrieval_eval as rev
from retrieval_eval.cli.app import main
from retrieval_eval.io import writers

PY = sys.executable
DATA = Path(__file__).parent.parent / "data"
BEIR = DATA / "beir-scifact-mini"
#: A TREC run over the BEIR folder's query and corpus ids (bm25-shaped scores, no ties).
BEIR_RUN = DATA / "beir-scifact-mini.run"
PYTREC = DATA / "pytrec_eval"
PT = DATA / "pyterrier"


def cli_process(*argv):
    """The real console entry point in its own process: exit code and stderr as CI sees them."""
    proc = subprocess.run([PY, "-m", "retrieval_eval", *map(str, argv)], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def cli(*argv):
    """``main`` in this process (the same code path as the console script, minus start-up)."""
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def fx(case: str, name: str) -> Path:
    return spec_fixtures_dir() / case / name


def report(stdout: str) -> dict:
    return json.loads(stdout)


# ---------------------------------------------------------------------------------------------
# Labels in every format, through every verb that needs them
# ---------------------------------------------------------------------------------------------


def test_score_reads_a_beir_folder_as_labels():
    code, out, err = cli_process("score", "--qrels", BEIR, "--run", BEIR_RUN, "--json")
    assert err == "" and code == 0
    assert report(out)["judgments"]["labels"] == 5 and report(out)["judgments"]["queries"] == 4


def test_beir_split_is_chosen_with_split():
    code, out, _ = cli("score", "--judgments", BEIR, "--split", "dev", "--run", BEIR_RUN, "--json")
    assert code == 0 and report(out)["judgments"]["labels"] == 1


def test_judgments_option_reads_trec_qrels_too():
    code, out, err = cli("score", "--judgments", fx("qrels", "trec.qrels"), "--run", fx("basic", "run.jsonl"), "--json")
    assert err == "" and report(out)["judgments"]["labels"] == 3


@pytest.mark.parametrize(
    "verb_args",
    [
        ["compare", "--run", PT / "results.csv", "--run", PYTREC / "run.json"],
        ["calibrate", "--run", PYTREC / "run.json", "--queries", None],
        ["validate"],
        ["convert", "--to", "qrels"],
    ],
)
def test_every_labels_verb_takes_qrels(verb_args, tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"query_id": "q1"}\n{"query_id": "q3", "expect_none": true}\n', encoding="utf-8")
    argv = [queries if a is None else a for a in verb_args]
    code, out, err = cli(*argv, "--qrels", PYTREC / "qrels.json")
    assert code in (0, 1) and "error" not in err, err
    assert out


def test_drift_takes_qrels_but_fix_needs_judgments_jsonl(tmp_path):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(
        '{"chunks": [{"chunk_id": "c1:' + "0" * 32 + '", "doc_uri": "d1", "text": "x"}]}', encoding="utf-8"
    )
    code, _, err = cli("drift", "--qrels", fx("qrels", "trec.qrels"), "--corpus", corpus)
    assert code == 1 and err == ""
    code, _, err = cli("drift", "--qrels", fx("qrels", "trec.qrels"), "--corpus", corpus, "--fix")
    assert code == 2 and "--fix rewrites judgments JSONL" in err


# ---------------------------------------------------------------------------------------------
# Runs in every format, several at once
# ---------------------------------------------------------------------------------------------


def _ndcg3(out: str, system: str | None = None) -> float:
    data = report(out)
    if system is not None:
        data = data["systems"][system]
    return data["metrics"]["ndcg@3"]["value"]


def test_run_formats_score_alike(tmp_path):
    """The same ranking as a pytrec_eval JSON dict, a TREC run, a parquet and a CSV table."""
    run = rev.as_run(json.loads((PYTREC / "run.json").read_text()))
    (tmp_path / "run.trec").write_text(rev.to_trec_run(run), encoding="utf-8")
    writers.write_parquet(run, tmp_path / "run.parquet")
    run.to_csv(tmp_path / "run.csv", index=False)
    values = []
    for path in (PYTREC / "run.json", tmp_path / "run.trec", tmp_path / "run.parquet", tmp_path / "run.csv"):
        code, out, err = cli("score", "--qrels", PYTREC / "qrels.json", "--run", path, "-k", "3", "--json")
        assert code == 0, err
        values.append(_ndcg3(out))
    assert values[1:] == [values[0]] * 3


def test_several_runs_are_several_systems_named_after_their_files(tmp_path):
    a, b = tmp_path / "bm25.jsonl", tmp_path / "dense.jsonl"
    a.write_text('{"query_id": "q1", "ranking": ["d1"]}\n', encoding="utf-8")
    b.write_text('{"query_id": "q1", "ranking": ["d2"]}\n', encoding="utf-8")
    code, out, _ = cli("score", "--qrels", PYTREC / "qrels.json", "--run", a, "--run", b, "-k", "1", "--json")
    systems = report(out)["systems"]
    assert systems["bm25"]["metrics"]["precision@1"]["value"] == 0.5  # q1 hit, q2 missing
    assert systems["dense"]["metrics"]["precision@1"]["value"] == 0.0


# ---------------------------------------------------------------------------------------------
# Cutoffs, gates, order
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ks", [["-k", "1,3"], ["-k", "3", "-k", "1"], ["-k", "1,3", "-k", "3"]])
def test_every_cutoff_is_scored_in_one_call(ks):
    code, out, _ = cli(
        "score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("basic", "run.jsonl"), *ks, "--json"
    )
    metrics = report(out)["metrics"]
    expected = json.loads(fx("basic", "expected.json").read_text())
    for name, value in {**expected["metrics"], **expected["metrics_k1"]}.items():
        assert metrics[name]["value"] == pytest.approx(value)


def test_bad_cutoff_list_is_a_usage_error():
    code, _, err = cli(
        "score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("basic", "run.jsonl"), "-k", "5,x"
    )
    assert code == 2 and err.strip() == (
        "retrieval-eval: error: -k expects positive integers separated by commas (5,10,100), got '5,x'"
    )


def test_a_gate_on_an_uncomputed_cutoff_suggests_the_k():
    code, out, _ = cli(
        "score",
        "--judgments",
        fx("basic", "judgments.jsonl"),
        "--run",
        fx("basic", "run.jsonl"),
        "-k",
        "10",
        "--gate",
        "recall@5:0.5",
        "--json",
    )
    verdict = report(out)["verdict"]
    assert code == 1 and verdict["gates"][0]["status"] == "INDETERMINATE"
    assert any("run with -k 5,10 to compute it" in r for r in verdict["reasons"])


def test_tied_scores_read_by_rank_warn_once_with_a_count(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 2.0 r\nq2 Q0 d9 1 1.0 r\nq2 Q0 d8 2 0.5 r\n", encoding="utf-8")
    code, _, err = cli("score", "--qrels", PYTREC / "qrels.json", "--run", run, "--json")
    assert err.splitlines() == [
        f"retrieval-eval: warning: {run}: 1 of 2 rankings have tied scores; they are read "
        "by rank (the file's order); --order score orders ties by doc id descending, "
        "as trec_eval does"
    ]
    code, _, err = cli("score", "--qrels", PYTREC / "qrels.json", "--run", run, "--order", "score", "--json")
    assert err == ""


def test_order_score_ranks_ties_as_trec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = json.loads((PYTREC / "qrels.json").read_text())
    run = {"q1": {"d1": 2.0, "d2": 2.0, "d4": 1.0}}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"P_1"}).evaluate(run)["q1"]["P_1"]
    text = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d4 3 1.0 r\n"  # file order: d1 first (relevant)
    by_rank = rev.evaluate(qrels, rev.from_trec_run(text), k=(1,)).per_query
    by_score = rev.evaluate(qrels, rev.from_trec_run(text, order="score"), k=(1,)).per_query
    assert by_rank.loc[by_rank["query_id"] == "q1", "precision@1"].item() == 1.0
    assert by_score.loc[by_score["query_id"] == "q1", "precision@1"].item() == oracle == 0.0  # d2 first


def test_order_score_on_the_cli(tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "q1", "ranking": ["d1", "d2"], "scores": [2.0, 2.0]}\n', encoding="utf-8")
    p1 = {}
    for order in ("rank", "score"):
        _, out, _ = cli("score", "--qrels", PYTREC / "qrels.json", "--run", run, "-k", "1", "--order", order, "--json")
        p1[order] = report(out)["metrics"]["precision@1"]["value"]
    assert p1 == {"rank": 0.5, "score": 0.0}  # q2 missing; by score d2 (grade 0) comes first


# ---------------------------------------------------------------------------------------------
# Per query, formats
# ---------------------------------------------------------------------------------------------


def _per_query_files(tmp_path):
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(
        "\n".join(
            json.dumps(j)
            for j in [
                {"query_id": "q1", "doc_uri": "d1", "relevance": 1},
                {"query_id": "q2", "doc_uri": "d2", "relevance": 1},
                {"query_id": "q3", "doc_uri": "d3", "relevance": 0},
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "q1", "ranking": ["d1", "d1", "d5"]}\n', encoding="utf-8")
    return judgments, run


def test_per_query_table_lists_missing_excluded_and_repeating(tmp_path):
    judgments, run = _per_query_files(tmp_path)
    code, out, _ = cli("score", "--judgments", judgments, "--run", run, "-k", "2", "--per-query")
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["query_id", "precision@2", "recall@2"]
    assert lines[2].split()[:3] == ["q1", "0.5000", "1.0000"]
    assert "  missing (judged, no ranking: scored zero): 1: q2" in lines
    assert "  excluded (no label at the threshold, or expect_none): 1: q3" in lines
    assert "  repeating (a key repeated in the ranking: first occurrence counted): 1: q1" in lines


def test_per_query_json_and_csv(tmp_path):
    judgments, run = _per_query_files(tmp_path)
    _, out, _ = cli("score", "--judgments", judgments, "--run", run, "-k", "2", "--per-query", "--format", "json")
    data = json.loads(out)
    assert data["queries"] == {"run": {"missing": ["q2"], "excluded": ["q3"], "repeating": ["q1"]}}
    assert [r["query_id"] for r in data["per_query"]] == ["q1", "q2", "q3"]
    assert data["per_query"][1]["recall@2"] == 0.0 and data["per_query"][1]["missing"] is True
    _, out, _ = cli("score", "--judgments", judgments, "--run", run, "-k", "2", "--per-query", "--format", "csv")
    frame = pd.read_csv(io.StringIO(out))
    assert frame["query_id"].tolist() == ["q1", "q2", "q3"] and frame["precision@2"].tolist()[0] == 0.5


@pytest.mark.parametrize(
    "fmt, starts",
    [
        ("markdown", "| system | n | precision@3 |"),
        ("latex", "\\begin{table}[t]"),
        ("csv", "system,n,precision@3,"),
        ("json", '[\n  {\n    "system": "run",'),
    ],
)
def test_score_summary_formats(fmt, starts):
    code, out, _ = cli(
        "score",
        "--judgments",
        fx("basic", "judgments.jsonl"),
        "--run",
        fx("basic", "run.jsonl"),
        "-k",
        "3",
        "--format",
        fmt,
    )
    assert code == 0 and out.startswith(starts)


@pytest.mark.parametrize("verb", ["compare", "calibrate", "drift"])
def test_other_verbs_write_markdown(verb, tmp_path):
    demo = Path(rev.datasets.demo_path())
    argv = {
        "compare": ["--run", demo / "runs.jsonl", "--baseline", "bm25", "--queries", demo / "queries.jsonl"],
        "calibrate": ["--run", demo / "runs.jsonl", "--queries", demo / "queries.jsonl"],
        "drift": ["--corpus", demo / "corpus_v2.json"],
    }[verb]
    code, out, _ = cli(verb, "--judgments", demo / "judgments.jsonl", *argv, "--format", "markdown")
    assert out.startswith("| ") and "| --- |" in out


def test_convert_to_parquet_round_trips(tmp_path):
    out_path = tmp_path / "j.parquet"
    code, _, err = cli("convert", "--qrels", BEIR, "--to", "parquet", "--out", out_path)
    assert code == 0, err
    back = rev.as_judgments(str(out_path))
    assert back["doc_uri"].tolist() == ["4983", "5836", "7912", "18670", "19238"]
    assert back["query"].iloc[0] == "0-dimensional biomaterials show inductive properties."
    code, _, err = cli("convert", "--run", PT / "results.csv", "--to", "parquet")
    assert code == 2 and "give --out" in err


# ---------------------------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------------------------


def _many_queries(tmp_path, n=12):
    qrels = tmp_path / "many.qrels"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(n)), encoding="utf-8")
    return qrels


def test_validate_qrels_does_not_warn_about_query_text_qrels_cannot_carry(tmp_path):
    code, out, _ = cli("validate", "--qrels", _many_queries(tmp_path), "--json")
    assert not [i for i in json.loads(out)["issues"] if i["code"] == "missing-query-text"]


def test_validate_qrels_with_queries_checks_their_text(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "".join(json.dumps({"query_id": f"q{i}", "query": "text"}) + "\n" for i in range(10)), encoding="utf-8"
    )
    code, out, _ = cli("validate", "--qrels", _many_queries(tmp_path), "--queries", queries, "--json")
    missing = [i["message"] for i in json.loads(out)["issues"] if i["code"] == "missing-query-text"]
    assert missing == ["query q10 has no query text on any row", "query q11 has no query text on any row"]


def test_validate_groups_a_per_query_warning_into_one_line_and_json_keeps_all(tmp_path):
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(
        "".join(json.dumps({"query_id": f"q{i:02d}", "doc_uri": "d", "relevance": 1}) + "\n" for i in range(30)),
        encoding="utf-8",
    )
    code, out, _ = cli("validate", "--judgments", judgments, "--color", "never")
    lines = [ln for ln in out.splitlines() if "missing-query-text" in ln]
    assert len(lines) == 1
    assert (
        "30 times, e.g. query q00 has no query text on any row; queries q00, q01, q02, q03, q04, ... "
        "(--json lists every one)"
    ) in lines[0]
    _, out, _ = cli("validate", "--judgments", judgments, "--json")
    assert sum(i["code"] == "missing-query-text" for i in json.loads(out)["issues"]) == 30


# ---------------------------------------------------------------------------------------------
# Bad input: exit 2, one line naming the file and what reads it
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            lambda t: ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("qrels", "trec.qrels")],
            "trec.qrels: looks like TREC qrels (labels), not a run; pass it with --judgments or --qrels",
        ),
        (
            lambda t: ["score", "--judgments", fx("basic", "run.jsonl"), "--run", fx("basic", "run.jsonl")],
            "run.jsonl: looks like a JSONL run (run), not labels; pass it with --run",
        ),
        (
            lambda t: ["score", "--judgments", BEIR / "queries.jsonl", "--run", fx("basic", "run.jsonl")],
            "queries.jsonl: looks like BEIR queries.jsonl (_id, text) (queries), not labels; pass it with --queries",
        ),
        (
            lambda t: ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", BEIR],
            "beir-scifact-mini: is a directory, expected a file",
        ),
        (
            lambda t: [
                "score",
                "--judgments",
                fx("basic", "judgments.jsonl"),
                "--run",
                fx("basic", "run.jsonl"),
                "--split",
                "dev",
            ],
            "--split applies to a BEIR folder only",
        ),
        (
            lambda t: ["score", "--judgments", t["beir"], "--run", fx("basic", "run.jsonl")],
            "queries.jsonl:2: invalid JSON",
        ),
        (
            lambda t: ["score", "--judgments", t["parquet"], "--run", fx("basic", "run.jsonl")],
            "j.parquet: row 2: relevance must be >= 0",
        ),
        (
            lambda t: ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", t["csv"]],
            "run.csv:3: score must be a number",
        ),
        (
            lambda t: ["score", "--judgments", PYTREC / "run.json", "--run", fx("basic", "run.jsonl")],
            "is a run; pass it as the run (--run, as_run)",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, argv, says):
    import pyarrow as pa
    import pyarrow.parquet as pq

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n", encoding="utf-8")
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "a"}\n{"_id": \n', encoding="utf-8")
    pq.write_table(
        pa.table({"query_id": ["q", "q"], "doc_uri": ["a", "b"], "relevance": [1, -1]}), tmp_path / "j.parquet"
    )
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,1\nq1,d2,x\n", encoding="utf-8")
    code, out, err = cli_process(*argv({"beir": beir, "parquet": tmp_path / "j.parquet", "csv": tmp_path / "run.csv"}))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("retrieval-eval: error: ") and says in err, err


def test_json_and_format_are_one_output_at_a_time():
    base = ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("basic", "run.jsonl")]
    code, _, err = cli(*base, "--json", "--format", "csv")
    assert code == 2 and "give --json or --format, not both" in err
    code, _, err = cli(*base, "--json", "--per-query")
    assert code == 2 and "use --format json instead of --json" in err
