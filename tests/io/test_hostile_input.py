"""Issue 19, rules 7, 8, 9, 13 and 14: inputs that made the tool crash, lie or garble the terminal.

Each test is named for its rule and runs the failure the issue names: through the API, and
through the real console script (a subprocess) where the CLI is what failed.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval.io as F
from retrieval_eval.analysis.decisions.gates import apply_gates, evaluate_gates
from retrieval_eval.analysis.decisions.report import Report
from retrieval_eval.errors import FormatError

PY = sys.executable


def cli(*argv, cwd=None):
    """The console script in a child process: (exit code, stdout, stderr)."""
    proc = subprocess.run(
        [PY, "-m", "retrieval_eval", *map(str, argv)], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    return proc.returncode, proc.stdout, proc.stderr


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _judgments(grade: int) -> str:
    return f'{{"query_id":"q1","doc_uri":"d1","relevance":1}}\n{{"query_id":"q1","doc_uri":"d2","relevance":{grade}}}\n'


RUN = '{"query_id":"q1","ranking":["d1","d2"],"scores":[0.9,0.5]}\n'


# -----------------------------------------------------------------------------------------------
# Rule 7: a grade whose gain overflows is refused where it is read; NaN never passes
# -----------------------------------------------------------------------------------------------

TOO_LARGE = "is above the largest grade allowed, 53"


def test_rule7_max_relevance_keeps_the_gain_exact_in_float64():
    # The documented maximum: the largest g for which 2**g - 1 is an exact float64 integer.
    g = F.MAX_RELEVANCE
    assert float(2**g - 1) == 2**g - 1 and float(2 ** (g + 1) - 1) != 2 ** (g + 1) - 1
    assert math.isfinite(2.0**g * 2**62)  # a DCG sum of 2**62 such gains is still finite


@pytest.mark.parametrize("grade", [54, 1024, 2**63 - 1, 2**63, 10**30])
def test_rule7_judgments_refuse_a_grade_above_the_maximum_on_both_paths(grade, tmp_path):
    text = _judgments(grade)
    for content in (text, "// careful pass\n" + text):
        line = content.count("\n")
        with pytest.raises(FormatError) as err:
            F.parse_judgments(content)
        assert str(err.value).startswith(f"judgments:{line}: relevance {grade} {TOO_LARGE}")
    path = write(tmp_path / "j.jsonl", text)
    with pytest.raises(FormatError, match=f"^{path}:2: relevance {grade} {TOO_LARGE}"):
        F.read_judgments(path)
    # The largest allowed grade is accepted, and scores without a warning.
    assert F.parse_judgments(_judgments(53)).relevance.tolist() == [1, 53]


@pytest.mark.parametrize("grade", [54, 1024, 2**63 - 1, 10**30])
def test_rule7_qrels_refuse_a_grade_above_the_maximum_on_both_paths(grade, tmp_path):
    text = f"q1 0 d1 1\nq1 0 d2 {grade}\n"
    for content in (text, "# careful pass\n" + text):
        with pytest.raises(FormatError, match=f"^qrels:{content.count(chr(10))}: relevance {grade} {TOO_LARGE}"):
            F.from_qrels(content)
    path = write(tmp_path / "q.qrels", text)
    with pytest.raises(FormatError, match=f"^{path}:2: relevance {grade} {TOO_LARGE}"):
        F.read_qrels(path)


@pytest.mark.parametrize("values", [[1, 54], [1.0, 1024.0], [1, 2**70]])
def test_rule7_frames_refuse_a_grade_above_the_maximum(values):
    frame = pd.DataFrame(
        {
            "query_id": ["q1", "q1"],
            "doc_uri": ["d1", "d2"],
            "relevance": pd.Series(values, dtype=object if values[1] > 2**62 else None),
        }
    )
    with pytest.raises(FormatError, match=f"row 1: relevance {int(values[1])} {TOO_LARGE}"):
        F.as_judgments(frame)
    # A reader's frame names the file line, not the row.
    read = F.parse_judgments("\n" + _judgments(3))
    bad = read.assign(relevance=np.array([1, 99], dtype=np.int64))
    with pytest.raises(FormatError, match=f"^judgments:3: relevance 99 {TOO_LARGE}"):
        F.as_judgments(bad)


@pytest.mark.parametrize("grade", [1024, 2**63 - 1])
def test_rule7_cli_exits_2_naming_the_line(grade, tmp_path):
    j = write(tmp_path / "j.jsonl", _judgments(grade))
    r = write(tmp_path / "r.jsonl", RUN)
    code, out, err = cli("score", "--judgments", j, "--run", r)
    assert code == 2 and out == ""
    assert (
        err
        == f"retrieval-eval: error: {j}:2: relevance {grade} {TOO_LARGE} (the gain 2**grade - 1 must stay exact in float64)\n"
    )


def test_rule7_a_metric_that_could_not_be_computed_never_passes():
    from retrieval_eval.analysis.evaluation import evaluate

    ev = evaluate(F.parse_judgments(_judgments(2)), F.parse_run(RUN), k=(10,))
    assert ev.report().status == "PASS"
    ev.summary = ev.summary.assign(**{"ndcg@10": np.nan})  # what a gain overflow used to give
    report = ev.report().to_dict()
    assert report["verdict"]["status"] == "INDETERMINATE"
    assert "ndcg@10 could not be computed (NaN), so it cannot pass" in report["verdict"]["reasons"]
    assert report["metrics"]["ndcg@10"]["indeterminate"] == "could not be computed (NaN)"
    # A gate on it is INDETERMINATE (never PASS, and not FAIL: nothing was measured), with or
    # without the report's own mark, as JSON writes NaN (null).
    for value in (None, float("nan")):
        bare = {
            "metrics": {"ndcg@10": {"value": value}, "recall@10": {"value": 1.0}},
            "verdict": {"status": "PASS", "reasons": []},
        }
        ev_gates = evaluate_gates(bare, ["ndcg@10:0.5", "recall@10:0.5"])
        assert [r.status for r in ev_gates.results] == ["INDETERMINATE", "PASS"]
        assert ev_gates.reasons == [f"ndcg@10:0.5: 'ndcg@10' could not be computed (its value is {value!r})"]
        assert apply_gates(bare, ["ndcg@10:0.5"])["verdict"]["status"] == "INDETERMINATE"
        strata = dict(
            bare,
            per_stratum={
                "a": {"n": 3, "metrics": {"ndcg@10": {"value": 0.9}}},
                "b": {"n": 3, "metrics": {"ndcg@10": {"value": value}}},
            },
        )
        worst = evaluate_gates(strata, ["worst-stratum:ndcg@10:0.5"])
        assert worst.status == "INDETERMINATE" and "stratum 'b'" in worst.reasons[0]


def test_rule7_engine_on_an_unchecked_frame_gives_nan_without_a_numpy_warning():
    from retrieval_eval.engine.metrics import compute

    j = F.parse_judgments(_judgments(3)).assign(relevance=np.array([1, 1024], dtype=np.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            got = compute(j, F.parse_run(RUN), k=(10,))
    assert math.isnan(got["ndcg@10"].iloc[0]) and got["recall@10"].iloc[0] == 1.0


# -----------------------------------------------------------------------------------------------
# Rule 9: the baseline report reader and Report.read
# -----------------------------------------------------------------------------------------------


def _report_text() -> str:
    return json.dumps({"metrics": {"ndcg@10": {"value": 0.5}}, "verdict": {"status": "PASS", "reasons": []}})


def test_rule9_report_read_raises_format_error_with_the_path_and_accepts_a_bom(tmp_path):
    path = tmp_path / "base.json"
    path.write_bytes(b"\xef\xbb\xbf" + _report_text().encode("utf-8"))
    assert Report.read(path).metrics["ndcg@10"].value == 0.5
    for text, detail in [
        ('{"metrics":' + "[" * 5000 + "]" * 5000 + "}", "invalid JSON, nested more than 100 deep"),
        ('{"metrics": {}, "metrics": {}}', 'invalid JSON, duplicate key "metrics"'),
        ('{"metrics": {"m": {"value": NaN}}}', "invalid JSON, NaN is not a JSON number"),
        ("[1]", "not a report: expected a JSON object, got an array"),
        ("{", "invalid JSON, Expecting property name enclosed in double quotes at column 2"),
    ]:
        write(path, text)
        with pytest.raises(FormatError) as err:
            Report.read(path)
        assert err.value.detail == detail and err.value.label == str(path)


def test_rule9_cli_refuses_a_deeply_nested_baseline_with_exit_2(tmp_path):
    j = write(tmp_path / "j.jsonl", _judgments(1))
    r = write(tmp_path / "r.jsonl", RUN)
    base = write(tmp_path / "base.json", '{"metrics":' + "[" * 100_000 + "]" * 100_000 + "}")
    code, out, err = cli("score", "--judgments", j, "--run", r, "--baseline", base, "--gate", "ndcg@10:-0.1")
    assert code == 2 and out == ""
    assert err == f"retrieval-eval: error: {base}: invalid JSON, nested more than 100 deep\n"


# -----------------------------------------------------------------------------------------------
# Rule 13: to_qrels refuses ids holding whitespace, as to_trec_run does
# -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field,value",
    [
        ("query_id", " "),
        ("query_id", "q 1"),
        ("query_id", "q\t1"),
        ("doc_uri", "d\x0b1"),
        ("doc_uri", "d\r"),
        ("chunk_id", "c 1"),
    ],
)
def test_rule13_to_qrels_refuses_an_id_with_whitespace_naming_the_line(field, value, tmp_path):
    row = {"query_id": "q2", "doc_uri": "d2", "relevance": 1, field: value}
    text = '{"query_id":"q1","doc_uri":"d1","relevance":1}\n// c\n' + json.dumps(row) + "\n"
    path = write(tmp_path / "j.jsonl", text)
    shown = "query_id" if field == "query_id" else field
    detail = f"{shown} {value!r} contains whitespace; TREC qrels cannot hold it"
    with pytest.raises(FormatError) as err:
        F.to_qrels(path)
    assert str(err.value) == f"{path}:3: {detail}"
    with pytest.raises(FormatError) as err:  # dicts have no line: the row is named
        F.to_qrels([json.loads(text.split("\n")[0]), row])
    assert str(err.value) == f"judgments: row 1: {detail}"
    code, out, err_text = cli("convert", "--judgments", path, "--to", "qrels")
    assert code == 2 and out == ""
    assert err_text == f"retrieval-eval: error: {path}:3: {detail}\n"
    code, out, _ = cli("convert", "--judgments", path, "--to", "qrels", "--out", tmp_path / "o.qrels")
    assert code == 2 and not (tmp_path / "o.qrels").exists()


_id = st.text(alphabet=["a", "b", " ", "\t", "\u00a0", "\u2028", "é"], min_size=1, max_size=4)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_id, _id, st.integers(0, 3)), min_size=1, max_size=5))
def test_rule13_property_qrels_written_read_back_the_same_or_are_refused(rows):
    judgments = [{"query_id": q, "doc_uri": d, "relevance": r} for q, d, r in rows]
    spaced = any(ch in " \t" for q, d, _ in rows for ch in q + d)
    try:
        text = F.to_qrels(judgments)
    except FormatError as err:
        assert spaced, err
        return
    assert not spaced
    back = F.from_qrels(text)
    assert back.query_id.tolist() == [q for q, _, _ in rows]  # never "0" for a blank id
    assert back.doc_uri.tolist() == [d for _, d, _ in rows]
    assert back.relevance.tolist() == [r for _, _, r in rows]


# -----------------------------------------------------------------------------------------------
# Rule 8: huge numbers: -k, scores near the largest double; no numpy warning on stderr
# -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["score", "compare"])
@pytest.mark.parametrize("k", ["99999999999999999999", "9223372036854775808"])
def test_rule8_huge_k_is_a_usage_error_naming_the_largest_k(verb, k, tmp_path):
    j = write(tmp_path / "j.jsonl", _judgments(1))
    r = write(tmp_path / "r.jsonl", RUN)
    code, out, err = cli(verb, "--judgments", j, "--run", r, "-k", k)
    assert code == 2 and out == ""
    assert err == f"retrieval-eval: error: -k is at most 9223372036854775807 (the largest int64), got '{k}'\n"


def test_rule8_the_largest_k_is_accepted_and_a_larger_one_refused_by_the_api():
    from retrieval_eval.engine.metrics import MAX_K, check_ks, compute

    assert np.iinfo(np.int64).max == MAX_K
    got = compute(F.parse_judgments(_judgments(1)), F.parse_run(RUN), k=MAX_K)
    assert got[f"recall@{MAX_K}"].iloc[0] == 1.0 and got[f"precision@{MAX_K}"].iloc[0] == 2 / MAX_K
    with pytest.raises(ValueError, match="k must be at most 9223372036854775807"):
        check_ks(MAX_K + 1)


def _huge_score_files(tmp_path: Path, huge: list[float]) -> tuple[Path, Path, Path]:
    """30 positives scored like cosines (0.6-0.9) and 30 negatives (0.1-0.5), with ``huge``
    written over the top scores of the first queries."""
    rng = np.random.default_rng(7)
    j, r, q = [], [], []
    for i in range(30):
        j.append({"query_id": f"p{i}", "doc_uri": f"d{i}", "relevance": 1})
        s = sorted(rng.uniform(0.6, 0.9, 3).round(6).tolist(), reverse=True)
        if i < len(huge):
            s[0] = huge[i]
        r.append({"query_id": f"p{i}", "ranking": [f"d{i}", "x", "y"], "scores": s})
    for i in range(30):
        q.append({"query_id": f"n{i}", "expect_none": True})
        s = sorted(rng.uniform(0.1, 0.5, 3).round(6).tolist(), reverse=True)
        r.append({"query_id": f"n{i}", "ranking": ["a", "b", "c"], "scores": s})
    paths = []
    for name, rows in (("j.jsonl", j), ("r.jsonl", r), ("q.jsonl", q)):
        paths.append(write(tmp_path / name, "".join(json.dumps(x) + "\n" for x in rows)))
    return tuple(paths)


@pytest.mark.parametrize("huge", [[1e308], [1.7976931348623157e308, -1.7976931348623157e308], [-1e308]])
def test_rule8_a_score_of_1e308_does_not_make_a_run_rank_based(huge, tmp_path):
    from retrieval_eval.analysis.calibration import calibrate, cutoff_sweep
    from retrieval_eval.analysis.calibration.rank_based import _distinct

    j, r, q = _huge_score_files(tmp_path, huge)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            cal = calibrate(j, r, queries=q, n_resamples=200)
            sweep = cutoff_sweep(j, r, queries=q)
    assert not cal.summary.loc["run", "rank_based"], cal.settings["rank_reasons"]
    assert cal.settings["rank_reasons"]["run"] == []
    assert len(sweep) > 2
    # One outlier does not collapse the other top-1 scores into one value.
    assert _distinct(np.r_[1e308, np.linspace(0.6, 0.9, 29)]) == 30
    assert _distinct(np.r_[-1.7976931348623157e308, 1.7976931348623157e308]) == 2


def test_rule8_medians_and_quantiles_of_huge_scores_do_not_overflow():
    from retrieval_eval.analysis.calibration.separation import separation_figures as _figures
    from retrieval_eval.analysis.stats import median as _median
    from retrieval_eval.analysis.stats import quantile as _quantile

    big = np.array([1.7e308, 1.6e308, 1.5e308, 1.4e308])
    with np.errstate(all="raise"):
        assert _median(big) == 1.55e308  # np.median overflows: (1.6e308 + 1.5e308) / 2
        assert _quantile(big, 0.5) == 1.55e308
        fig = _figures(big, -big, 1.0)
    assert math.isinf(fig["separation_margin"])  # 3.1e308 is beyond a double: not computed
    small = np.array([0.3, 0.1, 0.7, 0.2])  # the scaled forms are the same doubles as numpy's
    assert _median(small) == np.median(small) and _quantile(small, 0.1) == np.quantile(small, 0.1)


@pytest.mark.parametrize("verb", ["calibrate", "score"])
def test_rule8_no_numpy_warning_reaches_stderr(verb, tmp_path):
    j, r, q = _huge_score_files(tmp_path, [1e308])
    code, out, err = cli(verb, "--judgments", j, "--run", r, "--queries", q)
    assert err == ""
    assert code in (0, 1) and "function of rank" not in out and "distinct value" not in out


# -----------------------------------------------------------------------------------------------
# Rule 14: control characters never reach the terminal; Markdown output is inert
# -----------------------------------------------------------------------------------------------

HOSTILE = "\x1b]0;title\x07\x1b[2J"
SHOWN = "\\x1b]0;title\\x07\\x1b[2J"
IMG = "<img src=x onerror=alert(1)>"


def _hostile_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    j, r, q = [], [], []
    for i in range(3):
        qid = f"q{i}{HOSTILE}"
        j.append({"query_id": qid, "doc_uri": "d1", "relevance": 1, "stratum": f"s{HOSTILE}{IMG}|x"})
        r.append({"query_id": qid, "ranking": ["d1", "d2"], "scores": [0.9, 0.1], "system": f"a{HOSTILE}"})
        r.append({"query_id": qid, "ranking": ["d2", "d1"], "scores": [0.8, 0.2], "system": f"{IMG}|{HOSTILE}"})
        q.append({"query_id": f"n{i}{HOSTILE}", "expect_none": True})
    return tuple(
        write(tmp_path / name, "".join(json.dumps(x) + "\n" for x in rows))
        for name, rows in (("j.jsonl", j), ("r.jsonl", r), ("q.jsonl", q))
    )


def _no_controls(text: str) -> None:
    bad = [hex(ord(c)) for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
    assert not bad, bad


@pytest.mark.parametrize("verb", ["score", "compare", "validate", "calibrate"])
@pytest.mark.parametrize("color", ["never", "always"])
def test_rule14_ids_strata_and_system_names_are_escaped_in_every_table(verb, color, tmp_path):
    j, r, q = _hostile_files(tmp_path)
    argv = {
        "score": ["--run", r, "--queries", q],
        "compare": ["--run", r],
        "validate": [],
        "calibrate": ["--run", r, "--queries", q],
    }[verb]
    code, out, err = cli(verb, "--judgments", j, *argv, "--color", color)
    assert code in (0, 1), err
    if color == "always":  # the tool's own colours stay; every other escape sequence is shown
        out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    _no_controls(out + err)
    shown = {
        "score": [f"a{SHOWN}", f"s{SHOWN}{IMG}|x"],  # a system name, a stratum
        "compare": [f"a{SHOWN}", f"{IMG}|{SHOWN}"],  # system names (one with a pipe)
        "validate": [f"q0{SHOWN}", f"s{SHOWN}"],  # a query id, a stratum
        "calibrate": [f"a{SHOWN}"],
    }[verb]
    for fragment in shown:
        assert fragment in out, fragment


def test_rule14_a_path_in_an_error_line_is_escaped(tmp_path):
    missing = tmp_path / f"j{HOSTILE}.jsonl"
    code, out, err = cli("validate", "--judgments", missing)
    assert code == 2 and out == ""
    _no_controls(err)
    assert err.startswith("retrieval-eval: error: ") and SHOWN in err and err.count("\n") == 1


def test_rule14_escape_shows_controls_and_keeps_only_the_styles_own_colours():
    from retrieval_eval.cli.term import Style, escape, table

    assert escape("a\x1b[2Jb\x07\t\n\x9b\u202e\x7f") == "a\\x1b[2Jb\\x07\\t\\n\\x9b\\u202e\\x7f"
    assert escape("plain é 中") == "plain é 中"
    assert escape(escape(HOSTILE)) == escape(HOSTILE)
    red = Style(True)("ok", "red")
    assert escape(red + HOSTILE, colors=True) == red + SHOWN
    assert escape("x\ny", newlines=True) == "x\ny"
    lines = table(["id"], [[f"q{HOSTILE}\nnext"]]).split("\n")
    assert len(lines) == 3 and lines[2] == f"  q{SHOWN}\\nnext"


def test_rule14_markdown_output_is_inert(tmp_path):
    from retrieval_eval.analysis.decisions.compare import compare

    j, r, _ = _hostile_files(tmp_path)
    md = compare(j, r, n_resamples=100).to_markdown()
    _no_controls(md)
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    # Every row keeps its 10 cells: a "|" in a name is escaped, not a new column.
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert all(len(re.split(r"(?<!\\)\|", row)) == 12 for row in rows)
    assert "\\|" in md and "\\\\x1b" in md  # the pipe and the shown escape's backslash


# -----------------------------------------------------------------------------------------------
# Rule 15: costs linear in the input (timings live in benchmarks/bench_costs.py)
# -----------------------------------------------------------------------------------------------


def _hash_of(values, chunks=1):
    import pyarrow as pa

    from retrieval_eval.engine.kernels import hashes as _hashes

    arr = pa.array(values, type=pa.large_string())
    if chunks > 1:
        step = max(1, len(values) // chunks)
        arr = pa.chunked_array([arr[i : i + step] for i in range(0, len(values), step)])
    return _hashes(arr)[0].tolist()


def test_rule15_long_ids_hash_equal_exactly_when_they_are_equal(monkeypatch):
    from retrieval_eval.engine import kernels as metrics

    long = "doc://" + "x" * 100_000 + "tail"
    ids = [long, "a" * 70, "short", long, "a" * 70, "b" * 70, ""]
    h = _hash_of(ids)
    assert h[0] == h[3] and h[1] == h[4] and len(set(h)) == 5
    assert _hash_of([long])[0] == h[0] and _hash_of(["a" * 70] * 4)[0] == h[1]  # one width
    assert _hash_of(ids, chunks=3) == h
    # One byte changed anywhere (first word, middle, the last partial word) changes the hash.
    for at in (0, 7, 8, 50_003, len(long) - 1):
        other = long[:at] + ("y" if long[at] != "y" else "z") + long[at + 1 :]
        assert _hash_of([other])[0] != h[0]
    # A string longer than a step is summed a step at a time: the same hash as in one step.
    monkeypatch.setattr(metrics, "_WORD_BATCH", 64)
    assert _hash_of(ids) == h


_any_id = st.text(alphabet="ab", min_size=0, max_size=3).map(lambda s: s * 41)


@settings(max_examples=60, deadline=None)
@given(st.lists(_any_id, min_size=1, max_size=12))
def test_rule15_property_equal_hashes_for_equal_ids_short_or_long(ids):
    h = _hash_of(ids)
    for i in range(len(ids)):
        for j in range(len(ids)):
            if ids[i] == ids[j]:
                assert h[i] == h[j]
            elif len(ids[i]) > 8:  # distinct: a collision here is a 2**-64 event
                assert h[i] != h[j]


def test_rule15_hashing_a_long_id_takes_a_step_per_batch_not_per_word(monkeypatch):
    from retrieval_eval.engine import kernels as metrics

    calls = []
    real = metrics._mix64
    monkeypatch.setattr(metrics, "_mix64", lambda x: calls.append(len(x)) or real(x))
    size = 8 * metrics._WORD_BATCH * 3 + 5  # 6 MB: 786,433 words
    _hash_of(["d" * size] + [f"id{i}" for i in range(100)])
    assert sum(calls[:-1]) == size // 8 + 1  # every word mixed once...
    assert len(calls) == 4 + 1  # ...in 4 vectorized steps, then the final mix


def test_rule15_evaluate_with_a_long_id_matches_the_same_data_with_a_short_one():
    from retrieval_eval.analysis.evaluation import evaluate

    long = "doc://" + "x" * 3_000_000

    def data(key):
        return (
            [
                {"query_id": "q1", "doc_uri": key, "relevance": 2},
                {"query_id": "q1", "doc_uri": "other", "relevance": 1},
            ],
            [{"query_id": "q1", "ranking": ["miss", key, "other"]}],
        )

    got = evaluate(*data(long), k=(10,)).summary
    expected = evaluate(*data("short"), k=(10,)).summary
    pd.testing.assert_frame_equal(got, expected)
    assert got["mrr@10"].iloc[0] == 0.5


@pytest.mark.parametrize("paired", [False, True])
def test_rule15_bootstrap_in_blocks_draws_exactly_the_same_resamples(paired, monkeypatch):
    import scipy.stats

    from retrieval_eval.analysis import stats

    rng = np.random.default_rng(3)
    a, b = rng.normal(1, 1, 301), rng.normal(0, 1, 301 if paired else 203)
    fn = (lambda x, y: (x - y).mean(axis=-1)) if paired else (lambda x, y: x.mean(axis=-1) - y.mean(axis=-1))

    def run():
        g = np.random.default_rng(11)
        r = stats.bootstrap_ci(fn, a, b, n_resamples=999, seed=g, paired=paired)
        return r.ci_low, r.ci_high, int(g.integers(0, 2**40))  # the generator's state after

    whole = run()
    monkeypatch.setattr(stats.bootstrap, "BLOCK", 1000)  # 1 or 2 resample rows per block
    assert run() == whole
    ref = scipy.stats.bootstrap(
        (a, b),
        lambda x, y, axis=-1: fn(x, y),
        n_resamples=999,
        method="percentile",
        paired=paired,
        vectorized=True,
        random_state=np.random.default_rng(11),
    )
    assert whole[:2] == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), abs=1e-12)


def _calibration_frames(n: int):
    rng = np.random.default_rng(0)
    half, depth = n // 2, 3
    qid = np.char.add("q", np.arange(n).astype(str)).astype(object)
    top = np.r_[rng.uniform(0.55, 0.95, half), rng.uniform(0.05, 0.6, n - half)]
    run = pd.DataFrame(
        {
            "query_id": pd.array(np.repeat(qid, depth), dtype="string"),
            "rank": np.tile(np.arange(1, depth + 1), n),
            "doc_id": pd.array(np.char.add("d", np.arange(n * depth).astype(str)).astype(object), dtype="string"),
            "score": (top[:, None] - 0.01 * np.arange(depth)).ravel(),
        }
    )
    judgments = pd.DataFrame(
        {
            "query_id": pd.array(qid[:half], dtype="string"),
            "doc_uri": pd.array(run["doc_id"].to_numpy()[0 : half * depth : depth], dtype="string"),
            "relevance": np.ones(half, dtype=np.int64),
        }
    )
    return run, judgments, list(qid[half:])


def test_rule15_calibrate_memory_per_query_is_a_small_constant(monkeypatch):
    import tracemalloc

    from retrieval_eval.analysis import stats
    from retrieval_eval.analysis.calibration import calibrate

    # The resample block cap is lowered so that both sizes run past it, as 100k queries do at
    # the default cap; what is left growing with the queries is calibrate's own per-query data.
    monkeypatch.setattr(stats.bootstrap, "BLOCK", 1 << 16)
    calibrate(*_calibration_frames(200)[1::-1], negatives=_calibration_frames(200)[2])  # caches
    peaks = {}
    for n in (1000, 4000):
        run, judgments, negatives = _calibration_frames(n)
        tracemalloc.start()
        try:
            cal = calibrate(judgments, run, negatives=negatives)  # 1,000 resamples
            peaks[n] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert int(cal.summary.loc["run", "n_negative"]) == n - n // 2
    per_query = (peaks[4000] - peaks[1000]) / 3000
    assert per_query < 2048, per_query  # was ~30 KB: every resample of every query held at once
