"""How far can synthetic labels be trusted? Agreement between labelers of the same (query, key).

Labels written by a model (``labeled_by: "synthetic:..."``) are cheap; whether they can stand
in for human ones is a measurement, not an assumption. :func:`label_agreement` takes judgments
where the same (query, key) is labeled by two or more labelers (the ``labeled_by`` column
names them) and reports:

* **Cohen's kappa** on the grades (unweighted: any disagreement counts fully), **weighted
  kappa** (``linear`` or ``quadratic``: a 3 against a 2 costs less than a 3 against a 0), and
  **binary kappa** on relevant / not relevant at ``threshold``, the reading every metric
  uses and the one :func:`retrieval_eval.validate` warns on. Chance agreement comes from each
  labeler's own grade distribution (Cohen 1960, 1968).
* **Krippendorff's alpha** over every labeler (two or more; a unit labeled by one labeler only
  is left out): ``1 - D_o / D_e`` from the coincidence matrix, with the ``nominal``,
  ``ordinal`` or ``interval`` difference (Krippendorff 2011, "Computing Krippendorff's
  alpha-reliability").
* the **confusion matrix** of the two labelers compared;
* **per-stratum** kappa with a seeded percentile bootstrap interval over units;
* the **effect on the headline metrics**: with a ``run``, the mean metrics on the queries both
  labelers covered, scored once with each labeler's labels only (the metric engine's
  :func:`retrieval_eval.metrics.compute`), and the difference.

Kappa and alpha are computed with numpy (:mod:`retrieval_eval.analysis.stats.agreement`);
the tests check them against scikit-learn's ``cohen_kappa_score`` and the ``krippendorff``
package. Reading (Landis & Koch 1977): kappa
above 0.6 is "substantial" agreement, above 0.8 "almost perfect"; :data:`MIN_KAPPA` = 0.6 is
the floor below which ``validate`` warns that gating on these labels is not safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...engine.metrics import aggregate, compute, judgment_keys, metric_columns
from ...io import as_judgments, as_run
from ...model import ID, UNSTRATIFIED
from ..handoff import viz
from ..jsonable import jsonable, measurement
from ..stats.agreement import cohen_kappa, confusion_counts, kappa_from_confusion, krippendorff_alpha

__all__ = [
    "AGREEMENT_GATE_MEASURES",
    "MIN_KAPPA",
    "LabelAgreement",
    "cohen_kappa",
    "krippendorff_alpha",
    "agreement_warning",
    "label_agreement",
    "overlapping_labels",
]

#: Binary kappa below this makes ``validate`` warn (Landis & Koch's "substantial" starts at 0.61).
MIN_KAPPA = 0.6
#: Fewer shared units than this make agreement figures indeterminate (no gate may pass on them).
MIN_UNITS = 20
WEIGHTS = (None, "linear", "quadratic")
#: Measures ``label-agreement:<measure>:<floor>`` gates can read, from ``measurements()``.
AGREEMENT_GATE_MEASURES = ("kappa", "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha")


# --------------------------------------------------------------------------------------------
# Units.


def _labeler_of(j: pd.DataFrame) -> pd.Series:
    if "labeled_by" not in j.columns:
        return pd.Series(pd.array(["unknown"] * len(j), dtype=ID), index=j.index)
    return j["labeled_by"].astype(ID).fillna("unknown")


def overlapping_labels(judgments, labelers=None) -> pd.DataFrame:
    """The labels as a (query_id, key) x labeler table of grades, for units labeled twice+.

    A labeler who labeled the same unit twice counts with its last label, as the metric engine
    counts a repeated key.

    Parameters
    ----------
    judgments : DataFrame, list of dicts or path
        Labels with ``labeled_by``.
    labelers : list of str, optional
        The labelers to compare (default: every ``labeled_by`` value present, in order of
        appearance).

    Returns
    -------
    DataFrame
        One row per (query_id, key) labeled by at least two of ``labelers``, with ``stratum``
        (the unit's query's first label's) and one float column per labeler (NaN where it did
        not label the unit).

    Raises
    ------
    ValueError
        A labeler named in ``labelers`` wrote no label.

    Examples
    --------
    >>> j = [{"query_id": "q", "doc_uri": "d", "relevance": 2, "labeled_by": "human:a"},
    ...      {"query_id": "q", "doc_uri": "d", "relevance": 1, "labeled_by": "synthetic:b"}]
    >>> overlapping_labels(j)[["human:a", "synthetic:b"]].to_numpy().tolist()
    [[2.0, 1.0]]
    """
    j = as_judgments(judgments)
    who = _labeler_of(j)
    names = list(dict.fromkeys(who.tolist())) if labelers is None else list(labelers)
    missing = [n for n in names if n not in set(who.tolist())]
    if missing:
        raise ValueError(
            f"no labels by {', '.join(map(repr, missing))}; labelers present: {', '.join(dict.fromkeys(who.tolist()))}"
        )
    frame = pd.DataFrame(
        {
            "query_id": j["query_id"].astype(ID),
            "key": judgment_keys(j),
            "labeler": who,
            "relevance": j["relevance"].astype(np.float64),
            "stratum": j["stratum"].astype(ID).fillna(UNSTRATIFIED),
        }
    )
    frame = frame[frame["labeler"].isin(names)]
    strata = frame.drop_duplicates("query_id")[["query_id", "stratum"]]
    wide = frame.drop_duplicates(["query_id", "key", "labeler"], keep="last").pivot(
        index=["query_id", "key"], columns="labeler", values="relevance"
    )
    wide = wide.reindex(columns=names)
    wide = wide[wide.notna().sum(axis=1) >= 2].reset_index()
    wide.columns.name = None
    wide = wide.merge(strata, on="query_id", how="left")
    for c in ("query_id", "key", "stratum"):
        wide[c] = wide[c].astype(ID)
    return wide[["query_id", "key", "stratum", *names]]


# --------------------------------------------------------------------------------------------
# The result.


@dataclass
class LabelAgreement:
    """The result of :func:`label_agreement`.

    * ``summary``: one row per measure (``kappa``, ``kappa_linear``, ``kappa_quadratic``,
      ``kappa_binary``, ``alpha``) with ``value``, ``n`` (units), ``ci_low``/``ci_high``
      (seeded percentile bootstrap over units) and ``interval``.
    * ``confusion``: counts, rows the first labeler's grades, columns the second's.
    * ``per_stratum``: per stratum, ``n`` units, binary kappa with its interval, share of
      units with the same grade.
    * ``metrics``: with a run, per (system, metric) the mean over the shared queries scored
      with each labeler's labels only (``labels_first``, ``labels_second``; ``n_first``,
      ``n_second`` the queries each set gives a relevant label, the others having nothing to
      find), and the difference (second - first); else None.
    * ``units``: the overlapping units (:func:`overlapping_labels`).
    """

    summary: pd.DataFrame
    confusion: pd.DataFrame
    per_stratum: pd.DataFrame
    metrics: pd.DataFrame | None
    units: pd.DataFrame
    labelers: list[str]
    warnings: list[str]
    settings: dict[str, Any]

    def value(self, name: str = "kappa_binary") -> float:
        """One measure's value."""
        return float(self.summary.loc[name, "value"])  # type: ignore[arg-type]

    def measurements(self) -> dict[str, dict[str, Any]]:
        """Gate-readable measures: name -> ``{"value", "n", ["ci"], ["indeterminate"]}``."""
        n = len(self.units)
        why = f"only {n} units labeled by both labelers (fewer than {MIN_UNITS})" if n < MIN_UNITS else None
        out: dict[str, dict[str, Any]] = {}
        for name, row in self.summary.iterrows():  # five measures
            m = measurement(row, why)
            if m is not None:
                out[str(name)] = m
        return out

    def to_frame(self) -> pd.DataFrame:
        """The summary table (a copy)."""
        return self.summary.copy()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: ``{"label_agreement": measurements(), "labelers", "confusion", ...}``."""
        return jsonable(
            {
                "label_agreement": self.measurements(),
                "labelers": self.labelers,
                "confusion": {str(r): {str(c): int(v) for c, v in row.items()} for r, row in self.confusion.iterrows()},
                "per_stratum": self.per_stratum.to_dict(orient="records"),
                "metrics": None if self.metrics is None else self.metrics.to_dict(orient="records"),
                "warnings": list(self.warnings),
                "settings": self.settings,
            }
        )

    def plot(self, ax=None, short_names: tuple[str, str] | None = None, **kwargs):
        """The confusion matrix as a heatmap
        (:class:`retrieval_eval.plotting_shift.AgreementDisplay`); ``short_names`` label the
        axes instead of the long ``labeled_by`` values. Returns the display."""
        AgreementDisplay = viz("AgreementDisplay")

        return AgreementDisplay.from_agreement(self, short_names).plot(ax=ax, **kwargs)

    def _repr_html_(self) -> str:
        box, esc, table, warnings_html = viz("box", "esc", "table", "warnings_html")

        a, b = self.labelers[:2]
        body = (
            f"<div>{esc(a)} vs {esc(b)}: {len(self.units)} shared units</div>"
            + table(self.summary, max_rows=10)
            + table(self.confusion, floatfmt="{:.0f}")
            + table(self.per_stratum.set_index("stratum"))
            + ("" if self.metrics is None else table(self.metrics.set_index(["system", "metric"]), max_rows=30))
            + warnings_html(self.warnings)
        )
        return box("Label agreement", body)

    def __repr__(self) -> str:
        return (
            f"LabelAgreement({self.labelers[0]!r} vs {self.labelers[1]!r}, "
            f"{len(self.units)} units, warnings={len(self.warnings)})\n"
            + self.summary[["value", "n", "ci_low", "ci_high"]].to_string()
        )


def _bootstrap_kappas(a: np.ndarray, b: np.ndarray, values: np.ndarray, n_resamples: int, seed) -> np.ndarray:
    """(n_resamples, 4) kappas (plain, linear, quadratic, binary) over resampled units."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(n_resamples, a.size))
    ca, cb = np.searchsorted(values, a)[idx], np.searchsorted(values, b)[idx]
    c = confusion_counts(ca, cb, values.size)
    out = [kappa_from_confusion(c, values, w) for w in WEIGHTS]
    return np.stack(out, axis=1)


