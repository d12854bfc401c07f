"""The engine against independent oracles: hand-computed values, trec_eval, and invariants."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval as re_
from retrieval_eval.engine.metrics import compute, metric_name


def judgments_frame(rows):
    return re_.as_judgments([{"query_id": q, "doc_uri": d, "relevance": r} for q, d, r in rows])


def run_frame(rankings: dict, system="run", scores=None):
    lines = []
    for qid, ranking in rankings.items():
        line = {"query_id": qid, "ranking": list(ranking), "system": system}
        if scores is not None:
            line["scores"] = list(scores[qid])
        lines.append(line)
    return re_.as_run(lines)


# ------------------------------------------------------------------ hand-computed values


def test_hand_computed_query():
    # rel: a=3, b=0 (judged), c=1; ranking x a y c b, k=4, exponential gain.
    rel = {"a": 3, "b": 0, "c": 1}
    got = re_.query_metrics(rel, ["x", "a", "y", "c", "b"], k=4)
    dcg = 7 / math.log2(3) + 1 / math.log2(5)
    idcg = 7 / math.log2(2) + 1 / math.log2(3)
    assert got["precision"] == pytest.approx(2 / 4, abs=1e-15)
    assert got["recall"] == pytest.approx(1.0)
    assert got["mrr"] == pytest.approx(1 / 2)
    assert got["ap"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert got["ndcg"] == pytest.approx(dcg / idcg, abs=1e-15)
    assert got["hit_rate"] == 1.0


def test_linear_gain_is_named_and_differs():
    j = judgments_frame([("q", "a", 3), ("q", "b", 1)])
    r = run_frame({"q": ["b", "a"]})
    exp = compute(j, r, k=(2,))
    lin = compute(j, r, k=(2,), gain="linear")
    assert "ndcg@2" in exp and "ndcg_linear@2" in lin and "ndcg@2" not in lin
    assert lin["ndcg_linear@2"].iloc[0] == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert exp["ndcg@2"].iloc[0] == pytest.approx((1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3)))


def test_judged_at_k_is_share_of_top_k_with_any_judgment():
    j = judgments_frame([("q", "a", 0), ("q", "b", 2)])
    r = run_frame({"q": ["a", "x", "b", "y"]})
    row = compute(j, r, k=(2, 4)).iloc[0]
    assert row["judged@2"] == 0.5 and row["judged@4"] == 0.5


def test_missing_query_scores_zero_and_unjudged_run_query_is_ignored():
    j = judgments_frame([("q1", "a", 1), ("q2", "b", 1)])
    r = run_frame({"q1": ["a"], "zz": ["a"]})
    pq = compute(j, r, k=(1,))
    assert pq["query_id"].tolist() == ["q1", "q2"]
    assert pq["missing"].tolist() == [False, True]
    assert pq["recall@1"].tolist() == [1.0, 0.0]


def test_several_systems_in_one_pass_equal_one_at_a_time():
    j = judgments_frame([("q1", "a", 2), ("q1", "b", 1), ("q2", "c", 1)])
    r = pd.concat(
        [
            run_frame({"q1": ["a", "b"], "q2": ["x"]}, system="s1"),
            run_frame({"q1": ["b", "x", "a"], "q2": ["c"]}, system="s2"),
        ]
    )
    both = compute(j, r, k=(1, 3)).set_index(["system", "query_id"])
    for s in ("s1", "s2"):
        alone = compute(j, r[r["system"] == s], k=(1, 3)).set_index(["system", "query_id"])
        pd.testing.assert_frame_equal(both.loc[[s]], alone)


def test_inputs_are_not_mutated():
    j = judgments_frame([("q1", "a", 2), ("q1", "a", 1)])
    r = run_frame({"q1": ["a", "a", "b"]})
    j0, r0 = j.copy(), r.copy()
    re_.evaluate(j, r)
    pd.testing.assert_frame_equal(j, j0)
    pd.testing.assert_frame_equal(r, r0)


def test_last_label_wins_for_a_repeated_pair():
    j = judgments_frame([("q", "a", 0), ("q", "a", 2)])
    assert re_.query_metrics({"a": 2}, ["a"], k=1)["recall"] == 1.0
    assert compute(j, run_frame({"q": ["a"]}), k=(1,))["recall@1"].iloc[0] == 1.0


def test_run_order_is_the_rank_column_not_the_row_order():
    j = judgments_frame([("q", "a", 1)])
    r = run_frame({"q": ["x", "a"]})
    shuffled = r.iloc[::-1].reset_index(drop=True)
    assert compute(j, shuffled, k=(1,))["mrr@1"].iloc[0] == 0.0
    assert compute(j, shuffled, k=(2,))["mrr@2"].iloc[0] == 0.5


def test_a_repeat_near_the_top_pulls_later_entries_into_the_cutoff():
    # Raw top 2 is [a, a]; deduplicated, b moves up to rank 2 and is a hit at k=2.
    j = judgments_frame([("q", "b", 1)])
    row = compute(j, run_frame({"q": ["a", "a", "b", "c"]}), k=(2,)).iloc[0]
    assert row["recall@2"] == 1.0 and row["mrr@2"] == 0.5 and row["duplicates"]


def test_interleaved_rankings_are_grouped_by_query_and_ranked():
    j = judgments_frame([("q1", "a", 1), ("q2", "b", 1)])
    r = run_frame({"q1": ["x", "a"], "q2": ["b", "y"]})
    interleaved = r.iloc[[0, 2, 1, 3]].reset_index(drop=True)
    pd.testing.assert_frame_equal(compute(j, interleaved, k=(1, 2)), compute(j, r, k=(1, 2)))


def test_top1_score_is_first_deduplicated_entry():
    j = judgments_frame([("q", "a", 1)])
    r = run_frame({"q": ["a", "b"]}, scores={"q": [0.9, 0.5]})
    assert compute(j, r, k=(1,))["top1_score"].iloc[0] == 0.9


def test_summary_follows_the_aggregation_rules():
    j = judgments_frame([("q1", "a", 1), ("q2", "b", 0), ("q3", "c", 1)])
    r = run_frame({"q1": ["a"], "q2": ["b"]})
    ev = re_.evaluate(j, r, k=(1,))
    assert ev.summary.loc["run", "n"] == 2  # q2 excluded, q3 missing scores zero
    assert ev.summary.loc["run", "recall@1"] == 0.5


# ------------------------------------------------------------------ invariants

query_ids = st.sampled_from(["q1", "q2", "q3", "q4"])
doc_ids = st.sampled_from([f"d{i}" for i in range(8)])


@st.composite
def graded_case(draw):
    labels = draw(st.lists(st.tuples(query_ids, doc_ids, st.integers(0, 3)), min_size=1, max_size=20))
    rankings = draw(st.dictionaries(query_ids, st.lists(doc_ids, max_size=12), max_size=4))
    return labels, rankings


@settings(max_examples=60, deadline=None)
@given(graded_case(), st.integers(1, 10))
def test_metrics_stay_in_unit_interval(case, k):
    labels, rankings = case
    pq = compute(judgments_frame(labels), run_frame(rankings), k=(k,))
    values = pq[[c for c in pq.columns if "@" in c]].to_numpy()
    assert np.all(values >= 0) and np.all(values <= 1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(graded_case(), st.randoms(use_true_random=False))
def test_row_and_query_order_change_nothing(case, rnd):
    labels, rankings = case
    j, r = judgments_frame(labels), run_frame(rankings)
    base = compute(j, r, k=(3, 10)).set_index(["system", "query_id"]).sort_index()
    jperm = list(range(len(j)))
    rnd.shuffle(jperm)
    # Reordering judgment rows may only change which of two labels of one pair is "last".
    if not j.duplicated(["query_id", "doc_uri"]).any():
        rperm = list(range(len(r)))
        rnd.shuffle(rperm)
        moved = compute(j.iloc[jperm], r.iloc[rperm], k=(3, 10)).set_index(["system", "query_id"]).sort_index()
        pd.testing.assert_frame_equal(base, moved)


@settings(max_examples=60, deadline=None)
@given(graded_case(), st.integers(1, 10), st.data())
def test_a_repeated_key_never_raises_a_metric(case, k, data):
    labels, rankings = case
    j = judgments_frame(labels)
    base = compute(j, run_frame(rankings), k=(k,)).set_index("query_id")
    noisy = {}
    for qid, ranking in rankings.items():
        ranking = list(ranking)
        if ranking:
            # Repeat an entry somewhere after its first occurrence (a retriever's duplicate).
            source = data.draw(st.integers(0, len(ranking) - 1))
            at = data.draw(st.integers(source + 1, len(ranking)))
            ranking.insert(at, ranking[source])
        noisy[qid] = ranking
    after = compute(j, run_frame(noisy), k=(k,)).set_index("query_id")
    cols = [c for c in base.columns if "@" in c]
    assert np.all(after[cols].to_numpy() <= base[cols].to_numpy() + 1e-12)


def test_threshold_below_one_is_refused():
    # An unjudged entry counts as grade 0: at threshold 0 it would count as relevant.
    j, r = judgments_frame([("q", "a", 1)]), run_frame({"q": ["a", "x"]})
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threshold must be an integer >= 1"):
            compute(j, r, threshold=bad)


def _reference(labels, lines, ks, threshold, gain):
    """SPEC A3 one query at a time in plain Python: the oracle for the vectorized engine.

    ``labels`` are (query, key, grade) in file order (the last label of a pair wins);
    ``lines`` are (system, query, [keys]) rankings (a repeated key counts once, first).
    """
    rel = {}
    for q, key, g in labels:
        rel.setdefault(q, {})[key] = g
    systems = list(dict.fromkeys(s for s, _, _ in lines))
    rankings = {(s, q): list(dict.fromkeys(ranking)) for s, q, ranking in lines}
    out = {}
    for s in systems:
        for q, grades in rel.items():
            ranking = rankings.get((s, q), [])
            n_rel = sum(g >= threshold for g in grades.values())
            gain_of = (lambda g: 2**g - 1) if gain == "exponential" else (lambda g: g)
            for k in ks:
                top = ranking[:k]
                hits = [grades.get(d, 0) >= threshold for d in top]
                dcg = sum(gain_of(grades.get(d, 0)) / math.log2(i + 2) for i, d in enumerate(top))
                ideal = sorted(grades.values(), reverse=True)[:k]
                idcg = sum(gain_of(g) / math.log2(i + 2) for i, g in enumerate(ideal))
                ap = sum(sum(hits[: i + 1]) / (i + 1) for i, h in enumerate(hits) if h)
                first = next((i for i, h in enumerate(hits) if h), None)
                out[(s, q, k)] = {
                    "precision": sum(hits) / k,
                    "recall": sum(hits) / n_rel if n_rel else 0.0,
                    "ndcg": dcg / idcg if idcg > 0 else 0.0,
                    "mrr": 1 / (first + 1) if first is not None else 0.0,
                    "map": ap / n_rel if n_rel else 0.0,
                    "hit_rate": float(any(hits)),
                    "judged": sum(d in grades for d in top) / k,
                }
    return out


@pytest.mark.parametrize("hashes", ["real", "colliding"])
@pytest.mark.parametrize("step_rows", [1, 3, 17, None])
@pytest.mark.parametrize("seed", range(6))
def test_engine_matches_the_plain_python_definition(monkeypatch, step_rows, seed, hashes):
    """Random runs with repeated keys, repeated labels, several systems, interleaved rows and
    ids labelled for several queries, scanned in steps of every size (a step never splits a
    ranking, and the labels of a step are coded with its rankings).

    With ``colliding`` hashes every id hashes alike: each match the engine makes on hashes
    must then fail its check on the strings and the step be redone with exact codes. (The ids
    are then longer than 8 bytes: up to 8, the real hash cannot collide and the check trusts
    it, which a fake hash would abuse.)"""
    import retrieval_eval.engine.scan as engine

    if step_rows is not None:
        monkeypatch.setattr(engine, "STEP_ROWS", step_rows)
    refused = []
    doc = "d"
    if hashes == "colliding":
        real = engine.hashes
        monkeypatch.setattr(engine, "hashes", lambda arr: (np.zeros(len(arr), dtype=np.uint64), real(arr)[1]))
        same = engine.same
        monkeypatch.setattr(engine, "same", lambda *a: refused.append(not same(*a)) or not refused[-1])
        doc = "document-"
    rng = np.random.default_rng(seed)
    n_q, n_docs = int(rng.integers(1, 9)), int(rng.integers(2, 15))
    labels = [
        (f"q{rng.integers(n_q)}", f"{doc}{rng.integers(n_docs)}", int(rng.integers(0, 4)))
        for _ in range(int(rng.integers(1, 40)))
    ]
    lines = [
        (f"S{s}", f"q{q}", [f"{doc}{rng.integers(n_docs)}" for _ in range(int(rng.integers(1, 12)))])
        for s in range(int(rng.integers(1, 4)))
        for q in range(n_q + 1)
        if rng.random() < 0.8
    ]
    if not lines:
        lines = [("S0", "q0", [f"{doc}0"])]
    run = re_.as_run([{"system": s, "query_id": q, "ranking": ranking} for s, q, ranking in lines])
    run = run.sample(frac=1, random_state=seed).reset_index(drop=True) if seed % 2 else run
    ks, threshold = (1, 3, 5), 1 + seed % 3
    for gain in ("exponential", "linear"):
        got = compute(judgments_frame(labels), run, k=ks, threshold=threshold, gain=gain)
        want = _reference(labels, lines, ks, threshold, gain)
        assert len(got) == len({(s, q) for s, q, _ in want})
        repeated = {(s, q): len(set(ranking)) < len(ranking) for s, q, ranking in lines}
        for row in got.to_dict("records"):
            # A repeat anywhere in the ranking is reported, past the largest cutoff too.
            assert row["duplicates"] == repeated.get((row["system"], row["query_id"]), False)
            for k in ks:
                for metric, value in want[(row["system"], row["query_id"], k)].items():
                    name = metric_name(metric, k, gain)
                    assert row[name] == pytest.approx(value, abs=1e-12), (metric, k, row["query_id"])
    deduped = engine.dedupe_run(run)
    got_rankings = {
        key: list(g.sort_values("rank")["doc_id"]) for key, g in deduped.groupby(["system", "query_id"], sort=False)
    }
    assert got_rankings == {(s, q): list(dict.fromkeys(ranking)) for s, q, ranking in lines}
    if hashes == "colliding":
        assert any(refused)  # the strings were checked, and the false matches caught


def test_duplicates_are_reported_past_the_largest_cutoff():
    """A ranking that repeats a key only below the cutoffs is still flagged (SPEC A3: "anywhere
    in the ranking, also past k"), in both APIs; the metrics stop at k and do not change."""
    judgments = [{"query_id": q, "doc_uri": "a", "relevance": 1} for q in ("q1", "q2", "q3")]
    run = [
        {"query_id": "q1", "ranking": ["a", "b", "c", "d", "b"]},  # repeat at rank 5
        {"query_id": "q2", "ranking": ["a", "b", "c", "d", "e"]},
        {"query_id": "q3", "ranking": ["c", "c", "a"]},
    ]  # repeat inside the cutoff
    ev = re_.evaluate(judgments, run, k=(1, 3))
    assert ev.per_query["duplicates"].tolist() == [True, False, True]
    assert re_.score(judgments, run, k=2).queries_with_duplicates == ["q1", "q3"]
    assert ev.per_query["recall@3"].tolist() == [1.0, 1.0, 1.0]


def test_a_query_ranked_twice_beside_one_not_ranked_keeps_its_own_labels():
    # A step with as many rankings as queries need not hold one ranking per query: here q0 has
    # two (systems A and B) and q1 none. B's "b" is labelled for q1 only, so it is no hit.
    j = judgments_frame([("q0", "a", 1), ("q1", "b", 1)])
    r = re_.as_run(
        [
            {"system": "A", "query_id": "q0", "ranking": ["x", "a"]},
            {"system": "B", "query_id": "q0", "ranking": ["b", "x"]},
        ]
    )
    got = compute(j, r, k=(2,)).set_index(["system", "query_id"])["precision@2"]
    assert got.to_dict() == {("A", "q0"): 0.5, ("A", "q1"): 0.0, ("B", "q0"): 0.0, ("B", "q1"): 0.0}


def test_hashes_equal_strings_alike_in_every_layout():
    import pyarrow as pa

    from retrieval_eval.engine.kernels import hashes as _hashes

    rng = np.random.default_rng(11)
    values = [
        "",
        "a",
        "ab",
        "abcdefg",
        "abcdefgh",
        "abcdefghi",
        "é",
        "日本語",
        "x" * 40,
        "x" * 41,
        "a\x00",
        "a\x00\x00",
    ] + ["".join(rng.choice(list("ab"), size=int(n))) for n in rng.integers(0, 20, size=300)]
    large = pa.array(values, pa.large_string())
    h, size = _hashes(large)
    assert h.dtype == np.uint64 and len(h) == len(values)
    assert size.tolist() == [len(v.encode()) for v in values]
    for layout, at in (
        (pa.array(values, pa.string()), slice(None)),
        (large.slice(3, 50), slice(3, 53)),
        (pa.chunked_array([large.slice(0, 7), large.slice(7, 0), large.slice(7)]), slice(None)),
    ):
        got, got_size = _hashes(layout)
        np.testing.assert_array_equal(got, h[at])
        np.testing.assert_array_equal(got_size, size[at])
    # Equal strings hash alike; these distinct ones (NUL-padded and long ones included) do not.
    distinct = dict(zip(values, h))
    assert len(set(distinct.values())) == len(distinct)
    assert all(distinct[v] == x for v, x in zip(values, h))
    assert len(_hashes(pa.array([], pa.large_string()))[0]) == 0


@pytest.mark.parametrize("width", [0, 3, 8, 11, 16])
def test_hashes_of_ids_of_one_width_read_in_place_alike(width):
    # Ids of one width are hashed off a strided view of their bytes; mixed ones word by word.
    import pyarrow as pa

    from retrieval_eval.engine.kernels import hashes as _hashes

    rng = np.random.default_rng(width)
    ids = ["".join(rng.choice(list("abcXYZ019"), size=width)) for _ in range(50)]
    fixed, fixed_size = _hashes(pa.array(ids, pa.large_string()).slice(1))
    mixed, mixed_size = _hashes(pa.array(ids + ["x" * (width + 1)], pa.large_string()).slice(1))
    np.testing.assert_array_equal(fixed, mixed[:-1])
    np.testing.assert_array_equal(fixed_size, mixed_size[:-1])


def test_hashes_of_short_strings_of_one_length_never_collide():
    # Up to 8 bytes a string is one word, and each step of the hash is a bijection of it.
    import itertools

    import pyarrow as pa

    from retrieval_eval.engine.kernels import hashes as _hashes

    for size in (1, 2, 3):
        words = ["".join(t) for t in itertools.product("abcdefghijklmnop", repeat=size)]
        assert len(np.unique(_hashes(pa.array(words))[0])) == len(words)
    rng = np.random.default_rng(5)
    words = np.unique(rng.integers(0, 2**63, size=200_000)).astype("<u8").view("S8")
    words = [w + b"x" * (8 - len(w)) for w in words.tolist()]  # 8 bytes each, NULs and all
    assert len(np.unique(_hashes(pa.array(words, pa.binary()))[0])) == len(set(words))


@pytest.mark.parametrize("seed", range(4))
def test_groups_and_find_match_plain_python(seed):
    from retrieval_eval.engine.kernels import find as _find
    from retrieval_eval.engine.kernels import groups as _groups
    from retrieval_eval.engine.kernels import repeats as _repeats

    rng = np.random.default_rng(seed)
    # Enough keys, from a range small enough, that many share a slot and many repeat.
    codes = rng.integers(0, [50, 3000, 2**40, 2**63][seed], size=4000, dtype=np.int64).astype(np.uint64)
    head, prev = _groups(codes)
    first, last = {}, {}
    for i, c in enumerate(codes.tolist()):
        assert head[i] == first.setdefault(c, i) and prev[i] == last.get(c, -1)
        last[c] = i
    np.testing.assert_array_equal(_repeats(codes), prev >= 0)
    assert _groups(codes[:1])[1].tolist() == [-1] and not _repeats(codes[:0]).any()
    table = np.unique(codes)[::-1].copy()  # distinct, in no particular order
    probe = np.r_[codes, rng.integers(0, 2**63, size=500, dtype=np.int64).astype(np.uint64)]
    where = {c: i for i, c in enumerate(table.tolist())}
    np.testing.assert_array_equal(_find(table, probe), [where.get(c, -1) for c in probe.tolist()])
    assert _find(table[:0], probe).tolist() == [-1] * len(probe)


def test_take_reads_chunked_columns_chunk_by_chunk():
    import pyarrow as pa

    from retrieval_eval.arrays import take as _take

    chunked = pa.chunked_array([["a", "b"], [], ["c"], ["d", "e", "f"]], pa.large_string())
    for rows in ([0, 2, 5], [5, 0, 3, 2, 2], [], [4]):
        assert _take(chunked, np.array(rows, dtype=np.int64)).to_pylist() == [chunked.to_pylist()[i] for i in rows]


def test_one_value_reads_shared_chunks_and_never_guesses():
    import pyarrow as pa

    from retrieval_eval.engine.kernels import one_value as _one_value

    block = pa.array(["bm25"] * 4, pa.large_string())
    assert _one_value(pa.chunked_array([block, block, block.slice(1, 2)]))
    assert _one_value(pa.array(["x", "x", "x"]))
    assert not _one_value(pa.chunked_array([block, pa.array(["dense"], pa.large_string())]))
    assert not _one_value(pa.array(["x", "y"]))
    assert not _one_value(pa.array(["x", None]))
    assert not _one_value(pa.chunked_array([], pa.large_string()))
    # Many distinct chunks of the same value: not seen without reading them, so False (the
    # rows are then compared, which is only slower).
    assert not _one_value(pa.chunked_array([pa.array(["x"], pa.large_string()) for _ in range(6)]))


def test_chunked_frames_score_as_whole_ones(monkeypatch):
    """Readers may hand over columns in many arrow chunks; steps and rankings cross them."""
    import pyarrow as pa

    import retrieval_eval.engine.scan as engine

    if engine.ID.storage != "pyarrow":
        pytest.skip("string columns are arrow-backed only where pandas' default storage is pyarrow")
    monkeypatch.setattr(engine, "STEP_ROWS", 4)
    rng = np.random.default_rng(3)
    labels = [(f"q{rng.integers(6)}", f"d{rng.integers(9)}", int(rng.integers(0, 4))) for _ in range(30)]
    rankings = {f"q{q}": [f"d{rng.integers(9)}" for _ in range(7)] for q in range(6)}
    j, r = judgments_frame(labels), run_frame(rankings)

    def rechunk(frame, size):
        out = frame.copy()
        for col in frame.columns:
            if frame[col].dtype == engine.ID:
                whole = pa.array(frame[col].array)
                whole = whole.combine_chunks() if isinstance(whole, pa.ChunkedArray) else whole
                pieces = [whole.slice(i, size) for i in range(0, len(whole), size)]
                out[col] = pd.Series(
                    pd.arrays.ArrowStringArray(pa.chunked_array(pieces, whole.type)), index=frame.index
                )
        return out

    base = compute(j, r, k=(1, 3, 5))
    for size in (1, 3, 5):
        chunked_run, chunked_j = rechunk(r, size), rechunk(j, size)
        assert pa.array(chunked_run["doc_id"].array).num_chunks > 1
        pd.testing.assert_frame_equal(compute(chunked_j, chunked_run, k=(1, 3, 5)), base)
        pd.testing.assert_frame_equal(engine.dedupe_run(chunked_run, 4), engine.dedupe_run(r, 4))


# ------------------------------------------------------------------ trec_eval

pytrec_eval = pytest.importorskip("pytrec_eval")


def test_matches_trec_eval_on_random_graded_runs():
    rng = np.random.default_rng(7)
    labels, rankings, scores = [], {}, {}
    for q in range(60):
        qid = f"q{q}"
        docs = [f"d{i}" for i in rng.choice(200, size=40, replace=False)]
        for d in docs[:25]:
            labels.append((qid, d, int(rng.integers(0, 4))))
        ranking = list(rng.permutation(docs))[:30] + [f"u{i}" for i in range(5)]
        rankings[qid] = ranking
        scores[qid] = list(np.sort(rng.random(len(ranking)))[::-1] + 1.0)
    j = judgments_frame(labels)
    r = run_frame(rankings, scores=scores)
    qrel = {}
    for qid, d, g in labels:
        qrel.setdefault(qid, {})[d] = g
    runp = {qid: {d: float(s) for d, s in zip(rankings[qid], scores[qid])} for qid in rankings}
    ev = pytrec_eval.RelevanceEvaluator(
        qrel, {"ndcg_cut.5,10,20", "P.5,10,20", "recall.5,10,20", "map_cut.5,10,20", "recip_rank"}
    )
    trec = ev.evaluate(runp)
    ours = compute(j, r, k=(5, 10, 20, 1000), gain="linear").set_index("query_id")
    for qid, m in trec.items():
        for k in (5, 10, 20):
            assert ours.loc[qid, f"ndcg_linear@{k}"] == pytest.approx(m[f"ndcg_cut_{k}"], abs=1e-9)
            assert ours.loc[qid, f"precision@{k}"] == pytest.approx(m[f"P_{k}"], abs=1e-9)
            assert ours.loc[qid, f"recall@{k}"] == pytest.approx(m[f"recall_{k}"], abs=1e-9)
            assert ours.loc[qid, f"map@{k}"] == pytest.approx(m[f"map_cut_{k}"], abs=1e-9)
        assert ours.loc[qid, "mrr@1000"] == pytest.approx(m["recip_rank"], abs=1e-9)


def test_a_query_in_two_strata_is_scored_on_each_strata_rows():
    judgments = re_.as_judgments(
        [
            {"query_id": "q", "doc_uri": "a", "relevance": 1, "stratum": "s1"},
            {"query_id": "q", "doc_uri": "b", "relevance": 1, "stratum": "s2"},
            {"query_id": "q", "doc_uri": "c", "relevance": 1, "stratum": "s2"},
        ]
    )
    per_stratum = re_.score_by_stratum(judgments, run_frame({"q": ["a", "b"]}), k=2)
    assert per_stratum["s1"].metrics["recall@2"].value == 1.0  # a is s1's only label
    assert per_stratum["s2"].metrics["recall@2"].value == 0.5  # b of {b, c}
    assert per_stratum["s1"].n == per_stratum["s2"].n == 1
