"""Fast file paths of whitespace tables (TREC runs, qrels): the same frame or the same message as the careful pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from format_helpers import assert_dtypes, refused, same_outcome

from retrieval_eval.errors import FormatError
from retrieval_eval.io import RUN_COLUMNS, from_qrels, from_trec_run, read_qrels, read_trec_run
from retrieval_eval.io import qrels as io_qrels
from retrieval_eval.io import text as io_text
from retrieval_eval.io import trec as io_trec
from retrieval_eval.io import whitespace as io_ws

# ---------------------------------------------------------------------------------------------
# Fast file paths: the same frame or the same message as the careful pass
# ---------------------------------------------------------------------------------------------


TREC_FILES = [
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\nq2 Q0 d1 1 3 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r",  # no final newline
    "q1 Q0 d1 1 0.5 r\r\nq1 Q0 d2 2 0.25 r\r\n",  # CRLF
    "q1 Q0 d1 1 0.5 r\rq1 Q0 d2 2 0.25 r\n",  # a lone CR splits fields, not lines
    "q1 Q0 d1 1 0.5 r\nq1\tQ0 d2 2 0.25 r\n",  # a tab
    "q1 Q0 d1 1 0.5 r\nq1  d2 2 0.25 r\n",  # an empty Q0 field: 5 fields
    "q1 Q0 d1 1 0.5 r\n q1 Q0 d2 2 0.25\n",  # a leading space: 5 fields
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 \n",  # a trailing space: 5 fields
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n\nq2 Q0 d1 1 1 r\n",  # a blank line
    "q1 Q0 d1 1 0.5 r\n# a comment line\nq2 Q0 d1 1 1 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 nan r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 x 0.25 r\n",
    "q1 Q0 d1 2 0.5 r\nq1 Q0 d2 1 0.25 r\nq1 Q0 d3 1 0.2 r\n",  # ranks out of order, a tie
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 1 0.25 r\nq1 Q0 d3 2 0.2 r\n",  # a query comes back
    "q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 b\nq1 Q0 d3 3 0.2 a\n",  # two systems, interleaved
    "q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 a\nq1 Q0 d3 1 0.2 b\n",  # two systems, grouped
    "q1 Q0 d\u00e9 1 0.5 r\n",  # not ASCII
    "\ufeffq1 Q0 d1 1 0.5 r\n",  # a BOM
    "q1 Q0 d1 1 0.5 r\n\n",
    "q1 X d1 +1 -0.5 r\nq1 Q0 d2 002 1e-3 r\n",
    "q1 Q0 d1 1 0.5 r\n# x y 1 2 z\n",  # a comment line of six fields
    "q1 Q0 d1 1 0.5 r\n#q1 Q0 d2 2 0.25 r\n",
    "q1 Q0 d1 3000000000 0.5 r\nq1 Q0 d2 3000000001 0.25 r\n",  # ranks past 2**31
    "q1 Q0 d1 1 1e400 r\n",  # a score that overflows a double
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 1 0.25 s\nq2 Q0 d3 2 0.2 s\n",
    # the Q0 and run_name columns are first read as the first line's two values (booleans)
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 Q0\n",  # a run named like the first Q0 field
    "q1 Q0 d1 1 0.5 r\nq1 r d2 2 0.25 r\n",  # a Q0 field like the run name
    "q1 r d1 1 0.5 r\nq1 r d2 2 0.25 r\n",
    "q1 r d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 true\n",  # arrow's default true value is no run name
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 R\n",
    "q1 Q0 d1 1 0.5 r\nq1 q0 d2 2 0.25 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r x\n",
    "q1 Q0 d1 1 0.5 r\r\nq1 Q0 d2 2 0.25 s\r\n",
    "q1\tQ0\td1\t1\t0.5\tr\nq1\tQ0\td2\t2\t0.25\ts\n",
    "q1 Q0 d1 1 0.5 r\u00e9\nq1 Q0 d2 2 0.25 r\u00e9\n",
    "\n",
    "",
]


def _careful(parse):
    """``parse`` with arrow's read turned off: the careful pass alone."""

    def careful(text, **kwargs):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(io_trec, "arrow_table", lambda *args, **kw: None)
            m.setattr(io_qrels, "arrow_table", lambda *args, **kw: None)
            return parse(text, **kwargs)

    return careful


