"""Nothing the user owns is lost or half-written (issue 19, rules 1-6): the write path of every
command (``retrieval_eval.io.safewrite``) under kill -9, SIGTERM/SIGINT, a full disk, concurrent
writers, links and special files, and drift --fix's line-preserving rewrite.

Every test runs the real console entry point in a subprocess where the failure is a process's
(a kill, a signal, a race); the randomness (kill moments) is seeded.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import retrieval_eval as rev
import retrieval_eval.io as formats
from retrieval_eval.cli import app as cli_module
from retrieval_eval.io import safewrite

PY = sys.executable
SAFEWRITE = Path(safewrite.__file__)
TEMP = re.compile(r"\..+\.tmp$")


def cli(*argv, cwd=None, **kwargs) -> subprocess.CompletedProcess:
    """The console entry point in a subprocess (for what only a process shows: kills, signals,
    races, resource limits)."""
    return subprocess.run(
        [PY, "-m", "retrieval_eval", *map(str, argv)], capture_output=True, text=True, cwd=cwd, **kwargs
    )


def main(*argv) -> subprocess.CompletedProcess:
    """``cli.main`` in-process, shaped like :func:`cli` (the cheap way for everything else)."""
    out, err = io.StringIO(), io.StringIO()
    code = cli_module.main([str(a) for a in argv], stdout=out, stderr=err)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def start(*argv, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [PY, "-m", "retrieval_eval", *map(str, argv)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs
    )


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TEMP.match(p.name))


def wait_for_temp(folder: Path, proc: subprocess.Popen, timeout: float = 60.0) -> bool:
    """Poll until a temp file appears in ``folder`` (the write has begun); False if the process
    ended first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if temps(folder):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.0005)
    return False


def make_case(folder: Path, n_labels: int = 40, pad: int = 0, name: str = "judgments.jsonl") -> Path:
    """A corpus of 20 chunks (fingerprint ``corpus-v2``) and labels, half VALID and stamped,
    half RE_ANCHORABLE (their chunk id is from an older chunker, their text is live)."""
    chunks, texts = [], []
    for i in range(20):
        uri, text = f"doc://{i}", f"passage number {i} about topic {i % 7}"
        chunks.append(
            {
                "chunk_id": rev.chunk_id(uri, "1", 0, text, "chunker-v2"),
                "doc_uri": uri,
                "doc_revision": "1",
                "ordinal": 0,
                "text": text,
            }
        )
        texts.append((uri, text))
    corpus = {"corpus_fingerprint": "corpus-v2", "chunker_fingerprint": "chunker-v2", "chunks": chunks}
    lines = []
    for j in range(n_labels):
        uri, text = texts[j % 20]
        lab = {"query_id": f"q{j % 50}", "doc_uri": uri, "relevance": 1 + j % 3}
        if j % 2:
            lab["chunk_id"] = rev.chunk_id(uri, "1", 0, text, "chunker-v1")
            lab["text_sha"] = rev.text_sha(text)
            lab["corpus_fingerprint"] = "corpus-v1-before-the-rechunk"  # fixed lines get shorter
        else:
            lab["chunk_id"] = rev.chunk_id(uri, "1", 0, text, "chunker-v2")
            lab["corpus_fingerprint"] = "corpus-v2"
        if pad:
            lab["notes"] = "n" * pad
        lines.append(json.dumps(lab, separators=(",", ":")) + "\n")
    (folder / "corpus.json").write_text(json.dumps(corpus))
    path = folder / name
    path.write_text("".join(lines))
    return path


