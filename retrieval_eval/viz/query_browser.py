"""A query browser for a diff of two runs: choose a query (the ones that moved most first) and
see both rankings side by side, with the relevant passages' ranks in each.

Built on ipywidgets when a kernel is there; everywhere else (a rendered notebook, nbviewer, a
static site) it shows the same static fallback as the cutoff explorer
(:class:`~retrieval_eval.viz.widgets.CutoffExplorer`): its ``_repr_mimebundle_`` carries the
widget view *and* a ``text/html`` rendering of the current state, which is what a frontend
without a kernel falls back to. The rendering is :func:`.failure.query_diff_html`, the same
static HTML and SVG the diff's page uses.
"""

from __future__ import annotations

from typing import Any

from .failure import query_diff_html
from .html import esc

__all__ = ["BROWSER_NEEDS_IPYWIDGETS", "QueryBrowser", "browse_queries", "ipywidgets_module"]

#: The one line a missing ipywidgets gives: which extra installs it.
BROWSER_NEEDS_IPYWIDGETS = (
    "the query browser needs ipywidgets, which the [notebook] extra installs: "
    "pip install 'retrieval-eval[notebook]' (in a checkout: pip install '.[notebook]')"
)


def ipywidgets_module():
    """ipywidgets, or an ImportError whose one line names the extra to install.

    Returns
    -------
    module

    Raises
    ------
    ImportError
        :data:`BROWSER_NEEDS_IPYWIDGETS`.

    Examples
    --------
    >>> from retrieval_eval.viz import ipywidgets_module
    >>> ipywidgets_module().__name__
    'ipywidgets'
    """
    try:
        import ipywidgets
    except ImportError:
        raise ImportError(BROWSER_NEEDS_IPYWIDGETS) from None
    return ipywidgets


class QueryBrowser:
    """A dropdown of a diff's queries (largest ``|delta|`` first) driving the view of both
    rankings of the chosen one.

    Attributes: ``widget`` (the ``VBox`` to display; the browser itself displays as it too),
    ``query`` (the ``Dropdown``; set ``browser.query.value`` from code and the view follows),
    ``view`` (the ``HTML`` of the chosen query).

    Parameters
    ----------
    diff : RunDiff
        A :func:`~retrieval_eval.diff_runs` result.
    max_queries : int, optional
        Offer only the queries that moved most.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import QueryBrowser
    >>> d = rev.load_demo()
    >>> b = QueryBrowser(rev.diff_runs(d.judgments, d.runs, systems=("dense", "bm25")))
    >>> b.query.value = "st-01"
    >>> b.state()["query_id"], "<svg" in b.view.value
    ('st-01', True)
    """

    def __init__(self, diff, max_queries: int | None = None):
        w = ipywidgets_module()
        table = diff.queries if max_queries is None else diff.queries.head(int(max_queries))
        if not len(table):
            raise ValueError("the diff has no scored query to browse")
        self.diff = diff
        options = [(f"{q}  Δ {d:+.3f}", str(q)) for q, d in table[["query_id", "delta"]].itertuples(index=False)]
        self.query = w.Dropdown(options=options, value=options[0][1], description="query", layout=w.Layout(width="50%"))
        self.view = w.HTML()
        self.widget = w.VBox([self.query, self.view])
        self.query.observe(self._on_query, names="value")
        self._refresh()

    def _on_query(self, change) -> None:
        self._refresh()

    def _refresh(self) -> None:
        self.view.value = query_diff_html(self.diff, self.query.value)

    def state(self) -> dict[str, Any]:
        """What is displayed: the query and its two values.

        Returns
        -------
        dict
            ``query_id``, ``a``, ``b``, ``delta``.
        """
        row = self.diff.queries[self.diff.queries["query_id"] == self.query.value].iloc[0]
        return {
            "query_id": str(row["query_id"]),
            "a": float(row["a"]),
            "b": float(row["b"]),
            "delta": float(row["delta"]),
        }

    def static_html(self) -> str:
        """The current state as plain HTML (no JavaScript): the chosen query's two rankings.

        Returns
        -------
        str
        """
        return (
            f"<div class='re-browser-static'><i>(static view of query {esc(self.query.value)}; "
            "run the notebook to choose another)</i></div>" + self.view.value
        )

    def _repr_mimebundle_(self, **kwargs):
        data = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        # Where no kernel draws the widget view, frontends fall back to these.
        data["text/plain"] = repr(self)
        data["text/html"] = self.static_html()
        return data

    def __repr__(self) -> str:
        return f"QueryBrowser(query={self.query.value!r}, {len(self.query.options)} queries)"


def browse_queries(diff, max_queries: int | None = None) -> QueryBrowser:
    """A query browser for a :class:`~retrieval_eval.RunDiff`.

    Parameters
    ----------
    diff : RunDiff
        A :func:`~retrieval_eval.diff_runs` result.
    max_queries : int, optional
        Offer only the queries that moved most.

    Returns
    -------
    QueryBrowser
        Display it (last expression of a cell) or its ``.widget``.

    Raises
    ------
    ImportError
        Without ipywidgets, one line naming the extra that installs it.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import browse_queries
    >>> d = rev.load_demo()
    >>> b = browse_queries(rev.diff_runs(d.judgments, d.runs, systems=("dense", "bm25")))
    >>> b.state()["query_id"]
    'dm-11'
    """
    return QueryBrowser(diff, max_queries=max_queries)
