"""Readers and writers for the field's formats (docs/interop.md): BEIR folders, ir_datasets,
PyTerrier frames, pytrec_eval/ranx dicts and objects, parquet and CSV tables, and the one
format-detection rule. Every reader round-trips; every bad input is one line naming the file,
the line or row, and what is wrong."""

from __future__ import annotations

import json
import os
from collections import defaultdict, namedtuple
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import spec_fixtures_dir

import retrieval_eval as rev
from retrieval_eval.errors import FormatError
from retrieval_eval.io import detect, interop, writers

DATA = Path(__file__).parent.parent / "data"
BEIR = DATA / "beir-scifact-mini"


def fx(case: str, name: str) -> Path:
    return spec_fixtures_dir() / case / name


def _pytrec(name: str) -> dict:
    return json.loads((DATA / "pytrec_eval" / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# BEIR
# ---------------------------------------------------------------------------------------------


def test_read_beir_returns_corpus_queries_and_the_split_judgments():
    corpus, queries, judgments = interop.read_beir(BEIR)
    assert corpus["doc_uri"].tolist() == ["4983", "5836", "7912", "18670", "19238"]
    assert corpus["chunk_id"].tolist() == corpus["doc_uri"].tolist()
    assert corpus["title"].tolist()[0] == "Microstructural development of human newborn cerebral white matter"
    assert corpus["text"].iloc[2].startswith("ID elements are short interspersed elements")
    assert queries["query_id"].tolist() == ["1", "3", "5", "13"]
    assert queries["query"].iloc[3] == "5% of perinatal mortality is due to low birth weight."
    assert not queries["expect_none"].any()
    assert list(zip(judgments["query_id"], judgments["doc_uri"], judgments["relevance"])) == [
        ("1", "4983", 1),
        ("3", "5836", 1),
        ("3", "7912", 2),
        ("5", "18670", 1),
        ("13", "19238", 0),
    ]
    assert judgments["query"].iloc[0] == "0-dimensional biomaterials show inductive properties."
    assert str(judgments["query_id"].dtype) == "string"


def test_read_beir_other_split():
    data = interop.read_beir(BEIR, split="dev")
    assert list(zip(data.judgments["query_id"], data.judgments["doc_uri"])) == [("1", "5836")]


def test_read_beir_missing_split_names_the_splits_it_has():
    with pytest.raises(FormatError, match=r"train\.tsv: no such split; this folder has dev, test"):
        interop.read_beir(BEIR, split="train")


def test_a_beir_folder_is_accepted_wherever_labels_are():
    j = rev.as_judgments(str(BEIR))
    assert len(j) == 5 and j["relevance"].sum() == 5


def test_beir_judgments_round_trip_through_qrels():
    j = interop.read_beir(BEIR).judgments
    back = rev.from_qrels(rev.to_qrels(j))
    for col in ("query_id", "doc_uri", "relevance"):
        assert back[col].tolist() == j[col].tolist()


@pytest.mark.parametrize(
    "name, content, where",
    [
        ("queries.jsonl", '{"_id": "1", "text": "a"}\n{"_id": "2", "text": \n', "queries.jsonl:2: invalid JSON"),
        ("queries.jsonl", '{"_id": "1", "text": "a"}\n{"text": "no id"}\n', "queries.jsonl:2: missing _id"),
        ("corpus.jsonl", '{"_id": "d1", "title": "t", "text": 7}\n', "corpus.jsonl:1: text must be a string"),
    ],
)
def test_beir_bad_line_is_named(tmp_path, name, content, where):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n", encoding="utf-8")
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(FormatError) as err:
        interop.read_beir(tmp_path)
    assert where in str(err.value) and "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------
# PyTerrier frames
# ---------------------------------------------------------------------------------------------


def _pyterrier_results() -> pd.DataFrame:
    df = pd.read_csv(DATA / "pyterrier" / "results.csv", dtype={"qid": str, "docno": str, "query": str})
    return df  # qid, docid, docno, rank (0-based), score, query: what pt.BatchRetrieve returns


def test_pyterrier_result_frame_maps_to_the_run_frame():
    run = rev.as_run(_pyterrier_results())
    assert list(run.columns[:5]) == list(rev.io.RUN_COLUMNS)
    assert run["doc_id"].tolist() == ["d3", "d1", "d2", "d7", "d9"]
    assert run["rank"].tolist() == [1, 2, 3, 1, 2]  # PyTerrier's rank 0 is the data model's 1
    assert run["score"].tolist() == [14.2, 12.5, 12.5, 8.0, 3.25]


def test_pyterrier_rank_order_is_used_even_when_rows_are_shuffled():
    shuffled = _pyterrier_results().iloc[[2, 0, 4, 1, 3]]
    ev = rev.evaluate(_pyterrier_qrels(), shuffled, k=(1,))
    assert ev.summary.loc["run", "precision@1"] == pytest.approx(0.0)  # d3 and d7 first: unjudged/0


def test_pyterrier_frame_without_rank_is_ranked_by_score_ties_in_row_order():
    frame = _pyterrier_results().drop(columns="rank").iloc[[2, 1, 0]]  # d2, d1 tie at 12.5
    run = rev.as_run(frame)
    ordered = run.sort_values("rank")["doc_id"].tolist()
    assert ordered == ["d3", "d2", "d1"]  # pyterrier.model.add_ranks: method="first"


def _pyterrier_qrels() -> pd.DataFrame:
    return pd.read_csv(DATA / "pyterrier" / "qrels.csv", dtype={"qid": str, "docno": str})


def test_pyterrier_qrels_frame_maps_to_judgments():
    j = rev.as_judgments(_pyterrier_qrels())
    assert list(zip(j["query_id"], j["doc_uri"], j["relevance"])) == [
        ("q1", "d1", 2),
        ("q1", "d2", 0),
        ("q1", "d4", 1),
        ("q2", "d9", 1),
    ]
    assert "iteration" in j.columns  # other columns ride along


def test_ir_measures_qrels_frame_maps_doc_id_to_doc_uri():
    frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
    assert rev.as_judgments(frame)["doc_uri"].tolist() == ["d1"]


def test_pyterrier_csv_files_are_read_with_the_same_mapping():
    run = rev.as_run(str(DATA / "pyterrier" / "results.csv"))
    assert run["doc_id"].tolist() == ["d3", "d1", "d2", "d7", "d9"] and run["rank"].tolist() == [1, 2, 3, 1, 2]
    j = rev.as_judgments(str(DATA / "pyterrier" / "qrels.csv"))
    assert j["relevance"].tolist() == [2, 0, 1, 1] and j["line"].tolist() == [2, 3, 4, 5]


# ---------------------------------------------------------------------------------------------
# pytrec_eval / ranx dicts and objects
# ---------------------------------------------------------------------------------------------


def test_score_dict_run_is_ranked_by_score_then_doc_id_descending():
    run = rev.as_run(_pytrec("run.json"))
    assert run["doc_id"].tolist() == ["d3", "d2", "d1", "d7", "d9"]  # d2 > d1 at the 12.5 tie
    assert run["rank"].tolist() == [1, 2, 3, 1, 2]


def test_dict_inputs_score_like_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _pytrec("qrels.json"), _pytrec("run.json")
    measures = {"P_1", "P_2", "recall_2", "ndcg_cut_2", "map_cut_2"}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ev = rev.evaluate(qrels, run, k=(1, 2), gain="linear")
    pq = ev.per_query.set_index("query_id")
    for q, values in oracle.items():
        assert pq.loc[q, "precision@1"] == pytest.approx(values["P_1"])
        assert pq.loc[q, "precision@2"] == pytest.approx(values["P_2"])
        assert pq.loc[q, "recall@2"] == pytest.approx(values["recall_2"])
        assert pq.loc[q, "ndcg_linear@2"] == pytest.approx(values["ndcg_cut_2"])
        assert pq.loc[q, "map@2"] == pytest.approx(values["map_cut_2"])


def test_qrels_dict_maps_to_judgments_negative_grade_as_zero():
    j = rev.as_judgments({"q1": {"d1": 2, "d2": -1}})
    assert list(zip(j["doc_uri"], j["relevance"], j["line"])) == [("d1", 2, 1), ("d2", 0, 2)]


def test_to_dict_round_trips_runs_and_qrels():
    qrels, run = _pytrec("qrels.json"), _pytrec("run.json")
    assert interop.to_dict(rev.as_judgments(qrels)) == qrels
    assert interop.to_dict(rev.as_run(run)) == run


def test_to_dict_of_several_systems_is_keyed_by_system():
    run = rev.as_run({"a": {"q1": {"d1": 1.0}}, "b": {"q1": {"d2": 2.0}}})
    assert interop.to_dict(run) == {"a": {"q1": {"d1": 1.0}}, "b": {"q1": {"d2": 2.0}}}


def test_to_dict_without_scores_writes_descending_synthetic_scores():
    run = rev.parse_run('{"query_id": "q1", "ranking": ["d1", "d2", "d1"]}\n')
    assert interop.to_dict(run) == {"q1": {"d1": 3.0, "d2": 2.0}}  # first d1 kept


def test_to_dict_key_is_chunk_id_else_doc_uri():
    j = rev.parse_judgments(
        '{"query_id": "q", "doc_uri": "d", "chunk_id": "c1:' + "0" * 32 + '", "relevance": 1}\n'
        '{"query_id": "q", "doc_uri": "e", "relevance": 2}\n'
    )
    assert interop.to_dict(j) == {"q": {"c1:" + "0" * 32: 1, "e": 2}}


class _RanxLike:
    """Stands in for ranx.Run/ranx.Qrels: ``to_dict()`` returns a defaultdict (as ranx's does)
    and a Run has a ``name``."""

    def __init__(self, d: dict, name: str | None = None) -> None:
        self._d, self.name = d, name

    def to_dict(self):
        out = defaultdict(dict)
        for q, docs in self._d.items():
            out[q] = dict(docs)
        return out


def test_ranx_run_object_is_read_through_to_dict_with_its_name_as_system():
    run = rev.as_run(_RanxLike(_pytrec("run.json"), name="bm25"))
    assert set(run["system"]) == {"bm25"} and run["doc_id"].tolist()[:3] == ["d3", "d2", "d1"]


def test_ranx_qrels_object_is_read_through_to_dict():
    j = rev.as_judgments(_RanxLike(_pytrec("qrels.json")))
    assert interop.to_dict(j) == _pytrec("qrels.json")


def test_a_run_dict_passed_as_labels_says_it_is_a_run():
    with pytest.raises(FormatError, match=r"is a run; pass it as the run \(--run, as_run\)"):
        rev.as_judgments(_pytrec("run.json"))


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"q1": {"d1": "high"}}, "query q1, doc d1: score must be a finite number, got 'high'"),
        ({"q1": {"d1": float("inf")}}, "query q1, doc d1: score must be a finite number, got inf"),
        ({"q1": {7: 1.0}}, "query q1: doc id 7 must be a non-empty string"),
        ({"q1": {"d1": 1.0}, "q2": [1]}, "query q2: expected {doc: score}, found list"),
    ],
)
def test_bad_score_dict_names_query_and_doc(obj, message):
    with pytest.raises(FormatError) as err:
        interop.run_from_dict(obj, label="run.json")
    assert str(err.value) == f"run.json: {message}"