def fix_cmd(path: Path, *extra):
    return ("drift", "--judgments", path, "--corpus", path.parent / "corpus.json", "--fix", *extra)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A ~9 MB judgments file, its fixed bytes and an earlier backup, for the kill tests."""
    folder = tmp_path_factory.mktemp("big")
    path = make_case(folder, n_labels=3000, pad=3000)
    old = path.read_bytes()
    done = main(*fix_cmd(path))
    # 1: written, with labels whose re-anchoring collides at different grades left to review
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    new = path.read_bytes()
    assert new != old
    return folder, old, new, b'{"query_id":"q0","doc_uri":"doc://0","relevance":1}\n'


def reset(folder: Path, old: bytes, earlier_bak: bytes) -> Path:
    path = folder / "judgments.jsonl"
    path.write_bytes(old)
    (folder / "judgments.jsonl.bak").write_bytes(earlier_bak)
    (folder / "judgments.jsonl.bak.1").unlink(missing_ok=True)
    return path


def backups(path: Path) -> tuple[bytes, bytes | None]:
    """The ``.bak`` (an earlier backup, never replaced) and the ``.bak.1`` a fix writes beside
    it (None when there is none yet)."""
    numbered = path.with_name(path.name + ".bak.1")
    return path.with_name(path.name + ".bak").read_bytes(), numbered.read_bytes() if numbered.exists() else None


# ---------------------------------------------------------------------------------------------
# Rule 1: the .bak is written like the file (temp, fsync, rename); rule 2: no temp outlives it
# ---------------------------------------------------------------------------------------------


def test_rule1_kill9_during_drift_fix_backup_leaves_complete_old_or_new_files(big, tmp_path):
    """kill -9 at seeded random moments of ``drift --fix --backup`` on a 9 MB file: the file is
    always the complete old or new bytes, the .bak the complete earlier backup or the old bytes,
    and a new file always has the old bytes as its backup (the backup is renamed first). The
    next run removes the temp files the killed runs left."""
    src, old, new, earlier = big
    folder = tmp_path
    (folder / "corpus.json").write_bytes((src / "corpus.json").read_bytes())
    rng = random.Random(19)
    outcomes = set()
    for i in range(4):
        path = reset(folder, old, earlier)
        proc = start(*fix_cmd(path, "--backup"))
        if i % 2 == 0:  # a moment inside the write: after the first temp file appears
            wait_for_temp(folder, proc)
            time.sleep(rng.uniform(0.0, 0.15))
        else:  # any moment of the run
            time.sleep(rng.uniform(0.2, 2.0))
        proc.kill()
        proc.wait()
        got, (bak, bak1) = path.read_bytes(), backups(path)
        assert got in (old, new), f"kill {i}: the judgments file is neither the old nor the new bytes"
        assert bak == earlier, f"kill {i}: the earlier backup was replaced"
        assert bak1 in (None, old), f"kill {i}: the .bak.1 is not the complete old file"
        if got == new:
            assert bak1 == old, f"kill {i}: the file was replaced before its backup was in place"
        outcomes.add((got == new, bak1 == old, bool(temps(folder))))
    left = temps(folder)
    path = reset(folder, old, earlier)
    done = main(*fix_cmd(path, "--backup"))
    assert done.returncode == 0, done.stderr
    assert temps(folder) == [], f"stale temps of killed runs were not removed (before: {left})"
    assert path.read_bytes() == new and backups(path) == (earlier, old)


_WRITER = textwrap.dedent("""
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location("safewrite", sys.argv[1])
    sw = importlib.util.module_from_spec(spec); spec.loader.exec_module(sw)
    data = open(sys.argv[3], "rb").read()
    print("ready", flush=True)
    with sw.LockedFile(sys.argv[2], read=True) as f:
        f.replace(data, backup=True)
