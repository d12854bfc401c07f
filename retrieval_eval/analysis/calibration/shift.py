"""Score drift between two runs: did the retriever's score scale move under yesterday's cutoff?

A new embedding model, an index rebuild or a re-ranker update shifts the top-1 score
distribution; a cutoff calibrated on the old scores then silently stops meaning what it meant.
:func:`score_shift` compares the top-1 scores of the same queries under two runs (or two dates
of one system):

* **KS** — the two-sample Kolmogorov-Smirnov statistic ``D = max |F_before - F_after|`` and its
  two-sided p-value: exact (lattice-path probability, as ``scipy.stats.ks_2samp(method=
  "exact")``) up to 10,000 queries a side, the asymptotic Kolmogorov distribution beyond. The
  test treats the two samples as independent; with the same queries under both runs, scores
  that move together typically make it conservative; the flip share below is the paired measure.
* **PSI** — the population stability index over ``bins`` quantile bins of the *before*
  scores: ``sum (a_i - b_i) ln(a_i / b_i)`` with ``b_i``, ``a_i`` the shares of before and after
  scores in bin ``i``; a share of 0 counts as half a query (``0.5 / n``), so one empty bin
  does not make the index infinite. Conventional reading (Siddiqi 2006): below 0.1 stable,
  0.1-0.25 a moderate shift, above 0.25 a major one; the gate ``score-shift:psi:0.1`` fails
  above its ceiling.
* **cutoff shift** — the cutoff calibrated on each run's positives (the ``quantile`` rule of
  :func:`retrieval_eval.calibrate`, or the split-conformal one with ``guarantee``), the
  difference after - before, and a seeded paired percentile bootstrap interval (queries
  resampled together, so both cutoffs see the same resample).
* **flips** — under the *old* cutoff (calibrated before, or the fixed ``cutoff``), the share of
  queries whose accept/refuse decision changed, per kind: positives newly refused lose an
  answer, negatives newly accepted get one they should not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...io import as_judgments, as_run
from ...model import ID
from ..handoff import viz
from ..jsonable import jsonable, measurement
from ..stats import bootstrap_ci, wilson_interval
from .calibration_input import score_rows
from .guarantee import as_guarantee, conformal_rank
from .shift_stats import MAX_BINS, ks_2samp, psi

__all__ = ["MAX_BINS", "SHIFT_GATE_METRICS", "ScoreShift", "ks_2samp", "psi", "score_shift"]

#: Numbers ``score-shift:<metric>:<ceiling>`` gates can read, from ``ScoreShift.metrics()``.
SHIFT_GATE_METRICS = ("psi", "ks", "flip_share", "cutoff_shift")
#: Fewer shared queries than this make every shift measurement indeterminate.
MIN_QUERIES = 10


# --------------------------------------------------------------------------------------------
# The result.


@dataclass
class ScoreShift:
    """The result of :func:`score_shift`.

    * ``summary``: one row per measurement (``ks``, ``ks_pvalue``, ``psi``, ``cutoff_before``,
      ``cutoff_after``, ``cutoff_shift``, ``flip_share``) with ``value``, ``n``, ``ci_low``,
      ``ci_high`` and ``interval`` (how the interval was computed).
    * ``top1``: one row per query both runs scored: ``kind``, ``stratum``, ``top1_before``,
      ``top1_after``, ``accepted_before``, ``accepted_after`` (top-1 >= the old cutoff) and
      ``flipped``.
    * ``decisions``: per kind: ``n``, accepted before and after, ``newly_refused``,
      ``newly_accepted``, ``flip_share``.
    * ``bins``: the PSI bin table (:func:`psi`).
    * ``warnings``: what a reader must know first; ``settings`` the options used.
    """

    summary: pd.DataFrame
    top1: pd.DataFrame
    decisions: pd.DataFrame
    bins: pd.DataFrame
    warnings: list[str]
    settings: dict[str, Any]
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)

    def value(self, name: str) -> float:
        """One measurement's value (``"psi"``, ``"ks"``, ``"cutoff_shift"``, ...)."""
        return float(self.summary.loc[name, "value"])  # type: ignore[arg-type]

    def _indeterminate(self) -> str | None:
        n = len(self.top1)
        if n < MIN_QUERIES:
            return f"only {n} queries scored by both runs (fewer than {MIN_QUERIES})"
        return None

    def metrics(self) -> dict[str, dict[str, Any]]:
        """Gate-readable measurements: name -> ``{"value", "n", ["ci"], ["indeterminate"]}``.

        ``ks`` is the KS statistic (with ``pvalue``), ``cutoff_shift`` the after - before
        difference of the calibrated cutoffs; NaN figures are absent, not null.
        """
        why = self._indeterminate()
        out: dict[str, dict[str, Any]] = {}
        for name in SHIFT_GATE_METRICS:
            m = measurement(self.summary.loc[name], why)
            if m is None:
                continue
            if name == "ks":
                m["pvalue"] = round(self.value("ks_pvalue"), 12)
            out[name] = m
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: ``{"score_shift": metrics(), "decisions": [...], "bins": [...], ...}``;
        the ``score_shift`` block is what ``score-shift:<metric>:<ceiling>`` gates read."""
        return jsonable(
            {
                "score_shift": self.metrics(),
                "summary": self.summary.reset_index().to_dict(orient="records"),
                "decisions": self.decisions.to_dict(orient="records"),
                "bins": self.bins.to_dict(orient="records"),
                "only_before": self.only_before,
                "only_after": self.only_after,
                "warnings": list(self.warnings),
                "settings": self.settings,
            }
        )

    def to_frame(self) -> pd.DataFrame:
        """The summary table (a copy)."""
        return self.summary.copy()

    def plot(self, ax=None, **kwargs):
        """Overlay the two top-1 distributions and both cutoffs
        (:class:`retrieval_eval.plotting_shift.ScoreShiftDisplay`); returns the display."""
        ScoreShiftDisplay = viz("ScoreShiftDisplay")

        return ScoreShiftDisplay.from_shift(self).plot(ax=ax, **kwargs)

    def _repr_html_(self) -> str:
        box, esc, table, warnings_html = viz("box", "esc", "table", "warnings_html")

        s = self.settings
        body = (
            table(self.summary, max_rows=20)
            + table(self.decisions.set_index("kind"))
            + warnings_html(self.warnings)
            + f"<div>{esc(s['before'])} → {esc(s['after'])}; PSI over {s['bins']} quantile "
            f"bins of the before scores; cutoff interval: paired percentile bootstrap "
            f"({s['n_resamples']} resamples, seed {s['seed']}). Details: .top1, .bins</div>"
        )
        return box("Score shift (top-1 scores, same queries)", body)

    def __repr__(self) -> str:
        return (
            f"ScoreShift({self.settings['before']} -> {self.settings['after']}, "
            f"{len(self.top1)} queries, warnings={len(self.warnings)})\n"
            + self.summary[["value", "n", "ci_low", "ci_high"]].to_string()
        )


def _pick(run: pd.DataFrame, system, label: str) -> tuple[pd.DataFrame, str]:
    systems = [str(s) for s in pd.unique(run["system"].astype(ID))]
    if not systems:
        raise ValueError(f"run_{label} is empty (no rankings): there are no top-1 scores to compare")
    if system is None:
        if len(systems) != 1:
            raise ValueError(
                f"run_{label} holds systems {', '.join(systems)}: pass system= (--system) to say which one to compare"
            )
        return run, systems[0]
    if system not in systems:
        raise ValueError(f"run_{label} has no system {system!r} (it has {', '.join(systems)})")
    return run[run["system"].astype(ID) == system], str(system)


def _top1(run: pd.DataFrame, judgments, queries, negatives, threshold: int) -> pd.DataFrame:
    rows = score_rows(judgments, run, queries, threshold=threshold, negatives=negatives)
    first = rows[(rows["rank"] == 1).to_numpy() & np.isfinite(rows["score"].to_numpy(np.float64))]
    return first[["query_id", "kind", "stratum", "score"]].drop_duplicates("query_id")


def _cutoff_rule(quantile: float, guarantee):
    """A vectorized rule: rows of positive top-1 scores -> one cutoff per row."""
    if guarantee is None:
        return lambda x: np.quantile(x, quantile, axis=-1, method="linear")

    def conformal(x: np.ndarray) -> np.ndarray:
        k = conformal_rank(x.shape[-1], guarantee.alpha)
        if k < 1:
            return np.full(x.shape[:-1], np.nan)
        return np.partition(x, k - 1, axis=-1)[..., k - 1]

    return conformal


def score_shift(
    run_before,
    run_after,
    *,
    judgments=None,
    queries=None,
    negatives=None,
    system=None,
    cutoff=None,
    quantile: float = 0.10,
    guarantee=None,
    threshold: int = 1,
    bins: int = 10,
    n_resamples: int = 1000,
    seed=0,
) -> ScoreShift:
    """Compare the top-1 score distributions of the same queries under two runs.

    Parameters
    ----------
    run_before, run_after : run frame, list of dicts or path
        The two runs (two systems, or one system on two dates). A run holding several
        systems needs ``system``: one name for both, or ``(before, after)``.
    judgments, queries, negatives : optional
        The positives (judged queries with a grade >= ``threshold``) that calibrate each
        run's cutoff, and the ``expect_none`` negatives; as in :func:`retrieval_eval.calibrate`.
        Without judgments, no cutoff is calibrated (pass ``cutoff`` for the flips).
    cutoff : float, optional
        The cutoff production uses today; flips are counted under it. Default: the cutoff
        calibrated on ``run_before``.
    quantile, guarantee : cutoff rule, as in :func:`retrieval_eval.calibrate`.
    bins : int
        Quantile bins of the before scores for the PSI (default 10, deciles; at most
        :data:`MAX_BINS`).
    n_resamples, seed : the paired bootstrap of the cutoff shift (seeded: same interval on
        every machine).

    Returns
    -------
    ScoreShift
        KS statistic and p-value, PSI, both cutoffs and their difference with an interval,
        the flip share under the old cutoff, per-query and per-kind tables. Every figure is
        over the queries both runs scored (a query only one run has is listed and warned
        about: a distribution over different queries would measure the queries, not the
        scores).

    Raises
    ------
    ValueError
        A run with several systems and no ``system``; bad ``bins``/``quantile``.

    Examples
    --------
    >>> from retrieval_eval import load_demo
    >>> demo = load_demo()
    >>> same = score_shift(demo.runs, demo.runs, system="dense", judgments=demo.judgments)
    >>> same.value("psi"), same.value("ks")
    (0.0, 0.0)
    """
    _check_options(quantile, n_resamples, bins)
    g = as_guarantee(guarantee)
    (tb, name_b), (ta, name_a) = _both_top1(run_before, run_after, system, judgments, queries, negatives, threshold)
    both, only_b, only_a, warnings = _shared(tb, ta)
    x, y = (both[c].to_numpy(np.float64) for c in ("score_before", "score_after"))
    index, bin_table = psi(x, y, bins)
    is_pos = (both["kind"] == "positive").to_numpy()
    cuts = _cutoffs(x[is_pos], y[is_pos], float(quantile), g, int(n_resamples), seed, cutoff, warnings)
    old = float(cutoff) if cutoff is not None else cuts[0]
    top1, decisions, flips = _under_cutoff(both, x, y, old)
    boot_label = f"paired percentile bootstrap 95% ({int(n_resamples)} resamples, seed {seed})"
    summary = _shift_summary(x, y, index, int(is_pos.sum()), cuts, flips, boot_label)
    settings = _settings(name_b, name_a, quantile, g, cutoff, old, threshold, bins, n_resamples, seed)
    return ScoreShift(summary, top1, decisions, bin_table, warnings, settings, only_b, only_a)


def _shift_summary(
    x: np.ndarray,
    y: np.ndarray,
    index: float,
    n_pos: int,
    cuts: tuple[float, float, tuple[float, float]],
    flips: tuple[float, int, tuple[float, float]],
    boot_label: str,
) -> pd.DataFrame:
    """The summary of :func:`score_shift`: the KS test of the shared queries' top-1 scores
    ``x`` (before) and ``y`` (after), the PSI ``index``, both cutoffs and their shift, and the
    flip share."""
    ks, ks_p, ks_method = ks_2samp(x, y)
    c_before, c_after, shift_ci = cuts
    nan = (math.nan, math.nan)
    return _summary(
        [
            ("ks", ks, len(x), nan, ""),
            ("ks_pvalue", ks_p, len(x), nan, ks_method),
            ("psi", index, len(x), nan, ""),
            ("cutoff_before", c_before, n_pos, nan, ""),
            ("cutoff_after", c_after, n_pos, nan, ""),
            ("cutoff_shift", c_after - c_before, n_pos, shift_ci, boot_label),
            ("flip_share", *flips, "wilson 95%"),
        ]
    )


def _under_cutoff(
    both: pd.DataFrame, x: np.ndarray, y: np.ndarray, old: float
) -> tuple[pd.DataFrame, pd.DataFrame, tuple[float, int, tuple[float, float]]]:
    """Each shared query's decision under the ``old`` cutoff before and after: the per-query
    table, the per-kind decisions and the flip share (NaN figures without an old cutoff)."""
    acc_b, acc_a, has_old = x >= old, y >= old, math.isfinite(old)
    flipped = acc_b != acc_a
    top1 = _shift_top1(both, x, y, acc_b, acc_a, flipped, has_old)
    decisions = _decisions(top1["kind"].to_numpy(dtype=object), acc_b, acc_a, flipped, has_old)
    return top1, decisions, _flip_share(flipped, has_old)


def _settings(name_b, name_a, quantile, g, cutoff, old, threshold, bins, n_resamples, seed) -> dict[str, Any]:
    """The last step of :func:`score_shift`: what it was asked for, as JSON-able settings."""
    return {
        "before": name_b,
        "after": name_a,
        "quantile": float(quantile),
        "guarantee": None if g is None else {"alpha": g.alpha, "delta": g.delta},
        "cutoff": None if cutoff is None else float(cutoff),
        "old_cutoff": old,
        "threshold": int(threshold),
        "bins": int(bins),
        "n_resamples": int(n_resamples),
        "seed": seed if isinstance(seed, (int, np.integer)) or seed is None else repr(seed),
    }


def _both_top1(run_before, run_after, system, judgments, queries, negatives, threshold):
    """Step one of :func:`score_shift`: each run's system picked and its top-1 rows, with the
    system's name: ``((top1_before, name), (top1_after, name))``."""
    sb, sa = system if isinstance(system, tuple) else (system, system)
    rb, name_b = _pick(as_run(run_before), sb, "before")
    ra, name_a = _pick(as_run(run_after), sa, "after")
    j = as_judgments([] if judgments is None else judgments)
    return (_top1(rb, j, queries, negatives, threshold), name_b), (_top1(ra, j, queries, negatives, threshold), name_a)


