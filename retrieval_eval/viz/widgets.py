"""Interactive explorers for notebooks (ipywidgets, imported only when one is built).

:func:`explore_cutoff` lets a reader drag the relevance cutoff and see, live, what it costs and
buys: how many out-of-distribution queries it rejects, how many covered queries it drops, what
recall@k is left after it, and which queries sit on the wrong side. Every number comes from the
engine: the two shares from the calibration's top-1 scores (the rule of SPEC B2, the same step
functions :class:`~retrieval_eval.viz.CutoffTradeoffDisplay` draws), recall from
:func:`retrieval_eval.apply_cutoff` then :func:`retrieval_eval.evaluate`.
"""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MISSING_IPYWIDGETS", "SWEEP_ROWS", "CutoffExplorer", "explore_cutoff"]

from ..model import ID
from .calibration import ScoreDistributionDisplay
from .draw import foreground, legend_below
from .shift import draw_stratum_cutoffs, stratum_cutoff_rows
from .tradeoff import tradeoff_values

#: The one line a missing ipywidgets gives: which extra installs it.
MISSING_IPYWIDGETS = (
    "the cutoff explorer needs ipywidgets, which the [notebook] extra installs: "
    "pip install 'retrieval-eval[notebook]' (in a checkout: "
    "pip install '.[notebook]')"
)
#: Rows of the static fallback's sweep table (evenly spaced over the observed scores).
SWEEP_ROWS = 7


#: Hides the static view when a rendered widget view is the output just before it (the
#: output-area classes of JupyterLab / Notebook 7 and of the classic notebook); a page with no
#: widget renderer has no rendered view, so the static view stays.
_HIDE_BESIDE_LIVE_VIEW = (
    "<style>.jp-OutputArea-child:has(.widget-vbox) + .jp-OutputArea-child .re-explorer-static,"
    ".output_area:has(.widget-vbox) + .output_area .re-explorer-static{display:none}</style>"
)


def _ipywidgets():
    """ipywidgets, or an ImportError whose one line names the extra to install."""
    try:
        import ipywidgets
    except ImportError:
        raise ImportError(MISSING_IPYWIDGETS) from None
    return ipywidgets


def _esc(x: Any) -> str:
    return "" if x is None or x is pd.NA else html.escape(str(x))


