"""Nothing read wrong, nothing written wrong (issue 32), in the io layer: parquet written through
the safe writer, the pyarrow floor, and the readers' one rule for duplicate keys, grades, NaN
scores and ids."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from packaging.requirements import Requirement

import retrieval_eval as rev
from retrieval_eval.io.safewrite import WriteRefused
from retrieval_eval.io.writers import write_parquet

ROOT = Path(rev.__file__).resolve().parent.parent
RUN = [{"query_id": "q1", "ranking": ["d1", "d2"], "scores": [0.9, 0.5]}]


# ---------------------------------------------------------------------------------------------
# Rule 2: parquet through the atomic writer
# ---------------------------------------------------------------------------------------------


def test_a_new_parquet_file_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_parquet(rev.as_run(RUN), tmp_path / "run.parquet")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "run.parquet").st_mode) == 0o644


def test_a_rewritten_parquet_file_keeps_its_mode(tmp_path):
    target = tmp_path / "run.parquet"
    write_parquet(rev.as_run(RUN), target)
    os.chmod(target, 0o640)
    write_parquet(rev.as_run(RUN), target)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_parquet_follows_a_symlink(tmp_path):
    real = tmp_path / "real.parquet"
    real.write_bytes(b"old")
    link = tmp_path / "link.parquet"
    link.symlink_to(real)
    write_parquet(rev.as_run(RUN), link)
    assert link.is_symlink()
    assert pq.read_table(real).num_rows == 2


def test_parquet_refuses_a_hard_linked_file(tmp_path):
    first = tmp_path / "a.parquet"
    first.write_bytes(b"old")
    os.link(first, tmp_path / "b.parquet")
    with pytest.raises(WriteRefused, match="hard links"):
        write_parquet(rev.as_run(RUN), first)
    assert first.read_bytes() == b"old"


def test_parquet_refuses_a_fifo(tmp_path):
    fifo = tmp_path / "out.parquet"
    os.mkfifo(fifo)
    with pytest.raises(WriteRefused, match="FIFO"):
        write_parquet(rev.as_run(RUN), fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_parquet_removes_a_dead_writers_temp_file(tmp_path):
    target = tmp_path / "run.parquet"
    stale = tmp_path / ".run.parquet.999999999.0123456789ab.tmp"  # no such pid
    stale.write_bytes(b"half")
    write_parquet(rev.as_run(RUN), target)
    assert not stale.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["run.parquet"]


def test_parquet_is_fsynced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    write_parquet(rev.as_run(RUN), tmp_path / "run.parquet")
    assert synced


def test_parquet_round_trips_judgments(tmp_path):
    j = rev.as_judgments([{"query_id": "q1", "doc_uri": "d1", "relevance": 2}])
    write_parquet(j, tmp_path / "j.parquet")
    back = rev.as_judgments(tmp_path / "j.parquet")
    assert back[["query_id", "doc_uri", "relevance"]].values.tolist() == [["q1", "d1", 2]]


# ---------------------------------------------------------------------------------------------
# Rule 6: the pyarrow floor excludes 14.0.0 (CVE-2023-47248)
# ---------------------------------------------------------------------------------------------


def test_the_pyarrow_floor_excludes_the_vulnerable_release():
    text = (ROOT / "pyproject.toml").read_text()
    arrow = Requirement(re.search(r'^\s*"(pyarrow[^"]*)"', text, re.MULTILINE).group(1))
    assert not arrow.specifier.contains("14.0.0")
    assert arrow.specifier.contains("14.0.1")


# ---------------------------------------------------------------------------------------------
# Rule 4: a pytrec_eval/ranx dict JSON with a key twice is refused, naming the key and line
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ('{"q1": {"d1": 1},\n "q1": {"d2": 1}}\n', "q1", 2),
        ('{"q1": {"d1": 1, "d2": 0},\n "q2": {"d1": 1,\n "d1": 2}}\n', "d1", 3),
        ('{"q1": {"d1": 1, "d1": 0}}\n', "d1", 1),
    ],
)
def test_a_dict_json_with_a_duplicate_key_is_refused(tmp_path, text, key, line):
    path = tmp_path / "labels.json"
    path.write_text(text)
    with pytest.raises(rev.FormatError) as err:
        rev.as_judgments(path)
    assert err.value.line == line and f'duplicate key "{key}"' in str(err.value)
    run = tmp_path / "run.json"
    run.write_text(text.replace(": 1", ": 0.5"))
    with pytest.raises(rev.FormatError, match=f'duplicate key "{key}"'):
        rev.as_run(run)


def test_a_doc_in_two_queries_is_no_duplicate(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text('{"q1": {"d1": 1},\n "q2": {"d1": 2}}\n')
    assert rev.as_judgments(path)["relevance"].tolist() == [1, 2]


# ---------------------------------------------------------------------------------------------
# Rule 11: grades (and ranks) are [+-]?[0-9]+ on every path; arrow's hex reading is not used
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("grade", ["0x10", "0X1f"])
def test_a_hex_grade_is_refused_in_qrels(tmp_path, grade):
    path = tmp_path / "labels.qrels"
    path.write_text(f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    with pytest.raises(rev.FormatError, match="relevance must be an integer") as err:
        rev.as_judgments(path)
    assert err.value.line == 2
    with pytest.raises(rev.FormatError, match="relevance must be an integer"):
        rev.from_qrels(path.read_bytes())


def test_a_hex_rank_is_refused_in_a_trec_run(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d1 0x1 2.0 sys\n")
    with pytest.raises(rev.FormatError, match="rank must be an integer"):
        rev.as_run(path)


def test_an_id_holding_0x_still_reads(tmp_path):
    path = tmp_path / "labels.qrels"
    path.write_text("q1 0 doc0x1 2\nq1 0 0xdead 1\n")
    j = rev.as_judgments(path)
    assert j["doc_uri"].tolist() == ["doc0x1", "0xdead"] and j["relevance"].tolist() == [2, 1]


# ---------------------------------------------------------------------------------------------
# Rule 12: a missing score inside a scored ranking is refused in CSV and parquet, as in JSONL
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ["NaN", "", "nan"])
def test_a_nan_score_in_csv_is_refused(tmp_path, cell):
    path = tmp_path / "run.csv"
    path.write_text(f"query_id,doc_id,score\nq1,d1,0.9\nq1,d2,{cell}\n")
    with pytest.raises(rev.FormatError, match="score is missing") as err:
        rev.as_run(path)
    assert err.value.line == 3


def test_a_nan_score_in_parquet_is_refused(tmp_path):
    path = tmp_path / "run.parquet"
    pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [0.5, float("nan")]}).to_parquet(path)
    with pytest.raises(rev.FormatError, match="row 2: score is missing"):
        rev.as_run(path)
    inf = tmp_path / "inf.parquet"
    pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [float("inf")]}).to_parquet(inf)
    with pytest.raises(rev.FormatError, match="row 1: score must be a finite number"):
        rev.as_run(inf)


def test_a_ranking_without_scores_stays_valid(tmp_path):
    run = rev.as_run(
        {
            "a": [{"query_id": "q1", "ranking": ["d1"], "scores": [0.5]}],
            "b": [{"query_id": "q1", "ranking": ["x", "y"]}],
        }
    )
    write_parquet(run, tmp_path / "run.parquet")
    back = rev.as_run(tmp_path / "run.parquet")
    assert back["score"].isna().tolist() == [False, True, True]


# ---------------------------------------------------------------------------------------------
# Rule 13: a backup never replaces an older backup holding other bytes
# ---------------------------------------------------------------------------------------------


def test_backups_are_numbered_not_replaced(tmp_path):
    from retrieval_eval.io.safewrite import LockedFile, atomic_write_text

    path = tmp_path / "labels.jsonl"
    path.write_text("original\n")
    for text in ("one\n", "two\n"):
        with LockedFile(path) as f:
            f.replace(text.encode(), backup=True)
    assert (tmp_path / "labels.jsonl.bak").read_text() == "original\n"
    assert (tmp_path / "labels.jsonl.bak.1").read_text() == "one\n"
    assert f.backup_path == str(tmp_path / "labels.jsonl.bak.1")
    atomic_write_text(path, "three\n", backup=True)
    assert (tmp_path / "labels.jsonl.bak.2").read_text() == "two\n"
    (tmp_path / "labels.jsonl.bak.1").write_text("three\n")  # a backup already holding these bytes
    with LockedFile(path) as f:
        f.replace(b"four\n", backup=True)
    assert f.backup_path == str(tmp_path / "labels.jsonl.bak.1")  # reused, no new name
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "labels.jsonl",
        "labels.jsonl.bak",
        "labels.jsonl.bak.1",
        "labels.jsonl.bak.2",
    ]