def _check_options(quantile, n_resamples, bins) -> None:
    """Refuse a quantile outside [0, 1], fewer than one resample, or bins outside 2..MAX_BINS."""
    if not 0.0 <= float(quantile) <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be >= 1")
    if not 2 <= int(bins) <= MAX_BINS:
        raise ValueError(f"bins must be between 2 and {MAX_BINS}, got {bins}")


def _shared(tb: pd.DataFrame, ta: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str], list[str]]:
    """The queries both runs scored (``score_before``, ``score_after``), those only one run
    scored, and the warnings they call for."""
    both = tb.merge(ta[["query_id", "score"]], on="query_id", how="inner", suffixes=("_before", "_after"), sort=False)
    only_b = [str(q) for q in tb["query_id"][~tb["query_id"].isin(ta["query_id"])]]
    only_a = [str(q) for q in ta["query_id"][~ta["query_id"].isin(tb["query_id"])]]
    warnings: list[str] = []
    if only_b or only_a:
        warnings.append(
            f"{len(only_b)} queries scored only before and {len(only_a)} only after "
            "are left out: every figure is over the queries both runs scored"
        )
    if len(both) < MIN_QUERIES:
        warnings.append(
            f"only {len(both)} queries scored by both runs (fewer than "
            f"{MIN_QUERIES}): every shift figure is indeterminate"
        )
    return both, only_b, only_a, warnings


