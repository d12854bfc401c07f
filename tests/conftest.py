"""Shared test fixtures: where the normative spec fixtures live."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

# Some tests import helpers of other test modules by their package path (``tests.engine.x``),
# and some installed distributions (ppi-python, the PPI oracle) ship a top-level package named
# ``tests`` that would shadow this folder. The name ``tests`` is made to mean this folder.
_TESTS = Path(__file__).resolve().parent
if [str(_TESTS)] != list(getattr(sys.modules.get("tests"), "__path__", [])):
    _package = types.ModuleType("tests")
    _package.__path__ = [str(_TESTS)]
    sys.modules["tests"] = _package

# The spec's conformance cases (its test vectors), vendored so that a plain clone runs them.
_DEFAULT = Path(__file__).resolve().parent / "fixtures" / "spec"


def spec_fixtures_dir() -> Path:
    """The folder ``RETRIEVAL_EVAL_SPEC_FIXTURES`` names, else the vendored ``tests/fixtures/spec``.

    The vendored copy is the default so that the README's test command passes on a plain clone;
    the variable overrides it to check the package against another copy of the spec's cases
    (e.g. a newer one). A named folder that is missing fails rather than skips: a conformance
    suite that silently runs nothing is a check that cannot fail.
    """
    named = os.environ.get("RETRIEVAL_EVAL_SPEC_FIXTURES")
    if named:
        path = Path(named)
        if not path.is_dir():
            raise RuntimeError(f"RETRIEVAL_EVAL_SPEC_FIXTURES={named!r} is not a folder")
        return path
    if not _DEFAULT.is_dir():
        raise RuntimeError(f"the vendored spec fixtures are missing: {_DEFAULT}")
    return _DEFAULT


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return spec_fixtures_dir()


def load_expected(case: str) -> dict:
    return json.loads((spec_fixtures_dir() / case / "expected.json").read_text(encoding="utf-8"))


# The browser tests say why they were skipped, whatever the -r option (issue 28, item 6): the
# summary line counts skips but names no reason unless asked with -rs, so a browser test
# skipped for want of Chromium would pass unnoticed; its reason is printed beside the summary.
def pytest_terminal_summary(terminalreporter):
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if "test_browser.py" not in report.nodeid:
            continue
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(f"{count} browser test{'s' if count != 1 else ''} skipped: {reason}",
                                    yellow=True)
