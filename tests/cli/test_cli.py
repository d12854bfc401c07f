"""The command line (SPEC A6): exit codes, one-line errors, fixtures end to end, drift --fix."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_expected, spec_fixtures_dir

from retrieval_eval.cli import app as cli
from retrieval_eval.cli.term import Style, color_enabled, table, visible_len

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]


class _TTY(io.StringIO):
    def isatty(self) -> bool:  # a terminal, as far as the CLI can tell
        return True


def run_cli(*argv, stdout=None, env=None):
    """Run ``main`` in-process; returns (exit code, stdout text, stderr text)."""
    out = stdout if stdout is not None else io.StringIO()
    err = io.StringIO()
    old = dict(os.environ)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    try:
        code = cli.main([str(a) for a in argv], stdout=out, stderr=err)
    finally:
        if env is not None:
            os.environ.clear()
            os.environ.update(old)
    return code, out.getvalue(), err.getvalue()


def fx(case: str, name: str) -> str:
    return str(spec_fixtures_dir() / case / name)


# -----------------------------------------------------------------------------------------------
# Bad input through the real console script: exit 2, one stderr line naming the file, no traceback
# -----------------------------------------------------------------------------------------------

GOOD_J = '{"query_id": "q1", "doc_uri": "d1", "relevance": 1}\n'
GOOD_RUN = '{"query_id": "q1", "ranking": ["d1"]}\n'
GOOD_CORPUS = '{"chunks": [{"chunk_id": "c1:00000000000000000000000000000000", "doc_uri": "d1"}]}\n'


def _case_files(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (argv, text the single stderr line must contain)."""

    def w(name: str, content) -> str:
        path = tmp / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return str(path)

    j = w("good.jsonl", GOOD_J)
    r = w("run.jsonl", GOOD_RUN)
    c = w("corpus.json", GOOD_CORPUS)
    (tmp / "folder").mkdir()
    score = ["score", "--judgments", j, "--run", r]
    cases = {
        "missing-file": (["score", "--judgments", str(tmp / "nope.jsonl"), "--run", r], "nope.jsonl"),
        "directory": (["score", "--judgments", j, "--run", str(tmp / "folder")], "folder"),
        "invalid-utf8": (
            [
                "score",
                "--judgments",
                w(
                    "latin1.jsonl",
                    GOOD_J.encode() + '{"query_id": "q\xe9", "doc_uri": "d1", "relevance": 1}\n'.encode("latin-1"),
                ),
                "--run",
                r,
            ],
            "latin1.jsonl:2",
        ),
        "invalid-json": (
            ["score", "--judgments", w("broken.jsonl", GOOD_J + '{"query_id": "q2", \n'), "--run", r],
            "broken.jsonl:2",
        ),
        "line-not-object": (
            ["score", "--judgments", w("array.jsonl", GOOD_J + "\n[1, 2]\n"), "--run", r],
            "array.jsonl:3",
        ),
        "missing-query-id": (
            ["score", "--judgments", w("noqid.jsonl", '{"doc_uri": "d1", "relevance": 1}\n'), "--run", r],
            "noqid.jsonl:1",
        ),
        "numeric-chunk-id": (
            [
                "score",
                "--judgments",
                w("numcid.jsonl", '{"query_id": "q1", "doc_uri": "d1", "chunk_id": 7, "relevance": 1}\n'),
                "--run",
                r,
            ],
            "numcid.jsonl:1",
        ),
        "non-string-stratum": (
            [
                "score",
                "--judgments",
                w("stratum.jsonl", GOOD_J + '{"query_id": "q1", "doc_uri": "d2", "stratum": 3, "relevance": 1}\n'),
                "--run",
                r,
            ],
            "stratum.jsonl:2",
        ),
        "boolean-relevance": (
            [
                "score",
                "--judgments",
                w("boolrel.jsonl", '{"query_id": "q1", "doc_uri": "d1", "relevance": true}\n'),
                "--run",
                r,
            ],
            "boolrel.jsonl:1",
        ),
        "run-not-object": (["score", "--judgments", j, "--run", w("run-bad.jsonl", '"q1"\n')], "run-bad.jsonl:1"),
        "run-duplicate-query": (
            ["score", "--judgments", j, "--run", fx("duplicate-ranking", "run-duplicate-query.jsonl")],
            "run-duplicate-query.jsonl:2: duplicate entry for query q1, already on line 1",
        ),
        "run-non-string-key": (
            ["score", "--judgments", j, "--run", fx("duplicate-ranking", "run-non-string-key.jsonl")],
            "run-non-string-key.jsonl:1: ranking[1] must be a non-empty string",
        ),
        "corpus-array": (["drift", "--judgments", j, "--corpus", w("corpus-array.json", "[]\n")], "corpus-array.json"),
        "corpus-invalid-json": (
            ["drift", "--judgments", j, "--corpus", w("corpus-broken.json", '{"chunks": [\n')],
            "corpus-broken.json",
        ),
        "chunk-without-id": (
            [
                "drift",
                "--judgments",
                j,
                "--corpus",
                w("corpus-noid.json", '{"chunks": [{"doc_uri": "d1", "text": "x"}]}\n'),
            ],
            "corpus-noid.json",
        ),
        "baseline-not-report": (
            score + ["--baseline", w("base-array.json", "[1]\n"), "--gate", "recall@10:-0.1"],
            "base-array.json",
        ),
        "baseline-no-metrics": (
            score + ["--baseline", w("base-empty.json", '{"spec_version": "1"}\n')],
            "base-empty.json",
        ),
        "baseline-metric-without-value": (
            score + ["--baseline", w("base-novalue.json", '{"metrics": {"recall@10": {"n": 1}}}\n')],
            "base-novalue.json: metrics.recall@10 has no 'value'",
        ),
        "baseline-invalid-json": (
            score + ["--baseline", w("base-broken.json", '{"metrics": \n\n')],
            "base-broken.json:3",
        ),
        "baseline-nan": (
            score + ["--baseline", w("base-nan.json", '{"metrics": {"a": {"value": NaN}}}')],
            "base-nan.json",
        ),
        "malformed-gate": (score + ["--gate", "recall@10:0.8abc"], "gate 'recall@10:0.8abc': '0.8abc' is not a number"),
        "gate-nan": (score + ["--gate", "recall@10:nan"], "'nan' is not a number"),
        "k-not-integer": (score + ["-k", "ten"], "-k expects a positive integer, got 'ten'"),
        "k-zero": (score + ["-k", "0"], "-k expects a positive integer"),
        "threshold-zero": (score + ["--threshold", "0"], "--threshold expects a positive integer, got '0'"),
        "unknown-flag": (score + ["--bogus"], "unknown option '--bogus' for 'score'"),
        "unknown-verb": (["frobnicate"], "unknown command 'frobnicate'"),
        "verb-typo": (["scroe", "--judgments", j], "unknown command 'scroe'; did you mean 'score'?"),
        "no-verb": ([], "no command given"),
        "missing-required": (["score", "--judgments", j], "the following arguments are required: --run"),
        "qrels-malformed": (["validate", "--qrels", w("bad.qrels", "q1 0 d1 x\n")], "bad.qrels:1"),
        "drift-judgments-missing": (["drift", "--judgments", str(tmp / "gone.jsonl"), "--corpus", c], "gone.jsonl"),
        "out-folder-missing": (score + ["--out", str(tmp / "no" / "such" / "report.json")], "report.json"),
    }
    return cases


