"""The notebooks are documentation that runs: nbval re-executes every code cell in CI and
compares its outputs with the stored ones. These checks catch, without a kernel, what would
make that comparison meaningless or flaky: a notebook that is missing, malformed or stored
without outputs; an output that cannot repeat (a memory address, a wall-clock timestamp, an
absolute path, a stderr warning); a widget cell whose random model id is compared; a link
from a notebook to a page that does not exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
NAMES = (
    "01_quickstart.ipynb",
    "02_ood_calibration.ipynb",
    "03_strata_and_systems.ipynb",
    "04_drift.ipynb",
    "05_guarantees_and_trust.ipynb",
    "06_llm_judged_metrics.ipynb",
    "07_failure_analysis.ipynb",
    "08_paper_workflow.ipynb",
)
IGNORE = "# NBVAL_IGNORE_OUTPUT"
WIDGET = "application/vnd.jupyter.widget-view+json"

#: Text that cannot come out the same twice, or on another machine.
UNREPEATABLE = {
    "memory address": re.compile(r"\bat 0x[0-9a-fA-F]{6,}"),
    "absolute path": re.compile(r"(?<![\w.])/(?:work|home|tmp|Users|usr|opt|root|var)/"),
    "wall-clock timestamp": re.compile(r"\b20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"),
}
#: The one timestamp the notebooks print: the fixed ``now`` given to the report.
FIXED_TIMESTAMP = "2026-01-01T00:00:00Z"


def _read(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / name, as_version=nbformat.NO_CONVERT)


def _code_cells(nb):
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def _texts(output) -> list[str]:
    """Every text an output carries that nbval compares (streams and text/* data)."""
    if output.output_type == "stream":
        return [output.text]
    data = output.get("data", {})
    return [v for k, v in data.items() if k.startswith("text/") and isinstance(v, str)]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_exists_and_is_valid_nbformat_v4(name):
    path = NOTEBOOKS / name
    assert path.is_file(), f"missing notebook {name}"
    nb = _read(name)
    assert nb.nbformat == 4
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("name", NAMES)
def test_every_code_cell_has_stored_outputs(name):
    # nbval compares against what is stored: a cell stored without outputs checks nothing.
    nb = _read(name)
    cells = _code_cells(nb)
    assert cells, f"{name} has no code cell"
    for i, cell in cells:
        assert cell.source.strip(), f"{name} cell {i} is empty"
        assert cell.outputs, f"{name} cell {i} has no stored output; execute the notebook"
        assert cell.execution_count is not None, f"{name} cell {i} was not executed"


@pytest.mark.parametrize("name", NAMES)
def test_cells_were_executed_in_order(name):
    counts = [c.execution_count for _, c in _code_cells(_read(name))]
    assert counts == list(range(1, len(counts) + 1)), f"{name}: run top to bottom in a fresh kernel"


@pytest.mark.parametrize("name", NAMES)
def test_no_errors_or_stderr_in_outputs(name):
    # A warning on stderr depends on library versions; an error means the story is broken.
    for i, cell in _code_cells(_read(name)):
        for out in cell.outputs:
            assert out.output_type != "error", f"{name} cell {i} raised {out.get('ename')}"
            if out.output_type == "stream":
                assert out.name == "stdout", f"{name} cell {i} wrote to {out.name}: {out.text[:200]}"


@pytest.mark.parametrize("name", NAMES)
def test_compared_outputs_are_repeatable(name):
    # No sanitizer is configured for nbval, so every compared text must repeat byte for byte.
    for i, cell in _code_cells(_read(name)):
        if cell.source.lstrip().startswith(IGNORE):
            continue
        for out in cell.outputs:
            for text in _texts(out):
                for what, pattern in UNREPEATABLE.items():
                    found = [m.group(0) for m in pattern.finditer(text)]
                    if what == "wall-clock timestamp":
                        found = [f for f in found if f != FIXED_TIMESTAMP]
                    assert not found, f"{name} cell {i} prints a {what}: {found[0]!r}"


@pytest.mark.parametrize("name", NAMES)
def test_widget_outputs_are_not_compared(name):
    # A widget view carries a model id that changes on every run.
    for i, cell in _code_cells(_read(name)):
        has_widget = any(WIDGET in out.get("data", {}) for out in cell.outputs)
        if has_widget:
            assert cell.source.lstrip().startswith(IGNORE), f"{name} cell {i} displays a widget; start it with {IGNORE}"


@pytest.mark.parametrize("name", NAMES)
def test_plots_store_an_image_and_no_object_repr(name):
    # nbval skips image/png but compares text/plain: a figure's "<Figure size ...>" repeats,
    # a display object's repr (with its address) does not.
    for i, cell in _code_cells(_read(name)):
        widget_cell = any(WIDGET in o.get("data", {}) for o in cell.outputs)
        for out in cell.outputs:
            data = out.get("data", {})
            # A widget's static view (its own output beside the widget view, or in the same
            # bundle): its cell's output is not compared (test_widget_outputs_are_not_compared).
            if "image/png" in data and not widget_cell:
                assert data.get("text/plain", "").startswith("<Figure size"), (
                    f"{name} cell {i}: {data.get('text/plain')!r}"
                )
            if out.output_type == "execute_result":
                plain = data.get("text/plain", "")
                assert not plain.startswith("<retrieval_eval."), (
                    f"{name} cell {i} ends with a display object; assign it (disp = ...)"
                )


def test_the_ood_notebook_shows_and_drives_the_cutoff_explorer():
    nb = _read("02_ood_calibration.ipynb")
    sources = [c.source for _, c in _code_cells(nb)]
    shown = [i for i, s in enumerate(sources) if "explore_cutoff(" in s]
    assert shown, "02 must show the cutoff explorer"
    assert any("explorer.slider.value" in s and "explorer.state()" in s for s in sources[shown[0] + 1 :]), (
        "02 must drive the explorer and print its state"
    )


_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("name", NAMES)
def test_relative_links_resolve(name):
    for i, cell in enumerate(_read(name).cells):
        if cell.cell_type != "markdown":
            continue
        for target in _LINK.findall(cell.source):
            if "://" in target:
                continue
            assert (NOTEBOOKS / target).resolve().exists(), f"{name} cell {i} links to missing {target}"
