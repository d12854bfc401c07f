"""What a person sees, in a real browser: the demo page and every notebook rendered to HTML by
nbconvert, both as stored and executed afresh (``jupyter nbconvert --execute``, which saves the
widget state), opened in headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by selenium).

Checked in the rendered page: every image loaded (``naturalWidth > 0``), no console error,
the demo's headline table with one row per system, and the cutoff explorer's static fallback
visible in the notebook that shows it (there is no kernel in a rendered notebook, so without
the fallback its output would be empty). A full-page screenshot of each page is saved under
``$RETRIEVAL_EVAL_SCREENSHOTS`` (default ``test-artifacts/screenshots/``) so a person can
look. The test skips, saying why, only when no Chromium or chromedriver can be found.

The pages are opened from files with no network: nbconvert's template loads require.js and
MathJax from a CDN, so the notebooks are rendered with those two pointing at empty local
scripts (the notebooks use neither), and a console error is then always the page's own.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDGET_NOTEBOOK = "02_ood_calibration"
DEMO_SYSTEMS = ["dense", "bm25", "rrf"]
#: The tallest screenshot taken (pixels); longer pages are cut there.
MAX_HEIGHT = 16000


def _find(*names: str) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot_dir() -> Path:
    """Where screenshots go: ``$RETRIEVAL_EVAL_SCREENSHOTS`` or ``test-artifacts/screenshots``."""
    folder = Path(os.environ.get("RETRIEVAL_EVAL_SCREENSHOTS") or ROOT / "test-artifacts" / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    chromium = _find("chromium", "chromium-browser", "google-chrome")
    driver_path = _find("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip(
            "no Chromium browser or chromedriver on PATH: install Debian's chromium and "
            "chromium-driver (apt-get install -y chromium chromium-driver; .ci/run does)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra: pip install '.[test]'")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(120)
    yield driver
    driver.quit()


def _open(driver, path: Path, name: str) -> dict:
    """Load ``path``, wait for its images, take a full-page screenshot; returns what the page
    shows: ``images`` (src head, complete, naturalWidth), ``errors`` (console SEVERE lines)."""
    driver.get_log("browser")  # drop what an earlier page logged
    driver.get(path.as_uri())
    driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const pending = Array.from(document.images).filter(i => !i.complete)
            .map(i => new Promise(r => { i.onload = i.onerror = r; }));
        Promise.all(pending).then(() => done(true));
    """)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(int(height) + 40, MAX_HEIGHT))
    driver.save_screenshot(str(screenshot_dir() / f"{name}.png"))
    driver.set_window_size(1400, 1000)
    images = driver.execute_script(
        "return Array.from(document.images).map(i => [i.src.slice(0, 60), i.complete, i.naturalWidth])"
    )
    errors = [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
    return {"images": images, "errors": errors}


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory):
    from retrieval_eval.cli.demo import run_demo

    return run_demo(tmp_path_factory.mktemp("demo"))["index.html"]


def _exporter(out: Path):
    """nbconvert's HTML exporter with its CDN scripts pointing at empty local files: require.js,
    MathJax and the widget renderer (offline, or on a static host, none of them loads)."""
    from nbconvert import HTMLExporter

    for name in ("require", "mathjax", "widgets"):
        (out / f"offline-{name}.js").write_text(f"/* {name} is not loaded offline */\n")
    return HTMLExporter(
        require_js_url="offline-require.js", mathjax_url="offline-mathjax.js", widget_renderer_url="offline-widgets.js"
    )


@pytest.fixture(scope="module")
def notebook_pages(tmp_path_factory):
    """Each stored notebook rendered to HTML by nbconvert, as a code host would."""
    import nbformat

    out = tmp_path_factory.mktemp("notebooks")
    exporter = _exporter(out)
    pages = {}
    for path in NOTEBOOKS:
        body, _ = exporter.from_notebook_node(nbformat.read(path, as_version=4))
        page = out / f"{path.stem}.html"
        page.write_text(body, encoding="utf-8")
        pages[path.stem] = page
    return pages


