"""``retrieval-eval fuse`` (issue 33 item 3): the file it writes holds what ``rev.fuse`` gives
(itself checked against ranx.fuse in tests/analysis/test_fusion.py); bad input is one line,
exit 2."""

from __future__ import annotations

import io

import numpy as np
import pytest

import retrieval_eval as rev
from retrieval_eval.cli.app import main


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def runs(tmp_path):
    rng = np.random.default_rng(5)
    paths = {}
    for name in ("bm25", "dense"):
        lines = []
        for q in range(6):
            docs = rng.choice(20, size=8, replace=False)
            scores = np.sort(rng.uniform(0, 10, size=8))[::-1]
            lines += [f"q{q} Q0 d{d} {r} {s:.6f} {name}" for r, (d, s) in enumerate(zip(docs, scores), 1)]
        paths[name] = tmp_path / f"{name}.trec"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def _frame(path):
    r = rev.read_trec_run(path) if str(path).endswith(".trec") else rev.read_run(path)
    return r.sort_values(["query_id", "doc_id"]).reset_index(drop=True)


@pytest.mark.parametrize(
    "argv, kwargs",
    [
        (["--method", "rrf"], {"method": "rrf"}),
        (["--method", "mnz", "--norm", "zmuv"], {"method": "mnz", "norm": "zmuv"}),
        (
            ["--method", "wsum", "--weight", "bm25=0.3", "--weight", "dense=0.7", "--norm", "max"],
            {"method": "wsum", "norm": "max", "weights": {"bm25": 0.3, "dense": 0.7}},
        ),
        (["--method", "rrf", "--rrf-k", "10", "--name", "fused"], {"method": "rrf", "k": 10, "name": "fused"}),
    ],
)
@pytest.mark.parametrize("suffix", [".trec", ".jsonl"])
def test_fuse_writes_what_the_api_fuses(runs, tmp_path, argv, kwargs, suffix):
    target = tmp_path / f"out{suffix}"
    code, out, err = cli("fuse", "--run", runs["bm25"], "--run", runs["dense"], *argv, "--out", target)
    assert (code, err) == (0, "")
    assert f"fused bm25, dense by {kwargs['method']}" in out
    expected = rev.fuse({s: rev.read_trec_run(p) for s, p in runs.items()}, **kwargs)
    got = _frame(target)
    want = expected.sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    assert got["doc_id"].tolist() == want["doc_id"].tolist()
    assert np.allclose(got["score"].to_numpy(), want["score"].to_numpy(), rtol=1e-12, atol=1e-12)
    assert (got["rank"].to_numpy() == want["rank"].to_numpy()).all()
    assert ("rank-based" in out) == (kwargs["method"] == "rrf")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--weight", "bm25"], "--weight expects SYSTEM=NUMBER, got 'bm25'"),
        (["--method", "wsum", "--weight", "bm25=1"], "weights name no weight for 'dense'"),
    ],
)
def test_bad_input_is_one_line_exit_2(runs, tmp_path, argv, message):
    code, out, err = cli("fuse", "--run", runs["bm25"], "--run", runs["dense"], *argv, "--out", tmp_path / "x.trec")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.trec").exists()


def test_one_system_is_refused(runs, tmp_path):
    code, _, err = cli("fuse", "--run", runs["bm25"], "--out", tmp_path / "x.trec")
    assert code == 2 and "two or more systems" in err
