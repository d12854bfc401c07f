"""The readers of trec_eval's ``-R prefs``, ``qrels_prefs`` and ``qrels_jg`` files: frames, the
arrow path equal to the careful one, and malformed lines as one FormatError naming file and line."""

from __future__ import annotations

import pandas as pd
import pytest

from retrieval_eval.errors import FormatError
from retrieval_eval.io.prefs import read_prefs, read_qrels_jg, read_qrels_prefs


def write(tmp_path, text, name="j.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_prefs_frame_keeps_ids_as_strings(tmp_path):
    got = read_prefs(write(tmp_path, "# c\n001 u s 007 2\n001  u\ts 010 0.5\n"))
    assert list(got.columns) == ["query_id", "jg", "jsg", "doc_id", "rel_level"]
    assert got["query_id"].tolist() == ["001", "001"] and got["doc_id"].tolist() == ["007", "010"]
    assert str(got["query_id"].dtype) == "string" and got["rel_level"].tolist() == [2.0, 0.5]


def test_qrels_prefs_puts_every_line_in_sub_group_0(tmp_path):
    got = read_qrels_prefs(write(tmp_path, "q 0 a 1\nq 1 b 0\n"))
    assert got["jg"].tolist() == ["0", "1"] and got["jsg"].tolist() == ["0", "0"]
    assert list(got.columns) == ["query_id", "jg", "jsg", "doc_id", "rel_level"]


@pytest.mark.parametrize(
    "plain, messy", [("q 0 a 1\nq 0 b 0\nr 2 a -1\n", "# head\nq 0 a 1\n  q\t0 b  0\n\nr 2 a -1\n")]
)
def test_the_arrow_path_and_the_careful_path_agree(tmp_path, plain, messy):
    for reader in (read_qrels_prefs, read_qrels_jg):
        fast = reader(write(tmp_path, plain, "plain.txt"))
        careful = reader(write(tmp_path, messy, "messy.txt"))
        pd.testing.assert_frame_equal(fast, careful)
    assert read_qrels_jg(write(tmp_path, plain))["relevance"].tolist() == [1, 0, -1]


@pytest.mark.parametrize(
    "reader, text, line, what",
    [
        (read_prefs, "q u s a 1\nq u s b\n", 2, "expected 5 fields"),
        (read_prefs, "q u s a 1\nq u s b nan\n", 2, "not a finite number"),
        (read_prefs, "q u s a 1 extra\n", 1, "expected 5 fields"),
        (read_qrels_prefs, "q 0 a x\n", 1, "not a finite number"),
        (read_qrels_jg, "q 0 a 1\nq 0 b 2.5\n", 2, "not an integer"),
        (read_qrels_jg, "q 0 a 1\nq 1 a 1\nq 0 a 0\n", 3, "already judged in judgment group 0"),
        (read_qrels_jg, "# only a comment\n", None, "no judgment lines"),
    ],
)
def test_malformed_input_is_one_line_naming_file_and_line(tmp_path, reader, text, line, what):
    path = write(tmp_path, text)
    with pytest.raises(FormatError) as err:
        reader(path)
    assert err.value.line == line and what in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith(str(path))


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(FormatError, match="cannot read"):
        read_prefs(tmp_path / "nope.txt")