def label_agreement(
    judgments,
    other=None,
    *,
    labelers=None,
    run=None,
    k: int = 10,
    threshold: int = 1,
    level: str = "ordinal",
    n_resamples: int = 1000,
    seed=0,
) -> LabelAgreement:
    """Agreement between labelers of the same (query, key), and what it does to the metrics.

    Parameters
    ----------
    judgments : judgments frame, list of dicts or path
        Labels, with ``labeled_by`` naming who wrote each (``human:...``, ``synthetic:...``).
    other : judgments, optional
        A second label set, concatenated with the first (e.g. the synthetic labels of a
        subset of the queries).
    labelers : list of str, optional
        The ``labeled_by`` values to compare; kappa, the confusion matrix and the metric
        effect use the first two, alpha all of them. Default: every labeler, in order of
        appearance (``judgments`` first).
    run : run, optional
        With a run, each labeler's labels score it on the queries both labelers covered.
    k, threshold : the metrics' cutoff and the grade that counts as relevant.
    level : Krippendorff's alpha difference: ``"ordinal"`` (grades, default), ``"interval"``
        or ``"nominal"``.
    n_resamples, seed : seeded percentile bootstrap over units for the intervals.

    Returns
    -------
    LabelAgreement

    Raises
    ------
    ValueError
        Fewer than two labelers, or no unit labeled by two of them.

    Examples
    --------
    >>> from retrieval_eval import label_agreement, load_demo
    >>> demo = load_demo()
    >>> agreement = label_agreement(demo.judgments, demo.judgments_lexical)
    >>> round(agreement.value("kappa_binary"), 2) < 0.6  # a lexical labeler is no reader
    True
    """
    j, names = _labels_and_labelers(judgments, other, labelers)
    units = overlapping_labels(j, names)
    first, second = names[0], names[1]
    pair, warnings = _pair(units, first, second)
    a = pair[first].to_numpy(np.float64)
    b = pair[second].to_numpy(np.float64)
    values = np.unique(np.r_[a, b, units[names].to_numpy(np.float64).ravel()])
    values = values[np.isfinite(values)]
    summary = _summary(a, b, values, units[names].to_numpy(np.float64).T, threshold, level, int(n_resamples), seed)
    kappa_bin = float(summary.loc["kappa_binary", "value"])  # type: ignore[arg-type]
    confusion = _confusion_frame(a, b, values, first, second)
    per_stratum = _per_stratum(pair, first, second, threshold, int(n_resamples), seed)
    metrics = None
    if run is not None:
        metrics = _metric_effect(j, run, first, second, k, threshold)
    settings = _settings(names, k, threshold, level, n_resamples, seed)
    if math.isfinite(kappa_bin) and kappa_bin < MIN_KAPPA:
        warnings.append(
            f"binary kappa {kappa_bin:.3f} between {first!r} and {second!r} is below "
            f"{MIN_KAPPA} (Landis & Koch's 'substantial'): do not gate on one set "
            "as a stand-in for the other"
        )
    return LabelAgreement(
        summary, confusion, per_stratum, metrics, pair.reset_index(drop=True), names, warnings, settings
    )