def _flip_share(flipped: np.ndarray, has_old: bool) -> tuple[float, int, tuple[float, float]]:
    """``(share, n, (low, high))``: the queries whose decision flipped, with a Wilson interval;
    NaN without an old cutoff or without queries."""
    n = len(flipped)
    if not (has_old and n):
        return math.nan, n, (math.nan, math.nan)
    n_flip = int(flipped.sum())
    return n_flip / n, n, wilson_interval(n_flip, n)


def _summary(records: list[tuple]) -> pd.DataFrame:
    """One row per ``(measure, value, n, (ci_low, ci_high), interval)`` record."""
    return pd.DataFrame(
        {
            "measure": pd.array([r[0] for r in records], dtype=ID),
            "value": np.array([r[1] for r in records], dtype=np.float64),
            "n": np.array([r[2] for r in records], dtype=np.int64),
            "ci_low": np.array([r[3][0] for r in records], dtype=np.float64),
            "ci_high": np.array([r[3][1] for r in records], dtype=np.float64),
            "interval": pd.array([r[4] for r in records], dtype=ID),
        }
    ).set_index("measure")


def _shift_top1(
    both: pd.DataFrame,
    x: np.ndarray,
    y: np.ndarray,
    acc_b: np.ndarray,
    acc_a: np.ndarray,
    flipped: np.ndarray,
    has_old: bool,
) -> pd.DataFrame:
    """One row per shared query: kind, stratum, both top-1 scores and both decisions."""
    accepted_b = pd.array(np.where(has_old, acc_b, None), dtype="boolean")  # type: ignore[call-overload]
    accepted_a = pd.array(np.where(has_old, acc_a, None), dtype="boolean")  # type: ignore[call-overload]
    top1 = pd.DataFrame(
        {
            "query_id": both["query_id"].astype(ID).to_numpy(),
            "kind": both["kind"].astype(ID).to_numpy(),
            "stratum": both["stratum"].astype(ID).to_numpy(),
            "top1_before": x,
            "top1_after": y,
            "accepted_before": accepted_b,
            "accepted_after": accepted_a,
            "flipped": pd.array(np.where(has_old, flipped, None), dtype="boolean"),  # type: ignore[call-overload]
        }
    )
    for c in ("query_id", "kind", "stratum"):
        top1[c] = top1[c].astype(ID)
    return top1


