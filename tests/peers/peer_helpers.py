"""What the peers' ported cases share: their (qrels, run) shapes turned into our frames, and
our values of a measure, per query and as the mean the peers report.

The peers hold qrels and runs as ``{query: {doc: grade or score}}`` dicts (pytrec_eval, ranx,
ir_measures' tuples) or as ordered lists of doc ids (ranx's numba arrays): ``ordered=True``
keeps a run's listed order as its ranking (the peers' own order for those), otherwise the
ranking is trec_eval's (score, then doc id, both descending).
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

import retrieval_eval as re_
from retrieval_eval.io.dicts import judgments_from_dict, run_from_dict

cat = importlib.import_module("retrieval_eval.engine.measures")


def run_frame(run: dict, ordered: bool = False) -> pd.DataFrame:
    """Our run frame of ``{query: {doc: score}}`` (or ``{query: [doc, ...]}`` when ``ordered``)."""
    if not ordered:
        return run_from_dict(run)
    rows = [(q, str(d), float(len(docs) - i), i + 1) for q, docs in run.items() for i, d in enumerate(docs)]
    df = pd.DataFrame(rows, columns=["query_id", "doc_id", "score", "rank"])
    df.insert(0, "system", "run")
    return re_.as_run(df)


def per_query(
    qrels: dict,
    run: dict,
    name: str,
    ordered: bool = False,
    complete: bool = True,
    level: int = 1,
    compat: str = "9.0.8",
    max_ret: int | None = None,
) -> pd.Series:
    """Our per-query values of the measure ``name`` (one name, one measure), indexed by query.

    ``complete``: every judged query is scored, an unanswered one as an empty ranking (what
    ranx and ir_measures do; pytrec_eval and trec_eval without ``-c`` skip it). ``compat``:
    pytrec_eval and ir_measures embed trec_eval 9.0.8. ``max_ret``: trec_eval's ``-M``.
    """
    (m,) = cat.parse_measure(name)
    got = cat.compute(
        judgments(qrels),
        run_frame(run, ordered),
        [m],
        level=level,
        complete=complete,
        order="rank" if ordered else "trec",
        compat=compat,
        max_ret=max_ret,
    )
    return got.set_index("query_id")[m.name]


def judgments(qrels: dict) -> pd.DataFrame:
    """Our judgments frame of ``{query: {doc: grade}}``, a negative grade kept as given (trec_eval
    reads -1 as "in the pool, not judged"; the dict reader clamps it to 0, the engine does not)."""
    j = judgments_from_dict({q: {str(d): max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()})
    pairs = [(q, str(d)) for q, docs in qrels.items() for d in docs]
    assert list(zip(j["query_id"], j["doc_uri"])) == pairs  # the reader keeps the dict's order
    return j.assign(relevance=np.array([g for docs in qrels.values() for g in docs.values()], dtype=np.int64))


def trec_text(text: str, kind: str) -> dict:
    """TREC qrels (``q 0 doc grade``) or run (``q Q0 doc rank score tag``) lines as a dict."""
    out: dict = {}
    for line in text.strip().splitlines():
        f = line.split()
        if not f:
            continue
        if kind == "qrels":
            out.setdefault(f[0], {})[f[2]] = int(f[3])
        else:
            out.setdefault(f[0], {})[f[2]] = float(f[4])
    return out


def mean(qrels: dict, run: dict, name: str, **kw) -> float:
    """The mean over the judged queries, as ranx's ``evaluate`` and trectools report it."""
    return float(per_query(qrels, run, name, **kw).mean())