def _labels_and_labelers(judgments, other, labelers) -> tuple[pd.DataFrame, list[str]]:
    """The labels (``other`` appended to ``judgments``) and the labelers to compare: those
    given, else every ``labeled_by`` in order of appearance; fewer than two is an error."""
    j = as_judgments(judgments)
    if other is not None:
        j = pd.concat([j, as_judgments(other)], ignore_index=True)
    names = list(dict.fromkeys(_labeler_of(j).tolist())) if labelers is None else list(labelers)
    if len(names) < 2:
        raise ValueError(
            f"label agreement needs two labelers; the labels name only "
            f"{', '.join(map(repr, names)) or 'none'} in labeled_by"
        )
    return j, names


def _pair(units: pd.DataFrame, first: str, second: str) -> tuple[pd.DataFrame, list[str]]:
    """The units both ``first`` and ``second`` labeled (none is an error), and the warning
    that starts the result's list when they are fewer than :data:`MIN_UNITS`."""
    pair = units[units[first].notna() & units[second].notna()]
    if pair.empty:
        raise ValueError(f"no (query, key) is labeled by both {first!r} and {second!r}")
    warnings: list[str] = []
    if len(pair) < MIN_UNITS:
        warnings.append(
            f"only {len(pair)} units labeled by both (fewer than {MIN_UNITS}): agreement figures are indeterminate"
        )
    return pair, warnings