def _cutoffs(
    pos_b: np.ndarray, pos_a: np.ndarray, quantile: float, g, n_resamples: int, seed, cutoff, warnings: list[str]
) -> tuple[float, float, tuple[float, float]]:
    """The cutoff calibrated on each run's positives and the paired bootstrap interval of
    their difference; NaN (and a warning) without positives."""
    rule = _cutoff_rule(quantile, g)
    nan = (math.nan, math.nan)
    if pos_b.size:
        c_before, c_after = float(rule(pos_b[None, :])[0]), float(rule(pos_a[None, :])[0])
        boot = bootstrap_ci(
            lambda b, a: rule(a) - rule(b), pos_b, pos_a, paired=True, n_resamples=n_resamples, seed=seed
        )
        shift_ci = (float(boot.ci_low), float(boot.ci_high))
        if not math.isfinite(c_before):
            warnings.append(
                f"{pos_b.size} positives are too few for a retention guarantee at alpha = {g.alpha:g}: no cutoff"
            )
    else:
        c_before = c_after = math.nan
        shift_ci = nan
        warnings.append(
            "no positives (judged queries with a relevant label) among the shared "
            "queries: no cutoff is calibrated" + ("" if cutoff is not None else "; pass cutoff= to count flips")
        )
    return c_before, c_after, shift_ci


