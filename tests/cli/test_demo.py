"""The demo page: one self-contained file with a headline per system, the gates applied (or
"no gates applied"), captions and a legend, 4-decimal numbers, the significance tests."""

from __future__ import annotations

import json
import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from retrieval_eval.cli.demo import DEMO_GATES, calibration_verdict, run_demo

SYSTEMS = ["dense", "bm25", "rrf"]


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    written = run_demo(out)
    return written, written["index.html"].read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ungated(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo-no-gates")
    written = run_demo(out, gates=())
    return written, written["index.html"].read_text(encoding="utf-8")


def _section(page: str, element_id: str) -> str:
    start = page.index(f'id="{element_id}"')
    return page[start : page.index("</table>", start)]


def _text(page: str) -> str:
    """The page without its embedded images (their base64 is not text a reader sees)."""
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:", page)


def test_the_page_is_self_contained(gated):
    _, page = gated
    sources = re.findall(r'src="([^"]*)"', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "<script" not in page and "<link" not in page and "url(" not in page
    assert "http://" not in page and "https://" not in page


def test_the_headline_has_one_row_per_system_with_the_reports_numbers(gated):
    written, page = gated
    head = _section(page, "headline")
    assert re.findall(r'data-system="([^"]+)"', head) == SYSTEMS
    reports = json.loads(written["report.json"].read_text())["systems"]
    for system in SYSTEMS:
        row = head[head.index(f'data-system="{system}"') :]
        row = row[: row.index("</tr>")]
        for metric in ("ndcg@10", "recall@10", "mrr@10", "auroc"):
            assert f"<td>{reports[system]['metrics'][metric]['value']:.4f}</td>" in row
    frame = pd.read_csv(written["headline.csv"], index_col="system")
    assert list(frame.index) == SYSTEMS


def test_numbers_are_shown_at_four_decimals(gated):
    _, page = gated
    text = _text(page)
    assert not re.findall(r"\d\.\d{5,}", text)
    assert "0.3674" in text  # the re-chunk's invalid_ratio 0.367441860465, at 4 decimals


def test_the_default_gates_are_applied_and_listed(gated):
    written, page = gated
    gates = _section(page, "gates")
    for expression in DEMO_GATES:
        assert f"<code>{expression}</code>" in gates
    frame = pd.read_csv(written["headline.csv"], index_col="system")
    # bm25's recall@10 is 0.5747 < 0.6; rrf's negative_satisfaction rests on rank-based scores
    assert frame.loc["bm25", "gates"] == "FAIL"
    assert frame.loc["rrf", "gates"] == "INDETERMINATE"
    assert frame.loc["dense", "gates"] == "PASS"


def test_without_gates_the_page_says_no_gates_applied_not_pass(ungated):
    written, page = ungated
    frame = pd.read_csv(written["headline.csv"], index_col="system")
    assert set(frame["gates"]) == {"no gates applied"}
    assert "PASS" not in _section(page, "headline")
    assert 'id="gates"' in page and "no gates applied" in page


def test_every_calibrated_system_gets_its_distribution_plot(gated):
    written, page = gated
    for system in SYSTEMS:
        assert f"scores-{system}.png" in written
        assert f'id="fig-scores-{system}"' in page


def test_every_figure_has_a_caption_that_is_not_a_file_name(gated):
    written, page = gated
    figures = re.findall(r"<figure.*?</figure>", page, flags=re.S)
    assert len(figures) == sum(name.endswith(".png") for name in written)
    for fig in figures:
        caption = re.search(r"<figcaption>(.*?)</figcaption>", fig, flags=re.S).group(1)
        assert len(caption) > 60 and ".png" not in caption


def test_the_comparison_table_has_p_values_and_the_correction(gated):
    written, page = gated
    assert "p (Holm)" in page and "Holm correction" in page
    table = pd.read_csv(written["comparison.csv"])
    assert sorted(set(table["system"])) == ["dense", "rrf"]
    assert ((table["p_adjusted"] >= table["p_value"]) & (table["p_adjusted"] <= 1)).all()


def test_every_mark_on_the_page_is_explained(gated):
    _, page = gated
    assert "colour in every plot" in page  # the swatches
    assert "&dagger;1: cannot be gated" in page  # the dagger beside indeterminate figures
    for status in ("PASS", "FAIL", "INDETERMINATE"):
        assert f'<span class="{status}">{status}</span>' in page.split("<h2>Gates applied")[0]


@pytest.mark.parametrize(
    "row, verdict",
    [
        (
            {"rank_based": True, "auroc": 0.99, "n_positive": 50, "n_negative": 50},
            "cannot separate OOD queries (rank-based scores)",
        ),
        ({"rank_based": False, "auroc": 0.99, "n_positive": 50, "n_negative": 9}, "too few samples to judge"),
        ({"rank_based": False, "auroc": 0.9, "n_positive": 50, "n_negative": 10}, "separates OOD queries"),
        ({"rank_based": False, "auroc": 0.7, "n_positive": 50, "n_negative": 10}, "separates OOD queries partly"),
        ({"rank_based": False, "auroc": 0.69, "n_positive": 50, "n_negative": 10}, "does not separate OOD queries"),
    ],
)
def test_calibration_verdict_reads_rank_basis_samples_then_auroc(row, verdict):
    assert calibration_verdict(pd.Series(row)) == verdict