def test_bad_qrels_dict_names_query_and_doc():
    with pytest.raises(FormatError, match=r"^qrels: query q1, doc d2: relevance must be an integer, got 'x'$"):
        interop.judgments_from_dict({"q1": {"d1": 1, "d2": "x"}}, label="qrels")


# ---------------------------------------------------------------------------------------------
# ir_datasets (a stand-in with the documented iterators and named tuples)
# ---------------------------------------------------------------------------------------------

TrecQrel = namedtuple("TrecQrel", ["query_id", "doc_id", "relevance", "iteration"])
GenericQuery = namedtuple("GenericQuery", ["query_id", "text"])
GenericDoc = namedtuple("GenericDoc", ["doc_id", "text"])
TitleDoc = namedtuple("TitleDoc", ["doc_id", "title", "body"])
GenericScoredDoc = namedtuple("GenericScoredDoc", ["query_id", "doc_id", "score"])


class _Dataset:
    def __init__(self, docs=None, scored=True):
        self._docs = docs if docs is not None else [GenericDoc("d1", "one"), GenericDoc("d2", "two")]
        if not scored:
            self.has_scoreddocs = lambda: False

    def dataset_id(self):
        return "stand-in/test"

    def qrels_iter(self):
        yield TrecQrel("q1", "d1", 2, "0")
        yield TrecQrel("q1", "d2", -1, "0")

    def queries_iter(self):
        yield GenericQuery("q1", "what is one")

    def docs_iter(self):
        yield from self._docs

    def scoreddocs_iter(self):
        yield GenericScoredDoc("q1", "d1", 1.5)
        yield GenericScoredDoc("q1", "d2", 2.5)


