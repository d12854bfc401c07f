"""Run fusion (issue 33 item 3): every method and normalisation against ranx.fuse, the oracle,
plus hand-computed values, the rank-based mark and calibration's report of it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as rev
from retrieval_eval.analysis.fusion import FUSION_METHODS, NORMALIZATIONS, fuse

ranx = pytest.importorskip("ranx")


def _random_runs(seed: int, n_systems: int = 3, n_queries: int = 12) -> dict[str, dict]:
    """``{system: {qid: {doc: score}}}``: overlapping pools, distinct continuous scores (no
    ties, so ranx's order by score is the order every method reads), different depths and
    scales per system."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict] = {}
    for s in range(n_systems):
        run = {}
        for q in range(n_queries):
            depth = int(rng.integers(3, 15))
            docs = rng.choice(25, size=depth, replace=False)
            scores = rng.normal(loc=5.0 * s, scale=1.0 + s, size=depth)
            run[f"q{q}"] = {f"d{d}": float(x) for d, x in zip(docs, scores)}
        out[f"sys{s}"] = run
    return out


def _as_dict(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q, d, s in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
        out.setdefault(q, {})[d] = s
    return out


def _assert_same(ours: dict, theirs: dict) -> None:
    assert set(ours) == set(theirs)
    for q in theirs:
        assert set(ours[q]) == set(theirs[q]), q
        for d, v in theirs[q].items():
            assert ours[q][d] == pytest.approx(v, rel=1e-12, abs=1e-12), (q, d)


@pytest.fixture(scope="module")
def runs() -> dict[str, dict]:
    return _random_runs(7)


@pytest.mark.parametrize("norm", [None, "min-max", "max", "sum", "zmuv", "rank", "borda"])
@pytest.mark.parametrize("method", ["sum", "mnz", "max", "min", "med", "anz", "wsum"])
def test_score_methods_equal_ranx(runs, method, norm):
    weights = [0.5, 1.5, 2.0]
    params = {"weights": weights} if method == "wsum" else {}
    theirs = ranx.fuse(
        [ranx.Run(r, name=n) for n, r in runs.items()], norm=norm, method=method, params=params
    ).to_dict()
    ours = fuse(runs, method=method, norm=norm, weights=weights if method == "wsum" else None)
    _assert_same(_as_dict(ours), theirs)
    # each query's list is ranked by the fused score, best first
    assert (ours.groupby("query_id")["score"].diff().dropna() <= 0).all()
    assert ours.groupby("query_id")["rank"].apply(lambda r: r.tolist() == list(range(1, len(r) + 1))).all()


@pytest.mark.parametrize("k", [60, 0, 10])
def test_rrf_equals_ranx(runs, k):
    theirs = ranx.fuse(
        [ranx.Run(r, name=n) for n, r in runs.items()], norm=None, method="rrf", params={"k": k}
    ).to_dict()
    _assert_same(_as_dict(fuse(runs, method="rrf", k=k)), theirs)


def test_rrf_by_hand():
    a = [{"query_id": "q1", "ranking": ["d1", "d2"], "scores": [2.0, 1.0]}]
    b = [{"query_id": "q1", "ranking": ["d2", "d3"], "scores": [0.9, 0.1]}]
    got = fuse({"a": a, "b": b}, k=60)
    assert got["doc_id"].tolist() == ["d2", "d1", "d3"]
    assert got["score"].tolist() == [1 / 62 + 1 / 61, 1 / 61, 1 / 62]
    assert got["system"].unique().tolist() == ["rrf"]
    assert list(got.columns) == ["system", "query_id", "rank", "doc_id", "score"]
    assert got.dtypes.astype(str).tolist() == ["string", "string", "int64", "string", "float64"]


def test_combmnz_and_minmax_by_hand():
    a = {"q": {"x": 3.0, "y": 1.0, "z": 2.0}}
    b = {"q": {"y": 10.0, "w": 0.0}}
    got = _as_dict(fuse({"a": a, "b": b}, method="mnz", norm="min-max"))["q"]
    # a: x 1, z .5, y 0; b: y 1, w 0. y in both: (0 + 1) * 2
    assert got == {"x": 1.0, "z": 0.5, "y": 2.0, "w": 0.0}


def test_weights_by_name_equal_weights_in_order(runs):
    by_list = fuse(runs, method="wsum", weights=[1.0, 2.0, 3.0], norm="zmuv")
    by_name = fuse(runs, method="wsum", weights={"sys2": 3.0, "sys0": 1.0, "sys1": 2.0}, norm="zmuv")
    pd.testing.assert_frame_equal(by_list, by_name)


def test_ties_in_the_fused_list_break_by_doc_id_descending():
    a = {"q": {"a": 1.0}}
    b = {"q": {"b": 1.0}}
    got = fuse({"x": a, "y": b}, method="sum", norm=None)
    assert got["doc_id"].tolist() == ["b", "a"]


def test_query_only_some_runs_have_is_fused_from_those():
    got = fuse({"a": {"q1": {"d": 1.0}, "q2": {"e": 2.0}}, "b": {"q1": {"d": 3.0}}}, method="sum", norm=None)
    assert _as_dict(got) == {"q1": {"d": 4.0}, "q2": {"e": 2.0}}


def test_inputs_not_mutated(runs):
    frames = {n: rev.as_run(r, system=n) for n, r in runs.items()}
    before = {n: f.copy() for n, f in frames.items()}
    fuse(frames, method="mnz", norm="zmuv")
    for n in frames:
        pd.testing.assert_frame_equal(frames[n], before[n])


def test_one_frame_of_several_systems_fuses_its_systems(runs):
    long = rev.as_run(runs)
    pd.testing.assert_frame_equal(fuse(long, method="sum"), fuse(runs, method="sum"))


def test_duplicates_count_at_their_first_rank():
    a = [{"query_id": "q", "ranking": ["x", "x", "y"]}]
    b = [{"query_id": "q", "ranking": ["y"]}]
    got = _as_dict(fuse({"a": a, "b": b}, k=0))["q"]
    assert got == {"x": 1.0, "y": 0.5 + 1.0}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"method": "borda_count"}, "unknown fusion method"),
        ({"norm": "l2"}, "unknown normalisation"),
        ({"method": "rrf", "k": -1}, "k must be"),
        ({"method": "wsum", "weights": [1.0]}, "1 weights for 2 systems"),
        ({"method": "wsum", "weights": {"a": 1.0}}, "no weight for 'b'"),
    ],
)
def test_bad_arguments_say_what(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fuse({"a": {"q": {"x": 1.0}}, "b": {"q": {"x": 1.0}}}, **kwargs)


def test_one_system_and_scoreless_runs_are_refused():
    with pytest.raises(ValueError, match="two or more systems"):
        fuse({"a": {"q": {"x": 1.0}}})
    scoreless = {"a": [{"query_id": "q", "ranking": ["x"]}], "b": [{"query_id": "q", "ranking": ["y"]}]}
    with pytest.raises(ValueError, match="without scores"):
        fuse(scoreless, method="sum")
    assert len(fuse(scoreless, method="rrf")) == 2  # RRF reads ranks only


def test_catalogues_name_every_method_and_normalisation():
    assert set(FUSION_METHODS) == {"rrf", "sum", "mnz", "max", "min", "med", "anz", "wsum"}
    assert set(NORMALIZATIONS) == {"min-max", "max", "sum", "zmuv", "rank", "borda"}
    assert fuse({"a": {"q": {"x": 1.0}}, "b": {"q": {"x": 2.0}}}, method="CombSUM", norm="z-score")[
        "score"
    ].tolist() == [0.0]


def test_rank_based_mark_only_where_the_score_is_a_function_of_rank(runs):
    assert fuse(runs, method="rrf").attrs["rank_based"] == {
        "rrf": "fused by reciprocal rank fusion (k=60) of sys0, sys1, sys2"
    }
    assert "rank_based" in fuse(runs, method="sum", norm="rank", name="x").attrs
    assert "rank_based" not in fuse(runs, method="sum", norm="min-max").attrs
    assert fuse(runs, method="mnz", name="m").attrs["fusion"]["m"]["method"] == "mnz"


def _calibration_data():
    """Judgments, queries (two OOD negatives among 14) and two systems with cosine-like scores
    that vary from query to query, so no sign but the mark can call a fusion rank-based."""
    rng = np.random.default_rng(3)
    systems = {}
    for s in ("a", "b"):
        rows = []
        for q in range(14):
            docs = [f"d{q}_{i}" for i in rng.permutation(8)]
            scores = np.sort(rng.uniform(0.2, 0.9, size=8))[::-1] * rng.uniform(0.5, 1.0)
            rows.append({"query_id": f"q{q}", "ranking": docs, "scores": scores.tolist()})
        systems[s] = rows
    judgments = [{"query_id": f"q{q}", "doc_uri": f"d{q}_0", "relevance": 1} for q in range(12)]
    queries = [{"query_id": f"q{q}", "expect_none": q >= 12} for q in range(14)]
    return judgments, queries, systems


def test_calibration_says_a_fused_run_is_rank_based():
    judgments, queries, systems = _calibration_data()
    mnz = fuse(systems, method="mnz", norm="min-max")  # score-based: no mark
    cal_plain = rev.calibrate(judgments, {"mnz": mnz}, queries, n_resamples=10)
    assert not bool(cal_plain.summary.loc["mnz", "rank_based"])
    fused = fuse(systems, method="rrf", norm=None)
    for run, name in ((fused, "rrf"), ({"fusion": fused, "a": systems["a"]}, "fusion")):
        cal = rev.calibrate(judgments, run, queries, n_resamples=10)
        assert bool(cal.summary.loc[name, "rank_based"])
        assert any("fused by reciprocal rank fusion (k=60) of a, b" in w for w in cal.warnings)
    assert not bool(cal.summary.loc["a", "rank_based"])
    assert math.isfinite(float(cal.summary.loc["fusion", "auroc"]))


def test_fused_run_evaluates_like_any_run(runs):
    qrels = {q: {d: 1 for d in list(docs)[:2]} for q, docs in runs["sys0"].items()}
    fused = fuse(runs, method="mnz", norm="zmuv")  # continuous scores: no tie for ranx to order its way
    q = ranx.Qrels(qrels)
    theirs = dict(zip(q.keys(), ranx.evaluate(q, ranx.Run(_as_dict(fused)), "ndcg@10", return_mean=False)))
    ours = rev.evaluate(qrels, fused, k=10, gain="linear").per_query.set_index("query_id")["ndcg_linear@10"]
    assert set(ours.index) == set(theirs)
    for qid, v in theirs.items():
        assert ours[qid] == pytest.approx(v, abs=1e-12), qid
