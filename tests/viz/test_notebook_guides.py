"""Each notebook opens with the question it answers and the data it answers it on, and ends
with what to do on your own data: two or three lines of code that run as written on files
named as they say (checked here on copies of the demo's files)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import nbformat
import pytest

from retrieval_eval.datasets import demo_path

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: The file names the closing snippets use, and the demo file each stands for.
OWN_FILES = {
    "judgments.jsonl": "judgments.jsonl",
    "runs.jsonl": "runs.jsonl",
    "queries.jsonl": "queries.jsonl",
    "corpus.json": "corpus.json",
    "corpus_v2.json": "corpus_v2.json",
    "synthetic_judgments.jsonl": "judgments_lexical.jsonl",
    "judge_scores.parquet": "judge_samples.parquet",
}


def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


def _snippet(path: Path) -> str:
    last = _cells(path)[-1]
    match = re.search(r"```python\n(.*?)\n```", last.source, flags=re.S)
    assert match, f"{path.name}: the closing cell has no python code block"
    return match.group(1)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_opens_with_its_question_and_data(path):
    first = _cells(path)[0]
    assert first.cell_type == "markdown"
    question = re.search(r"\*\*Question:\*\* (.+)", first.source)
    data = re.search(r"\*\*Data:\*\* (.+)", first.source)
    assert question and question.group(1).rstrip().endswith("?")
    assert data and len(data.group(1)) > 20


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_ends_with_two_or_three_lines_for_your_own_data(path):
    last = _cells(path)[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## On your own data")
    assert 2 <= len(_snippet(path).splitlines()) <= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_own_data_code_runs_as_written(path, tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets")
    for name, demo_name in OWN_FILES.items():
        shutil.copy(demo_path(demo_name), tmp_path / name)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(_snippet(path), f"{path.stem} (closing cell)", "exec"), namespace)
    assert len(namespace) > 1  # it bound what it computed
