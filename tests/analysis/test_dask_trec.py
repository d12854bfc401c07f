"""The Dask path's TREC text: byte ranges of whole queries, each read by the package's own reader,
and labels partitioned with the run.

The oracles are the in-memory reader and evaluate on the same file: :func:`read_trec_run`'s
frame and its one-line error (same file, same line), and :func:`retrieval_eval.evaluate`'s
every frame (``assert_same``). Equality runs on a ``LocalCluster`` of two worker processes.
"""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from dask.distributed import Client, LocalCluster
from streaming_cases import assert_same, make_case

import retrieval_eval as rev
import retrieval_eval.io as formats
from retrieval_eval import dask as red
from retrieval_eval.errors import FormatError
from retrieval_eval.io import byte_ranges as br
from retrieval_eval.io.byte_ranges import byte_ranges, range_bytes, range_view, read_range


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def case():
    return make_case(9, n_queries=200, long_query=400)


def _lines(run: pd.DataFrame) -> list[str]:
    return formats.to_trec_run(run).splitlines(keepends=True)


def _write(path, lines) -> str:
    path.write_text("".join(lines))
    return str(path)


def _error(call) -> str:
    with pytest.raises(FormatError) as info:
        call()
    text = str(info.value)
    assert "\n" not in text
    return text


# -- the cutting --------------------------------------------------------------------------


def _first_qid(data: bytes):
    for line in data.split(b"\n"):
        f = line.split()
        if f and not f[0].startswith(b"#"):
            return f[0]
    return None


def _last_qid(data: bytes):
    for line in reversed(data.split(b"\n")):
        f = line.split()
        if f and not f[0].startswith(b"#"):
            return f[0]
    return None


@pytest.mark.parametrize("blocksize", [97, 1000, 4096])
def test_ranges_cover_the_file_once_and_cut_between_queries(case, tmp_path, blocksize):
    lines = _lines(case[1])
    lines[10:10] = ["# a comment\n", "\n"]
    path = _write(tmp_path / "run.trec", lines)
    ranges = byte_ranges(path, blocksize)
    pieces = [range_bytes(r) for r in ranges]
    with open(path, "rb") as fh:
        whole = fh.read()
    assert b"".join(p for p, _ in pieces) == whole  # every line once, in order
    assert [at for _, at in pieces] == sorted(at for _, at in pieces)
    assert any(not p for p, _ in pieces)  # the 400-line query covers whole ranges: they are empty
    full = [p for p, _ in pieces if _first_qid(p) is not None]
    for a, b in zip(full[:-1], full[1:]):
        assert _last_qid(a) != _first_qid(b)  # no query's lines cut in two
    got = pd.concat([read_range(r) for r in ranges], ignore_index=True)
    pd.testing.assert_frame_equal(got, rev.read_trec_run(path), check_exact=True)


@pytest.mark.parametrize("blocksize", [97, 1000, 4096])
def test_a_mapped_range_shows_the_bytes_a_read_gives(case, tmp_path, blocksize):
    lines = _lines(case[1])
    lines[0] = "\ufeff" + lines[0]  # a BOM: the reader's careful pass, from the mapped bytes
    path = _write(tmp_path / "run.trec", lines)
    ranges = byte_ranges(path, blocksize)
    views = [range_view(r) for r in ranges]
    assert any(isinstance(v, memoryview) and len(v) for v, _ in views)  # mapped, not read
    assert [(bytes(v), at) for v, at in views] == [range_bytes(r) for r in ranges]
    got = pd.concat([read_range(r) for r in ranges], ignore_index=True)
    pd.testing.assert_frame_equal(got, rev.read_trec_run(path), check_exact=True)


def test_a_file_that_cannot_be_mapped_is_read(case, tmp_path, monkeypatch):
    import pyarrow as pa

    path = _write(tmp_path / "run.trec", _lines(case[1]))
    ranges = byte_ranges(path, 1000)
    expected = [range_bytes(r) for r in ranges]

    def refuse(*args, **kwargs):
        raise OSError("no mapping here")

    monkeypatch.setattr(pa, "memory_map", refuse)
    views = [br.range_view(r) for r in ranges]
    assert all(isinstance(v, bytes) for v, _ in views)
    assert views == expected
    got = pd.concat([read_range(r) for r in ranges], ignore_index=True)
    pd.testing.assert_frame_equal(got, rev.read_trec_run(path), check_exact=True)


def test_a_glob_that_matches_no_file_is_one_line(tmp_path, case):
    text = _error(lambda: red.evaluate(case[0], str(tmp_path / "nothing" / "*.trec")))
    assert text == f"{tmp_path / 'nothing' / '*.trec'}: no file matches this pattern"
    text = _error(lambda: red.evaluate(case[0], str(tmp_path / "absent.trec")))
    assert text == _error(lambda: rev.read_trec_run(tmp_path / "absent.trec"))


# -- the same errors as the main reader ------------------------------------------------------


