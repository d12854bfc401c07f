"""Nothing read wrong, nothing written wrong (issue 32), through the command line in a subprocess.

Pipes and FIFOs are read once (rule 1), every ``--out`` is checked against every file the
command reads (rule 3), and the inputs that used to end in an internal error or a misleading
answer get one line and exit 2 (or INDETERMINATE).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import retrieval_eval as rev

ROOT = Path(rev.__file__).resolve().parent.parent
DEMO = Path(rev.__file__).resolve().parent / "datasets" / "demo"
J, RUN, QUERIES, CORPUS = (str(DEMO / n) for n in ("judgments.jsonl", "runs.jsonl", "queries.jsonl", "corpus.json"))
PY = sys.executable


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), RETRIEVAL_EVAL_DEBUG="")


def cli(*argv, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    """``retrieval-eval ARGV`` in a subprocess of this package."""
    return subprocess.run(
        [PY, "-m", "retrieval_eval", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env(),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def bash(script: str, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    """A bash command line (for ``<(...)`` process substitution); ``RE`` runs the CLI."""
    command = f'RE() {{ {PY} -m retrieval_eval "$@"; }}; {script}'
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env(), cwd=cwd, timeout=timeout, check=False
    )


def one_error(proc: subprocess.CompletedProcess) -> str:
    """The one error line of a refusal: exit 2, no traceback, no internal error."""
    err = "".join(ln for ln in proc.stderr.splitlines(True) if not ln.startswith("retrieval-eval: warning: "))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert err.count("\n") == 1 and err.startswith("retrieval-eval: error: "), err
    assert "Traceback" not in err and "internal error" not in err
    return err


@pytest.fixture(scope="module")
def big_qrels(tmp_path_factory) -> Path:
    """10,000 qrels lines (more than one 64 KiB pipe buffer)."""
    path = tmp_path_factory.mktemp("qrels") / "big.qrels"
    path.write_text("".join(f"q{i // 10} 0 d{i} {i % 3}\n" for i in range(10_000)))
    return path


# ---------------------------------------------------------------------------------------------
# Rule 1: a pipe or FIFO is read once; a device is refused
# ---------------------------------------------------------------------------------------------


def test_process_substitution_converts_every_label(tmp_path):
    proc = bash(f"RE convert --judgments <(cat {J}) --to qrels --out out.qrels", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    direct = cli("convert", "--judgments", J, "--to", "qrels")
    assert direct.returncode == 0
    written = (tmp_path / "out.qrels").read_text()
    assert written and written == direct.stdout


def test_a_big_qrels_through_a_pipe_keeps_every_line(big_qrels, tmp_path):
    proc = bash(f"cat {big_qrels} | RE convert --qrels /dev/stdin --to judgments", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 10_000
    proc = bash(f"RE convert --qrels <(cat {big_qrels}) --to judgments", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 10_000


def test_trec_eval_reads_pipes_whole(big_qrels, tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{i // 10} Q0 d{i} {i % 10 + 1} {10 - i % 10} sys\n" for i in range(10_000)))
    direct = cli("trec_eval", "-m", "num_rel", "-m", "num_ret", big_qrels, run)
    piped = bash(f"RE trec_eval -m num_rel -m num_ret <(cat {big_qrels}) <(cat {run})")
    assert direct.returncode == 0 and piped.returncode == 0, piped.stderr
    assert "num_rel" in direct.stdout and piped.stdout == direct.stdout


def test_drift_on_a_pipe_counts_every_label(tmp_path):
    direct = cli("drift", "--judgments", J, "--corpus", CORPUS, "--json")
    piped = bash(f"RE drift --judgments <(cat {J}) --corpus {CORPUS} --json")
    assert piped.returncode == direct.returncode, piped.stderr
    total = len(json.loads(direct.stdout)["findings"])
    assert total == 215 and len(json.loads(piped.stdout)["findings"]) == total


def _fifo_with_writer(path: Path, data: bytes) -> threading.Thread:
    os.mkfifo(path)

    def write():
        with open(path, "wb") as fh:  # blocks until the reader opens it
            fh.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_a_named_fifo_is_read_once(big_qrels, tmp_path):
    fifo = tmp_path / "labels.fifo"
    writer = _fifo_with_writer(fifo, big_qrels.read_bytes())
    proc = cli("convert", "--qrels", fifo, "--to", "judgments", timeout=60)
    writer.join(5)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 10_000


def test_a_named_fifo_as_a_run(tmp_path):
    fifo = tmp_path / "run.fifo"
    writer = _fifo_with_writer(fifo, Path(RUN).read_bytes())
    proc = cli("score", "--judgments", J, "--run", fifo, "--json", timeout=60)
    writer.join(5)
    direct = cli("score", "--judgments", J, "--run", RUN, "--json")
    assert proc.returncode == direct.returncode, proc.stderr
    got, want = json.loads(proc.stdout), json.loads(direct.stdout)
    assert want["systems"] and got["systems"].keys() == want["systems"].keys()
    for name in want["systems"]:
        assert got["systems"][name]["metrics"] == want["systems"][name]["metrics"]


def test_a_device_is_refused():
    proc = cli("convert", "--qrels", "/dev/zero", "--to", "judgments", timeout=60)
    assert "/dev/zero: is a device" in one_error(proc)
    proc = cli("score", "--judgments", J, "--run", RUN, "--baseline", "/dev/zero", timeout=60)
    assert "/dev/zero: is a device" in one_error(proc)


def test_dev_null_is_still_the_empty_run():
    proc = cli("score", "--judgments", J, "--run", "/dev/null")
    assert proc.returncode == 1, proc.stderr  # INDETERMINATE, never PASS


def test_the_library_reads_a_fifo_once(big_qrels, tmp_path):
    fifo = tmp_path / "labels.fifo"
    writer = _fifo_with_writer(fifo, big_qrels.read_bytes())
    code = f"import sys, retrieval_eval as rev; print(len(rev.as_judgments({str(fifo)!r})))"
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env(), timeout=60, check=False)
    writer.join(5)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "10000"


# ---------------------------------------------------------------------------------------------
# Rule 3: --out is never one of the files read
# ---------------------------------------------------------------------------------------------


def test_score_shift_refuses_out_over_its_run(tmp_path):
    before = tmp_path / "before.jsonl"
    before.write_bytes(Path(RUN).read_bytes())
    for flag in ("--run-before", "--run-after"):
        other = RUN
        argv = [
            "score-shift",
            "--run-before",
            before if flag == "--run-before" else other,
            "--run-after",
            before if flag == "--run-after" else other,
            "--out",
            before,
        ]
        assert f"is the {flag} input" in one_error(cli(*argv))
    assert before.read_bytes() == Path(RUN).read_bytes()


def test_label_agreement_refuses_out_over_its_inputs(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(Path(J).read_bytes())
    assert "is the --judgments input" in one_error(cli("label-agreement", "--judgments", labels, "--out", labels))
    assert "is the --other input" in one_error(
        cli("label-agreement", "--judgments", J, "--other", labels, "--out", labels)
    )
    assert labels.read_bytes() == Path(J).read_bytes()


def test_out_inside_a_beir_folder_input_is_refused(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    qrels = beir / "qrels" / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nst-01\td1\t1\n")
    (beir / "queries.jsonl").write_text('{"_id": "st-01", "text": "q"}\n')
    before = qrels.read_bytes()
    err = one_error(cli("score", "--qrels", beir, "--run", RUN, "--out", qrels))
    assert "BEIR folder --qrels" in err
    one_error(cli("convert", "--qrels", beir, "--to", "judgments", "--out", beir / "queries.jsonl"))
    assert qrels.read_bytes() == before
    ok = cli("score", "--qrels", beir, "--run", RUN, "--out", beir / "report.json")
    assert ok.returncode in (0, 1) and (beir / "report.json").is_file(), ok.stderr


# ---------------------------------------------------------------------------------------------
# Rules 5 and 15: score-shift's --bins is bounded; its messages say what is wrong
# ---------------------------------------------------------------------------------------------


def test_score_shift_refuses_a_billion_bins_at_once():
    proc = cli(
        "score-shift", "--run-before", RUN, "--run-after", RUN, "--system", "dense", "--bins", "1000000000", timeout=60
    )
    assert "bins must be between 2 and 10000, got 1000000000" in one_error(proc)


def test_score_shift_takes_the_largest_bins():
    from retrieval_eval.analysis.calibration.shift import MAX_BINS

    proc = cli(
        "score-shift", "--run-before", RUN, "--run-after", RUN, "--system", "dense", "--bins", MAX_BINS, "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["settings"]["bins"] == MAX_BINS


def test_score_shift_on_an_empty_run_says_it_is_empty(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    err = one_error(cli("score-shift", "--run-before", empty, "--run-after", RUN))
    assert "run_before is empty" in err and "pass system" not in err


def test_score_shift_with_an_empty_file_name_names_the_option():
    err = one_error(cli("score-shift", "--run-before", "", "--run-after", RUN))
    assert "--run-before is empty; give a file name" in err and "directory" not in err


# ---------------------------------------------------------------------------------------------
# Rule 10: drift over no labels is INDETERMINATE (exit 1), never PASS
# ---------------------------------------------------------------------------------------------


def test_drift_over_an_empty_file_is_indeterminate(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = cli("drift", "--judgments", empty, "--corpus", CORPUS)
    assert proc.returncode == 1, proc.stderr
    assert "INDETERMINATE" in proc.stdout and "PASS" not in proc.stdout


def test_drift_over_a_beir_folder_without_qrels_is_indeterminate(tmp_path):
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "x"}\n')
    proc = cli("drift", "--qrels", beir, "--corpus", CORPUS)
    assert proc.returncode == 1, proc.stderr
    assert "INDETERMINATE" in proc.stdout


# ---------------------------------------------------------------------------------------------
# Rule 13: a second drift --fix --backup keeps the first backup
# ---------------------------------------------------------------------------------------------


def test_a_second_fix_keeps_the_original_backup(tmp_path):
    labels = tmp_path / "j.jsonl"
    labels.write_bytes(Path(J).read_bytes())
    first = cli("drift", "--judgments", labels, "--corpus", DEMO / "corpus_v2.json", "--fix", "--backup")
    assert "old file kept as" in first.stdout, first.stderr
    after_first = labels.read_bytes()
    second = cli("drift", "--judgments", labels, "--corpus", CORPUS, "--fix", "--backup")
    assert labels.read_bytes() != after_first, second.stdout  # the second fix wrote
    assert (tmp_path / "j.jsonl.bak").read_bytes() == Path(J).read_bytes()  # the original, kept
    assert (tmp_path / "j.jsonl.bak.1").read_bytes() == after_first
    assert f"old file kept as {tmp_path / 'j.jsonl.bak.1'}" in second.stdout


# ---------------------------------------------------------------------------------------------
# Rule 8: no internal error (exit 3), no exit 1, for the inputs that used to give one
# ---------------------------------------------------------------------------------------------


def test_a_deeply_nested_first_line_is_one_line(tmp_path):
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"a":' * 100_000 + "\n")
    assert "nested more than 100 deep" in one_error(cli("score", "--judgments", deep, "--run", RUN))


def test_a_header_only_csv_is_an_empty_input(tmp_path):
    run = tmp_path / "run.csv"
    run.write_text("query_id,doc_id,score\n")
    proc = cli("score", "--judgments", J, "--run", run)
    assert proc.returncode == 1 and "internal error" not in proc.stderr, proc.stderr  # INDETERMINATE
    labels = tmp_path / "labels.csv"
    labels.write_text("query_id,doc_uri,relevance\n")
    proc = cli("score", "--judgments", labels, "--run", RUN)
    assert proc.returncode == 1 and "internal error" not in proc.stderr, proc.stderr
    assert "INDETERMINATE" in proc.stdout


@pytest.fixture
def tiny(tmp_path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.trec"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 mine\n")
    return qrels, run


def test_trec_eval_runid_alone(tiny):
    proc = cli("trec_eval", "-m", "runid", *tiny)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["runid", "all", "mine"]


def test_trec_eval_max_ret_past_int64(tiny):
    assert "-M: the number of documents" in one_error(cli("trec_eval", "-M", 2**63, *tiny))
    ok = cli("trec_eval", "-M", 2**63 - 1, "-m", "num_ret", *tiny)
    assert ok.returncode == 0 and ok.stdout.split()[-1] == "1", ok.stderr


def test_chunk_rows_past_its_maximum(tiny):
    from retrieval_eval.cli.common import MAX_CHUNK_ROWS

    qrels, run = tiny
    err = one_error(cli("score", "--judgments", qrels, "--run", run, "--chunk-rows", 2**63 - 1))
    assert f"--chunk-rows is at most {MAX_CHUNK_ROWS}" in err
    ok = cli("score", "--judgments", qrels, "--run", run, "--chunk-rows", MAX_CHUNK_ROWS, "--json")
    assert ok.returncode == 0, ok.stderr


def test_out_of_memory_is_one_line_exit_2(tiny):
    import resource

    def small():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    qrels, run = tiny
    from retrieval_eval.cli.common import MAX_CHUNK_ROWS  # a first block of 3 GB, in 2 GB

    proc = subprocess.run(
        [
            PY,
            "-m",
            "retrieval_eval",
            "score",
            "--judgments",
            str(qrels),
            "--run",
            str(run),
            "--chunk-rows",
            str(MAX_CHUNK_ROWS),
        ],
        capture_output=True,
        text=True,
        env=env(),
        preexec_fn=small,
        timeout=120,
        check=False,
    )
    assert "out of memory" in one_error(proc)


def test_a_parquet_bomb_is_refused_unread(tmp_path):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from retrieval_eval.io.tabular import MAX_PARQUET_ROWS_PER_BYTE

    n = 5_000_000
    same = pa.array(np.zeros(n, dtype=np.int32))
    bomb = tmp_path / "bomb.parquet"
    pq.write_table(
        pa.table(
            {
                "query_id": pa.DictionaryArray.from_arrays(same, pa.array(["q1"])),
                "doc_id": pa.DictionaryArray.from_arrays(same, pa.array(["d1"])),
            }
        ),
        bomb,
    )
    assert n > MAX_PARQUET_ROWS_PER_BYTE * bomb.stat().st_size
    err = one_error(cli("convert", "--run", bomb, "--to", "run", timeout=60))
    assert "decompression bomb" in err and "5,000,000 rows" in err


@pytest.mark.parametrize("content", [b"q1\n", b"\x00\x01\x02 \n\n\x7f", bytes(range(256)) * 8])
def test_streaming_binary_input_is_a_format_error(tmp_path, content):
    from retrieval_eval.analysis.evaluation import evaluate

    run = tmp_path / "run.trec"
    run.write_bytes(content)
    with pytest.raises(rev.FormatError):
        evaluate(J, run, chunk_rows=1)


# ---------------------------------------------------------------------------------------------
# Rule 9: --format csv and latex show control characters of ids escaped, as every table does
# ---------------------------------------------------------------------------------------------

HOSTILE = "\x1b]0;title\x07\x1b[2J"


def _controls(text: str) -> list[str]:
    return [hex(ord(c)) for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F]


@pytest.mark.parametrize("fmt", ["csv", "latex"])
@pytest.mark.parametrize("per_query", [False, True])
def test_csv_and_latex_escape_control_characters(tmp_path, fmt, per_query):
    labels, run = tmp_path / "j.jsonl", tmp_path / "r.jsonl"
    labels.write_text(
        "".join(json.dumps({"query_id": f"q{i}{HOSTILE}", "doc_uri": "d1", "relevance": 1}) + "\n" for i in range(3))
    )
    run.write_text(
        "".join(
            json.dumps({"query_id": f"q{i}{HOSTILE}", "ranking": ["d1"], "system": f"s\x9b{HOSTILE}"}) + "\n"
            for i in range(3)
        )
    )
    proc = cli("score", "--judgments", labels, "--run", run, "--format", fmt, *(["--per-query"] if per_query else []))
    assert proc.returncode in (0, 1), proc.stderr
    assert not _controls(proc.stdout)
    assert "\\x1b]0;title\\x07\\x1b[2J" in proc.stdout


def test_csv_keeps_a_formula_like_id_as_it_is(tmp_path):
    """Decided (docs/cli.md): CSV output is data, and an id is never altered; an id such as
    =HYPERLINK(...) is written as is (quoted by CSV's rules), not prefixed."""
    labels, run = tmp_path / "j.jsonl", tmp_path / "r.jsonl"
    qid = '=HYPERLINK("http://x","y")'
    labels.write_text(json.dumps({"query_id": qid, "doc_uri": "d1", "relevance": 1}) + "\n")
    run.write_text(json.dumps({"query_id": qid, "ranking": ["d1"]}) + "\n")
    proc = cli("score", "--judgments", labels, "--run", run, "--format", "csv", "--per-query")
    assert proc.returncode in (0, 1), proc.stderr
    assert '"=HYPERLINK(""http://x"",""y"")"' in proc.stdout


# ---------------------------------------------------------------------------------------------
# Rule 14: thousands of cutoffs are refused at once, in one line
# ---------------------------------------------------------------------------------------------


def test_thousands_of_cutoffs_are_refused_at_once():
    import time

    from retrieval_eval.engine.metrics import MAX_CUTOFFS

    start = time.monotonic()
    err = one_error(cli("score", "--judgments", J, "--run", RUN, "-k", ",".join(map(str, range(1, 3001)))))
    assert f"at most {MAX_CUTOFFS} cutoffs at once, got 3000" in err
    assert time.monotonic() - start < 30  # refused before any scoring (it took 28 s to score)
    repeated = ["-k", "5,10", "-k", "10", "-k", "5"]  # one set: the count is of distinct cutoffs
    assert cli("score", "--judgments", J, "--run", RUN, *repeated, "--json").returncode in (0, 1)


def test_the_largest_number_of_cutoffs_scores():
    from retrieval_eval.engine.metrics import MAX_CUTOFFS

    proc = cli(
        "score",
        "--judgments",
        J,
        "--run",
        RUN,
        "--system",
        "dense",
        "-k",
        ",".join(map(str, range(1, MAX_CUTOFFS + 1))),
        "--json",
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert f"recall@{MAX_CUTOFFS}" in json.loads(proc.stdout)["metrics"]


def test_the_library_refuses_too_many_cutoffs():
    from retrieval_eval.engine.metrics import MAX_CUTOFFS

    with pytest.raises(ValueError, match=f"at most {MAX_CUTOFFS} cutoffs"):
        rev.evaluate(J, RUN, k=range(1, MAX_CUTOFFS + 2))
