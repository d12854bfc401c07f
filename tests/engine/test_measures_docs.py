"""docs/metrics.md's table of the measure catalogue is the registry's own table."""

from pathlib import Path

from retrieval_eval.engine.measures.registry import markdown_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_the_docs_table_of_measures_matches_the_registry():
    text = DOC.read_text(encoding="utf-8")
    start, end = "<!-- measures-table:start -->\n", "\n<!-- measures-table:end -->"
    assert start in text and end in text
    table = text.split(start, 1)[1].split(end, 1)[0]
    assert table == markdown_table(), (
        "regenerate with: python -c 'from retrieval_eval.engine.measures.registry import "
        "markdown_table; print(markdown_table())'"
    )


def test_the_docs_table_of_seed_metrics_matches_their_declarations():
    from retrieval_eval.engine.measures.seed import markdown_table as seed_table

    text = DOC.read_text(encoding="utf-8")
    start, end = "<!-- seed-table:start -->\n", "\n<!-- seed-table:end -->"
    assert start in text and end in text
    assert text.split(start, 1)[1].split(end, 1)[0] == seed_table(), (
        "regenerate with: python -c 'from retrieval_eval.engine.measures.seed import "
        "markdown_table; print(markdown_table())'"
    )
