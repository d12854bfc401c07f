"""The fast tier's list of slow tests (tests/conftest.py) names tests that exist: an entry left
behind by a rename would silently put a slow test back in the fast tier, or mark nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import SLOW_FILES, SLOW_TESTS, is_slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", sorted(SLOW_FILES))
def test_every_slow_file_exists(path):
    assert (ROOT / path).is_file(), f"{path} is in SLOW_FILES but does not exist"


@pytest.mark.parametrize("node", sorted(SLOW_TESTS))
def test_every_slow_test_exists(node):
    path, name = node.split("::")
    name = name.split("[", 1)[0]
    assert path not in SLOW_FILES, f"{node}: its whole file is already slow"
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert name in names, f"{node} is in SLOW_TESTS but {path} has no such test"


class _Item:
    def __init__(self, path, nodeid):
        self.fspath, self.nodeid = path, nodeid


def test_the_marking_rule():
    """A listed test is slow in every parametrization, its neighbours are not, a listed file is
    slow whole, and a notebook cell is slow."""
    node = "tests/analysis/test_drift.py::test_ties_follow_corpus_order_and_split_follows_ordinals"
    assert node in SLOW_TESTS
    assert is_slow(_Item(ROOT / "tests/analysis/test_drift.py", node + "[a-1]"))
    assert not is_slow(
        _Item(ROOT / "tests/analysis/test_drift.py", "tests/analysis/test_drift.py::test_something_else")
    )
    assert is_slow(_Item(ROOT / "tests/analysis/test_dask.py", "tests/analysis/test_dask.py::test_x"))
    wilcoxon = "tests/analysis/test_stats.py::test_wilcoxon_matches_scipy_defaults"
    assert is_slow(_Item(ROOT / "tests/analysis/test_stats.py", wilcoxon + "[ties-12]"))
    assert not is_slow(_Item(ROOT / "tests/analysis/test_stats.py", wilcoxon + "[ties-120]"))
    assert is_slow(_Item(ROOT / "notebooks/01_quickstart.ipynb", "notebooks/01_quickstart.ipynb::Cell 0"))