def _settings(names: list[str], k: int, threshold: int, level: str, n_resamples: int, seed) -> dict[str, Any]:
    """What :func:`label_agreement` was asked for, as JSON-able settings."""
    return {
        "labelers": names,
        "k": int(k),
        "threshold": int(threshold),
        "level": level,
        "n_resamples": int(n_resamples),
        "seed": seed if isinstance(seed, (int, np.integer)) or seed is None else repr(seed),
        "min_kappa": MIN_KAPPA,
    }


def _confusion_frame(a: np.ndarray, b: np.ndarray, values: np.ndarray, first: str, second: str) -> pd.DataFrame:
    """Counts of each (grade by ``first``, grade by ``second``) pair, every grade a row and a
    column."""
    grades = [int(v) if float(v).is_integer() else v for v in values]
    conf = confusion_counts(np.searchsorted(values, a)[None, :], np.searchsorted(values, b)[None, :], values.size)[
        0
    ].astype(np.int64)
    return pd.DataFrame(conf, index=pd.Index(grades, name=first), columns=pd.Index(grades, name=second))


def _summary(
    a: np.ndarray,
    b: np.ndarray,
    values: np.ndarray,
    matrix: np.ndarray,
    threshold: int,
    level: str,
    n_resamples: int,
    seed,
) -> pd.DataFrame:
    """One row per measure: kappas of the first two labelers' grades ``a``, ``b`` with their
    bootstrap intervals over units, and alpha over every labeler (``matrix``)."""
    ba, bb = (a >= threshold).astype(np.float64), (b >= threshold).astype(np.float64)
    bin_values = np.array([0.0, 1.0])
    kappas = [cohen_kappa(a, b, w, labels=values) for w in WEIGHTS]
    kappa_bin = cohen_kappa(ba, bb, labels=bin_values)
    alpha = krippendorff_alpha(matrix, level)
    boot = _bootstrap_kappas(a, b, values, n_resamples, seed)
    rng_bin = _bootstrap_kappas(ba, bb, bin_values, n_resamples, seed)[:, 0]
    with np.errstate(invalid="ignore"):
        ci = np.nanpercentile(np.c_[boot, rng_bin], [2.5, 97.5], axis=0)
    label = f"percentile bootstrap 95% over units ({n_resamples} resamples, seed {seed})"
    n_units = a.size
    summary = pd.DataFrame(
        {
            "measure": pd.array(["kappa", "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha"], dtype=ID),
            "value": np.array([*kappas, kappa_bin, alpha], dtype=np.float64),
            "n": np.array([n_units] * 4 + [matrix.shape[1]], dtype=np.int64),
            "ci_low": np.r_[ci[0], np.nan],
            "ci_high": np.r_[ci[1], np.nan],
            "interval": pd.array([label] * 4 + [""], dtype=ID),
        }
    ).set_index("measure")
    return summary


