"""The result every evaluation path builds: :class:`Evaluation`, and the one finish that makes it.

:func:`finish_evaluation` turns the engine's per-query frame into an :class:`Evaluation`
(strata, negatives, summary, per-stratum table, catalogue measures); the in-memory
(:mod:`.evaluation`), streamed (:mod:`.streaming`) and Dask paths all end here, so they build
one and the same object. :func:`coerce` is the one place judgments and a run are checked and
converted for the analysis functions that take them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...engine import metrics as engine
from ...engine.metrics import ID, UNSTRATIFIED
from ..handoff import viz
from .heads import CarriesRun, run_of
from .strata import query_strata_from, stratum_table


def coerce(judgments, run, keep_negative: bool = False):
    """The judgments and the run as the data model's frames, checked once at a public entry.

    Judgments read as every path reads them (an empty optional field is an absent one); a
    result that carries its run (:class:`Evaluation`) gives the run it holds (:func:`run_of`).
    Inside a public call, a run read by rank with tied scores out of trec_eval's order is noted
    for the call's one warning (:mod:`.ties`).
    ``keep_negative``: a judgments frame may carry negative grades (trec_eval's "in the pool,
    not judged"), kept as they are.
    """
    from ...io import as_judgments, as_run
    from ...io.absent import judgments_meaning
    from .ties import note_tied_scores

    return judgments_meaning(as_judgments(judgments, keep_negative=keep_negative)), note_tied_scores(
        run, as_run(run_of(run))
    )


def negative_id_list(queries, negatives) -> list[str]:
    """The ``expect_none`` query ids of ``queries`` and ``negatives`` (none when neither is given)."""
    if queries is None and negatives is None:
        return []
    from ..calibration.core import negative_ids

    return list(negative_ids(queries, negatives))


class Evaluation(CarriesRun):
    """The result of :func:`evaluate`.

    * ``per_query``: one row per (system, query_id) of every judged query (see
      :func:`retrieval_eval.metrics.compute` for the columns), plus ``negative`` (the query is
      declared ``expect_none``; it never enters the positive averages). The metric cells of
      a query excluded from the averages (``no_positives`` or ``negative``; the flags stay)
      are NaN: there was nothing to find, so there is no value, and
      ``per_query.groupby("system")[metrics].mean()`` is ``summary``.
    * ``summary``: system x metric macro means over the scored queries, with ``n``.
    * ``per_stratum``: (system, stratum) x metric, with ``n``; strata scored on their own rows.
    * ``judged`` / ``judged_strata``: with ``evaluate(judged=...)``, the query-clustered
      Measurement of every LLM-judged metric per (system, metric) and per (system, stratum,
      metric) (:func:`retrieval_eval.analysis.judged.judged_summary`'s columns); None without.
    """

    judged: pd.DataFrame | None = None
    judged_strata: pd.DataFrame | None = None
    judged_scores: pd.DataFrame | None = None

    @property
    def judged_metrics(self) -> list[str]:
        """The names of the LLM-judged metrics (empty without ``judged=``)."""
        if self.judged is None:
            return []
        return [str(m) for m in pd.unique(self.judged["metric"].astype(object))]

    def __init__(
        self,
        judgments,
        run,
        per_query,
        summary,
        per_stratum,
        ks,
        threshold,
        gain,
        queries=None,
        negatives=(),
        strata=None,
        heads=None,
        heads_note=None,
        unjudged=None,
        catalogue=None,
    ):
        self.judgments = judgments
        #: ``evaluate(measures=...)``: each catalogue measure's column (the name asked for) ->
        #: its canonical catalogue name (``{"nDCG@10": "ndcg_cut_10"}``); empty without.
        self.catalogue = dict(catalogue or {})
        #: Queries of the run without any judgment, left out of every figure (nothing says
        #: what a right answer is; ranx's ``make_comparable=True`` does the same), shown in the
        #: notebook view. Empty when the run was not held (streamed, Dask).
        self.unjudged_queries = [str(q) for q in (unjudged if unjudged is not None else [])]
        self.run = run
        #: Without the run (streamed, Dask): the head of every ranking (:mod:`.heads`), what
        #: calibration and comparison read of a run; None with ``heads_note`` saying why.
        self.heads = heads
        self.heads_note = heads_note
        self._validation = None
        self.per_query = per_query
        self.summary = summary
        self.per_stratum = per_stratum
        self.ks = ks
        self.threshold = threshold
        self.gain = gain
        self.queries = queries
        self.negatives = list(negatives)
        #: The strata in first-appearance order in the judgments (then the queries file's):
        #: the tie order of the worst stratum.
        self.strata = (
            list(strata) if strata is not None else [str(s) for s in pd.unique(per_query["stratum"].astype(object))]
        )

    @property
    def counts(self) -> pd.Series:
        """Each summary column's denominator: measure -> number of queries averaged (the most
        of any system). A spec metric averages the queries with positives (``n``); a catalogue
        measure every judged query, as trec_eval does (:func:`.asked.counts`)."""
        from .asked import counts

        return counts(self.per_query, self.summary)

    @property
    def counts_differ(self) -> bool:
        """Whether some summary column averages another number of queries than ``n`` says."""
        c = self.counts
        return bool(len(c)) and bool((c != int(self.summary["n"].max() if len(self.summary) else 0)).any())

    @property
    def systems(self) -> list[str]:
        return list(self.summary.index)

    @property
    def validation(self):
        """:func:`~retrieval_eval.analysis.validation.validate` of the judgments, run once
        (a report per system reads it each time)."""
        if self._validation is None:
            from ..trust.validation import validate

            self._validation = validate(self.judgments)
        return self._validation

    @property
    def has_strata(self) -> bool:
        return bool((self.per_query["stratum"] != UNSTRATIFIED).any())

    def metric(self, name: str, k: int | None = None) -> str:
        """The column name of a metric at a cutoff (the largest one by default)."""
        return engine.metric_name(name, k or self.ks[-1], self.gain)

    def worst_stratum(self, metric: str, system: str | None = None) -> dict[str, Any] | None:
        """The lowest-scoring stratum for ``metric`` (a column name such as ``recall@10``).

        Strata with no scored query are skipped rather than treated as zero: reporting an
        empty class as the worst would fail a build over an empty set. Ties go to the stratum
        that appears first in the judgments (SPEC A3), as in the report's gates and tables.
        """
        from ..decisions.gates import worst_of

        system = self._system(system)
        if system not in set(self.per_stratum.index.get_level_values("system")):
            return None  # nothing judged: no stratum
        table = self.per_stratum.xs(system, level="system")
        table = table[table["n"] > 0]
        if metric not in table.columns or table.empty:
            return None
        values = table[metric].dropna()
        name = worst_of(dict(zip(values.index, values.to_numpy(dtype=float))), self.strata)
        if name is None:
            return None
        return {"name": name, "value": float(values[name]), "n": int(table.loc[name, "n"])}

    def _system(self, system: str | None) -> str:
        if system is None:
            if len(self.systems) != 1:
                raise ValueError(
                    f"the run has {len(self.systems)} systems ({', '.join(self.systems)}); name one with system="
                )
            return self.systems[0]
        if system not in self.systems:
            raise ValueError(f"no system {system!r} in the run; it has {', '.join(self.systems)}")
        return system

    def report(
        self, system: str | None = None, corpus=None, drift_result=None, calibration=None, queries=None, now=None
    ):
        """The spec report (SPEC A6) for one system, as a :class:`retrieval_eval.report.Report`."""
        from ..decisions.report import report_from_evaluation

        return report_from_evaluation(
            self,
            system=self._system(system),
            corpus=corpus,
            drift_result=drift_result,
            calibration=calibration,
            queries=queries if queries is not None else self.queries,
            now=now,
        )

    def scored_run(self) -> pd.DataFrame:
        """The run as :func:`calibrate` and :func:`compare` read it: the run itself when this
        evaluation held it, else the head of every ranking carried out of the blocks
        (:func:`retrieval_eval.analysis.heads.join_heads`: the same numbers)."""
        if self.run is not None:
            return self.run
        if self.heads is None:
            raise ValueError(
                "this evaluation kept neither its run nor the head of its rankings"
                + (f" ({self.heads_note})" if self.heads_note else "")
                + "; pass the run itself"
            )
        return self.heads

    def to_frame(self) -> pd.DataFrame:
        return self.per_query.copy()

    #: The frames a saved evaluation holds (None where this one has none).
    FRAMES = ("per_query", "summary", "per_stratum", "judgments", "run", "queries", "heads")

    def _meta(self) -> dict[str, Any]:
        return {
            "ks": [int(k) for k in self.ks],
            "threshold": self.threshold,
            "gain": self.gain,
            "negatives": list(self.negatives),
            "strata": list(self.strata),
            "heads_note": self.heads_note,
            "unjudged_queries": list(self.unjudged_queries),
            "catalogue": dict(self.catalogue),
        }

    def to_dict(self, run: bool = True) -> dict[str, Any]:
        """Everything this evaluation holds, JSON-safe: settings and every frame with its
        dtypes (:func:`retrieval_eval.analysis.evaluation.persist.frame_to_dict`), so that
        :meth:`from_dict` gives back an evaluation that renders, plots, compares and
        calibrates the same. ``run=False`` leaves the run out (the largest frame; a reloaded
        evaluation then cannot be calibrated or compared without it)."""
        from .persist import FORMAT_VERSION, frame_to_dict

        frames = {n: frame_to_dict(getattr(self, n)) for n in self.FRAMES if run or n != "run"}
        return {"kind": "Evaluation", "version": FORMAT_VERSION, **self._meta(), "frames": frames}

    @classmethod
    def _rebuild(cls, meta: dict[str, Any], frames: dict[str, Any]) -> Evaluation:
        ev = cls(
            frames["judgments"],
            frames.get("run"),
            frames["per_query"],
            frames["summary"],
            frames["per_stratum"],
            tuple(meta["ks"]),
            meta["threshold"],
            meta["gain"],
            queries=frames.get("queries"),
            negatives=meta["negatives"],
            strata=meta["strata"],
            heads=frames.get("heads"),
            heads_note=meta.get("heads_note"),
            unjudged=meta.get("unjudged_queries"),
            catalogue=meta.get("catalogue"),
        )
        return ev

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evaluation:
        """The evaluation :meth:`to_dict` wrote (raises ValueError for another kind of dict)."""
        from .persist import FORMAT_VERSION, frame_from_dict

        if d.get("kind") != "Evaluation" or int(d.get("version", 0)) > FORMAT_VERSION:
            raise ValueError("not a dict written by Evaluation.to_dict()")
        return cls._rebuild(d, {n: frame_from_dict(f) for n, f in d["frames"].items()})

    def to_parquet(self, path) -> None:
        """Save this evaluation to the folder ``path``: one parquet file per frame and
        ``result.json`` (settings, dtypes), each written atomically
        (:func:`retrieval_eval.analysis.evaluation.persist.write_result`); :meth:`read_parquet` reloads it."""
        from .persist import write_result

        write_result("Evaluation", self._meta(), {n: getattr(self, n) for n in self.FRAMES}, path)

    @classmethod
    def read_parquet(cls, path) -> Evaluation:
        """The evaluation :meth:`to_parquet` saved in the folder ``path``."""
        from .persist import read_result

        meta, frames = read_result(path, "Evaluation")
        return cls._rebuild(meta, frames)

    def _table(self, table: str) -> pd.DataFrame:
        tables = {"summary": self.summary, "per_stratum": self.per_stratum, "per_query": self.per_query}
        if self.judged is not None:
            tables["judged"] = self.judged
        if table not in tables:
            raise ValueError(f"table must be one of {', '.join(tables)}, got {table!r}")
        return tables[table]

    def to_markdown(self, table: str = "summary") -> str:
        """``summary`` (default), ``per_stratum``, ``per_query`` or ``judged`` as a Markdown pipe table.

        Written by :mod:`retrieval_eval.tables` (the base install: no tabulate); a metric that
        does not exist is ``n/a``, not 0.
        """
        frame_markdown = viz("frame_markdown")

        return frame_markdown(self._table(table), index=table not in ("per_query", "judged"))

    def to_latex(self, table: str = "summary", caption: str | None = None, label: str | None = None) -> str:
        """The same table as a booktabs LaTeX ``table`` (no jinja2; needs ``booktabs``)."""
        frame_latex = viz("frame_latex")

        return frame_latex(self._table(table), index=table not in ("per_query", "judged"), caption=caption, label=label)

    def plot(self, kind: str = "strata", ax=None, metric: str | None = None, **kwargs):
        """Draw this evaluation: ``"strata"``, ``"metric_at_k"`` or ``"delta"`` (two systems).

        Returns the display (:mod:`retrieval_eval.plotting`); never calls ``plt.show()``.
        """
        plot_evaluation = viz("plot_evaluation")

        return plot_evaluation(self, kind=kind, ax=ax, metric=metric, **kwargs)

    def _repr_html_(self) -> str:
        evaluation_html = viz("evaluation_html")

        if self.judged is not None:
            return evaluation_html(self) + viz("judged_html")(self.judged)
        return evaluation_html(self)

    def __repr__(self) -> str:
        return (
            f"Evaluation(systems={self.systems}, k={list(self.ks)}, "
            f"threshold={self.threshold}, gain={self.gain!r}, "
            f"queries={self.per_query['query_id'].nunique()})"
        )


def finish_evaluation(
    j,
    r,
    per_query,
    ks,
    threshold,
    gain,
    queries,
    negs,
    empty=None,
    by_stratum=None,
    measures=None,
    excluded_as_nan: bool = True,
    heads=None,
    heads_note=None,
    measure_labels=None,
    unjudged=None,
) -> Evaluation:
    """The :class:`Evaluation` of the engine's per-query frame: strata from ``queries``,
    empty rankings (``empty``, else the run's ``attrs``), negatives, summary, strata,
    the ``measures`` asked for (:mod:`.asked`; catalogue measures need the run), excluded
    queries' cells as NaN.

    Everything after the engine runs here, so the in-memory, streamed and Dask paths build
    one and the same object from one and the same per-query frame. ``r`` may be None when
    the run was never held whole (``by_stratum`` then carries the (stratum, query) frame).
    ``unjudged``: the run's queries without a judgment, as the engine found them
    (:func:`retrieval_eval.engine.metrics.compute_and_unjudged`); None when the run was not held.
    """
    _fill_strata(per_query, queries)
    _mark_answered(per_query, (r.attrs.get("empty_rankings") or []) if empty is None else empty)
    negative = per_query["query_id"].isin(negs).to_numpy()
    per_query.insert(per_query.columns.get_loc("duplicates") + 1, "negative", negative)
    scored = per_query.assign(no_positives=per_query["no_positives"] | per_query["negative"])
    summary = _summary(scored, per_query.attrs["systems"])
    asked = None
    if measures is not None:
        from ...engine.measures import attach
        from .asked import Asked, resolve

        asked = measures if isinstance(measures, Asked) else resolve(measures, gain)
        if asked.measures:
            attach(j if measure_labels is None else measure_labels, r, per_query, summary, asked.measures, threshold)
    by_strata = stratum_table(j, r, ks, threshold, gain, scored, by_stratum=by_stratum)
    if excluded_as_nan:
        excluded = scored["no_positives"].to_numpy(dtype=bool)
        if excluded.any():
            per_query.loc[excluded, engine.metric_columns(per_query)] = np.nan
    if asked is not None:  # after the NaN: a catalogue column named nDCG@10 keeps trec_eval's zeros
        per_query, summary = _name_asked(per_query, summary, asked)
    strata = engine.strata_in_order(j)
    strata += [s for s in pd.unique(per_query["stratum"].astype(object)) if s not in strata]
    return Evaluation(
        j,
        r,
        per_query,
        summary,
        by_strata,
        ks,
        threshold,
        gain,
        queries=queries,
        negatives=negs,
        strata=strata,
        heads=heads,
        heads_note=heads_note,
        unjudged=_unjudged(negs, unjudged),
        catalogue=asked.catalogue if asked is not None else None,
    )


def _fill_strata(per_query: pd.DataFrame, queries) -> None:
    """Judgments' strata win; a query without one takes the queries file's (in place)."""
    if queries is None:
        return
    extra = query_strata_from(queries)
    if len(extra):
        ids = per_query["query_id"].to_numpy(dtype=object)
        current = per_query["stratum"].to_numpy(dtype=object)
        filled = extra.reindex(ids).to_numpy(dtype=object)
        use = (current == UNSTRATIFIED) & pd.notna(filled)
        per_query["stratum"] = pd.array(np.where(use, filled, current), dtype=ID)


def _mark_answered(per_query: pd.DataFrame, empty) -> None:
    """A ranking written as [] answered nothing: it scores zero, but it is not missing (in place)."""
    if not empty:
        return
    answered = pd.MultiIndex.from_tuples([(str(s_), str(q_)) for s_, q_ in empty])
    cells = pd.MultiIndex.from_arrays([per_query["system"].astype(object), per_query["query_id"].astype(object)])
    per_query["missing"] = per_query["missing"].to_numpy() & ~cells.isin(answered)


def _summary(scored: pd.DataFrame, systems) -> pd.DataFrame:
    """The engine's macro means per system; a system with no judged query still has a row:
    n = 0 and no metric."""
    summary = engine.aggregate(scored)
    summary.index = pd.Index(summary.index, dtype=ID, name="system")
    summary = summary.reindex(pd.Index(systems, dtype=ID, name="system"))
    summary["n"] = summary["n"].fillna(0).astype(np.int64)
    return summary


def _name_asked(per_query: pd.DataFrame, summary: pd.DataFrame, asked) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The catalogue's columns under the names asked for; with ``asked.only`` (no ``k`` given),
    a summary of ``n`` and the measures asked for, nothing else."""
    from .asked import name_columns

    per_query, summary = name_columns(per_query, asked), name_columns(summary, asked)
    if asked.only:
        summary = summary[["n", *[c for c in asked.names if c in summary.columns]]]
    return per_query, summary


def _unjudged(negs, found: pd.Index | None) -> Any:
    """The run's queries without a judgment (left out, and said so), as the engine's scan found
    them (:func:`retrieval_eval.engine.metrics.compute_and_unjudged`), but for the negatives
    ``negs`` (declared to have no answer); None when the run was not held."""
    if found is None:
        return None
    return found[~found.isin([str(q) for q in negs])].to_numpy(dtype=object)