BAD = {
    "nan": lambda f: f[:4] + ["nan"] + f[5:],
    "five": lambda f: f[:5],
    "rank": lambda f: f[:3] + ["x1"] + f[4:],
    "inf": lambda f: f[:4] + ["-inf"] + f[5:],
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_line_gives_the_main_readers_message_with_the_files_line(case, tmp_path, kind, client):
    lines = _lines(case[1])
    at = len(lines) * 3 // 4  # in a late range: the line is counted in the file
    lines[at] = " ".join(BAD[kind](lines[at].split())) + "\n"
    path = _write(tmp_path / "bad.trec", lines)
    expected = _error(lambda: rev.read_trec_run(path))
    assert f":{at + 1}:" in expected or f"line {at + 1}" in expected
    for labels, shuffle in [("broadcast", "auto"), ("broadcast", True), ("partitioned", "auto")]:
        kw = dict(blocksize=2000, labels=labels, shuffle=shuffle)
        assert _error(lambda kw=kw: red.evaluate(case[0], path, **kw)) == expected


def test_of_two_bad_lines_the_first_in_the_file_is_reported(case, tmp_path, client):
    lines = _lines(case[1])
    lines[-5] = " ".join(lines[-5].split()[:5]) + "\n"  # too few fields, late
    lines[len(lines) // 2] = "q1 Q0 d1 one 0.5 bm25\n"  # a bad rank, earlier
    path = _write(tmp_path / "two.trec", lines)
    expected = _error(lambda: rev.read_trec_run(path))
    assert f"{len(lines) // 2 + 1}" in expected
    assert _error(lambda: red.evaluate(case[0], path, blocksize=1500)) == expected
    assert _error(lambda: red.evaluate(case[0], path, blocksize=1500, labels="partitioned")) == expected


@pytest.mark.parametrize("early_bad_field", [False, True])
def test_invalid_utf8_is_named_by_its_line(case, tmp_path, client, early_bad_field):
    lines = _lines(case[1])
    if early_bad_field:  # the reader checks the encoding of the whole file before any field
        lines[3] = "q1 Q0 d1 one 0.5 bm25\n"
    at = len(lines) - 20
    path = tmp_path / "bytes.trec"
    data = "".join(lines).encode()
    start = sum(len(x) for x in lines[:at])
    path.write_bytes(data[:start] + b"q\xff" + data[start:])
    expected = _error(lambda: rev.read_trec_run(path))
    assert "not valid UTF-8" in expected
    assert _error(lambda: red.evaluate(case[0], str(path), blocksize=2000)) == expected
    assert _error(lambda: red.evaluate(case[0], str(path), blocksize=2000, labels="partitioned")) == expected


# -- the same answer as the main reader --------------------------------------------------------


@pytest.mark.parametrize("labels", ["broadcast", "partitioned"])
def test_a_file_equals_in_memory_for_both_label_modes(case, tmp_path, client, labels):
    judgments, run = case
    path = _write(tmp_path / "run.trec", _lines(run))
    expected = rev.evaluate(judgments, path)
    got = red.evaluate(judgments, path, blocksize=3000, labels=labels)
    assert_same(expected, got)
    pd.testing.assert_frame_equal(got.heads, rev.dedupe_run(expected.run, depth=10), check_exact=True)


@pytest.mark.parametrize("labels", ["broadcast", "partitioned"])
def test_comments_blank_lines_seven_fields_and_ties_read_as_the_main_reader(case, tmp_path, client, labels):
    judgments, run = case
    lines = _lines(run)
    for i in range(0, len(lines), 37):
        lines[i] = lines[i].rstrip("\n") + " extra\n"  # a 7th field: ignored, as trec_eval does
    for i in range(5, len(lines), 101):
        lines.insert(i, "# comment line\n" if i % 2 else "   \n")
    lines.insert(0, "# header\n")
    fields = lines[200].split()  # a rank tie: the reader orders it by doc id
    lines.insert(201, " ".join(fields[:2] + ["d999"] + fields[3:]) + "\n")
    path = _write(tmp_path / "odd.trec", lines)
    assert_same(rev.evaluate(judgments, path), red.evaluate(judgments, path, blocksize=2500, labels=labels))


def test_an_empty_file_is_an_empty_run(case, tmp_path, client):
    path = _write(tmp_path / "empty.trec", [])
    assert_same(rev.evaluate(case[0], path), red.evaluate(case[0], path))
    only = _write(tmp_path / "comments.trec", ["# nothing\n", "\n"])
    assert_same(rev.evaluate(case[0], only), red.evaluate(case[0], only, blocksize=5))


@pytest.mark.parametrize("labels", ["broadcast", "partitioned"])
def test_a_ranking_split_across_ranges_is_shuffled_or_refused(case, tmp_path, client, labels):
    judgments, run = case
    lines = _lines(run)
    order = np.random.default_rng(3).permutation(len(lines))
    path = _write(tmp_path / "shuffled.trec", [lines[i] for i in order])
    expected = rev.evaluate(judgments, path)
    got = red.evaluate(judgments, path, blocksize=4000, labels=labels)
    assert_same(expected, got)
    pd.testing.assert_frame_equal(got.heads, rev.dedupe_run(expected.run, depth=10), check_exact=True)
    text = _error(lambda: red.evaluate(judgments, path, blocksize=4000, labels=labels, shuffle=False))
    assert "is in two places" in text and text.startswith(f"{path}: the ranking of query ")


def test_a_query_across_two_files_of_a_glob(case, tmp_path, client):
    judgments, run = case
    lines = _lines(run)
    half = next(i for i in range(len(lines) // 2, len(lines)) if lines[i - 1].split()[0] == lines[i].split()[0])
    _write(tmp_path / "a.trec", lines[:half])
    _write(tmp_path / "b.trec", lines[half:])
    whole = _write(tmp_path / "whole.txt", lines)
    got = red.evaluate(judgments, str(tmp_path / "*.trec"), blocksize=5000)
    assert_same(rev.evaluate(judgments, whole), got)


# -- labels partitioned with the run ----------------------------------------------------------


def test_auto_partitions_a_dask_frame_a_parquet_dataset_and_many_labels(case, tmp_path, monkeypatch):
    judgments, _ = case
    assert red.label_mode(judgments, "auto") == "broadcast"
    assert red.label_mode(dd.from_pandas(judgments, npartitions=2), "auto") == "partitioned"
    judgments.to_parquet(tmp_path / "labels.parquet")
    assert red.label_mode(str(tmp_path / "labels.parquet"), "auto") == "partitioned"
    monkeypatch.setattr(red, "BROADCAST_MAX_LABELS", len(judgments) - 1)
    assert red.label_mode(judgments, "auto") == "partitioned"
    assert red.label_mode("labels.qrels", "auto", count=len(judgments)) == "partitioned"  # a file, once read
    assert red.label_mode(judgments, "broadcast") == "broadcast"
    with pytest.raises(ValueError, match="labels must be"):
        red.label_mode(judgments, "everywhere")


@pytest.mark.parametrize("shuffle", ["auto", True])
def test_partitioned_labels_from_dask_and_parquet_equal_in_memory(case, tmp_path, client, shuffle):
    judgments, run = case
    expected = rev.evaluate(judgments, run, k=(1, 3, 10), threshold=2, gain="linear")
    kw = dict(k=(1, 3, 10), threshold=2, gain="linear", shuffle=shuffle)
    ddj = dd.from_pandas(judgments, npartitions=4, sort=False)
    spread = run.iloc[np.random.default_rng(5).permutation(len(run))]
    got = red.evaluate(ddj, dd.from_pandas(run, npartitions=5, sort=False), **kw)
    assert_same(expected, got)
    judgments.to_parquet(tmp_path / "labels.parquet")
    got = red.evaluate(str(tmp_path / "labels.parquet"), dd.from_pandas(run, npartitions=3, sort=False), **kw)
    assert_same(expected, got)
    got = red.evaluate(judgments, dd.from_pandas(spread, npartitions=6, sort=False), labels="partitioned", **kw)
    assert_same(rev.evaluate(judgments, spread, k=(1, 3, 10), threshold=2, gain="linear"), got)


def test_partitioned_labels_keep_their_order_within_a_query(client):
    # Last label wins and a query's stratum is its first label's: the shuffle must not reorder.
    j = pd.DataFrame(
        {
            "query_id": ["q1", "q2", "q1", "q2", "q1"] * 3,
            "doc_uri": ["d1", "d2", "d1", "d2", "d3"] * 3,
            "relevance": [0, 3, 2, 0, 1, 1, 0, 3, 2, 0, 3, 2, 0, 1, 2],
            "stratum": ["a", "b", "c", "a", "b"] * 3,
        }
    )
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d1", "d3", "d2", "d9"]})
    ddj = dd.from_pandas(j, npartitions=5, sort=False)
    assert_same(rev.evaluate(j, run), red.evaluate(ddj, dd.from_pandas(run, npartitions=2), npartitions=3))


def test_a_worker_task_imports_no_dask_dataframe():
    """What a task runs is pickled by reference to a module a worker imports without Dask's
    dataframe module (0.4 s of a worker's first task)."""
    import pickle
    import subprocess
    import sys

    from retrieval_eval.analysis.evaluation import partitions

    for name in ("score_range", "score_moved", "score_pair", "score_frame_part", "keyed_range", "range_error"):
        fn = getattr(red, name, None) or getattr(partitions, name)
        assert fn.__module__ == "retrieval_eval.analysis.evaluation.partitions"
        assert b"retrieval_eval.dask" not in pickle.dumps(fn)
    code = (
        "import sys, pickle; import retrieval_eval.analysis.evaluation.partitions as p; "
        "pickle.loads(pickle.dumps(p.score_range)); "
        "print(sorted(m for m in sys.modules if m == 'dask' or m.startswith(('dask.', 'retrieval_eval.dask'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