def _same_as_careful(parse, careful, text, **kwargs):
    """``parse(text)`` returns what ``careful(text)`` returns, or raises its message."""
    try:
        expected = careful(text, **kwargs)
    except FormatError as err:
        assert refused(parse, text, **kwargs) == str(err)
        return
    got = parse(text, **kwargs)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got.attrs == expected.attrs


@pytest.mark.parametrize("together", [False, True])
@pytest.mark.parametrize("order", ["rank", "score"])
@pytest.mark.parametrize("system", [None, "mine"])
@pytest.mark.parametrize("case", range(len(TREC_FILES)))
def test_read_trec_run_fast_path_matches_the_careful_pass(case, system, order, together, tmp_path, monkeypatch):
    if together:  # what a large file takes: two things at once
        monkeypatch.setattr(io_trec, "_TOGETHER_ROWS", 1)
    text = TREC_FILES[case]
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode("utf-8"))
    same_outcome(read_trec_run, _careful(from_trec_run), path, text, system=system, order=order)
    _same_as_careful(from_trec_run, _careful(from_trec_run), text, system=system, order=order)


@pytest.mark.parametrize(
    ("text", "system", "reads"),
    [
        ("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n", None, ["bool"]),
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 b\n", None, ["bool", "dictionary"]),  # a second name
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 b\n", "mine", ["bool", "dictionary"]),
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 Q0\n", "mine", ["bool"]),  # a false, but names not needed
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 Q0\n", None, ["bool", "dictionary"]),  # reads as false
        ("q1 Q0 d1 1 0.5 a\nq1 X d2 2 0.25 a\n", None, ["bool", "dictionary"]),  # refused by arrow
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25\n", None, ["bool", "dictionary"]),  # refused twice
        ("q1 Q0 d1 1 0.5\nq1 Q0 d2 2 0.25 a\n", None, ["dictionary"]),  # no guess from line 1
    ],
)
def test_trec_run_reads_q0_and_run_name_as_bits_then_as_codes(text, system, reads, tmp_path, monkeypatch):
    got = []
    real = io_ws.strict_table

    def spy(source, names, types, *args, **kwargs):
        got.append("bool" if pa.types.is_boolean(types["m"]) else "dictionary")
        return real(source, names, types, *args, **kwargs)

    monkeypatch.setattr(io_ws, "strict_table", spy)
    path = tmp_path / "run.trec"
    path.write_text(text)
    try:
        read_trec_run(path, system=system)
    except FormatError:  # the file read, then the careful pass, which tries arrow on the bytes
        assert got == reads + reads
    else:
        assert got == reads
    got.clear()
    try:
        from_trec_run(text, system=system)
    except FormatError:
        pass
    assert got == reads


def _trec_lines(n_queries, seed, systems=("bench",)):
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(n_queries):
        for system in systems:
            for r in range(1, int(rng.integers(1, 40)) + 1):
                lines.append(f"q{q} Q0 d{int(rng.integers(0, 10**6))} {r} {rng.random():.4f} {system}\n")
    return lines


@pytest.mark.parametrize(
    "variant", ["grouped", "two systems", "a query comes back", "ranks out of order", "crlf", "a tab", "a comment"]
)
def test_read_trec_run_in_many_chunks_matches_the_careful_pass(variant, monkeypatch, tmp_path):
    # small arrow blocks and scan blocks: chunk boundaries inside queries, lines cut across scan blocks
    monkeypatch.setattr(io_ws, "_CSV_BLOCK", 1 << 10)
    monkeypatch.setattr(io_text, "_SCAN_BLOCK", 7)
    monkeypatch.setattr(io_trec, "_TOGETHER_ROWS", 1)  # the two-thread read of a large file
    lines = _trec_lines(120, 3, systems=("a", "b") if variant == "two systems" else ("bench",))
    if variant == "a query comes back":
        lines.append(lines[0])
    elif variant == "ranks out of order":
        lines[5], lines[6] = lines[6], lines[5]
    elif variant == "crlf":
        lines = [line.replace("\n", "\r\n") for line in lines]
    elif variant == "a tab":
        lines[-3] = lines[-3].replace(" ", "\t", 1)
    elif variant == "a comment":
        lines.insert(50, "# a b c d e\n")
    text = "".join(lines)
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode("utf-8"))
    for order in ("rank", "score"):
        same_outcome(read_trec_run, _careful(from_trec_run), path, text, order=order)
    if variant in ("grouped", "two systems", "crlf"):
        assert io_trec._trec_run_file(path, "rank", None) is not None  # the fast path did read it


