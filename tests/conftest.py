"""Shared test fixtures: where the normative spec fixtures live."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "spec-fixtures"


def spec_fixtures_dir() -> Path:
    """The folder ``RETRIEVAL_EVAL_SPEC_FIXTURES`` names, else ``../shared/spec-fixtures``.

    When the variable is set and the folder is missing the tests fail rather than skip: a
    conformance suite that silently runs nothing is a check that cannot fail.
    """
    named = os.environ.get("RETRIEVAL_EVAL_SPEC_FIXTURES")
    if named:
        path = Path(named)
        if not path.is_dir():
            raise RuntimeError(f"RETRIEVAL_EVAL_SPEC_FIXTURES={named!r} is not a folder")
        return path
    if not _DEFAULT.is_dir():
        pytest.skip("spec fixtures not found; set RETRIEVAL_EVAL_SPEC_FIXTURES")
    return _DEFAULT


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return spec_fixtures_dir()


def load_expected(case: str) -> dict:
    return json.loads((spec_fixtures_dir() / case / "expected.json").read_text(encoding="utf-8"))