def _decisions(
    kinds: np.ndarray, acc_b: np.ndarray, acc_a: np.ndarray, flipped: np.ndarray, has_old: bool
) -> pd.DataFrame:
    """Per kind: accepted before and after the change, newly refused and accepted, flips."""
    dec = []
    for kind in ("positive", "negative", "no_positives", "unjudged"):  # four kinds, vectorized
        m = kinds == kind
        if not m.any():
            continue
        n = int(m.sum())
        dec.append(
            {
                "kind": kind,
                "n": n,
                "accepted_before": int(acc_b[m].sum()) if has_old else -1,
                "accepted_after": int(acc_a[m].sum()) if has_old else -1,
                "newly_refused": int((acc_b[m] & ~acc_a[m]).sum()) if has_old else -1,
                "newly_accepted": int((~acc_b[m] & acc_a[m]).sum()) if has_old else -1,
                "flip_share": float(flipped[m].mean()) if has_old else math.nan,
            }
        )
    decisions = pd.DataFrame.from_records(
        dec, columns=["kind", "n", "accepted_before", "accepted_after", "newly_refused", "newly_accepted", "flip_share"]
    )
    decisions["kind"] = decisions["kind"].astype(ID)
    for c in ("n", "accepted_before", "accepted_after", "newly_refused", "newly_accepted"):
        decisions[c] = decisions[c].astype("Int64").mask(decisions[c] < 0)
    return decisions