def test_from_ir_datasets_reads_every_iterator_it_has():
    got = interop.from_ir_datasets(_Dataset())
    assert list(zip(got.judgments["query_id"], got.judgments["doc_uri"], got.judgments["relevance"])) == [
        ("q1", "d1", 2),
        ("q1", "d2", 0),
    ]
    assert got.queries["query"].tolist() == ["what is one"]
    assert got.corpus["doc_uri"].tolist() == ["d1", "d2"] and got.corpus["text"].tolist() == ["one", "two"]
    assert got.run["doc_id"].tolist() == ["d2", "d1"]  # ranked by score


def test_from_ir_datasets_skips_what_the_dataset_lacks_and_docs_on_request():
    got = interop.from_ir_datasets(_Dataset(scored=False), docs=False)
    assert got.run is None and got.corpus is None and got.judgments is not None


def test_from_ir_datasets_title_body_docs():
    got = interop.from_ir_datasets(_Dataset(docs=[TitleDoc("d1", "T", "B")]))
    assert got.corpus["text"].tolist() == ["B"] and got.corpus["title"].tolist() == ["T"]


def test_from_ir_datasets_refuses_rows_that_are_not_named_tuples():
    class Bad(_Dataset):
        def queries_iter(self):
            yield ("q1", "text")

    with pytest.raises(FormatError, match=r"^stand-in/test queries: expected named tuples, found tuple$"):
        interop.from_ir_datasets(Bad())


