"""The drift Display: how many labels are in each drift status."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model import ID
from .draw import foreground, get_axes
from .style import DRIFT_COLORS, PALETTE

__all__ = ["DriftDisplay"]


def _share(p: float) -> str:
    """A share as a whole percentage, never rounding a non-empty class to 0% or a partial to 100%."""
    if 0 < p < 0.005:
        return "<1%"
    if 0.995 <= p < 1:
        return ">99%"
    return f"{p:.0%}"


class DriftDisplay:
    """How many labels are in each drift status, in the order VALID, RE_ANCHORABLE, MERGED,
    SPLIT, ORPHANED. RE_ANCHORABLE and MERGED are fixable by ``fix``; SPLIT and ORPHANED need a
    person.

    Parameters
    ----------
    counts : pandas.Series
        Labels per status, over the five statuses.
    invalid_ratio : float
        The share of labels not VALID.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import DriftDisplay
    >>> demo = rev.load_demo()
    >>> disp = DriftDisplay.from_drift(rev.drift(demo.judgments, demo.corpus_v2)).plot()
    >>> disp.counts.to_dict()
    {'VALID': 136, 'RE_ANCHORABLE': 16, 'MERGED': 22, 'SPLIT': 26, 'ORPHANED': 15}
    """

    def __init__(self, counts: pd.Series, invalid_ratio: float):
        self.counts = counts
        self.invalid_ratio = invalid_ratio

    @classmethod
    def from_drift(cls, result):
        """The status counts of a drift result.

        Parameters
        ----------
        result : DriftResult
            A :func:`~retrieval_eval.drift` result (its summary counts are drawn).

        Returns
        -------
        DriftDisplay
        """
        from ..analysis.drift.core import DRIFT_STATUSES

        s = result.summary
        counts = pd.Series(
            [int(s[name.lower()]) for name in DRIFT_STATUSES],
            index=pd.Index(DRIFT_STATUSES, dtype=ID, name="status"),
            dtype=np.int64,
            name="labels",
        )
        return cls(counts, float(s["invalid_ratio"]))

    def plot(self, ax=None):
        """Bars per status, each with its count and share.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            By default a new figure.

        Returns
        -------
        DriftDisplay
            self, with ``ax_``, ``figure_``, ``bars_`` and ``bar_labels_``.
        """
        (a,), fig = get_axes(ax, 1, size=(6.4, 3.8))
        names = [str(x) for x in self.counts.index]
        values = self.counts.to_numpy(np.int64)
        total = int(values.sum())
        self.bars_ = a.bar(
            np.arange(len(names)), values, color=[DRIFT_COLORS.get(n, PALETTE[0]) for n in names], width=0.7
        )
        shares = values / total if total else np.zeros(len(values))
        self.bar_labels_ = a.bar_label(
            self.bars_,
            labels=[f"{v}\n{_share(p)}" if total else str(v) for v, p in zip(values, shares)],
            padding=2,
            fontsize="small",
            color=foreground(),
        )
        sub = {
            "VALID": "",
            "RE_ANCHORABLE": "\n(fixable)",
            "MERGED": "\n(fixable)",
            "SPLIT": "\n(review)",
            "ORPHANED": "\n(review)",
        }
        a.set_xticks(np.arange(len(names)), [n + sub.get(n, "") for n in names], fontsize="small")
        a.set_ylim(0, max(1, values.max(initial=0)) * 1.22)
        a.set_ylabel("labels (judgments)")
        a.set_title(f"label drift: {self.invalid_ratio:.1%} not VALID (of {total})")
        a.grid(True, axis="y", alpha=0.25)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self