class CutoffExplorer:
    """A cutoff slider and a system dropdown driving a distribution plot, the numbers after the
    cutoff, and the queries on the wrong side of it.

    Attributes: ``widget`` (the ipywidgets ``VBox`` to display; the explorer itself displays
    as it too), ``slider`` (``FloatSlider`` over the system's observed top-1 scores, starting at
    its calibrated cutoff), ``system`` (``Dropdown``), ``numbers`` and ``lists`` (``HTML``),
    ``image`` (an ``Image`` holding the rendered plot, when ``plot=True``). Set
    ``explorer.slider.value`` or ``explorer.system.value`` from code and everything updates;
    :meth:`state` returns what is currently displayed.

    Displayed in IPython, the explorer makes two outputs: the live widget view, and beside it a
    static view of its current state: ``text/html`` (the cutoff, the shares, a small sweep table
    and the plot as an embedded PNG, :meth:`static_html`) and ``image/png`` (the plot). A
    notebook saved with its outputs, executed by ``jupyter nbconvert --execute``, rendered by
    nbconvert or shown on a code host has no kernel (and often no widget renderer) to draw the
    widget; it shows the static view instead of an empty output, and a frontend that draws the
    live view hides the static one. ``_repr_mimebundle_`` (for other frontends) carries both in
    one bundle.

    Parameters
    ----------
    calibration : Calibration
        A :func:`~retrieval_eval.calibrate` result.
    judgments, run : DataFrame or path, optional
        To measure recall@``k`` after the cutoff (the run defaults to the calibration's own
        rows).
    k : int, default 10
    max_rows : int, default 15
        Queries listed on each wrong side.
    plot : bool, default True
    continuous_update : bool, default False
        Update while dragging (True) or on release.
    score_label : str or mapping, optional
    dpi : int, default 80

    Raises
    ------
    ImportError
        Without ipywidgets, one line naming the extra that installs it.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import CutoffExplorer
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> explorer = CutoffExplorer(cal, judgments=demo.judgments)
    >>> explorer.slider.value = 0.5
    >>> round(explorer.state()["negative_satisfaction"], 3)
    0.933
    """

    def __init__(
        self,
        calibration,
        judgments=None,
        run=None,
        k: int = 10,
        max_rows: int = 15,
        plot: bool = True,
        continuous_update: bool = False,
        score_label: str | None = None,
        dpi: int = 80,
    ):
        w = _ipywidgets()

        self.calibration = calibration
        self.k = int(k)
        self.max_rows = int(max_rows)
        self.score_label = score_label
        self.dpi = dpi
        systems = list(calibration.systems)
        if not systems:
            raise ValueError("the calibration has no calibrated system")
        self._judgments = None
        self._runs: dict[str, pd.DataFrame] = {}
        self._uncut: dict[str, float | None] = {}
        if judgments is not None:
            from ..io import as_judgments

            self._judgments = as_judgments(judgments)
            if run is None:
                run = getattr(calibration, "rows", None)
            if run is not None:
                from ..io import as_run

                run = as_run(run)
                systems_col = run["system"].astype(ID)
                self._runs = {s: run[systems_col == s].reset_index(drop=True) for s in systems}
        top1 = calibration.top1
        keep = top1["kind"].isin(["positive", "negative"]).to_numpy() & np.isfinite(
            top1["top1_score"].to_numpy(np.float64)
        )
        self._top1 = top1[keep].reset_index(drop=True)
        self._negatives = [str(x) for x in pd.unique(top1.loc[top1["kind"] == "negative", "query_id"])]
        self._state: dict[str, Any] = {}
        self._switching = False

        first = systems[0]
        lo, hi, step = self._range(first)
        self.system = w.Dropdown(options=systems, value=first, description="system")
        self.slider = w.FloatSlider(
            value=self._initial(first),
            min=lo,
            max=hi,
            step=step,
            description="cutoff",
            readout_format=".4g",
            continuous_update=continuous_update,
            layout=w.Layout(width="60%"),
        )
        self.numbers = w.HTML()
        self.lists = w.HTML()
        self.image = w.Image(format="png") if plot else None
        self._figure: Any = None
        parts = [w.HBox([self.system, self.slider])]
        if self.image is not None:
            parts.append(self.image)
        parts += [self.numbers, self.lists]
        self.widget = w.VBox(parts)
        self.slider.observe(self._on_cutoff, names="value")
        self.system.observe(self._on_system, names="value")
        self._build_plot(first)
        self._refresh()

    # -- ranges -------------------------------------------------------------------------------

    def _scores(self, system: str) -> tuple[np.ndarray, np.ndarray]:
        t = self._top1[self._top1["system"] == system]
        score = t["top1_score"].to_numpy(np.float64)
        kind = t["kind"].to_numpy(dtype=object)
        return score[kind == "positive"], score[kind == "negative"]

    def _initial(self, system: str) -> float:
        c = self.calibration.cutoff(system)
        if math.isfinite(c):
            return float(c)
        lo, _hi, _ = self._range(system)
        return lo

    def _range(self, system: str) -> tuple[float, float, float]:
        """Slider range: the system's observed top-1 scores (and its cutoff, if fixed outside)."""
        pos, neg = self._scores(system)
        values = np.r_[pos, neg]
        c = self.calibration.cutoff(system)
        if math.isfinite(c):
            values = np.r_[values, c]
        if values.size == 0:
            return 0.0, 1.0, 0.001
        lo, hi = float(values.min()), float(values.max())
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        return lo, hi, (hi - lo) / 1000.0

    # -- events -------------------------------------------------------------------------------

    def _on_cutoff(self, change) -> None:
        if not self._switching:
            self._refresh()

    def _on_system(self, change) -> None:
        system = change["new"]
        lo, hi, step = self._range(system)
        self._switching = True
        try:
            with self.slider.hold_trait_notifications():
                # Widen first so the new value and bounds are always valid together.
                self.slider.min = min(lo, self.slider.min)
                self.slider.max = max(hi, self.slider.max)
                self.slider.value = self._initial(system)
                self.slider.min, self.slider.max, self.slider.step = lo, hi, step
        finally:
            self._switching = False
        self._build_plot(system)
        self._refresh()

    # -- numbers ------------------------------------------------------------------------------

    def _recall(self, system: str, cutoff: float | None) -> float | None:
        """recall@k of the system's run cut at ``cutoff`` (None: uncut), from the engine."""
        run = self._runs.get(system)
        if run is None or self._judgments is None:
            return None
        from ..analysis.calibration.core import apply_cutoff
        from ..analysis.evaluation.core import evaluate
        from ..analysis.evaluation.ties import in_given_order

        cut = run if cutoff is None else apply_cutoff(run, {system: float(cutoff)})
        # the explorer re-scores the user's run at each cutoff: its ties are the user's call to
        # evaluate / calibrate to report, not a warning on every slider move
        ev = evaluate(
            self._judgments, in_given_order(cut), k=(self.k,), threshold=self._threshold(), negatives=self._negatives
        )
        name = ev.metric("recall", self.k)
        # A cut that removed every hit leaves an empty run: the engine then scores every
        # positive as missing (zero) under its placeholder system name.
        row = ev.summary.loc[system] if system in ev.summary.index else ev.summary.iloc[0]
        return None if int(row["n"]) == 0 else float(row[name])

    def _threshold(self) -> int:
        settings = getattr(self.calibration, "settings", None) or {}
        return int(settings.get("threshold", 1))

    def _refresh(self) -> None:
        system = self.system.value
        c = float(self.slider.value)
        pos, neg = self._scores(system)
        ns, pr = tradeoff_values(pos, neg, np.asarray([c]))
        recall_name = f"recall@{self.k}"
        if system not in self._uncut:
            self._uncut[system] = self._recall(system, None)
        t = self._top1[self._top1["system"] == system]
        score = t["top1_score"].to_numpy(np.float64)
        kind = t["kind"].to_numpy(dtype=object)
        above = t[(kind == "negative") & (score >= c)].sort_values("top1_score", ascending=False, kind="stable")
        below = t[(kind == "positive") & (score < c)].sort_values("top1_score", ascending=True, kind="stable")
        self._state = {
            "system": system,
            "cutoff": c,
            "calibrated_cutoff": float(self.calibration.cutoff(system)),
            "n_positive": int(pos.size),
            "n_negative": int(neg.size),
            "negative_satisfaction": float(ns[0]),
            "positive_retention": float(pr[0]),
            recall_name: self._recall(system, c),
            f"{recall_name} without cutoff": self._uncut[system],
            "negatives_above": [str(x) for x in above["query_id"]],
            "positives_below": [str(x) for x in below["query_id"]],
        }
        self.numbers.value = self._numbers_html()
        self.lists.value = self._table(
            above,
            f"negatives at or above the cutoff ({len(above)}): out-of-distribution queries that would get an answer",
        ) + self._table(below, f"positives below the cutoff ({len(below)}): covered queries that would get nothing")
        self._update_plot(c)

    def state(self) -> dict[str, Any]:
        """The numbers and query lists currently displayed.

        Returns
        -------
        dict
            A copy: ``system``, ``cutoff``, ``calibrated_cutoff``, the class sizes, the two
            shares, recall@k with and without the cutoff, ``negatives_above`` and
            ``positives_below``.
        """
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self._state.items()}

    def _numbers_html(self) -> str:
        s = self._state
        recall_name = f"recall@{self.k}"

        def share(x, n):
            return "n/a" if x is None or not math.isfinite(x) else f"{x:.1%} of {n}"

        recall = s[recall_name]
        uncut = s[f"{recall_name} without cutoff"]
        if recall is None:
            recall_text = "n/a (pass run= and judgments= to measure it)"
        else:
            recall_text = f"{recall:.3f}" + (f" (without cutoff {uncut:.3f})" if uncut is not None else "")
        rows = [
            ("cutoff", f"{s['cutoff']:.4g} (calibrated {s['calibrated_cutoff']:.4g})"),
            ("negative satisfaction (negatives &lt; cutoff)", share(s["negative_satisfaction"], s["n_negative"])),
            ("positive retention (positives &ge; cutoff)", share(s["positive_retention"], s["n_positive"])),
            (f"{recall_name} after the cutoff", recall_text),
        ]
        body = "".join(
            f"<tr><td style='text-align:left'>{a}</td><td style='text-align:left'><b>{b}</b></td></tr>" for a, b in rows
        )
        return f"<table>{body}</table>"

    def _table(self, frame: pd.DataFrame, title: str) -> str:
        if frame.empty:
            return f"<div><b>{_esc(title)}</b>: none</div>"
        shown = frame.head(self.max_rows)
        query = shown["query"] if "query" in shown.columns else pd.Series([pd.NA] * len(shown))
        stratum = shown["stratum"] if "stratum" in shown.columns else pd.Series([pd.NA] * len(shown))
        rows = "".join(
            f"<tr><td>{_esc(q)}</td><td style='text-align:left'>{_esc(t)}</td><td>{_esc(st)}</td><td>{sc:.4g}</td></tr>"
            for q, t, st, sc in zip(shown["query_id"], query, stratum, shown["top1_score"].to_numpy(np.float64))
        )
        more = f"<div>&hellip; and {len(frame) - self.max_rows} more</div>" if len(frame) > self.max_rows else ""
        return (
            f"<div><b>{_esc(title)}</b></div><table><tr><th>query_id</th><th>query</th>"
            f"<th>stratum</th><th>top-1 score</th></tr>{rows}</table>{more}"
        )

    # -- plot ---------------------------------------------------------------------------------

    def _build_plot(self, system: str) -> None:
        if self.image is None:
            return
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.4, 4.4), layout="constrained")
        ax = fig.subplots()
        disp = ScoreDistributionDisplay.from_calibration(self.calibration, system=system, score_label=self.score_label)
        disp.plot(ax=ax, legend=False)
        rows = stratum_cutoff_rows(self.calibration, [system])  # by="stratum": ticks on top
        strata = [] if rows is None else draw_stratum_cutoffs(ax, rows, system)
        # The explored cutoff: solid, in the theme's foreground (the calibrated one is dashed).
        self._line = ax.axvline(
            float(self.slider.value), color=foreground(), linewidth=2.5, label="explored cutoff (slider)"
        )
        legend = legend_below(
            ax, disp.handles_[system] + strata + [self._line], ncols=1, title=disp.legend_title(system)
        )
        self._line_label = legend.get_texts()[-1]
        self._figure = fig

    def _update_plot(self, c: float) -> None:
        if self.image is None or self._figure is None:
            return
        self._line.set_xdata([c, c])
        self._line_label.set_text(f"explored cutoff {c:.4g} (slider)")
        buf = io.BytesIO()
        self._figure.savefig(buf, format="png", dpi=self.dpi)
        self.image.value = buf.getvalue()

    # -- display ------------------------------------------------------------------------------

    def sweep(self, rows: int = SWEEP_ROWS) -> pd.DataFrame:
        """Negative satisfaction and positive retention of the current system at ``rows``
        cutoffs evenly spaced over its observed top-1 scores, plus its calibrated cutoff and
        the explored one (``explored``/``calibrated`` flag them): the static fallback's table.

        The shares come from the same step functions as the live numbers and
        :class:`~retrieval_eval.viz.CutoffTradeoffDisplay`.

        Parameters
        ----------
        rows : int, default ``SWEEP_ROWS``

        Returns
        -------
        pandas.DataFrame
            ``cutoff``, ``negative_satisfaction``, ``positive_retention``, ``explored``,
            ``calibrated``.
        """
        system = self.system.value
        lo, hi, _ = self._range(system)
        current = float(self.slider.value)
        calibrated = float(self.calibration.cutoff(system))
        grid = np.linspace(lo, hi, int(rows))
        extra = [current] + ([calibrated] if math.isfinite(calibrated) else [])
        grid = np.unique(np.r_[grid, extra])
        pos, neg = self._scores(system)
        ns, pr = tradeoff_values(pos, neg, grid)
        return pd.DataFrame(
            {
                "cutoff": grid,
                "negative_satisfaction": ns,
                "positive_retention": pr,
                "explored": grid == current,
                "calibrated": grid == calibrated,
            }
        )

    def _png(self) -> bytes | None:
        if self.image is None:
            return None
        return bytes(self.image.value) or None

    def static_html(self) -> str:
        """The current state as plain HTML (no JavaScript): the system, cutoff and shares, the
        sweep table, the plot as an embedded PNG and the queries on the wrong side.

        Returns
        -------
        str
        """
        s = self._state
        sweep = self.sweep()
        rows = []
        for r in sweep.itertuples(index=False):
            marks = [m for m, on in (("explored", r.explored), ("calibrated", r.calibrated)) if on]
            style = " style='font-weight:bold'" if r.explored else ""
            rows.append(
                f"<tr{style}><td>{r.cutoff:.4g}</td>"
                f"<td>{r.negative_satisfaction:.1%}</td>"
                f"<td>{r.positive_retention:.1%}</td><td>{' / '.join(marks)}</td></tr>"
            )
        table = (
            "<table class='re-sweep'><tr><th>cutoff</th><th>negative satisfaction</th>"
            "<th>positive retention</th><th></th></tr>" + "".join(rows) + "</table>"
        )
        png = self._png()
        img = (
            f"<img alt='score distributions of {_esc(s.get('system'))} with the explored "
            f"cutoff' src='data:image/png;base64,{base64.b64encode(png).decode('ascii')}'>"
            if png
            else ""
        )
        return (
            f"<div class='re-explorer-static' style='font-family:system-ui,sans-serif;"
            f"font-size:13px'><b>Cutoff explorer: {_esc(s.get('system'))}</b> "
            "<i>(static view of the current state; run the notebook to drag the cutoff)"
            f"</i>{self.numbers.value}{img}<div><b>sweep</b></div>{table}"
            f"{self.lists.value}</div>"
        )

    def _repr_mimebundle_(self, **kwargs):
        data = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        # Where no kernel draws the widget view, frontends fall back to these.
        data["text/plain"] = repr(self)
        data.update(self._static_bundle())
        return data

    def _static_bundle(self) -> dict[str, str]:
        data = {"text/html": _HIDE_BESIDE_LIVE_VIEW + self.static_html()}
        png = self._png()
        if png:
            data["image/png"] = base64.b64encode(png).decode("ascii")
        return data

    def _ipython_display_(self) -> None:
        """Two outputs: the live widget view, then the static view beside it.

        A notebook executed with its widget state saved (``jupyter nbconvert --execute``) renders
        a widget output as the widget view alone, whatever else the output carries, and the view
        needs a widget renderer from a CDN: offline or on a static host the output is blank. The
        static view as an output of its own always renders (HTML with the plot as an embedded
        PNG). Where a live view is drawn beside it (JupyterLab, Notebook 7, VS Code with a
        kernel) a style rule in the static view hides it, so the explorer is not shown twice.
        """
        from IPython.display import display

        view = dict(self.widget._repr_mimebundle_() or {})
        view["text/plain"] = f"{self!r} (the live view needs a running kernel)"
        display(view, raw=True)
        display({"text/plain": repr(self), **self._static_bundle()}, raw=True)

    def __repr__(self) -> str:
        s = self._state
        return (
            f"CutoffExplorer(system={s.get('system')!r}, cutoff={s.get('cutoff')!r}, "
            f"negative_satisfaction={s.get('negative_satisfaction')!r}, "
            f"positive_retention={s.get('positive_retention')!r})"
        )