# ---------------------------------------------------------------------------------------------
# Parquet and CSV
# ---------------------------------------------------------------------------------------------


def _same_judgments(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = [c for c in rev.io.JUDGMENT_FIELDS]
    pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True))
    assert a["extra"].tolist() == b["extra"].tolist()


def test_parquet_judgments_round_trip_every_field(tmp_path):
    j = rev.parse_judgments(
        '{"query_id": "q1", "query": "t", "doc_uri": "d1", "chunk_id": "c1:' + "a" * 32 + '", "relevance": 2,'
        ' "labeled_by": "human:x", "stratum": "s", "custom": {"k": [1, 2]}}\n'
        '{"query_id": "q2", "doc_uri": "d2", "relevance": 0}\n'
    )
    path = tmp_path / "j.parquet"
    writers.write_parquet(j, path)
    back = rev.as_judgments(str(path))
    _same_judgments(back, j)
    assert back["extra"].iloc[0] == {"custom": {"k": [1, 2]}}
    assert back["line"].tolist() == [1, 2]  # parquet rows


def test_parquet_run_round_trip_with_several_systems(tmp_path):
    run = rev.as_run({"a": _pytrec("run.json"), "b": rev.parse_run('{"query_id": "q1", "ranking": ["x"]}\n')})
    path = tmp_path / "run.parquet"
    writers.write_parquet(run, path)
    pd.testing.assert_frame_equal(rev.as_run(str(path)), run)


def test_parquet_is_read_by_its_magic_bytes_whatever_its_name(tmp_path):
    run = rev.as_run(_pytrec("run.json"))
    path = tmp_path / "run.jsonl"
    writers.write_parquet(run, path)
    assert detect.sniff(path).kind == "parquet"
    pd.testing.assert_frame_equal(rev.as_run(str(path)), run)


def test_parquet_written_by_pyarrow_with_pyterrier_names(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"qid": ["q1", "q1"], "docno": ["b", "a"], "score": [2.0, 1.0], "rank": [0, 1]}),
        tmp_path / "res.parquet",
    )
    run = rev.as_run(str(tmp_path / "res.parquet"))
    assert run["doc_id"].tolist() == ["b", "a"] and run["rank"].tolist() == [1, 2]