def test_read_trec_run_big_file_keeps_file_order_and_numbers_ranks(tmp_path):
    rng = np.random.default_rng(7)
    lines = []
    for q in range(300):
        for r in range(1, int(rng.integers(1, 40)) + 1):
            lines.append(f"q{q} Q0 d{int(rng.integers(0, 10**6))} {r} {rng.random():.4f} bench\n")
    text = "".join(lines)
    path = tmp_path / "run.trec"
    path.write_text(text, encoding="utf-8")
    got = same_outcome(read_trec_run, from_trec_run, path, text)
    assert_dtypes(got, RUN_COLUMNS)
    assert got.system.unique().tolist() == ["bench"]
    assert io_trec._trec_run_file(path, "rank", None) is not None  # the fast path did read it


QRELS_FILES = [
    "q1 0 d1 1\nq1 0 d2 0\n",
    "q1 d1 1\nq1 d2 2\n",
    "query-id corpus-id score\nq1 d1 1\nq2 d2 0\n",
    "query-id corpus-id score\n",
    "query-id corpus-id score\nq1 0 d1 1\n",
    "q1 0 d1 1\nq1  d2 1\n",  # an empty iteration field: the careful pass sees q1 d2 1
    "q1 0 d1 1\n# c x y\n",  # a comment line of four fields
    "# c\nq1 0 d1 1\n",
    "# a b\nq1 d1 1\n",  # a comment line that looks like a header
    "q1 0 d1 1\n\nq1 0 d2 1\n",
    " q1 0 d1 1\n",
    "q1 0 d1 1 \n",
    "q1 0 d1 -2\nq1 0 d2 +1\nq1 0 d3 007\n",
    "q1 0 d1 99999999999999999999\n",
    "q1 0 d1 1\r\nq1 0 d2 0\r\n",
    "q1 0 d1 1\rq1 0 d2 0\n",
    "q1\t0\td1\t1\n",
    "q1 0 d\u00e9 1\n",
    "\ufeffq1 0 d1 1\n",
    "q1 0 d1 1",
    "q1 0 d1 1\nq1 d2 1\n",
    "q1 0 d1 1.5\n",
    "\n",
    "",
]


@pytest.mark.parametrize("options", [{}, {"as_chunk_ids": True, "corpus_fingerprint": "fp", "labeled_by": "me"}])
@pytest.mark.parametrize("case", range(len(QRELS_FILES)))
def test_read_qrels_fast_path_matches_the_careful_pass(case, options, tmp_path):
    text = QRELS_FILES[case]
    path = tmp_path / "qrels.txt"
    path.write_bytes(text.encode("utf-8"))
    same_outcome(read_qrels, _careful(from_qrels), path, text, **options)
    _same_as_careful(from_qrels, _careful(from_qrels), text, **options)


def test_read_qrels_in_many_chunks_matches_the_careful_pass(monkeypatch, tmp_path):
    monkeypatch.setattr(io_ws, "_CSV_BLOCK", 1 << 10)
    monkeypatch.setattr(io_text, "_SCAN_BLOCK", 5)
    text = "".join(f"q{i // 7} 0 d{i} {i % 4 - 1}\r\n" for i in range(3000))
    path = tmp_path / "qrels.txt"
    path.write_bytes(text.encode("utf-8"))
    assert io_qrels._qrels_file(path) is not None  # the fast path did read it
    same_outcome(read_qrels, _careful(from_qrels), path, text)