""")


def test_rule1_kill9_at_random_moments_of_the_write_itself(tmp_path):
    """20 kill -9 at seeded random moments of the write machinery alone (a 12 MB file and its
    backup, without the start-up cost of the CLI), most of them inside the write."""
    rng = random.Random(1919)
    old = bytes(rng.getrandbits(8) for _ in range(4096)) * 3072
    new = old[::-1]
    earlier = b"an earlier backup\n"
    (tmp_path / "new.bin").write_bytes(new)
    target = tmp_path / "data" / "labels.jsonl"
    target.parent.mkdir()
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    seen = {"old": 0, "new": 0}
    for i in range(20):
        target.write_bytes(old)
        target.with_name("labels.jsonl.bak").write_bytes(earlier)
        target.with_name("labels.jsonl.bak.1").unlink(missing_ok=True)
        proc = subprocess.Popen(
            [PY, str(script), str(SAFEWRITE), str(target), str(tmp_path / "new.bin")], stdout=subprocess.PIPE
        )
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.15))
        proc.kill()
        proc.wait()
        proc.stdout.close()
        got, (bak, bak1) = target.read_bytes(), backups(target)
        assert got in (old, new) and bak == earlier and bak1 in (None, old), f"kill {i}: a half-written file"
        if got == new:
            assert bak1 == old
        seen["new" if got == new else "old"] += 1
    safewrite.remove_stale_temps(target)
    assert temps(target.parent) == []


def test_rule1_full_disk_keeps_the_file_and_the_previous_backup(tmp_path):
    """The disk fills while the backup is written (RLIMIT_FSIZE between the new file's size and
    the old one's: EFBIG, as ENOSPC would be): the judgments file and the previous .bak are as
    they were (today the .bak is opened in place and left truncated), exit 2 with one line, no
    temp file."""
    path = make_case(tmp_path, n_labels=400, pad=200)
    old = path.read_bytes()
    limit = len(old) - 1  # the fixed file is 200 x 19 bytes shorter (its fingerprints): it fits
    earlier = b'{"query_id":"q0","doc_uri":"doc://0","relevance":1}\n' * 10
    (tmp_path / "judgments.jsonl.bak").write_bytes(earlier)
    import resource

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = cli(*fix_cmd(path, "--backup"), preexec_fn=small_files)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "judgments.jsonl" in done.stderr
    assert path.read_bytes() == old
    assert (tmp_path / "judgments.jsonl.bak").read_bytes() == earlier
    assert temps(tmp_path) == []


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)])
def test_rule2_sigterm_and_sigint_remove_the_temp_file(big, tmp_path, sig, code):
    """SIGTERM (timeout, CI cancellation, docker stop) and SIGINT mid-write remove the temp
    files; the process still ends as the signal asks (killed by SIGTERM, exit 130 on SIGINT)."""
    src, old, new, earlier = big
    (tmp_path / "corpus.json").write_bytes((src / "corpus.json").read_bytes())
    path = reset(tmp_path, old, earlier)
    proc = start(*fix_cmd(path, "--backup"))
    assert wait_for_temp(tmp_path, proc), "the run ended before it began writing"
    proc.send_signal(sig)
    proc.wait(timeout=60)
    proc.stderr.close()
    if proc.returncode in (0, 1):
        # The signal came after the last write (the temp file seen was the last to be renamed):
        # nothing was left to interrupt, and the run ended as it would have (exit 1: labels to
        # review). Then the new bytes are in place, whole.
        assert path.read_bytes() == new
    else:
        assert proc.returncode == code
    assert temps(tmp_path) == []
    assert path.read_bytes() in (old, new)
    assert (tmp_path / "judgments.jsonl.bak").read_bytes() in (earlier, old)


def test_rule2_stale_temps_of_dead_processes_are_removed_live_ones_kept(tmp_path):
    path = make_case(tmp_path)
    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".judgments.jsonl.{dead.pid}.0123456789ab.tmp"
    stale_bak = tmp_path / f".judgments.jsonl.bak.{dead.pid}.0123456789ab.tmp"
    live = tmp_path / f".judgments.jsonl.{os.getpid()}.0123456789ab.tmp"
    other = tmp_path / f".other.jsonl.{dead.pid}.0123456789ab.tmp"
    for p in (stale, stale_bak, live, other):
        p.write_bytes(b"partial")
    done = main(*fix_cmd(path))
    assert done.returncode == 0, done.stderr
    assert not stale.exists() and not stale_bak.exists()
    assert live.exists(), "a temp file of a live process was removed"
    assert other.exists(), "a temp file of another file's pattern was removed"


# ---------------------------------------------------------------------------------------------
# Rule 3: no lost update
# ---------------------------------------------------------------------------------------------


def test_rule3_labels_appended_during_a_fix_refuse_the_write(big, tmp_path):
    """A label appended (by a tool that takes no lock) while drift --fix runs: exit 2, the
    appended label is still there, the earlier .bak untouched, no temp file left."""
    src, old, new, earlier = big
    (tmp_path / "corpus.json").write_bytes((src / "corpus.json").read_bytes())
    path = reset(tmp_path, old, earlier)
    extra = b'{"query_id":"q-new","doc_uri":"doc://3","relevance":2}\n'
    proc = start(*fix_cmd(path, "--backup"))
    assert wait_for_temp(tmp_path, proc), "the run ended before it began writing"
    with open(path, "ab") as fh:
        fh.write(extra)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert b"changed on disk" in err and err.count(b"\n") == 1
    assert path.read_bytes() == old + extra
    assert (tmp_path / "judgments.jsonl.bak").read_bytes() == earlier
    assert temps(tmp_path) == []


def test_rule3_a_locked_file_is_refused(tmp_path):
    """A second writer while one holds the lock: exit 2 naming the file, nothing written."""
    import fcntl

    path = make_case(tmp_path)
    old = path.read_bytes()
    with open(path, "rb") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        done = main(*fix_cmd(path, "--backup"))
    assert done.returncode == 2
    assert "another process" in done.stderr and str(path) in done.stderr
    assert path.read_bytes() == old and not (tmp_path / "judgments.jsonl.bak").exists()


def test_rule3_two_concurrent_fix_backup_runs_keep_the_original_labels(tmp_path):
    """Two ``drift --fix --backup`` started together, 3 times with seeded jitter: the original
    labels are always in the file or its .bak, the file is the old or the fixed bytes, and each
    run exits 0 (wrote, or nothing left to change) or 2 (refused)."""
    rng = random.Random(7)
    path = make_case(tmp_path, n_labels=400, pad=100)
    old = path.read_bytes()
    assert main(*fix_cmd(path)).returncode == 0
    new = path.read_bytes()
    for i in range(3):
        path.write_bytes(old)
        (tmp_path / "judgments.jsonl.bak").unlink(missing_ok=True)
        a = start(*fix_cmd(path, "--backup"))
        time.sleep(rng.uniform(0.0, 0.3))
        b = start(*fix_cmd(path, "--backup"))
        codes = sorted((a.wait(timeout=60), b.wait(timeout=60)))
        a.stderr.close()
        b.stderr.close()
        got = path.read_bytes()
        bak = tmp_path / "judgments.jsonl.bak"
        assert got in (old, new), f"round {i}: the file is neither the old nor the fixed labels"
        assert old in (got, bak.read_bytes() if bak.exists() else None), f"round {i}: the original labels are lost"
        assert set(codes) <= {0, 2} and 0 in codes, f"round {i}: exit codes {codes}"
        assert temps(tmp_path) == []


def test_rule3_library_write_refuses_a_file_changed_since_it_was_read(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"one\n")
    with safewrite.LockedFile(path, read=True) as held:
        with open(path, "ab") as fh:
            fh.write(b"two\n")
        with pytest.raises(safewrite.WriteRefused, match="changed on disk"):
            held.replace(b"fixed\n", backup=True)
    assert path.read_bytes() == b"one\ntwo\n" and not (tmp_path / "labels.jsonl.bak").exists()


# ---------------------------------------------------------------------------------------------
# Rule 4: links, special files, mode and owner
# ---------------------------------------------------------------------------------------------


def test_rule4_a_symlink_is_followed_and_stays_a_link(tmp_path):
    real = make_case(tmp_path, name="real.jsonl")
    old = real.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to("real.jsonl")
    done = main(*fix_cmd(link, "--backup"))
    assert done.returncode == 0, done.stderr
    assert f"old file kept as {real}.bak" in done.stdout
    assert link.is_symlink() and os.readlink(link) == "real.jsonl"
    assert real.read_bytes() != old and link.read_bytes() == real.read_bytes()
    assert (tmp_path / "real.jsonl.bak").read_bytes() == old
    out = tmp_path / "report-link.json"
    (tmp_path / "report.json").write_text("{}")
    out.symlink_to("report.json")
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id":"q0","ranking":["doc://0"]}\n')
    done = main("score", "--judgments", real, "--run", run, "--out", out)
    assert done.returncode in (0, 1), done.stderr
    assert out.is_symlink() and json.loads((tmp_path / "report.json").read_text())["spec_version"] == "1"


def test_rule4_a_hard_linked_file_is_refused(tmp_path):
    path = make_case(tmp_path)
    old = path.read_bytes()
    other = tmp_path / "also.jsonl"
    os.link(path, other)
    done = main(*fix_cmd(path))
    assert done.returncode == 2
    assert "hard links" in done.stderr and done.stderr.count("\n") == 1
    assert path.read_bytes() == old and other.read_bytes() == old
    assert os.stat(path).st_ino == os.stat(other).st_ino


def test_rule4_a_fifo_or_a_device_as_out_is_refused(tmp_path):
    judgments = make_case(tmp_path)
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id":"q0","ranking":["doc://0"]}\n')
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    done = main("score", "--judgments", judgments, "--run", run, "--out", fifo)
    assert done.returncode == 2 and "FIFO" in done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        return  # not root: the FIFO case covers the rule
    done = main("convert", "--judgments", judgments, "--to", "qrels", "--out", device)
    assert done.returncode == 2 and "device" in done.stderr
    assert stat.S_ISCHR(os.stat(device).st_mode)


def test_rule4_mode_and_owner_are_kept_and_the_backup_is_not_world_readable(tmp_path):
    path = make_case(tmp_path)
    os.chmod(path, 0o600)
    as_root = os.geteuid() == 0
    if as_root:
        os.chown(path, 4242, 4343)
    done = main(*fix_cmd(path, "--backup"))
    assert done.returncode == 0, done.stderr
    st, bak = os.stat(path), os.stat(tmp_path / "judgments.jsonl.bak")
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert stat.S_IMODE(bak.st_mode) == 0o600
    if as_root:
        assert (st.st_uid, st.st_gid) == (4242, 4343)
        assert (bak.st_uid, bak.st_gid) == (4242, 4343)


# ---------------------------------------------------------------------------------------------
# Rule 5: an output that is one of the inputs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["score", "score-via-link", "convert"])
def test_rule5_an_output_that_resolves_to_an_input_is_refused(tmp_path, verb):
    judgments = make_case(tmp_path, name="mine.jsonl")
    old = judgments.read_bytes()
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id":"q0","ranking":["doc://0"]}\n')
    out = judgments
    if verb == "score-via-link":
        out = tmp_path / "alias.jsonl"
        out.symlink_to(judgments)
    if verb == "convert":
        done = main("convert", "--judgments", judgments, "--to", "qrels", "--out", out)
    else:
        done = main("score", "--judgments", judgments, "--run", run, "--out", out)
    assert done.returncode == 2
    assert "--judgments input" in done.stderr and done.stderr.count("\n") == 1
    assert judgments.read_bytes() == old


# ---------------------------------------------------------------------------------------------
# Rule 6 and issue 12: drift --fix keeps what it does not change, and writes only on a change
# ---------------------------------------------------------------------------------------------


def test_rule6_drift_fix_keeps_comments_blank_lines_and_unchanged_lines_byte_for_byte(tmp_path):
    path = make_case(tmp_path, n_labels=6)
    labels = path.read_text().splitlines(keepends=True)
    # an unchanged label written by hand (spaces, another field order), a CRLF line, comments
    by_hand = json.loads(labels[0])
    hand = (
        '{ "relevance": %d, "query_id": "%s",  "doc_uri": "%s", "chunk_id": "%s", "corpus_fingerprint": "corpus-v2" }\n'
        % (by_hand["relevance"], by_hand["query_id"], by_hand["doc_uri"], by_hand["chunk_id"])
    )
    text = (
        "// labels for the pilot\n\n"
        + hand
        + "   \n"
        + labels[1].replace("\n", "\r\n")
        + "// reviewed by a person\n"
        + "".join(labels[2:]).rstrip("\n")
    )
    path.write_text(text, newline="")
    done = main(*fix_cmd(path))
    assert done.returncode == 0, done.stderr
    before, after = text.split("\n"), path.read_bytes().decode().split("\n")
    assert len(before) == len(after)
    parsed = formats.parse_judgments(text)
    fixed = rev.fix(parsed, rev.drift(parsed, formats.read_corpus(tmp_path / "corpus.json")))
    changed = {int(n) for n, r in zip(parsed["line"], fixed.judgments["chunk_id"] != parsed["chunk_id"]) if r}
    assert changed == {5, 8, 10}  # the RE_ANCHORABLE labels
    for number, (b, a) in enumerate(zip(before, after), start=1):
        if number not in changed:
            assert a == b, f"line {number} changed: {b!r} -> {a!r}"
    canonical = formats.serialize_judgments(fixed.judgments).split("\n")
    rows = {int(n): i for i, n in enumerate(parsed["line"])}
    assert after[4] == canonical[rows[5]] + "\r"  # a CRLF line keeps its CR
    assert after[7] == canonical[rows[8]]
    assert after[9] == canonical[rows[10]]  # the last line, still without a newline


def test_issue12_drift_fix_rewrites_when_it_only_stamps_the_fingerprint(tmp_path):
    """Every label VALID but stamped with an older fingerprint: --fix stamps the live one and
    writes the file; a second --fix changes nothing and leaves bytes and mtime alone."""
    path = make_case(tmp_path, n_labels=10)
    labels = [json.loads(line) for line in path.read_text().splitlines()]
    valid = [lab for lab in labels if lab["corpus_fingerprint"] == "corpus-v2"]
    for lab in valid:
        lab["corpus_fingerprint"] = "corpus-v1"
    path.write_text("".join(json.dumps(lab) + "\n" for lab in valid))
    done = main(*fix_cmd(path))
    assert done.returncode == 0, done.stderr
    stamped = [json.loads(line) for line in path.read_text().splitlines()]
    assert [lab["corpus_fingerprint"] for lab in stamped] == ["corpus-v2"] * len(valid)
    before = path.read_bytes(), os.stat(path).st_mtime_ns
    time.sleep(0.01)
    again = main(*fix_cmd(path, "--json"))
    assert again.returncode == 0 and json.loads(again.stdout)["fix"]["written"] is False
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before


@pytest.mark.parametrize("review", [False, True])
def test_issue12_drift_fix_exit_status_is_the_same_with_and_without_json(tmp_path, review):
    codes = []
    for as_json in (False, True):
        folder = tmp_path / str(as_json)
        folder.mkdir()
        path = make_case(folder, n_labels=8)
        if review:  # an ORPHANED label: left for a person, exit 1
            with open(path, "a") as fh:
                fh.write('{"query_id":"q9","doc_uri":"doc://gone","relevance":1}\n')
        done = main(*fix_cmd(path, *(["--json"] if as_json else [])))
        codes.append(done.returncode)
    assert codes == ([1, 1] if review else [0, 0])


# A property: whatever surrounds the labels, the rewrite touches only the changed lines.

from hypothesis import given, settings
from hypothesis import strategies as st

_CASE = None


def _case():
    """The corpus and the labels of :func:`make_case`, built once (in memory)."""
    global _CASE
    if _CASE is None:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            path = make_case(Path(folder), n_labels=12)
            _CASE = (formats.read_corpus(Path(folder) / "corpus.json"), path.read_text().splitlines())
    return _CASE


_FILLER = st.sampled_from(["", "   ", "// a note", "  // indented note", "//"])


@settings(max_examples=25, deadline=None)
@given(
    picks=st.lists(st.integers(0, 11), min_size=1, max_size=12),
    fillers=st.lists(st.lists(_FILLER, max_size=2), min_size=13, max_size=13),
    crlf=st.lists(st.booleans(), min_size=12, max_size=12),
    final_newline=st.booleans(),
)
def test_rule6_property_only_changed_lines_differ_and_they_read_back_as_the_fix(picks, fillers, crlf, final_newline):
    corpus, labels = _case()
    lines: list[str] = []
    for i, pick in enumerate(picks):
        lines.extend(fillers[i])
        lines.append(labels[pick] + ("\r" if crlf[i] else ""))
    lines.extend(fillers[-1])
    text = "\n".join(lines) + ("\n" if final_newline else "")
    parsed = formats.parse_judgments(text)
    fixed = rev.fix(parsed, rev.drift(parsed, corpus)).judgments
    out = formats.rewrite_judgments(text, parsed, fixed)
    before, after = text.split("\n"), out.split("\n")
    assert len(before) == len(after)
    moved = set(parsed["line"][(fixed["chunk_id"] != parsed["chunk_id"]).to_numpy(bool)].tolist())
    for number, (b, a) in enumerate(zip(before, after), start=1):
        if number not in moved:
            assert a == b
        else:
            assert a != b and a.endswith("\r") == b.endswith("\r")
    again = formats.parse_judgments(out)
    for name in formats.JUDGMENT_FIELDS:
        assert again[name].equals(fixed[name].reset_index(drop=True)), name