def test_csv_run_and_judgments_round_trip(tmp_path):
    run = rev.as_run(_pytrec("run.json"))
    run.to_csv(tmp_path / "run.csv", index=False)
    pd.testing.assert_frame_equal(rev.as_run(str(tmp_path / "run.csv")), run)
    j = rev.read_judgments(fx("basic", "judgments.jsonl"))
    j.drop(columns=["extra", "line"]).to_csv(tmp_path / "j.csv", index=False)
    _same_judgments(rev.as_judgments(str(tmp_path / "j.csv")), j)


def test_parquet_reading_has_no_python_loop_over_rows(tmp_path, monkeypatch):
    """A 200k-row run goes through arrow and numpy: the reader never walks the frame row by
    row (iterrows/itertuples raise here)."""
    n = 200_000
    run = pd.DataFrame(
        {
            "query_id": pd.array(np.repeat([f"q{i}" for i in range(2000)], 100), dtype="string"),
            "doc_id": pd.array([f"d{i}" for i in range(n)], dtype="string"),
            "score": np.linspace(1, 0, n),
        }
    )
    writers.write_parquet(run, tmp_path / "big.parquet")
    monkeypatch.setattr(pd.DataFrame, "iterrows", lambda self: (_ for _ in ()).throw(AssertionError("iterrows")))
    monkeypatch.setattr(
        pd.DataFrame, "itertuples", lambda self, *a, **k: (_ for _ in ()).throw(AssertionError("itertuples"))
    )
    back = rev.as_run(str(tmp_path / "big.parquet"))
    assert len(back) == n and back["rank"].iloc[-1] == 100


def _write_parquet(path: Path, **cols) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(cols), path)
    return str(path)


