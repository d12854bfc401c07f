"""The CLI forms of issue 28: usage errors beside --version, the small-sample warning in
``compare --format markdown``, and what the ``score --queries`` table counts."""

from __future__ import annotations

import pytest
from test_cli import run_cli


@pytest.mark.parametrize("argv", [
    ["--version", "--bogus"],
    ["--bogus", "--version"],
    ["-v", "--bogus=1"],
    ["score", "--version", "--bogus"],
    ["drift", "-v", "--judgmnets", "x.jsonl"],
])
def test_an_unknown_option_is_a_usage_error_even_beside_version(argv):
    code, out, err = run_cli(*argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "unknown option" in err


@pytest.mark.parametrize("argv", [["--version"], ["-v"], ["score", "--version"], ["drift", "--version", "--fix"]])
def test_version_still_wins_over_a_missing_argument(argv):
    code, out, _ = run_cli(*argv)
    assert code == 0 and out.startswith("retrieval-eval ")
