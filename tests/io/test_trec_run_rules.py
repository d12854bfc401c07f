"""TREC runs as trec_eval reads them (issue 12, rule 5; SPEC A2): fields after the sixth are
ignored, equal ranks in a query are ordered by doc id ascending, and the result agrees with
pytrec_eval value for value. Every case is read by the fast (arrow) path and the careful one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.engine.metrics import compute
from retrieval_eval.errors import FormatError
from retrieval_eval.io import from_trec_run, read_trec_run
from retrieval_eval.io import qrels as io_qrels
from retrieval_eval.io import trec as io_trec

pytrec_eval = pytest.importorskip("pytrec_eval")


def _careful_text(text: str, **kwargs) -> pd.DataFrame:
    """``from_trec_run`` with arrow's read turned off: the careful pass alone."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(io_trec, "arrow_table", lambda *args, **kw: None)
        m.setattr(io_qrels, "arrow_table", lambda *args, **kw: None)
        return from_trec_run(text, **kwargs)


def _all_ways(text: str, tmp_path, **kwargs) -> pd.DataFrame:
    """The frame every reader gives (file, text, careful pass), checked equal."""
    path = tmp_path / "run.trec"
    path.write_text(text, encoding="utf-8")
    got = read_trec_run(path, **kwargs)
    pd.testing.assert_frame_equal(from_trec_run(text, **kwargs), got, check_exact=True)
    pd.testing.assert_frame_equal(_careful_text(text, **kwargs), got, check_exact=True)
    return got


def test_trec_run_fields_after_the_sixth_are_ignored(tmp_path):
    plain = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d3 1 0.7 r\n"
    junk = "q1 Q0 d1 1 0.9 r extra\nq1 Q0 d2 2 0.5 r a b c\nq2 Q0 d3 1 0.7 r\t#x\n"
    pd.testing.assert_frame_equal(_all_ways(junk, tmp_path), _all_ways(plain, tmp_path))
    for order in ("rank", "score"):
        pd.testing.assert_frame_equal(
            _all_ways(junk, tmp_path, order=order, system="s"), _all_ways(plain, tmp_path, order=order, system="s")
        )
    with pytest.raises(FormatError, match=r"run:2: expected 6 fields, got 5"):
        from_trec_run("q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5\n")


def test_trec_run_equal_ranks_are_ordered_by_doc_id_ascending(tmp_path):
    text = (
        "q1 Q0 d10 2 0.1 r\nq1 Q0 c 1 0.5 r\nq1 Q0 b 1 0.5 r\nq1 Q0 d9 2 0.3 r\n"
        "q1 Q0 a 3 0.0 r\nq2 Q0 z 5 1 r\nq2 Q0 y 5 1 r\n"
    )
    run = _all_ways(text, tmp_path)
    # Byte order: "d10" < "d9"; the scores play no part when reading by rank.
    assert run.doc_id.tolist() == ["b", "c", "d10", "d9", "a", "y", "z"]
    assert run["rank"].tolist() == [1, 2, 3, 4, 5, 1, 2]
    assert run.score.tolist() == [0.5, 0.5, 0.1, 0.3, 0.0, 1.0, 1.0]


