"""``drift --fix`` on the demo re-chunk: the rewritten file passes ``validate`` (issue 28, item 1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_cli import run_cli

DEMO = Path(__file__).resolve().parents[2] / "retrieval_eval" / "datasets" / "demo"


def _copy(tmp_path: Path) -> Path:
    j = tmp_path / "judgments.jsonl"
    shutil.copy(DEMO / "judgments.jsonl", j)
    return j


def test_drift_fix_on_the_demo_writes_a_set_validate_accepts(tmp_path):
    j = _copy(tmp_path)
    before = j.read_text().splitlines()
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", DEMO / "corpus_v2.json", "--fix", "--color", "never")
    assert code == 1  # conflicts and orphans are left for a person
    assert "collapsed 2 labels" in out
    assert out.count("GRADE_CONFLICT") >= 4 and "grades 3 and 2" in out and "grades 3 and 1" in out
    after = j.read_text().splitlines()
    assert len(after) == len(before) - 2
    # the second label of ex-01's and ex-09's merged pairs (file lines 56 and 91) are gone
    assert before[55] not in after and before[90] not in after
    # the conflicting labels of st-05 and st-10 (lines 20, 21, 44, 47) are byte for byte as they were
    for number in (20, 21, 44, 47):
        assert before[number - 1] in after
    code, out, _ = run_cli("validate", "--judgments", j, "--json")
    assert code == 0, out
    assert json.loads(out)["ok"] is True


def test_drift_fix_json_reports_collapsed_and_conflicts(tmp_path):
    j = _copy(tmp_path)
    code, out, _ = run_cli("drift", "--judgments", j, "--corpus", DEMO / "corpus_v2.json", "--fix", "--json")
    assert code == 1
    fix = json.loads(out)["fix"]
    assert fix["collapsed"] == 2 and fix["written"] is True
    assert fix["needs_review"] == len(fix["review"])
    torn = [r for r in fix["review"] if r["status"] == "GRADE_CONFLICT"]
    assert [r["query_id"] for r in torn] == ["st-05", "st-05", "st-10", "st-10"]
    assert "grades 3 and 2" in torn[0]["reason"]
