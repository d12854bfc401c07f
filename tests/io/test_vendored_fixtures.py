"""The README's test command passes on a plain clone (issue 12, rule 10): the spec's
conformance fixtures are vendored in tests/fixtures/spec and read from there by default,
RETRIEVAL_EVAL_SPEC_FIXTURES overrides them, and .ci/run runs exactly the README command."""

from __future__ import annotations

import re
from pathlib import Path

import conftest
import pytest

ROOT = Path(__file__).resolve().parents[2]
VENDORED = ROOT / "tests" / "fixtures" / "spec"
CASES = [
    "basic",
    "chunk-id",
    "drift",
    "duplicate-ranking",
    "merge",
    "no-positives",
    "nothing-scored",
    "qrels",
    "strata",
    "stratum-order",
    "summarize",
    "unsorted-queries",
    "unsound-judgments",
]


def test_spec_fixtures_are_read_from_the_vendored_copy_by_default(monkeypatch):
    monkeypatch.delenv("RETRIEVAL_EVAL_SPEC_FIXTURES", raising=False)
    assert conftest.spec_fixtures_dir() == VENDORED
    for case in CASES:
        assert (VENDORED / case / "expected.json").is_file(), case
    assert (VENDORED / "schemas" / "report.schema.json").is_file()
    assert conftest.load_expected("basic")["k"] >= 1


def test_the_variable_overrides_and_a_missing_folder_fails(monkeypatch, tmp_path):
    monkeypatch.setenv("RETRIEVAL_EVAL_SPEC_FIXTURES", str(tmp_path))
    assert conftest.spec_fixtures_dir() == tmp_path
    monkeypatch.setenv("RETRIEVAL_EVAL_SPEC_FIXTURES", str(tmp_path / "nowhere"))
    with pytest.raises(RuntimeError, match="is not a folder"):
        conftest.spec_fixtures_dir()


def test_the_readmes_test_command_is_ci_itself_with_nothing_from_shared():
    """The README's test command runs .ci/run, so the two are one thing; .ci/run installs the
    project fresh, lints, type-checks and runs every test, notebooks included."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    block = re.search(r"Run the whole test suite.*?```bash\n(.*?)\n```", readme, re.S)
    assert block is not None
    assert block.group(1).strip() == "bash .ci/run"
    lines = ci.splitlines()
    assert "rm -rf .venv" in lines and "python3 -m venv .venv" in lines
    assert ".venv/bin/pip install -q '.[test,dev]'" in lines
    assert ".venv/bin/ruff check ." in lines and ".venv/bin/mypy retrieval_eval" in lines
    assert any(
        re.fullmatch(r"\.venv/bin/python -m pytest .*--nbval --nbval-current-env tests notebooks", x) for x in lines
    )
    assert "shared" not in ci and "RETRIEVAL_EVAL_SPEC_FIXTURES" not in ci


def test_vendored_fixtures_are_the_specs_own():
    """Where the spec's folder sits beside the checkout (or SPEC_FIXTURES_UPSTREAM names one),
    the vendored copy is byte for byte the same (a plain clone has none to compare with)."""
    import os

    shared = Path(os.environ.get("SPEC_FIXTURES_UPSTREAM") or ROOT.parent / "shared" / "spec-fixtures")
    if not shared.is_dir():
        pytest.skip("no copy of the spec's fixtures beside the checkout")
    theirs = {p.relative_to(shared): p.read_bytes() for p in shared.rglob("*") if p.is_file()}
    ours = {p.relative_to(VENDORED): p.read_bytes() for p in VENDORED.rglob("*") if p.is_file()}
    assert ours == theirs
