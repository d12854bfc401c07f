"""What the docs say about the repository is true of it (issue 28, item 8)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def test_docs_index_counts_the_notebooks_there_are():
    count = len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    said = re.findall(
        r"\b(two|three|four|five|six|seven|eight) notebooks\b|\ball (two|three|four|five|six|seven|eight)\b",
        text,
        flags=re.I,
    )
    said = [a or b for a, b in said]
    assert said, "docs/index.md no longer says how many notebooks there are"
    assert {w.lower() for w in said} == {WORDS[count]}


def test_docs_cite_no_file_the_repository_lacks():
    for page in (ROOT / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for name in re.findall(r"`([A-Za-z_]+\.md)`", text):
            assert list(ROOT.rglob(name)), f"{page.name} cites {name}, which the repository does not contain"


def test_the_readme_demo_output_is_ignored_by_git(tmp_path):
    out = subprocess.run(["git", "check-ignore", "-q", "demo-out/index.html"], cwd=ROOT)
    assert out.returncode == 0
