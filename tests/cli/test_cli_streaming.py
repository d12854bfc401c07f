"""``retrieval-eval score`` streams a large run (``--chunk-rows``, or automatically above
``cli.score.STREAM_BYTES``) and prints exactly what the in-memory path prints."""

from __future__ import annotations

import json

import pytest
from streaming_cases import make_case
from test_cli import run_cli

import retrieval_eval.io as formats
from retrieval_eval.analysis.evaluation import streaming
from retrieval_eval.cli import score as score_cmd


def _report(text: str) -> dict:
    data = json.loads(text)
    data.pop("generated_at", None)
    for sub in data.get("systems", {}).values():
        sub.pop("generated_at", None)
    return data


@pytest.fixture
def files(tmp_path):
    j, r = make_case(11, systems=("bm25",))
    jp, rp = tmp_path / "j.jsonl", tmp_path / "run.trec"
    formats.write_judgments(j, jp)
    rp.write_text(formats.to_trec_run(r))
    return jp, rp


@pytest.fixture
def spy(monkeypatch):
    calls = []
    real = streaming.evaluate_streamed

    def wrapped(*args, **kwargs):
        calls.append(kwargs["chunk_rows"])
        return real(*args, **kwargs)

    monkeypatch.setattr(streaming, "evaluate_streamed", wrapped)
    return calls


def test_a_run_above_the_threshold_is_streamed_with_the_same_report(files, spy, monkeypatch):
    jp, rp = files
    code, whole, _ = run_cli("score", "--judgments", jp, "--run", rp, "--json")
    assert spy == []
    monkeypatch.setattr(score_cmd, "STREAM_BYTES", rp.stat().st_size)
    monkeypatch.setattr(score_cmd, "STREAM_CHUNK_ROWS", 13)
    code2, streamed, _ = run_cli("score", "--judgments", jp, "--run", rp, "--json")
    assert spy == [13]
    assert (code2, _report(streamed)) == (code, _report(whole))


def test_chunk_rows_streams_a_small_run(files, spy):
    jp, rp = files
    code, whole, _ = run_cli("score", "--judgments", jp, "--run", rp, "--json", "-k", "5")
    code2, streamed, _ = run_cli("score", "--judgments", jp, "--run", rp, "--json", "-k", "5", "--chunk-rows", "7")
    assert spy == [7]
    assert (code2, _report(streamed)) == (code, _report(whole))


def test_a_ranking_in_two_places_exits_2_with_one_line(tmp_path):
    jp, rp = tmp_path / "j.jsonl", tmp_path / "run.trec"
    jp.write_text('{"query_id": "q1", "doc_uri": "a", "relevance": 1}\n')
    rp.write_text("q1 Q0 a 1 2 s\nq2 Q0 b 1 2 s\nq1 Q0 c 2 1 s\n")
    code, _, err = run_cli("score", "--judgments", jp, "--run", rp, "--chunk-rows", "1")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"retrieval-eval: error: {rp}: the ranking of query q1")


def test_chunk_rows_refuses_what_needs_the_run_whole(files):
    jp, rp = files
    code, _, err = run_cli("score", "--judgments", jp, "--run", rp, "--chunk-rows", "5", "--system", "bm25")
    assert code == 2 and "--chunk-rows cannot go with --system, --queries or several --run" in err