@pytest.fixture(scope="module")
def bad_input_results(tmp_path_factory):
    """Run every bad-input case as its own process, a few at a time, and collect them.

    (All at once, 35 interpreters importing pandas can outlast any timeout on a loaded 2-core
    machine; four at a time keeps both cores busy.)
    """
    tmp = tmp_path_factory.mktemp("bad-input")
    cases = _case_files(tmp)
    env = dict(os.environ, NO_COLOR="1")
    results = {}
    names = list(cases)
    for start in range(0, len(names), 4):
        procs = {
            name: subprocess.Popen(
                [PY, "-m", "retrieval_eval", *cases[name][0]],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=tmp,
                env=env,
            )
            for name in names[start : start + 4]
        }
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=300)
            results[name] = (proc.returncode, out.decode(), err.decode(), cases[name][1])
    return results


BAD_CASES = [
    "missing-file",
    "directory",
    "invalid-utf8",
    "invalid-json",
    "line-not-object",
    "missing-query-id",
    "numeric-chunk-id",
    "non-string-stratum",
    "boolean-relevance",
    "run-not-object",
    "run-duplicate-query",
    "run-non-string-key",
    "corpus-array",
    "corpus-invalid-json",
    "chunk-without-id",
    "baseline-not-report",
    "baseline-no-metrics",
    "baseline-metric-without-value",
    "baseline-invalid-json",
    "baseline-nan",
    "malformed-gate",
    "gate-nan",
    "k-not-integer",
    "k-zero",
    "threshold-zero",
    "unknown-flag",
    "unknown-verb",
    "verb-typo",
    "no-verb",
    "missing-required",
    "qrels-malformed",
    "drift-judgments-missing",
    "out-folder-missing",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input_is_one_line_and_exit_2(bad_input_results, case):
    code, out, err, expected = bad_input_results[case]
    assert code == 2, (out, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("retrieval-eval: error: ")
    assert expected in lines[0]
    assert out == ""


def test_every_bad_case_is_checked(bad_input_results):
    assert set(BAD_CASES) == set(bad_input_results)


def test_installed_console_script(tmp_path):
    script = Path(PY).with_name("retrieval-eval")
    if not script.exists():
        pytest.skip("console script not installed next to the interpreter")
    proc = subprocess.run(
        [str(script), "score", "--judgments", str(tmp_path / "missing.jsonl"), "--run", fx("basic", "run.jsonl")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"retrieval-eval: error: {tmp_path / 'missing.jsonl'}: no such file"]
    ok = subprocess.run(
        [
            str(script),
            "score",
            "--judgments",
            fx("basic", "judgments.jsonl"),
            "--run",
            fx("basic", "run.jsonl"),
            "-k",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["metrics"]["recall@3"]["value"] == 0.5


def _validate_raises(monkeypatch, handler):
    """Make the validate verb run ``handler`` (which raises), with no debug tracebacks."""
    real = cli.build_parser

    def parser():
        p = real()
        p._subparsers._group_actions[0].choices["validate"].set_defaults(handler=handler)
        return p

    monkeypatch.setattr(cli, "build_parser", parser)
    monkeypatch.delenv("RETRIEVAL_EVAL_DEBUG", raising=False)


def test_internal_error_is_one_line_exit_3(monkeypatch):
    def boom(args, out):
        raise RuntimeError("kaboom")

    _validate_raises(monkeypatch, boom)
    code, out, err = run_cli("validate", "--judgments", fx("basic", "judgments.jsonl"))
    assert code == 3
    assert err.splitlines() == [
        "retrieval-eval: error: internal error: RuntimeError: kaboom (this is a bug; set "
        "RETRIEVAL_EVAL_DEBUG=1 for the traceback)"
    ]


# -----------------------------------------------------------------------------------------------
# Usage
# -----------------------------------------------------------------------------------------------


def test_help_lists_every_command():
    code, out, err = run_cli("--help")
    assert code == 0 and err == ""
    for name in cli.COMMANDS:
        assert name in out
    assert "exit codes" in out


@pytest.mark.parametrize("verb", list(cli.COMMANDS))
def test_each_verb_has_a_help_screen(verb):
    code, out, err = run_cli(verb, "--help")
    assert code == 0 and err == ""
    assert out.startswith(f"usage: retrieval-eval {verb}")
    assert "example" in out


def test_version():
    code, out, _ = run_cli("--version")
    assert code == 0 and out.strip().startswith("retrieval-eval ")


@pytest.mark.parametrize(
    "typo, verb",
    [
        ("scroe", "score"),
        ("drfit", "drift"),
        ("valdiate", "validate"),
        ("covert", "convert"),
        ("calibrat", "calibrate"),
    ],
)
def test_verb_typo_suggests_the_nearest(typo, verb):
    code, _, err = run_cli(typo)
    assert code == 2
    assert err == f"retrieval-eval: error: unknown command '{typo}'; did you mean '{verb}'?\n"


def test_backup_without_fix_is_a_usage_error():
    code, _, err = run_cli(
        "drift", "--judgments", fx("drift", "judgments.jsonl"), "--corpus", fx("drift", "corpus.json"), "--backup"
    )
    assert code == 2 and "--backup applies to --fix only" in err


# -----------------------------------------------------------------------------------------------
# Spec fixtures through the CLI
# -----------------------------------------------------------------------------------------------


def test_basic_fixture_metrics():
    expected = load_expected("basic")
    code, out, err = run_cli(
        "score",
        "--judgments",
        fx("basic", "judgments.jsonl"),
        "--run",
        fx("basic", "run.jsonl"),
        "-k",
        expected["k"],
        "--json",
    )
    assert code == 0, err
    report = json.loads(out)
    assert set(expected["metrics"]) <= set(report["metrics"])
    for name, value in expected["metrics"].items():
        assert report["metrics"][name]["value"] == pytest.approx(value, abs=1e-12)
    assert report["verdict"]["status"] == "PASS"


def test_basic_fixture_report_matches_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((spec_fixtures_dir() / "schemas" / "report.schema.json").read_text())
    code, out, _ = run_cli(
        "score",
        "--judgments",
        fx("strata", "judgments.jsonl"),
        "--run",
        fx("strata", "run.jsonl"),
        "-k",
        "3",
        "--gate",
        "worst-stratum:recall@3:0.5",
        "--json",
    )
    report = json.loads(out)
    jsonschema.validate(report, schema)
    assert code == 1
    assert report["verdict"]["gates"] == [
        {"expression": "worst-stratum:recall@3:0.5", "status": "FAIL", "observed": 0.0}
    ]


def test_nothing_scored_is_indeterminate_with_the_gate_reason():
    expected = load_expected("nothing-scored")
    code, out, _ = run_cli(
        "score",
        "--judgments",
        fx("nothing-scored", "judgments.jsonl"),
        "--run",
        fx("nothing-scored", "run.jsonl"),
        "-k",
        "3",
        "--threshold",
        expected["threshold"],
        "--gate",
        "recall@3:0.5",
        "--json",
    )
    assert code == 1
    report = json.loads(out)
    assert report["metrics"] == {}
    assert report["judgments"]["queries_scored"] == expected["queries_scored"]
    assert report["verdict"]["status"] == expected["status"]
    assert expected["reason"] in report["verdict"]["reasons"]
    assert expected["gate_reason"] in report["verdict"]["reasons"]


def test_unsound_judgments_gate_passes_but_verdict_stays_indeterminate():
    expected = load_expected("unsound-judgments")
    gate = expected["gate"]
    code, out, _ = run_cli(
        "score",
        "--judgments",
        fx("unsound-judgments", "judgments.jsonl"),
        "--run",
        fx("unsound-judgments", "run.jsonl"),
        "-k",
        expected["k"],
        "--gate",
        gate["expression"],
        "--json",
    )
    report = json.loads(out)
    assert report["verdict"]["gates"][0]["status"] == gate["gate_status"]
    assert report["verdict"]["status"] == gate["verdict"]
    assert expected["reason"] in report["verdict"]["reasons"]
    assert code == gate["exit_code"]


def test_unsound_judgments_fail_validate():
    code, out, _ = run_cli("validate", "--judgments", fx("unsound-judgments", "judgments.jsonl"), "--json")
    assert code == 1
    result = json.loads(out)
    assert result["ok"] is False
    assert [i["code"] for i in result["issues"] if i["severity"] == "error"] == ["duplicate-label"]


def test_validate_sound_set_exits_0():
    code, out, _ = run_cli("validate", "--judgments", fx("basic", "judgments.jsonl"), "--color", "never")
    assert code == 0
    assert "PASS" in out


def test_duplicate_ranking_passes_with_the_reason():
    expected = load_expected("duplicate-ranking")
    code, out, _ = run_cli(
        "score",
        "--judgments",
        fx("duplicate-ranking", "judgments.jsonl"),
        "--run",
        fx("duplicate-ranking", "run.jsonl"),
        "-k",
        expected["k"],
        "--json",
    )
    assert code == 0
    report = json.loads(out)
    assert report["verdict"]["status"] == expected["verdict"]
    assert expected["reason"] in report["verdict"]["reasons"]
    for name, value in expected["metrics"].items():
        assert report["metrics"][name]["value"] == pytest.approx(value, abs=1e-11)


def test_human_output_shows_table_verdict_and_gates():
    code, out, _ = run_cli(
        "score",
        "--judgments",
        fx("strata", "judgments.jsonl"),
        "--run",
        fx("strata", "run.jsonl"),
        "-k",
        "3",
        "--gate",
        "recall@3:0.5",
        "--gate",
        "worst-stratum:recall@3:0.5",
    )
    assert code == 1
    assert "\x1b[" not in out  # not a terminal
    lines = out.splitlines()
    assert any(line.split()[:2] == ["recall@3", "0.6000"] for line in lines)
    legal = next(line for line in lines if line.strip().startswith("legal"))
    assert "0.0000*" in legal
    assert "verdict  FAIL" in out
    assert "worst-stratum:recall@3:0.5: worst stratum 'legal' has recall@3 0.0000, below 0.5" in out
    gate_lines = [line.split() for line in lines if line.strip().startswith(("PASS", "FAIL"))]
    assert ["PASS", "recall@3:0.5", "0.6000"] in gate_lines
    assert ["FAIL", "worst-stratum:recall@3:0.5", "0.0000"] in gate_lines


def test_metric_table_columns_align():
    _, out, _ = run_cli(
        "score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("basic", "run.jsonl"), "-k", "3"
    )
    rows = [line for line in out.splitlines() if line.strip().startswith(("precision@3", "hit_rate@3", "metric"))]
    assert len(rows) == 3
    assert len({len(r) for r in rows}) == 1  # right-aligned values end in the same column


def test_delta_gate_against_baseline_written_with_out(tmp_path):
    base = tmp_path / "base.json"
    args = ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("basic", "run.jsonl"), "-k", "3"]
    code, _, _ = run_cli(*args, "--out", base)
    assert code == 0
    saved = json.loads(base.read_text())
    assert saved["metrics"]["recall@3"]["value"] == 0.5
    assert not [p for p in tmp_path.iterdir() if p.name != "base.json"]  # no temp file left
    code, out, _ = run_cli(*args, "--baseline", base, "--gate", "recall@3:-0.02", "--json")
    assert code == 0
    assert json.loads(out)["verdict"]["gates"] == [
        {"expression": "recall@3:-0.02", "status": "PASS", "observed": 0.5, "baseline": 0.5}
    ]
    saved["metrics"]["recall@3"]["value"] = 0.6
    base.write_text(json.dumps(saved))
    code, out, _ = run_cli(*args, "--baseline", base, "--gate", "recall@3:-0.02", "--json")
    assert code == 1
    assert json.loads(out)["verdict"]["status"] == "FAIL"


def test_delta_gate_without_baseline_is_indeterminate():
    code, out, _ = run_cli(
        "score",
        "--judgments",
        fx("basic", "judgments.jsonl"),
        "--run",
        fx("basic", "run.jsonl"),
        "-k",
        "3",
        "--gate",
        "recall@3:-0.02",
        "--json",
    )
    assert code == 1
    assert "recall@3:-0.02: no baseline value for 'recall@3'" in json.loads(out)["verdict"]["reasons"]


def test_bom_is_accepted(tmp_path):
    j = tmp_path / "bom.jsonl"
    j.write_bytes(b"\xef\xbb\xbf" + Path(fx("basic", "judgments.jsonl")).read_bytes())
    code, out, err = run_cli("score", "--judgments", j, "--run", fx("basic", "run.jsonl"), "-k", "3", "--json")
    assert code == 0, err
    assert json.loads(out)["metrics"]["recall@3"]["value"] == 0.5


def test_multi_system_run(tmp_path):
    run = tmp_path / "systems.jsonl"
    run.write_text(
        '{"system": "bm25", "query_id": "q1", "ranking": ["d3", "d1", "d2"]}\n'
        '{"system": "bm25", "query_id": "q2", "ranking": ["d6", "d7"]}\n'
        '{"system": "dense", "query_id": "q1", "ranking": ["d1", "d2"]}\n'
        '{"system": "dense", "query_id": "q2", "ranking": ["d5"]}\n'
    )
    args = ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", run, "-k", "3"]
    code, out, _ = run_cli(*args, "--gate", "recall@3:0.9")
    assert code == 1
    header = next(line for line in out.splitlines() if line.split()[:1] == ["metric"])
    assert header.split() == ["metric", "bm25", "dense"]
    recall = next(line for line in out.splitlines() if line.split()[:1] == ["recall@3"])
    assert recall.split() == ["recall@3", "0.5000", "1.0000"]
    assert "verdict, bm25  FAIL" in out and "verdict, dense  PASS" in out
    code, out, _ = run_cli(*args, "--json")
    data = json.loads(out)
    assert list(data["systems"]) == ["bm25", "dense"]
    code, out, _ = run_cli(*args, "--system", "dense", "--gate", "recall@3:0.9", "--json")
    assert code == 0 and json.loads(out)["metrics"]["recall@3"]["value"] == 1.0
    code, _, err = run_cli(*args, "--system", "nope")
    assert code == 2 and "no system 'nope'" in err


# -----------------------------------------------------------------------------------------------
# drift
# -----------------------------------------------------------------------------------------------


@pytest.fixture
def drift_files(tmp_path):
    j = tmp_path / "judgments.jsonl"
    lines = Path(fx("drift", "judgments.jsonl")).read_text().splitlines()
    # an unknown field on the re-anchorable label must survive the rewrite
    row = json.loads(lines[1])
    row["reviewer_note"] = {"keep": ["me", 1]}
    lines[1] = json.dumps(row)
    j.write_text("\n".join(lines) + "\n")
    c = tmp_path / "corpus.json"
    shutil.copy(fx("drift", "corpus.json"), c)
    return j, c


def test_drift_reports_decay_with_exit_1(drift_files):
    j, c = drift_files
    before = j.read_bytes()
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", c)
    assert code == 1
    assert j.read_bytes() == before
    assert "75.0% not VALID" in out
    assert "1 can be re-anchored with --fix" in out
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", c, "--json")
    data = json.loads(out)
    assert data["summary"] == load_expected("drift")["summary"]


def test_drift_all_valid_exits_0(tmp_path):
    j = tmp_path / "j.jsonl"
    j.write_text(Path(fx("drift", "judgments.jsonl")).read_text().splitlines()[0] + "\n")
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", fx("drift", "corpus.json"))
    assert code == 0 and "every label is VALID" in out


def test_drift_fix_rewrites_keeps_backup_and_unknown_fields(drift_files):
    j, c = drift_files
    before = j.read_bytes()
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", c, "--fix", "--backup")
    assert code == 1  # SPLIT and ORPHANED labels still need a human
    assert "re-anchored 1 label;" in out and "2 labels need review" in out
    backup = j.with_name(j.name + ".bak")
    assert backup.read_bytes() == before
    rows = [json.loads(line) for line in j.read_text().splitlines()]
    expected = load_expected("drift")
    assert rows[1]["chunk_id"] == expected["reanchor"]["q2"]
    assert rows[1]["reviewer_note"] == {"keep": ["me", 1]}
    assert rows[1]["corpus_fingerprint"] == "recursive/384/64"
    assert rows[2]["chunk_id"] == json.loads(before.decode().splitlines()[2])["chunk_id"]  # SPLIT untouched
    assert not [p for p in j.parent.iterdir() if p.name.endswith(".tmp")]
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", c, "--json")
    assert json.loads(out)["summary"]["re_anchorable"] == 0


def test_drift_fix_without_backup_leaves_no_bak(drift_files):
    j, c = drift_files
    run_cli("drift", "--judgments", j, "--corpus", c, "--fix")
    assert not j.with_name(j.name + ".bak").exists()


def test_drift_fix_exit_0_when_nothing_left_to_review(tmp_path):
    j = tmp_path / "j.jsonl"
    j.write_text("\n".join(Path(fx("drift", "judgments.jsonl")).read_text().splitlines()[:2]) + "\n")
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", fx("drift", "corpus.json"), "--fix")
    assert code == 0 and "nothing left to review" in out
    code, _, _ = run_cli("drift", "--judgments", j, "--corpus", fx("drift", "corpus.json"))
    assert code == 0


def test_drift_fix_crash_mid_write_leaves_the_original(drift_files, monkeypatch):
    j, c = drift_files
    before = j.read_bytes()

    def crash(src, dst):
        raise OSError(28, "No space left on device", str(dst))

    monkeypatch.setattr(os, "replace", crash)
    monkeypatch.setattr(os, "rename", crash)
    code, out, err = run_cli("drift", "--judgments", j, "--corpus", c, "--fix")
    assert code == 2
    assert len(err.splitlines()) == 1 and "judgments.jsonl" in err
    assert j.read_bytes() == before
    assert sorted(p.name for p in j.parent.iterdir()) == ["corpus.json", "judgments.jsonl"]


def test_out_crash_mid_write_leaves_the_original(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old")
    monkeypatch.setattr(os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(5, "I/O error")))
    code, _, err = run_cli(
        "score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("basic", "run.jsonl"), "--out", target
    )
    assert code == 2 and "report.json: cannot write" in err
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


# -----------------------------------------------------------------------------------------------
# convert
# -----------------------------------------------------------------------------------------------


def test_convert_qrels_to_judgments_and_back(tmp_path):
    expected = load_expected("qrels")
    out_file = tmp_path / "j.jsonl"
    code, _, err = run_cli("convert", "--qrels", fx("qrels", "beir.tsv"), "--to", "judgments", "--out", out_file)
    assert code == 0, err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [{k: r[k] for k in ("query_id", "doc_uri", "relevance")} for r in rows] == expected["beir"]
    code, out, _ = run_cli("convert", "--judgments", out_file, "--to", "qrels")
    assert code == 0
    assert out.splitlines() == expected["qrels_lines"]


def test_convert_qrels_as_chunk_ids():
    code, out, _ = run_cli("convert", "--qrels", fx("qrels", "trec.qrels"), "--to", "judgments", "--as-chunk-ids")
    assert code == 0
    first = json.loads(out.splitlines()[0])
    assert first["chunk_id"] == first["doc_uri"] == "d3"


def test_convert_run_to_trec_and_back(tmp_path):
    trec = tmp_path / "run.trec"
    code, _, err = run_cli("convert", "--run", fx("basic", "run.jsonl"), "--to", "trec-run", "--out", trec)
    assert code == 0, err
    lines = trec.read_text().splitlines()
    assert lines[0].split()[:4] == ["q1", "Q0", "d3", "1"]
    code, out, err = run_cli("convert", "--run", trec, "--to", "run")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["query_id"], r["ranking"]) for r in rows] == [("q1", ["d3", "d1", "d2"]), ("q2", ["d6", "d7"])]


def test_convert_refuses_a_mismatched_target():
    code, _, err = run_cli("convert", "--run", fx("basic", "run.jsonl"), "--to", "qrels")
    assert code == 2 and "--run converts to run or trec-run" in err


# -----------------------------------------------------------------------------------------------
# Colour
# -----------------------------------------------------------------------------------------------


def _score_args():
    return ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", fx("basic", "run.jsonl"), "-k", "3"]


def test_colour_on_a_terminal():
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    _, out, _ = run_cli(*_score_args(), stdout=_TTY(), env=env)
    assert "\x1b[" in out


def test_no_colour_with_no_color_env():
    env = {k: v for k, v in os.environ.items() if k != "TERM"}
    env["NO_COLOR"] = "1"
    _, out, _ = run_cli(*_score_args(), stdout=_TTY(), env=env)
    assert "\x1b[" not in out


def test_no_colour_when_not_a_terminal():
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    _, out, _ = run_cli(*_score_args(), env=env)
    assert "\x1b[" not in out


def test_color_flag_overrides():
    _, out, _ = run_cli(*_score_args(), "--color", "always", env=dict(os.environ, NO_COLOR="1"))
    assert "\x1b[" in out
    _, out, _ = run_cli(*_score_args(), "--color", "never", stdout=_TTY())
    assert "\x1b[" not in out


def test_json_is_never_coloured():
    _, out, _ = run_cli(*_score_args(), "--json", "--color", "always")
    json.loads(out)
    assert "\x1b[" not in out


def test_color_enabled_rules():
    tty, pipe = _TTY(), io.StringIO()
    assert color_enabled("auto", tty, {}) is True
    assert color_enabled("auto", pipe, {}) is False
    assert color_enabled("auto", tty, {"NO_COLOR": "1"}) is False
    assert color_enabled("auto", tty, {"NO_COLOR": ""}) is True  # empty means unset
    assert color_enabled("auto", tty, {"TERM": "dumb"}) is False
    assert color_enabled("always", pipe, {"NO_COLOR": "1"}) is True
    assert color_enabled("never", tty, {}) is False


def test_table_aligns_coloured_cells():
    s = Style(True)
    text = table(["name", "value"], [[s("a", "red"), "1.0000"], ["longer", s("10.0000", "green")]], style=s)
    lines = text.splitlines()
    assert len({visible_len(line) for line in lines}) == 1


# -----------------------------------------------------------------------------------------------
# Calibration, demo
# -----------------------------------------------------------------------------------------------


def _demo(name: str) -> str:
    from retrieval_eval.datasets import demo_path

    return str(demo_path(name))


def test_score_with_queries_gates_calibration_metrics():
    args = [
        "score",
        "--judgments",
        _demo("judgments.jsonl"),
        "--run",
        _demo("runs.jsonl"),
        "--queries",
        _demo("queries.jsonl"),
        "--gate",
        "negative_satisfaction:0.9",
        "--json",
    ]
    code, out, _ = run_cli(*args, "--system", "dense")
    report = json.loads(out)
    assert report["verdict"]["gates"][0]["status"] == "PASS"
    assert code == (0 if report["verdict"]["status"] == "PASS" else 1)
    # rank-based RRF scores carry no absolute relevance: the gate must not pass
    code, out, _ = run_cli(*args, "--system", "rrf")
    report = json.loads(out)
    assert code == 1
    assert report["verdict"]["gates"][0]["status"] == "INDETERMINATE"
    assert any(
        "negative_satisfaction:0.9: 'negative_satisfaction' cannot be gated" in r for r in report["verdict"]["reasons"]
    )


def test_score_human_output_shows_the_calibration_table():
    code, out, _ = run_cli(
        "score",
        "--judgments",
        _demo("judgments.jsonl"),
        "--run",
        _demo("runs.jsonl"),
        "--queries",
        _demo("queries.jsonl"),
    )
    lines = out.splitlines()
    header = next(line for line in lines if line.split()[:2] == ["system", "cutoff"])
    assert "negative_satisfaction" in header and "auroc" in header
    assert any(line.split()[:1] == ["dense"] for line in lines[lines.index(header) :])
    assert any("rank-based" in line for line in lines)


def test_score_with_queries_but_no_scores_says_so(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        '{"query_id": "q1", "stratum": "a"}\n{"query_id": "q2", "stratum": "a"}\n'
        '{"query_id": "ood1", "expect_none": true, "stratum": "a"}\n'
    )
    code, out, err = run_cli(
        "score",
        "--judgments",
        fx("basic", "judgments.jsonl"),
        "--run",
        fx("basic", "run.jsonl"),
        "-k",
        "3",
        "--queries",
        queries,
    )
    assert code in (0, 1), err
    assert "skipped: the run has no scores" in out


def test_score_with_queries_without_strata(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"query_id": "q1"}\n{"query_id": "q2"}\n{"query_id": "ood1", "expect_none": true}\n')
    code, out, err = run_cli(
        "score",
        "--judgments",
        fx("basic", "judgments.jsonl"),
        "--run",
        fx("basic", "run.jsonl"),
        "-k",
        "3",
        "--queries",
        queries,
    )
    assert code == 0, err


def test_a_library_value_error_is_an_internal_error_not_bad_input(monkeypatch):
    import pyarrow as pa

    def boom(args, out):
        raise pa.ArrowInvalid("Invalid null value")

    _validate_raises(monkeypatch, boom)
    code, _, err = run_cli("validate", "--judgments", fx("basic", "judgments.jsonl"))
    assert code == 3 and "internal error: ArrowInvalid" in err and len(err.splitlines()) == 1


def test_quantile_without_queries_is_a_usage_error():
    code, _, err = run_cli(*_score_args(), "--quantile", "0.2")
    assert code == 2 and "--quantile and --cutoff need --queries" in err
    code, _, err = run_cli(*_score_args(), "--queries", "x", "--quantile", "1.5")
    assert code == 2 and "--quantile expects a number strictly between 0 and 1" in err


def test_calibrate_json():
    code, out, err = run_cli(
        "calibrate",
        "--run",
        _demo("runs.jsonl"),
        "--judgments",
        _demo("judgments.jsonl"),
        "--queries",
        _demo("queries.jsonl"),
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    systems = [row["system"] for row in data["summary"]]
    assert systems == ["dense", "bm25", "rrf"]
    code, out, _ = run_cli(
        "calibrate",
        "--run",
        _demo("runs.jsonl"),
        "--judgments",
        _demo("judgments.jsonl"),
        "--queries",
        _demo("queries.jsonl"),
        "--cutoff",
        "0.5",
        "--system",
        "dense",
        "--json",
    )
    data = json.loads(out)
    assert [row["cutoff"] for row in data["summary"]] == [0.5]


def test_strata_tie_marks_no_worst(tmp_path):
    code, out, _ = run_cli(
        "score", "--judgments", fx("strata", "judgments.jsonl"), "--run", fx("strata", "run.jsonl"), "-k", "3"
    )
    billing = next(line for line in out.splitlines() if line.strip().startswith("billing"))
    assert "*" not in billing


def test_demo_writes_report_plots_and_index(tmp_path):
    folder = tmp_path / "demo"
    code, out, err = run_cli("demo", "--out", folder)
    assert code == 0, err
    names = {p.name for p in folder.iterdir()}
    assert {"report.json", "index.html", "metrics.csv", "calibration.csv", "drift.json"} <= names
    assert any(n.endswith(".png") for n in names)
    assert not any(n.endswith(".tmp") or n.startswith(".") for n in names)
    index = (folder / "index.html").read_text()
    for name in names - {"index.html"}:
        assert f'href="{name}"' in index
    report = json.loads((folder / "report-dense.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((spec_fixtures_dir() / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)
    # the headline table (one row per system, 4 decimals) and the page's path
    lines = out.splitlines()
    rows = {s: [line for line in lines if line.strip().startswith(s + " ")] for s in ("dense", "bm25", "rrf")}
    assert all(len(r) == 1 for r in rows.values())
    assert f"{report['metrics']['ndcg@10']['value']:.4f}" in rows["dense"][0]
    assert f"page   {folder / 'index.html'}" in out


# -----------------------------------------------------------------------------------------------
# compare
# -----------------------------------------------------------------------------------------------


@pytest.fixture
def two_systems(tmp_path):
    bm25 = tmp_path / "bm25.jsonl"
    bm25.write_text(
        '{"system": "bm25", "query_id": "q1", "ranking": ["d3", "d1", "d2"]}\n'
        '{"system": "bm25", "query_id": "q2", "ranking": ["d6", "d7"]}\n'
    )
    dense = tmp_path / "dense.jsonl"
    dense.write_text(
        '{"system": "dense", "query_id": "q1", "ranking": ["d1", "d2"]}\n'
        '{"system": "dense", "query_id": "q2", "ranking": ["d5"]}\n'
    )
    return bm25, dense


def test_compare_two_run_files(two_systems):
    bm25, dense = two_systems
    args = [
        "compare",
        "--judgments",
        fx("basic", "judgments.jsonl"),
        "--run",
        bm25,
        "--run",
        dense,
        "-k",
        "3",
        "--metric",
        "recall",
        "--baseline",
        "bm25",
    ]
    code, out, err = run_cli(*args)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.split()[:2] == ["system", "metric"])
    row = next(line for line in out.splitlines() if line.split()[:2] == ["dense", "recall@3"])
    assert len(row) <= len(header) + 1 and "|" not in row
    code, out, _ = run_cli(*args, "--json")
    data = json.loads(out)
    assert json.dumps(data).count("recall@3") >= 1


def test_compare_unknown_baseline_is_a_usage_error(two_systems):
    bm25, dense = two_systems
    code, _, err = run_cli(
        "compare", "--judgments", fx("basic", "judgments.jsonl"), "--run", bm25, "--run", dense, "--baseline", "nope"
    )
    assert code == 2 and "no system 'nope'" in err


def test_compare_refuses_the_same_system_twice(two_systems):
    bm25, _ = two_systems
    code, _, err = run_cli("compare", "--judgments", fx("basic", "judgments.jsonl"), "--run", bm25, "--run", bm25)
    assert code == 2 and "same system" in err


def test_multi_system_baseline_matches_by_system(two_systems, tmp_path):
    bm25, dense = two_systems
    both = tmp_path / "both.jsonl"
    both.write_text(bm25.read_text() + dense.read_text())
    base = tmp_path / "base.json"
    args = ["score", "--judgments", fx("basic", "judgments.jsonl"), "--run", both, "-k", "3"]
    code, _, _ = run_cli(*args, "--out", base)
    assert set(json.loads(base.read_text())["systems"]) == {"bm25", "dense"}
    code, out, err = run_cli(*args, "--baseline", base, "--gate", "recall@3:-0.01", "--json")
    assert code == 0, err
    reports = json.loads(out)["systems"]
    assert reports["bm25"]["verdict"]["gates"][0]["baseline"] == 0.5
    assert reports["dense"]["verdict"]["gates"][0]["baseline"] == 1.0
    broken = json.loads(base.read_text())
    del broken["systems"]["dense"]["metrics"]["recall@3"]["value"]
    base.write_text(json.dumps(broken))
    code, _, err = run_cli(*args, "--baseline", base)
    assert code == 2 and "(system dense): metrics.recall@3 has no 'value'" in err


def test_empty_judgments_never_crash(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, err = run_cli("score", "--judgments", empty, "--run", fx("basic", "run.jsonl"))
    assert code in (1, 2) and "internal error" not in err
    if code == 1:  # the spec's answer: nothing scored, so the verdict is INDETERMINATE
        assert "verdict  INDETERMINATE" in out
    else:
        assert err == f"retrieval-eval: error: {empty}: no judgments, so nothing can be scored\n"
    code, _, _ = run_cli("validate", "--judgments", empty)
    assert code == 1