@pytest.mark.parametrize(
    "cols, message",
    [
        (
            dict(query_id=[1, 2], doc_uri=["a", "b"], relevance=[1, 0]),
            "column query_id holds int64, and ids must be text",
        ),
        (dict(query_id=["q", ""], doc_uri=["a", "b"], relevance=[1, 0]), "row 2: query_id is empty"),
        (dict(query_id=["q", "q"], doc_uri=["a", None], relevance=[1, 0]), "row 2: doc_uri is empty"),
        (dict(query_id=["q", "q"], doc_uri=["a", "b"], relevance=[1, -3]), "row 2: relevance must be >= 0, found -3"),
        (
            dict(query_id=["q", "q"], doc_uri=["a", "b"], relevance=[1.0, 0.5]),
            "row 2: relevance must be an integer, found 0.5",
        ),
        (dict(query_id=["q"], doc_uri=["a"]), "missing column relevance"),
    ],
)
def test_bad_parquet_judgments_name_the_file_and_row(tmp_path, cols, message):
    path = _write_parquet(tmp_path / "j.parquet", **cols)
    with pytest.raises(FormatError) as err:
        rev.as_judgments(path)
    assert str(err.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize(
    "text, message",
    [
        ("query_id,doc_id,score\nq1,d1,1.5\nq1,d2,high\n", ":3: score must be a number, found 'high'"),
        ("query_id,doc_id,score\nq1,d1,1.5\nq1,d2\n", ":3: expected 3 fields, found 2"),
        ("query_id,doc_id,rank\nq1,d1,1\nq1,d2,2.5\n", ":3: rank must be an integer, found '2.5'"),
        ("query_id,doc_id\nq1,\n", ":2: doc_id is empty"),
        ("qid,score\nq1,1\n", ": missing column doc_id"),
    ],
)
def test_bad_csv_run_names_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "run.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as err:
        rev.as_run(str(path))
    assert str(err.value).startswith(f"{path}{message}")


def test_write_parquet_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "run.parquet"
    path.write_bytes(b"precious")

    def crash(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        writers.write_parquet(rev.as_run(_pytrec("run.json")), path)
    assert path.read_bytes() == b"precious"
    assert os.listdir(tmp_path) == ["run.parquet"]


# ---------------------------------------------------------------------------------------------
# One detection rule
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, kind",
    [
        (lambda: BEIR, "beir"),
        (lambda: BEIR / "qrels" / "test.tsv", "beir-qrels"),
        (lambda: BEIR / "queries.jsonl", "beir-queries"),
        (lambda: BEIR / "corpus.jsonl", "beir-corpus"),
        (lambda: fx("qrels", "trec.qrels"), "qrels"),
        (lambda: fx("basic", "judgments.jsonl"), "judgments"),
        (lambda: fx("basic", "run.jsonl"), "run"),
        (lambda: DATA / "pyterrier" / "results.csv", "csv"),
    ],
)
def test_sniff_names_each_format(path, kind):
    assert detect.sniff(path()).kind == kind


def test_sniff_trec_run_and_queries(tmp_path):
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.5 bm25\n", encoding="utf-8")
    (tmp_path / "q.jsonl").write_text('{"query_id": "q1", "query": "x"}\n', encoding="utf-8")
    assert detect.sniff(tmp_path / "r.txt").kind == "trec-run"
    assert detect.sniff(tmp_path / "q.jsonl").kind == "queries"


@pytest.mark.parametrize(
    "reader, path, says",
    [
        (
            rev.as_run,
            lambda: fx("qrels", "trec.qrels"),
            "looks like TREC qrels (labels), not a run; pass it with --judgments or --qrels (as_judgments)",
        ),
        (rev.as_run, lambda: BEIR, "looks like a BEIR folder (labels), not a run"),
        (rev.as_run, lambda: fx("basic", "judgments.jsonl"), "looks like judgments JSONL (labels), not a run"),
        (
            rev.as_judgments,
            lambda: fx("basic", "run.jsonl"),
            "looks like a JSONL run (run), not labels; pass it with --run (as_run)",
        ),
        (
            rev.as_judgments,
            lambda: BEIR / "queries.jsonl",
            "looks like BEIR queries.jsonl (_id, text) (queries), not labels; pass it with --queries (as_queries)",
        ),
        (
            rev.as_judgments,
            lambda: BEIR / "corpus.jsonl",
            "looks like BEIR corpus.jsonl (_id, title, text) (corpus), not labels",
        ),
    ],
)
def test_a_file_of_another_kind_says_what_it_looks_like_and_what_reads_it(reader, path, says):
    with pytest.raises(FormatError) as err:
        reader(str(path()))
    assert says in str(err.value) and str(path()) in str(err.value)


def test_a_folder_that_is_not_beir_is_named():
    with pytest.raises(FormatError, match="is a directory, and not a BEIR folder"):
        rev.as_run(str(DATA / "pyterrier"))


def test_rerank_by_score_matches_trec_run_order_score():
    text = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 3.0 r\nq1 Q0 c 3 3.0 r\n"
    by_reader = rev.from_trec_run(text, order="score")
    by_rule = interop.rerank_by_score(rev.from_trec_run(text))
    pd.testing.assert_frame_equal(by_rule, by_reader)


def test_pytrec_eval_json_files_are_read_as_their_dicts():
    assert detect.sniff(DATA / "pytrec_eval" / "run.json").kind == "json-dict"
    assert interop.to_dict(rev.as_run(str(DATA / "pytrec_eval" / "run.json"))) == _pytrec("run.json")
    assert interop.to_dict(rev.as_judgments(str(DATA / "pytrec_eval" / "qrels.json"))) == _pytrec("qrels.json")


def test_a_broken_pytrec_eval_json_file_names_its_line(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{"q1": {"d1": 1.0,\n "d2": }}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"run\.json:2: invalid JSON"):
        rev.as_run(str(path))


def test_beir_queries_and_corpus_files_are_read_where_queries_and_corpus_are():
    q = rev.as_queries(str(BEIR / "queries.jsonl"))
    assert q["query_id"].tolist() == ["1", "3", "5", "13"]
    c = rev.as_corpus(str(BEIR / "corpus.jsonl"))
    assert c["chunk_id"].tolist() == ["4983", "5836", "7912", "18670", "19238"]


def test_labels_given_as_queries_say_what_reads_them():
    with pytest.raises(FormatError, match="looks like TREC qrels \\(labels\\), not queries; pass it with --judgments"):
        rev.as_queries(str(fx("qrels", "trec.qrels")))