def _per_stratum(pair: pd.DataFrame, first: str, second: str, threshold: int, n_resamples: int, seed) -> pd.DataFrame:
    """Per stratum: binary kappa with a bootstrap interval, and raw agreement."""
    bin_values = np.array([0.0, 1.0])
    rows = []
    for name, g in pair.groupby("stratum", sort=True):  # a handful of strata
        x = (g[first].to_numpy(np.float64) >= threshold).astype(np.float64)
        y = (g[second].to_numpy(np.float64) >= threshold).astype(np.float64)
        bk = _bootstrap_kappas(x, y, bin_values, n_resamples, seed)[:, 0]
        with np.errstate(invalid="ignore"):
            lo, hi = np.nanpercentile(bk, [2.5, 97.5]) if np.isfinite(bk).any() else (math.nan, math.nan)
        rows.append(
            {
                "stratum": str(name),
                "n": len(g),
                "kappa_binary": cohen_kappa(x, y, labels=bin_values),
                "ci_low": float(lo),
                "ci_high": float(hi),
                "same_grade": float(np.mean(g[first].to_numpy() == g[second].to_numpy())),
                "same_relevance": float(np.mean(x == y)),
            }
        )
    per_stratum = pd.DataFrame.from_records(
        rows, columns=["stratum", "n", "kappa_binary", "ci_low", "ci_high", "same_grade", "same_relevance"]
    )
    per_stratum["stratum"] = per_stratum["stratum"].astype(ID)
    per_stratum["n"] = per_stratum["n"].astype(np.int64)
    return per_stratum


def _metric_effect(j: pd.DataFrame, run, first: str, second: str, k: int, threshold: int) -> pd.DataFrame:
    """Mean metrics on the queries both labelers labeled, once per labeler's labels."""
    r = as_run(run)
    who = _labeler_of(j)
    qa = set(j.loc[(who == first).to_numpy(), "query_id"].astype(str))
    qb = set(j.loc[(who == second).to_numpy(), "query_id"].astype(str))
    shared = pd.Index(sorted(qa & qb), dtype=ID)
    means = []
    for name in (first, second):  # two labelers, one engine call each
        mine = j[(who == name).to_numpy() & j["query_id"].astype(ID).isin(shared).to_numpy()]
        per_query = compute(mine, r[r["query_id"].astype(ID).isin(shared)], k=(int(k),), threshold=threshold)
        means.append(aggregate(per_query))
    cols = metric_columns(means[0])
    out = []
    for system in means[0].index:  # a few systems
        for c in cols:
            va = float(means[0].loc[system, c])
            has_b = system in means[1].index
            vb = float(means[1].loc[system, c]) if has_b else math.nan
            out.append(
                {
                    "system": str(system),
                    "metric": c,
                    "n_first": int(means[0].loc[system, "n"]),
                    "n_second": int(means[1].loc[system, "n"]) if has_b else 0,
                    "labels_first": va,
                    "labels_second": vb,
                    "difference": vb - va,
                }
            )
    frame = pd.DataFrame.from_records(
        out, columns=["system", "metric", "n_first", "n_second", "labels_first", "labels_second", "difference"]
    )
    frame["system"] = frame["system"].astype(ID)
    frame["metric"] = frame["metric"].astype(ID)
    for c in ("n_first", "n_second"):
        frame[c] = frame[c].astype(np.int64)
    return frame


def agreement_warning(judgments, other=None) -> str | None:
    """``validate``'s ``low-label-agreement`` message, or None.

    Where two labelers labeled at least :data:`MIN_UNITS` of the same (query, key) pairs
    (in ``judgments``, or between ``judgments`` and ``other``), the binary kappa of the first
    two labelers is computed; below :data:`MIN_KAPPA` one label set cannot stand in for the
    other, and gating on it would certify the labeler rather than the system.

    Parameters
    ----------
    judgments : DataFrame, list of dicts or path
        Labels with ``labeled_by``.
    other : judgments, optional
        A second label set, concatenated with the first.

    Returns
    -------
    str or None

    Examples
    --------
    >>> from retrieval_eval import load_demo
    >>> demo = load_demo()
    >>> agreement_warning(demo.judgments, demo.judgments_lexical).startswith("labelers")
    True
    """
    j = as_judgments(judgments)
    if other is not None:
        j = pd.concat([j, as_judgments(other)], ignore_index=True)
    names = list(dict.fromkeys(_labeler_of(j).tolist()))
    if len(names) < 2:
        return None
    units = overlapping_labels(j, names[:2])
    if len(units) < MIN_UNITS:
        return None
    a, b = (units[n].to_numpy(np.float64) >= 1 for n in names[:2])
    kappa = cohen_kappa(a, b, labels=[False, True])
    if math.isfinite(kappa) and kappa >= MIN_KAPPA:
        return None
    return (
        f"labelers {names[0]!r} and {names[1]!r} agree on relevance with kappa "
        f"{kappa:.3f} over {len(units)} shared labels, below {MIN_KAPPA}: do not gate on "
        "one set as a stand-in for the other (label_agreement has the details)"
    )