@pytest.fixture(scope="module")
def executed_pages(tmp_path_factory):
    """Each notebook executed afresh and rendered as ``jupyter nbconvert --execute --to html``
    does: the kernel's widget state saved in the notebook (nbclient's default), so a widget
    output renders as its widget view, which needs the (absent) widget renderer."""
    import nbformat
    from nbclient import NotebookClient

    out = tmp_path_factory.mktemp("executed")
    exporter = _exporter(out)
    pages: dict[str, Path] = {}

    def page(name: str) -> Path:
        if name not in pages:
            path = ROOT / "notebooks" / f"{name}.ipynb"
            nb = nbformat.read(path, as_version=4)
            NotebookClient(
                nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
            ).execute()
            body, _ = exporter.from_notebook_node(nb)
            pages[name] = out / f"{name}.html"
            pages[name].write_text(body, encoding="utf-8")
        return pages[name]

    return page


def test_demo_page_renders_with_its_headline_and_every_image(browser, demo_page):
    from selenium.webdriver.common.by import By

    seen = _open(browser, demo_page, "demo-index")
    assert seen["images"], "the demo page shows no image"
    assert [img for img in seen["images"] if not (img[1] and img[2] > 0)] == []
    assert seen["errors"] == []
    rows = browser.find_elements(By.CSS_SELECTOR, "#headline tbody tr")
    assert [r.get_attribute("data-system") for r in rows] == DEMO_SYSTEMS
    assert all(r.is_displayed() for r in rows)
    assert browser.find_element(By.ID, "gates").is_displayed()


def test_demo_page_ood_table_fits_its_column_and_the_headline_agrees_with_the_gates(browser, demo_page):
    from selenium.webdriver.common.by import By

    browser.get(demo_page.as_uri())
    table = browser.find_element(By.ID, "ood")
    column = browser.execute_script("return arguments[0].parentElement.clientWidth", table)
    assert table.size["width"] <= column
    for row in browser.find_elements(By.CSS_SELECTOR, "#headline tbody tr"):
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        if cells[-1] == "FAIL" and "negative_satisfaction" in " ".join(
            browser.find_element(By.ID, "gates").text.split()
        ):
            assert not any(c.startswith("separates OOD") for c in cells)


@pytest.mark.parametrize("name", [p.stem for p in NOTEBOOKS])
def test_rendered_notebook_loads_every_image_without_console_errors(browser, notebook_pages, name):
    seen = _open(browser, notebook_pages[name], f"notebook-{name}")
    assert [img for img in seen["images"] if not (img[1] and img[2] > 0)] == []
    assert seen["errors"] == []


@pytest.mark.parametrize("name", [p.stem for p in NOTEBOOKS])
def test_executed_notebook_loads_every_image_without_console_errors(browser, executed_pages, name):
    seen = _open(browser, executed_pages(name), f"executed-{name}")
    assert [img for img in seen["images"] if not (img[1] and img[2] > 0)] == []
    assert seen["errors"] == []


@pytest.mark.parametrize("kind", ["stored", "executed"])
def test_the_cutoff_explorer_shows_its_static_fallback_in_a_rendered_notebook(
    browser, notebook_pages, executed_pages, kind
):
    from selenium.webdriver.common.by import By

    page = notebook_pages[WIDGET_NOTEBOOK] if kind == "stored" else executed_pages(WIDGET_NOTEBOOK)
    browser.get(page.as_uri())
    fallback = browser.find_elements(By.CSS_SELECTOR, ".re-explorer-static")
    assert len(fallback) == 1, "the explorer's output carries no static fallback"
    box = fallback[0]
    assert box.is_displayed() and box.size["height"] > 200
    text = box.text
    assert "Cutoff explorer" in text and "negative satisfaction" in text and "sweep" in text
    image = box.find_element(By.TAG_NAME, "img")
    assert image.is_displayed()
    assert browser.execute_script("return arguments[0].naturalWidth", image) > 0
    box.screenshot(str(screenshot_dir() / f"notebook-02-cutoff-explorer-fallback-{kind}.png"))
    assert "VBox(children=" not in browser.find_element(By.TAG_NAME, "body").text
