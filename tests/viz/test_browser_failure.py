"""The diff page of failure analysis in a real browser (headless Chromium through selenium,
the way tests/viz/test_browser.py gets one; skipped, saying why, without a browser): it draws
its SVG columns, shows escaped ids as text, logs no console error, and a full-page screenshot is
saved for a person to look at."""

from __future__ import annotations

import pytest
from test_browser import browser, screenshot_dir  # noqa: F401  (the browser fixture)

import retrieval_eval as rev

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def diff_page(tmp_path_factory):
    d = rev.load_demo()
    runs = d.runs.copy()
    runs["query_id"] = runs["query_id"].where(runs["query_id"] != "dm-11", EVIL).astype("string")
    labels = d.judgments.copy()
    labels["query_id"] = labels["query_id"].where(labels["query_id"] != "dm-11", EVIL).astype("string")
    path = tmp_path_factory.mktemp("failure") / "diff.html"
    rev.diff_runs(labels, runs, systems=("dense", "bm25")).to_html(path, top=6)
    return path


def test_diff_page_draws_both_columns_and_escapes_ids(browser, diff_page):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.get_log("browser")
    browser.get(diff_page.as_uri())
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1400, min(int(height) + 40, 16000))
    browser.save_screenshot(str(screenshot_dir() / "failure-diff.png"))
    browser.set_window_size(1400, 1000)
    svgs = browser.find_elements(By.TAG_NAME, "svg")
    assert len(svgs) == 6 and all(s.size["width"] > 400 and s.size["height"] > 200 for s in svgs)
    assert len(svgs[0].find_elements(By.TAG_NAME, "rect")) == 20
    assert svgs[0].find_elements(By.TAG_NAME, "line")
    heads = [h.text for h in browser.find_elements(By.TAG_NAME, "h4")]
    assert heads[0].startswith(f"{EVIL}: ")  # the id shows as text ...
    assert browser.execute_script("return document.scripts.length") == 0  # ... and never runs
    errors = [e["message"] for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == []
    svgs[0].screenshot(str(screenshot_dir() / "failure-diff-first-query.png"))