def explore_cutoff(calibration, judgments=None, run=None, k: int = 10, **kwargs) -> CutoffExplorer:
    """An interactive cutoff explorer for a :class:`~retrieval_eval.Calibration`.

    A slider over the observed top-1 scores (starting at the calibrated cutoff) and a system
    dropdown update, live: the score distributions with the explored cutoff, negative
    satisfaction, positive retention and recall@``k`` after the cutoff, and the negatives at or
    above it and positives below it with their query text (at most ``max_rows`` each).

    recall@k needs ``judgments`` (the run defaults to the calibration's own rows): it is the
    engine's, measured on the run cut with :func:`~retrieval_eval.apply_cutoff`,
    so a covered query left with nothing scores zero, as it would in production. Keywords:
    ``max_rows`` (15), ``plot`` (True), ``continuous_update`` (False: update on release),
    ``score_label`` (e.g. ``"cosine"``, or ``{"dense": "cosine"}``), ``dpi``.

    Parameters
    ----------
    calibration : Calibration
        A :func:`~retrieval_eval.calibrate` result.
    judgments, run : DataFrame or path, optional
    k : int, default 10
    **kwargs
        To :class:`CutoffExplorer`.

    Returns
    -------
    CutoffExplorer
        Display it (last expression of a cell) or its ``.widget``.

    Raises
    ------
    ImportError
        Without ipywidgets, one line naming the extra that installs it.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import explore_cutoff
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> explore_cutoff(cal, judgments=demo.judgments, k=10).state()["system"]
    'dense'
    """
    return CutoffExplorer(calibration, judgments=judgments, run=run, k=k, **kwargs)