_line = st.tuples(
    st.sampled_from(["q1", "q2"]),
    st.sampled_from(["a", "b", "B", "c", "d1", "d10"]),
    st.integers(1, 3),
    st.sampled_from(["0.5", "1", "2"]),
    st.sampled_from(["", " x", " x y"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_line, min_size=1, max_size=9, unique_by=lambda t: (t[0], t[1])), st.randoms())
def test_property_line_order_does_not_change_a_run_read_by_rank(lines, rnd):
    """Any order of the same lines reads to the same frame; within a rank, doc ids ascend."""
    import tempfile
    from pathlib import Path

    def text_of(rows):
        return "".join(f"{q} Q0 {d} {r} {s} run{junk}\n" for q, d, r, s, junk in rows)

    shuffled = list(lines)
    rnd.shuffle(shuffled)
    with tempfile.TemporaryDirectory() as folder:
        a = _all_ways(text_of(lines), Path(folder))
        b = _all_ways(text_of(shuffled), Path(folder))
    pd.testing.assert_frame_equal(
        a.sort_values(["query_id", "rank"]).reset_index(drop=True),
        b.sort_values(["query_id", "rank"]).reset_index(drop=True),
    )
    by_input = {(q, d): r for q, d, r, _, _ in lines}
    for _, g in a.groupby("query_id", sort=False):
        keys = [(by_input[(q, d)], d.encode()) for q, d in zip(g.query_id, g.doc_id)]
        assert keys == sorted(keys)


def test_trec_run_with_trailing_junk_and_ties_matches_pytrec_eval(tmp_path):
    """A run read by rank, with trailing fields and tied ranks written in scrambled order; its
    scores fall along (rank, doc id ascending), so trec_eval's order (score descending) is the
    same ranking. Every per-query value agrees with pytrec_eval at 1e-9."""
    rng = np.random.default_rng(12)
    qrel, lines = {}, []
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{i}" for i in rng.choice(300, size=30, replace=False)]
        qrel[qid] = {d: int(rng.integers(0, 4)) for d in docs[:18]}
        qrel[qid][docs[0]] = max(qrel[qid][docs[0]], 1)  # at least one relevant label
        ranked = list(rng.permutation(docs))[:25] + [f"u{q}_{i}" for i in range(3)]
        ranks = np.sort(rng.integers(1, 12, size=len(ranked)))  # many ties
        order = sorted(zip(ranks.tolist(), ranked), key=lambda t: (t[0], t[1].encode()))
        n = len(order)
        for i, (rank, doc) in enumerate(order):
            junk = ["", " junk", " a b c", "\tx"][int(rng.integers(0, 4))]
            lines.append(f"{qid} Q0 {doc} {rank} {(n - i) / n:.6f} mine{junk}")
    rng.shuffle(lines)
    text = "\n".join(lines) + "\n"
    run = _all_ways(text, tmp_path)
    judgments = pd.DataFrame(
        {
            "query_id": pd.array([q for q in qrel for _ in qrel[q]], dtype="string"),
            "doc_uri": pd.array([d for q in qrel for d in qrel[q]], dtype="string"),
            "chunk_id": pd.array([None] * sum(map(len, qrel.values())), dtype="string"),
            "relevance": np.array([g for q in qrel for g in qrel[q].values()], dtype=np.int64),
            "stratum": pd.array([None] * sum(map(len, qrel.values())), dtype="string"),
        }
    )
    ks = (1, 5, 10, 20)
    ours = compute(judgments, run, k=ks + (1000,), gain="linear").set_index("query_id")
    runp = {}
    for line in lines:
        q, _, d, _, s = line.split()[:5]
        runp.setdefault(q, {})[d] = float(s)
    measures = {
        "P.1,5,10,20",
        "recall.1,5,10,20",
        "ndcg_cut.1,5,10,20",
        "map_cut.1,5,10,20",
        "recip_rank",
        "success.1,5,10",
    }
    ref = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(runp)
    assert set(ref) == set(ours.index)
    checked = 0
    for qid, values in ref.items():
        row = ours.loc[qid]
        for k in ks:
            pairs = [
                (f"P_{k}", f"precision@{k}"),
                (f"recall_{k}", f"recall@{k}"),
                (f"ndcg_cut_{k}", f"ndcg_linear@{k}"),
                (f"map_cut_{k}", f"map@{k}"),
            ]
            if k in (1, 5, 10):
                pairs.append((f"success_{k}", f"hit_rate@{k}"))
            for theirs, mine in pairs:
                assert row[mine] == pytest.approx(values[theirs], abs=1e-9), (qid, mine)
                checked += 1
        assert row["mrr@1000"] == pytest.approx(values["recip_rank"], abs=1e-9), qid
    assert checked == 40 * (4 * 4 + 3)


@pytest.mark.parametrize("case", ["dense distinct", "dense with ties", "sparse ranks"])
@pytest.mark.parametrize("seed", range(3))
def test_rank_order_sorts_by_group_rank_doc_bytes_then_line(case, seed):
    """:func:`rank_order`'s three ways (one scatter, a stable sort, a lexsort for ranks spread
    too far for a table) against Python's sort by (group, rank, doc id bytes, line)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    n_groups, depth = 7, 40
    if case == "dense distinct":
        codes = np.repeat(np.arange(n_groups), depth)
        rank = np.tile(np.arange(1, depth + 1), n_groups)
    elif case == "dense with ties":
        codes = rng.integers(0, n_groups, size=n_groups * depth)
        rank = rng.integers(1, 6, size=len(codes))
    else:
        codes = rng.integers(0, n_groups, size=300)
        rank = rng.choice([1, 2, 5, 10**6, 10**9, 10**12], size=len(codes))
    order = rng.permutation(len(codes))
    codes, rank = codes[order].astype(np.int64), rank[order].astype(np.int64)
    docs = [rng.choice(["a", "B", "b", "d1", "d10", "é", "z"]) for _ in range(len(codes))]
    got = io_trec.rank_order(codes, rank, pa.chunked_array([pa.array(docs, pa.large_string())]))
    want = sorted(range(len(codes)), key=lambda i: (codes[i], rank[i], docs[i].encode(), i))
    assert got.tolist() == want


@pytest.mark.parametrize("order", ["rank", "score"])
def test_trec_run_ids_are_text_on_every_path_ascii_or_not(tmp_path, order):
    # arrow reads the ids as bytes and views them as text without checking them again; the
    # frame's columns must be real strings all the same (non-ASCII ids take the bytes path of
    # from_trec_run and the careful pass; ASCII ones the file path too).
    for ids in (["d1", "d2", "d3"], ["dé", "d→2", "文書3"]):
        text = "".join(f"q{i % 2}é Q0 {d} {i + 1} {1 - i / 10} r\n" for i, d in enumerate(ids))
        run = _all_ways(text, tmp_path, order=order)
        assert isinstance(run["doc_id"].dtype, pd.StringDtype)
        assert isinstance(run["query_id"].dtype, pd.StringDtype)
        assert sorted(run["doc_id"]) == sorted(ids)
        assert run["doc_id"].str.upper().tolist() == [d.upper() for d in run["doc_id"]]
        assert set(run["query_id"]) == {"q0é", "q1é"}
        got = from_trec_run(text.encode("utf-8"), order=order)
        pd.testing.assert_frame_equal(got, run, check_exact=True)
    with pytest.raises(FormatError, match="UTF-8"):
        from_trec_run(b"q1 Q0 d\xff 1 0.5 r\n")
