"""Calibration (SPEC B2): every figure against a hand-computed or independent oracle."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis.calibration import (
    KINDS,
    SUMMARY_COLUMNS,
    Calibration,
    apply_cutoff,
    calibrate,
    check_negatives,
    cutoff_sweep,
    negative_ids,
    score_rows,
)
from retrieval_eval.engine.metrics import aggregate, compute
from retrieval_eval.errors import FormatError

ID = pd.StringDtype()
Z = 1.959963984540054  # two-sided 95% normal quantile


# --------------------------------------------------------------------------------------------
# Builders: one hit per query is all a top-1 figure needs.


def top1_case(pos, neg, system="s", extra_hits=0):
    """Judgments, run and negative ids for positives/negatives with the given top-1 scores.

    Positive ``p<i>`` has its relevant doc ``dp<i>`` at rank 1 with score ``pos[i]``; negative
    ``n<i>`` ranks ``dn<i>`` first with ``neg[i]``. ``extra_hits`` adds lower hits scoring
    ``top1 - 1 - r`` below each.
    """
    judgments, rows = [], []
    for i, s in enumerate(pos):
        judgments.append({"query_id": f"p{i}", "doc_uri": f"dp{i}", "relevance": 1})
        rows.append((system, f"p{i}", 1, f"dp{i}", float(s)))
        for r in range(extra_hits):
            rows.append((system, f"p{i}", 2 + r, f"xp{i}_{r}", float(s) - 1 - r))
    for i, s in enumerate(neg):
        rows.append((system, f"n{i}", 1, f"dn{i}", float(s)))
        for r in range(extra_hits):
            rows.append((system, f"n{i}", 2 + r, f"xn{i}_{r}", float(s) - 1 - r))
    return judgments, run_frame(rows), [f"n{i}" for i in range(len(neg))]


def run_frame(rows):
    df = pd.DataFrame(rows, columns=["system", "query_id", "rank", "doc_id", "score"])
    for c in ("system", "query_id", "doc_id"):
        df[c] = df[c].astype(ID)
    df["rank"] = df["rank"].astype(np.int64)
    df["score"] = df["score"].astype(np.float64)
    return df


def cal(pos, neg, **kw):
    j, r, negs = top1_case(pos, neg)
    return calibrate(j, r, negatives=negs, **kw)


def row(c: Calibration, system="s"):
    return c.summary.loc[system]


# --------------------------------------------------------------------------------------------
# Independent oracles, written from the definitions with plain Python loops.


def oracle_auroc(pos, neg):
    total = 0.0
    for p in pos:
        for n in neg:
            total += 1.0 if p > n else 0.5 if p == n else 0.0
    return total / (len(pos) * len(neg))


def oracle_average_precision(scores, labels):
    """scikit-learn's average_precision_score written out: thresholds are the distinct scores
    in decreasing order; AP = sum_n (R_n - R_{n-1}) P_n with P_n, R_n at score >= t_n."""
    total_pos = sum(labels)
    ap, prev_recall = 0.0, 0.0
    for t in sorted(set(scores), reverse=True):
        tp = sum(1 for s, y in zip(scores, labels) if s >= t and y)
        fp = sum(1 for s, y in zip(scores, labels) if s >= t and not y)
        recall = tp / total_pos
        ap += (recall - prev_recall) * (tp / (tp + fp))
        prev_recall = recall
    return ap


def oracle_threshold95(pos):
    best = None
    for t in set(pos):
        if sum(1 for p in pos if p >= t) / len(pos) >= 0.95:
            best = t if best is None else max(best, t)
    return best


def oracle_wilson(k, n):
    p = k / n
    center = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


# --------------------------------------------------------------------------------------------
# The cutoff.


def test_cutoff_is_the_linear_quantile_of_positive_top1_by_hand():
    # q = 0.10 over 5 values: position (5 - 1) * 0.1 = 0.4 between 0.1 and 0.2 -> 0.14.
    c = cal([0.5, 0.1, 0.3, 0.2, 0.4], [0.05])
    assert row(c)["cutoff"] == pytest.approx(0.14, abs=1e-12)
    assert row(c)["quantile"] == 0.10
    # q = 0.5 over 4 values: position 1.5 -> (0.2 + 0.3) / 2.
    c = cal([0.1, 0.2, 0.3, 0.4], [0.05], quantile=0.5)
    assert row(c)["cutoff"] == pytest.approx(0.25, abs=1e-12)


def test_a_negative_exactly_at_the_cutoff_is_not_satisfied_a_positive_exactly_at_it_is_retained():
    c = cal([0.5, 0.6], [0.5, 0.4], cutoff=0.5)
    assert row(c)["negative_satisfaction"] == 0.5
    assert row(c)["positive_retention"] == 1.0
    # Same with a calibrated cutoff: q = 0 puts C on the lowest positive.
    c = cal([0.5, 0.6, 0.7], [0.5, 0.5, 0.1], quantile=0.0)
    assert row(c)["cutoff"] == 0.5
    assert row(c)["positive_retention"] == 1.0
    assert row(c)["negative_satisfaction"] == pytest.approx(1 / 3, abs=1e-12)


def test_all_negatives_above_the_cutoff_satisfy_nothing():
    c = cal([0.2, 0.3, 0.4], [0.8, 0.9])
    assert row(c)["negative_satisfaction"] == 0.0
    assert row(c)["auroc"] == 0.0
    assert row(c)["separation_margin"] == pytest.approx(0.3 - 0.85, abs=1e-12)


def test_one_positive_by_hand():
    c = cal([0.7], [0.2, 0.8])
    r = row(c)
    assert r["cutoff"] == 0.7  # the quantile of one value is that value
    assert r["positive_retention"] == 1.0
    assert r["negative_satisfaction"] == 0.5
    assert r["auroc"] == 0.5
    assert r["separation_margin"] == pytest.approx(0.7 - 0.5, abs=1e-12)
    assert r["threshold@95tpr"] == 0.7
    assert r["fpr@95tpr"] == 0.5


def test_equal_distributions_give_auroc_one_half_and_zero_margin():
    c = cal([0.1, 0.2, 0.3], [0.3, 0.1, 0.2])
    assert row(c)["auroc"] == 0.5
    assert row(c)["separation_margin"] == 0.0


def test_perfect_separation():
    c = cal([0.6, 0.7, 0.8, 0.9], [0.1, 0.2, 0.3, 0.4], quantile=0.0)
    r = row(c)
    assert r["auroc"] == 1.0 and r["aupr_in"] == 1.0 and r["aupr_out"] == 1.0
    assert r["negative_satisfaction"] == 1.0 and r["positive_retention"] == 1.0
    assert r["fpr@95tpr"] == 0.0
    assert r["separation_margin"] == pytest.approx(0.75 - 0.25, abs=1e-12)


def test_auroc_counts_ties_one_half_by_hand():
    # pairs: (0.5 vs 0.5) 1/2, (0.5 vs 0.1) 1, (0.9 vs 0.5) 1, (0.9 vs 0.1) 1 -> 3.5 / 4.
    c = cal([0.5, 0.9], [0.5, 0.1])
    assert row(c)["auroc"] == 0.875


def test_aupr_in_and_out_by_hand():
    # Descending: 0.9 P, 0.8 N, 0.7 P, 0.6 N, 0.5 P.
    # AUPR-in = 1/3 * 1 + 1/3 * 2/3 + 1/3 * 3/5 = 34/45.
    # AUPR-out ranks by -score: 0.5 P, 0.6 N (precision 1/2), 0.7 P, 0.8 N (2/4), 0.9 P
    # -> 1/2 * 1/2 + 1/2 * 1/2 = 1/2.
    c = cal([0.9, 0.7, 0.5], [0.8, 0.6])
    assert row(c)["aupr_in"] == pytest.approx(34 / 45, abs=1e-12)
    assert row(c)["aupr_out"] == pytest.approx(0.5, abs=1e-12)


def test_aupr_groups_ties_by_hand():
    # 0.9 P, then the tie group {0.5 P, 0.5 N}: 1/2 * 1 + 1/2 * 2/3 = 5/6.
    c = cal([0.5, 0.9], [0.5])
    assert row(c)["aupr_in"] == pytest.approx(5 / 6, abs=1e-12)
    # OOD class by -score: tie group {0.5 N, 0.5 P} first (1/2), then 0.9: 1 * 1/2.
    assert row(c)["aupr_out"] == pytest.approx(0.5, abs=1e-12)


def test_figures_match_the_written_out_definitions_end_to_end():
    pos = [0.25, 0.5, 0.5, 1.0, 0.75, 0.25, 1.5]
    neg = [0.5, 0.0, 0.25, 1.25, 0.5]
    check_figures(pos, neg, row(cal(pos, neg, n_resamples=5)))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=12), st.lists(st.integers(0, 6), min_size=1, max_size=12))
def test_figures_match_the_written_out_definitions(pos_i, neg_i):
    # The figure kernel calibrate uses, on many random tied cases (end to end above).
    from retrieval_eval.analysis.calibration.cutoffs import cutoff_for
    from retrieval_eval.analysis.calibration.separation import separation_figures

    pos = [x / 4 for x in pos_i]
    neg = [x / 4 for x in neg_i]
    cutoff, _ = cutoff_for("s", None, 0.1, np.array(pos))
    check_figures(pos, neg, separation_figures(np.array(pos), np.array(neg), cutoff))


def check_figures(pos, neg, r):
    assert r["auroc"] == pytest.approx(oracle_auroc(pos, neg), abs=1e-12)
    scores, labels = pos + neg, [True] * len(pos) + [False] * len(neg)
    assert r["aupr_in"] == pytest.approx(oracle_average_precision(scores, labels), abs=1e-12)
    assert r["aupr_out"] == pytest.approx(
        oracle_average_precision([-s for s in scores], [not y for y in labels]), abs=1e-12
    )
    t = oracle_threshold95(pos)
    assert r["threshold@95tpr"] == t
    assert r["fpr@95tpr"] == pytest.approx(sum(n >= t for n in neg) / len(neg), abs=1e-12)
    cutoff = float(np.quantile(pos, 0.1))
    assert r["negative_satisfaction"] == pytest.approx(sum(n < cutoff for n in neg) / len(neg), abs=1e-12)
    assert r["positive_retention"] == pytest.approx(sum(p >= cutoff for p in pos) / len(pos), abs=1e-12)
    assert r["separation_margin"] == pytest.approx(float(np.median(pos) - np.median(neg)), abs=1e-12)


def test_fpr_at_95_tpr_by_hand():
    # 20 positives 0.05 .. 1.00: keeping 95% (19) allows t up to the 19th largest, 0.10.
    pos = [i / 20 for i in range(1, 21)]
    c = cal(pos, [0.05, 0.10, 0.50])
    assert row(c)["threshold@95tpr"] == 0.10
    assert row(c)["fpr@95tpr"] == pytest.approx(2 / 3, abs=1e-12)
    # 21 positives: ceil(0.95 * 21) = 20 must stay -> the 20th largest.
    pos = [i / 21 for i in range(1, 22)]
    c = cal(pos, [0.0])
    assert row(c)["threshold@95tpr"] == 2 / 21


def test_fixed_cutoff_replaces_the_calibrated_one():
    c = cal([0.1, 0.2, 0.3, 0.4], [0.15, 0.35], cutoff=0.3)
    r = row(c)
    assert r["cutoff"] == 0.3 and math.isnan(r["quantile"])
    assert r["positive_retention"] == 0.5
    assert r["negative_satisfaction"] == 0.5
    block = c.report_block("s")
    assert block["method"] == "fixed" and block["cutoff"] == 0.3 and block["quantile"] is None
    # A mapping fixes some systems; the others are calibrated.
    j, r1, negs = top1_case([0.1, 0.2, 0.3, 0.4], [0.15], system="a")
    _, r2, _ = top1_case([0.1, 0.2, 0.3, 0.4], [0.15], system="b")
    c = calibrate(j, pd.concat([r1, r2], ignore_index=True), negatives=negs, cutoff={"a": 0.25})
    assert c.summary.loc["a", "cutoff"] == 0.25 and math.isnan(c.summary.loc["a", "quantile"])
    assert c.summary.loc["b", "cutoff"] == pytest.approx(0.13, abs=1e-12)
    assert c.report_block("b")["method"] == "quantile"


def test_summary_has_the_documented_columns_and_dtypes():
    c = cal([0.5, 0.6], [0.1])
    assert tuple(c.summary.columns) == SUMMARY_COLUMNS
    assert c.summary.index.name == "system"
    assert c.summary.index.dtype == ID
    assert c.summary["n_positive"].dtype == np.int64
    assert c.summary["rank_based"].dtype == bool


def test_top1_is_the_first_entry_of_the_deduplicated_ranking_in_rank_order():
    # Rows out of file order: rank 1 is the one with rank 1, not the first line.
    j = [{"query_id": "p0", "doc_uri": "a", "relevance": 1}]
    r = run_frame(
        [("s", "p0", 2, "b", 0.3), ("s", "p0", 1, "a", 0.9), ("s", "n0", 1, "x", 0.2), ("s", "n0", 2, "x", 0.95)]
    )
    c = calibrate(j, r, negatives=["n0"])
    t = c.top1.set_index("query_id")
    assert t.loc["p0", "top1_score"] == 0.9 and t.loc["p0", "top1_doc_id"] == "a"
    assert t.loc["n0", "top1_score"] == 0.2
    rows = score_rows(j, r, negatives=["n0"])
    assert len(rows[rows["query_id"] == "n0"]) == 1  # the repeat of x is dropped


# --------------------------------------------------------------------------------------------
# Intervals.


def test_wilson_interval_by_hand():
    pos = [0.9] * 10
    neg = [0.1] * 8 + [0.95] * 2
    c = cal(pos, neg)
    m = c.metrics("s")
    assert m["negative_satisfaction"]["value"] == 0.8
    assert m["negative_satisfaction"]["n"] == 10
    lo, hi = oracle_wilson(8, 10)
    assert m["negative_satisfaction"]["ci"] == pytest.approx([lo, hi], abs=1e-12)
    lo, hi = oracle_wilson(10, 10)
    assert m["positive_retention"]["ci"] == pytest.approx([lo, hi], abs=1e-12)
    assert m["positive_retention"]["ci"][1] == 1.0


def test_bootstrap_interval_is_seeded_and_matches_an_independent_resampling():
    rng = np.random.default_rng(7)
    pos = list(rng.normal(0.55, 0.1, 15))
    neg = list(rng.normal(0.5, 0.1, 12))
    a = cal(pos, neg, n_resamples=300, seed=3).metrics("s")
    b = cal(pos, neg, n_resamples=300, seed=3).metrics("s")
    assert a == b
    # The documented procedure: positives then negatives, each sorted by score, resampled
    # separately, one (B, n) index matrix each from default_rng(seed); percentile 2.5 / 97.5.
    g = np.random.default_rng(3)
    P, N = np.sort(pos), np.sort(neg)
    ip = g.integers(0, len(P), size=(300, len(P)))
    iN = g.integers(0, len(N), size=(300, len(N)))
    aucs = [oracle_auroc(P[ip[i]], N[iN[i]]) for i in range(300)]
    assert a["auroc"]["ci"] == pytest.approx(list(np.percentile(aucs, [2.5, 97.5])), abs=1e-12)
    g = np.random.default_rng(3)
    ip = g.integers(0, len(P), size=(300, len(P)))
    iN = g.integers(0, len(N), size=(300, len(N)))
    margins = np.median(P[ip], axis=1) - np.median(N[iN], axis=1)
    assert a["separation_margin"]["ci"] == pytest.approx(list(np.percentile(margins, [2.5, 97.5])), abs=1e-12)
    for name in ("auroc", "separation_margin"):
        lo, hi = a[name]["ci"]
        assert lo <= a[name]["value"] <= hi
        assert "300 resamples" in a[name]["interval"]
    other = cal(pos, neg, n_resamples=300, seed=4).metrics("s")
    assert other["auroc"]["ci"] != a["auroc"]["ci"]


def test_metrics_have_intervals_only_where_documented():
    c = cal([0.9 - i / 100 for i in range(12)], [0.1 + i / 100 for i in range(12)])
    m = c.metrics("s")
    assert set(m) == {
        "negative_satisfaction",
        "positive_retention",
        "auroc",
        "separation_margin",
        "aupr_in",
        "aupr_out",
        "fpr@95tpr",
    }
    for name in ("negative_satisfaction", "positive_retention", "auroc", "separation_margin"):
        assert len(m[name]["ci"]) == 2 and m[name]["deterministic"] is True
    for name in ("aupr_in", "aupr_out", "fpr@95tpr"):
        assert "ci" not in m[name]
    assert m["negative_satisfaction"]["n"] == 12 and m["positive_retention"]["n"] == 12
    assert m["auroc"]["n"] == 24
    assert all("indeterminate" not in v for v in m.values())  # 12 and 12, cosine-like


def test_fewer_than_ten_negatives_makes_every_measurement_indeterminate():
    c = cal([0.9 - i / 100 for i in range(12)], [0.1 + i / 100 for i in range(9)])
    m = c.metrics("s")
    assert m and all("only 9 negatives" in v["indeterminate"] for v in m.values())
    assert any("only 9 negatives" in w for w in c.warnings)
    c = cal([0.9 - i / 100 for i in range(3)], [0.1 + i / 100 for i in range(12)])
    assert all("only 3 positives" in v["indeterminate"] for v in c.metrics("s").values())


def test_a_figure_that_cannot_be_computed_is_absent_not_nan():
    j, r, _ = top1_case([0.5, 0.6], [])
    c = calibrate(j, r, quantile=0.0)
    m = c.metrics("s")
    assert "negative_satisfaction" not in m and "auroc" not in m
    assert m["positive_retention"]["value"] == 1.0
    assert any("no negatives" in w for w in c.warnings)
    json.dumps(c.to_dict(), allow_nan=False)


# --------------------------------------------------------------------------------------------
# Honesty: rank-based scores.


def two_rankings(n_pos=40, n_neg=40, n_docs=200, depth=20, seed=1):
    """A dense (cosine-like) system, a BM25-like one and their RRF fusion (k = 60)."""
    rng = np.random.default_rng(seed)
    judgments, rows = [], []
    for qi in range(n_pos + n_neg):
        qid, neg = f"q{qi}", qi >= n_pos
        dense = rng.normal(0.25 if neg else 0.35, 0.07, n_docs)
        bm = rng.gamma(2.0, 2.0, n_docs)
        if not neg:
            rel = rng.choice(n_docs, 2, replace=False)
            dense[rel] = rng.normal(0.72, 0.07, 2)
            bm[rel] += rng.gamma(4.0, 2.0, 2)
            judgments += [{"query_id": qid, "doc_uri": f"d{d}", "relevance": 1} for d in rel]
        od, ob = np.argsort(-dense)[:depth], np.argsort(-bm)[:depth]
        for name, order, sc in (("dense", od, dense[od]), ("bm25", ob, bm[ob])):
            rows += [(name, qid, r, f"d{d}", float(s)) for r, (d, s) in enumerate(zip(order, sc), 1)]
        fused: dict[int, float] = {}
        for order in (od, ob):
            for r, d in enumerate(order, 1):
                fused[int(d)] = fused.get(int(d), 0.0) + 1.0 / (60 + r)
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
        rows += [("rrf", qid, r, f"d{d}", s) for r, (d, s) in enumerate(ranked, 1)]
    return judgments, run_frame(rows), [f"q{i}" for i in range(n_pos, n_pos + n_neg)]


def test_an_rrf_run_of_two_real_looking_rankings_is_flagged():
    j, r, negs = two_rankings()
    c = calibrate(j, r, negatives=negs, n_resamples=50)
    assert bool(c.summary.loc["rrf", "rank_based"])
    warning = next(w for w in c.warnings if w.startswith("system 'rrf'"))
    assert "1/(60 + rank)" in warning and "cannot separate OOD queries" in warning
    for m in c.metrics("rrf").values():
        assert m["indeterminate"].startswith("scores look rank-based (")
    assert c.report_block("rrf")["rank_based"] is True
    assert warning in c.report_block("rrf")["warnings"]


def test_cosine_like_and_bm25_like_runs_are_not_flagged():
    j, r, negs = two_rankings()
    c = calibrate(j, r, negatives=negs, n_resamples=50)
    assert not c.summary.loc["dense", "rank_based"]
    assert not c.summary.loc["bm25", "rank_based"]
    assert all("indeterminate" not in m for m in c.metrics("dense").values())
    assert c.summary.loc["dense", "auroc"] > 0.95


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 0.5), st.integers(10, 60))
def test_random_continuous_scores_with_a_shift_are_never_flagged(seed, shift, n):
    # Cosine-like: top-1 ~ N(0.5 + shift, 0.1) for positives, N(0.5, 0.1) for negatives, and
    # each lower hit a random small step below the one above it.
    rng = np.random.default_rng(seed)
    top = np.r_[rng.normal(0.5 + shift, 0.1, n), rng.normal(0.5, 0.1, n)]
    steps = np.abs(rng.normal(0.0, 0.02, (2 * n, 10)))
    steps[:, 0] = 0.0
    scores = top[:, None] - np.cumsum(steps, axis=1)
    qids = [f"p{i}" for i in range(n)] + [f"n{i}" for i in range(n)]
    rows = [
        ("cos", q, rank + 1, f"{q}_{rank}", float(scores[i, rank])) for i, q in enumerate(qids) for rank in range(10)
    ]
    j = [{"query_id": f"p{i}", "doc_uri": f"p{i}_0", "relevance": 1} for i in range(n)]
    c = calibrate(j, run_frame(rows), negatives=[f"n{i}" for i in range(n)], n_resamples=5)
    assert not bool(c.summary.loc["cos", "rank_based"]), c.warnings


def test_rrf_agreeing_rankings_few_distinct_top1_values_are_flagged():
    # Two lists that mostly agree at the top: top-1 is 2/61, 1/61 + 1/62 or 2/62.
    values = [2 / 61, 1 / 61 + 1 / 62, 2 / 62]
    pos = [values[i % 3] for i in range(60)]
    neg = [values[i % 2] for i in range(20)]
    j, r, negs = top1_case(pos, neg)
    c = calibrate(j, r, negatives=negs, n_resamples=20)
    assert bool(row(c)["rank_based"])
    assert any("top-1 scores take only 3 distinct values across 80 queries" in w for w in c.warnings)


def test_a_score_that_is_a_fixed_function_of_rank_is_flagged():
    rows = []
    for q in range(12):
        kind = "p" if q < 6 else "n"
        for rank in range(1, 6):
            rows.append(("lin", f"{kind}{q}", rank, f"d{q}_{rank}", 1.0 - 0.013 * rank))
    j = [{"query_id": f"p{q}", "doc_uri": f"d{q}_1", "relevance": 1} for q in range(6)]
    c = calibrate(j, run_frame(rows), negatives=[f"n{q}" for q in range(6, 12)], n_resamples=10)
    assert bool(c.summary.loc["lin", "rank_based"])
    assert any("function of rank" in w for w in c.warnings)


# --------------------------------------------------------------------------------------------
# Negatives and missing data.


def test_a_negative_with_a_positive_label_raises_naming_it():
    j = [
        {"query_id": "p0", "doc_uri": "a", "relevance": 1},
        {"query_id": "ood7", "doc_uri": "z", "relevance": 0},
        {"query_id": "ood7", "doc_uri": "y", "relevance": 2},
    ]
    r = run_frame([("s", "p0", 1, "a", 0.9), ("s", "ood7", 1, "y", 0.3)])
    with pytest.raises(FormatError) as err:
        calibrate(j, r, negatives=["ood7"])
    assert "'ood7'" in str(err.value) and "expect_none" in str(err.value)
    assert "relevance 2 >= threshold 1 on 'y'" in str(err.value)
    # With the file's line numbers (a frame from the reader), the message points at the line.
    frame = pd.DataFrame(j).assign(line=[4, 7, 9])
    with pytest.raises(FormatError, match=r"^judgments:9: query 'ood7'"):
        calibrate(frame, r, negatives=["ood7"])
    with pytest.raises(ValueError, match="ood7"):
        score_rows(j, r, queries=[{"query_id": "ood7", "expect_none": True}])
    # Below the threshold it is fine: a grade-1 label with threshold 2 is not relevant.
    check_negatives(j[:2] + [{"query_id": "ood7", "doc_uri": "y", "relevance": 1}], ["ood7"], 2)


def test_a_missing_negative_is_reported_not_dropped():
    j, r, negs = top1_case([0.9, 0.8], [0.1])
    c = calibrate(j, r, negatives=negs + ["ghost"])
    assert c.missing_negatives == {"s": ["ghost"]}
    assert row(c)["n_negative"] == 1
    assert any("ghost" in w and "negative" in w for w in c.warnings)
    assert c.report_block("s")["missing_negatives"] == ["ghost"]
    t = c.top1.set_index("query_id")
    assert bool(t.loc["ghost", "missing"]) and t.loc["ghost", "kind"] == "negative"


def test_a_positive_missing_from_the_run_is_left_out_and_reported():
    j, r, negs = top1_case([0.9, 0.8], [0.1])
    j = j + [{"query_id": "lost", "doc_uri": "q", "relevance": 1}]
    c = calibrate(j, r, negatives=negs, quantile=0.0)
    assert c.missing_positives == {"s": ["lost"]}
    assert row(c)["n_positive"] == 2
    assert row(c)["positive_retention"] == 1.0
    assert any("lost" in w and "positive" in w for w in c.warnings)


def test_a_run_without_scores_gives_the_clear_message():
    j, r, negs = top1_case([0.9, 0.8], [0.1])
    r = r.assign(score=np.nan, system=pd.array(["x"] * len(r), dtype=ID))
    msg = "system 'x' has no scores: calibration needs the absolute relevance score of each hit (SPEC B1)"
    with pytest.raises(ValueError) as err:
        calibrate(j, r, negatives=negs)
    assert str(err.value) == msg
    with pytest.raises(ValueError, match="has no scores"):
        apply_cutoff(r, 0.5)
    with pytest.raises(ValueError, match="has no scores"):
        cutoff_sweep(j, r, negatives=negs)


def test_a_scoreless_system_next_to_a_scored_one_is_left_out_with_the_message():
    j, r, negs = top1_case([0.9, 0.8], [0.1])
    other = r.assign(score=np.nan, system=pd.array(["x"] * len(r), dtype=ID))
    c = calibrate(j, pd.concat([r, other], ignore_index=True), negatives=negs)
    assert c.systems == ["s"]
    assert any(w.startswith("system 'x' has no scores") for w in c.warnings)
    with pytest.raises(KeyError, match="has no scores"):
        c.metrics("x")


def test_negative_ids_union_in_order():
    q = [{"query_id": "a", "expect_none": True}, {"query_id": "b"}, {"query_id": "c", "expect_none": True}]
    assert negative_ids(q, ["d", "a"]) == ["a", "c", "d"]
    assert negative_ids(None, None) == []
    assert negative_ids(pd.DataFrame({"query_id": ["x"], "expect_none": [True]})) == ["x"]


# --------------------------------------------------------------------------------------------
# Rows and strata.


def test_score_rows_columns_kinds_strata_and_text():
    j = [
        {"query_id": "p", "doc_uri": "a", "relevance": 2, "stratum": "faq", "query": "how"},
        {"query_id": "p", "doc_uri": "b", "relevance": 0, "stratum": "faq"},
        {"query_id": "z", "doc_uri": "c", "relevance": 0},
    ]
    q = [
        {"query_id": "n", "query": "weather?", "stratum": "ood", "expect_none": True},
        {"query_id": "z", "stratum": "misc"},
    ]
    r = run_frame(
        [
            ("s", "p", 1, "b", 0.5),
            ("s", "p", 2, "a", 0.4),
            ("s", "p", 3, "u", 0.1),
            ("s", "n", 1, "a", 0.2),
            ("s", "z", 1, "c", 0.3),
            ("s", "w", 1, "c", 0.3),
        ]
    )
    before = r.copy()
    rows = score_rows(j, r, queries=q)
    pd.testing.assert_frame_equal(r, before)  # input untouched
    assert list(rows.columns) == [
        "system",
        "query_id",
        "rank",
        "doc_id",
        "score",
        "relevance",
        "relevant",
        "kind",
        "stratum",
        "query",
    ]
    for c in ("system", "query_id", "doc_id", "kind", "stratum", "query"):
        assert rows[c].dtype == ID
    assert rows["relevance"].dtype == np.float64 and rows["relevant"].dtype == bool
    p = rows[rows["query_id"] == "p"]
    assert p["relevance"].tolist()[:2] == [0.0, 2.0] and math.isnan(p["relevance"].iloc[2])
    assert p["relevant"].tolist() == [False, True, False]
    kinds = rows.drop_duplicates("query_id").set_index("query_id")["kind"].to_dict()
    assert kinds == {"p": "positive", "n": "negative", "z": "no_positives", "w": "unjudged"}
    assert set(kinds.values()) == set(KINDS)
    strata = rows.drop_duplicates("query_id").set_index("query_id")["stratum"].to_dict()
    assert strata == {"p": "faq", "n": "ood", "z": "misc", "w": "_unstratified"}
    texts = rows.drop_duplicates("query_id").set_index("query_id")["query"]
    assert texts["p"] == "how" and texts["n"] == "weather?" and pd.isna(texts["w"])
    # The negative's own hit on a doc judged for another query is not relevant to it.
    assert not rows.loc[rows["query_id"] == "n", "relevant"].any()


def test_per_stratum_by_hand():
    j, r, negs = top1_case([0.9, 0.8, 0.4, 0.7], [0.1, 0.85, 0.2])
    strata = {"p0": "a", "p1": "a", "p2": "b", "p3": "b", "n0": "x", "n1": "x", "n2": "y"}
    q = [{"query_id": k, "stratum": v, "expect_none": k.startswith("n")} for k, v in strata.items()]
    c = calibrate(j, r, queries=q, cutoff=0.5)
    t = c.per_stratum.set_index(["kind", "stratum"])
    assert t.loc[("negative", "x"), "n"] == 2
    assert t.loc[("negative", "x"), "share"] == 0.5  # 0.1 < 0.5, 0.85 not
    assert t.loc[("negative", "y"), "share"] == 1.0
    assert t.loc[("positive", "a"), "share"] == 1.0
    assert t.loc[("positive", "b"), "share"] == 0.5  # 0.4 dropped
    # Stratum AUROC against the whole other class: a = {0.9, 0.8} vs {0.1, 0.85, 0.2}:
    # 0.9 beats 3, 0.8 beats 2 -> 5/6.
    assert t.loc[("positive", "a"), "auroc"] == pytest.approx(5 / 6, abs=1e-12)
    # x = {0.1, 0.85} vs positives {0.9, 0.8, 0.4, 0.7}: 4 + 1 above -> 5/8.
    assert t.loc[("negative", "x"), "auroc"] == pytest.approx(5 / 8, abs=1e-12)
    assert t.loc[("negative", "x"), "figure"] == "negative_satisfaction"
    lo, hi = oracle_wilson(1, 2)
    assert t.loc[("negative", "x"), "share_ci_low"] == pytest.approx(lo, abs=1e-12)
    assert t.loc[("negative", "x"), "share_ci_high"] == pytest.approx(hi, abs=1e-12)
    assert set(c.per_stratum.columns) >= {"system", "stratum", "kind", "n"}


# --------------------------------------------------------------------------------------------
# After the cutoff.


def test_apply_cutoff_drops_exactly_the_rows_below():
    r = run_frame(
        [
            ("a", "q1", 1, "x", 0.9),
            ("a", "q1", 2, "y", 0.5),
            ("a", "q1", 3, "z", 0.49),
            ("a", "q2", 1, "x", 0.3),
            ("b", "q1", 1, "x", 5.0),
            ("b", "q1", 2, "y", 1.0),
        ]
    )
    before = r.copy()
    out = apply_cutoff(r, 0.5)
    pd.testing.assert_frame_equal(r, before)
    assert list(zip(out["system"], out["query_id"], out["doc_id"])) == [
        ("a", "q1", "x"),
        ("a", "q1", "y"),
        ("b", "q1", "x"),
        ("b", "q1", "y"),
    ]
    out = apply_cutoff(r, {"a": 0.49, "b": 2.0})
    assert list(zip(out["system"], out["doc_id"])) == [("a", "x"), ("a", "y"), ("a", "z"), ("b", "x")]
    assert "q2" not in set(out.loc[out["system"] == "a", "query_id"])  # empty query: no rows
    with pytest.raises(ValueError, match="no cutoff for system"):
        apply_cutoff(r, {"a": 0.5})


def test_apply_cutoff_with_a_calibration_uses_each_systems_cutoff():
    j, r1, negs = top1_case([0.9, 0.8], [0.1], system="a", extra_hits=1)
    c = calibrate(j, r1, negatives=negs, cutoff=0.85)
    out = apply_cutoff(r1, c)
    assert out["doc_id"].tolist() == ["dp0"]


def test_cutoff_sweep_matches_the_engine_on_the_cut_run():
    j, r, negs = two_rankings(n_pos=12, n_neg=10, n_docs=60, depth=15, seed=3)
    sweep = cutoff_sweep(j, r, negatives=negs, k=5)
    assert {
        "system",
        "cutoff",
        "negative_satisfaction",
        "positive_retention",
        "abstain_rate",
        "recall@5",
        "risk",
        "coverage",
    } <= set(sweep.columns)
    for system in ("dense", "bm25"):
        s = sweep[sweep["system"] == system].reset_index(drop=True)
        for i in (0, len(s) // 2, len(s) - 1):
            cut = float(s.loc[i, "cutoff"])
            mine = r[r["system"] == system]
            cut_run = apply_cutoff(mine, cut)
            pq = compute(pd.DataFrame(j).assign(chunk_id=pd.NA, stratum=pd.NA), cut_run, k=(5,))
            expected = float(aggregate(pq)["recall@5"].iloc[0]) if len(cut_run) else 0.0
            assert s.loc[i, "recall@5"] == pytest.approx(expected, abs=1e-12)
        # Ends: the lowest cutoff keeps everything, the highest nothing.
        assert s["coverage"].iloc[0] == 1.0 and s["coverage"].iloc[-1] == 0.0
        assert s["abstain_rate"].iloc[-1] == 1.0 and s["recall@5"].iloc[-1] == 0.0


def test_cutoff_sweep_by_hand():
    # p0: dp0 (0.9, relevant), xp0_0 (-0.1); n0: dn0 (0.5), xn0_0 (-0.5).
    j, r, negs = top1_case([0.9], [0.5], extra_hits=1)
    s = cutoff_sweep(j, r, negatives=negs, cutoffs=[0.5, 0.6, 1.0], k=1)
    assert s["negative_satisfaction"].tolist() == [0.0, 1.0, 1.0]
    assert s["positive_retention"].tolist() == [1.0, 1.0, 0.0]
    assert s["abstain_rate"].tolist() == [0.0, 0.0, 1.0]
    assert s["recall@1"].tolist() == [1.0, 1.0, 0.0]
    assert s["risk"].tolist()[:2] == [0.5, 0.0] and math.isnan(s["risk"].iloc[2])
    assert s["coverage"].tolist() == [1.0, 0.5, 0.0]


# --------------------------------------------------------------------------------------------
# Shapes for notebooks and reports.


def test_to_dict_is_json_and_html_shows_summary_then_warnings():
    j, r, negs = two_rankings(n_pos=12, n_neg=5, n_docs=60, seed=2)
    c = calibrate(j, r, negatives=negs, n_resamples=20)
    d = c.to_dict()
    json.dumps(d, allow_nan=False)
    assert [s["system"] for s in d["summary"]] == ["dense", "bm25", "rrf"]
    html = c._repr_html_()
    assert html.index("auroc") < html.index("only 5 negatives")
    assert "rrf" in html and len(html) < 20_000
    assert c.to_frame().equals(c.summary)
    block = c.report_block("dense")
    json.dumps(block, allow_nan=False)
    assert set(block) == {
        "system",
        "cutoff",
        "method",
        "quantile",
        "n_positive",
        "n_negative",
        "missing_negatives",
        "rank_based",
        "warnings",
    }


def test_cutoff_sweep_on_scores_that_do_not_follow_the_order_matches_the_engine():
    # A reranked order carrying the first stage's cosine: scores are not monotone in rank, so a
    # cutoff can remove a hit above one it keeps and pull deeper hits into the top k.
    rng = np.random.default_rng(11)
    rows, j = [], []
    for q in range(15):
        scores = rng.uniform(0.0, 1.0, 8)
        rows += [("rr", f"p{q}", r + 1, f"d{q}_{r}", float(scores[r])) for r in range(8)]
        j += [{"query_id": f"p{q}", "doc_uri": f"d{q}_{r}", "relevance": 1} for r in rng.choice(8, 3, replace=False)]
    r = run_frame(rows)
    sweep = cutoff_sweep(j, r, k=3, cutoffs=[0.0, 0.3, 0.5, 0.7, 0.95])
    jf = pd.DataFrame(j).assign(chunk_id=pd.NA, stratum=pd.NA)
    for cut, got in zip(sweep["cutoff"], sweep["recall@3"]):
        cut_run = apply_cutoff(r, cut)
        expected = float(aggregate(compute(jf, cut_run, k=(3,)))["recall@3"].iloc[0])
        assert got == pytest.approx(expected, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=9),
    st.lists(st.integers(0, 5), min_size=1, max_size=9),
    st.integers(0, 100),
)
def test_bootstrap_auroc_on_codes_equals_auroc_on_scores(pos_i, neg_i, seed):
    from retrieval_eval.analysis.calibration.separation import coded_auroc
    from retrieval_eval.analysis.stats import auroc

    pos, neg = np.array(pos_i) / 5.0, np.array(neg_i) / 5.0
    values, codes = np.unique(np.r_[pos, neg], return_inverse=True)
    g = np.random.default_rng(seed)
    ip = g.integers(0, pos.size, (40, pos.size))
    iN = g.integers(0, neg.size, (40, neg.size))
    got = coded_auroc(values.size)(codes[: pos.size][ip], codes[pos.size :][iN])
    np.testing.assert_allclose(got, auroc(pos[ip], neg[iN]), rtol=0, atol=1e-12)


def test_coarsely_rounded_cosines_over_many_queries_are_not_flagged():
    rng = np.random.default_rng(5)
    pos = np.round(rng.normal(0.7, 0.08, 1500), 2)
    neg = np.round(rng.normal(0.4, 0.08, 500), 2)
    j, r, negs = top1_case(pos, neg)
    c = calibrate(j, r, negatives=negs, n_resamples=10)
    assert not bool(row(c)["rank_based"]), c.warnings


def test_threshold_decides_who_is_a_positive():
    j = [{"query_id": "g2", "doc_uri": "a", "relevance": 2}, {"query_id": "g1", "doc_uri": "b", "relevance": 1}]
    r = run_frame(
        [("s", "g2", 1, "a", 0.9), ("s", "g1", 1, "b", 0.8), ("s", "n", 1, "c", 0.1), ("s", "u", 1, "c", 0.95)]
    )
    c = calibrate(j, r, negatives=["n"], threshold=2)
    assert row(c)["n_positive"] == 1 and row(c)["cutoff"] == 0.9
    kinds = c.top1.set_index("query_id")["kind"].to_dict()
    assert kinds == {"g2": "positive", "g1": "no_positives", "n": "negative", "u": "unjudged"}
    # Neither no_positives nor unjudged queries enter any figure.
    assert row(c)["n_negative"] == 1 and row(c)["negative_satisfaction"] == 1.0


def test_bad_settings_are_refused():
    j, r, negs = top1_case([0.9], [0.1])
    with pytest.raises(ValueError, match="quantile"):
        calibrate(j, r, negatives=negs, quantile=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        calibrate(j, r, negatives=negs, n_resamples=0)


def test_a_negative_missing_from_one_system_only_is_reported_for_that_system():
    j, ra, negs = top1_case([0.9, 0.8], [0.1, 0.2], system="a")
    _, rb, _ = top1_case([0.9, 0.8], [0.1, 0.2], system="b")
    rb = rb[rb["query_id"] != "n1"]
    c = calibrate(j, pd.concat([ra, rb], ignore_index=True), negatives=negs)
    assert c.missing_negatives == {"a": [], "b": ["n1"]}
    assert c.summary["n_negative"].tolist() == [2, 1]
    assert c.report_block("a")["missing_negatives"] == []
    assert not any("n1" in w for w in c.report_block("a")["warnings"])
    assert any("n1" in w for w in c.report_block("b")["warnings"])


def test_a_warning_about_no_system_reaches_every_report_block():
    j, r, _ = top1_case([0.9, 0.8], [])
    c = calibrate(j, r)
    assert any("no negatives" in w for w in c.report_block("s")["warnings"])


def test_normalized_rrf_is_flagged_too():
    # Some engines divide RRF by its best possible value 2/(k+1): still rank-based.
    j, r, negs = two_rankings(n_pos=15, n_neg=15, n_docs=80, seed=4)
    rrf = r[r["system"] == "rrf"].assign(score=lambda f: f["score"] / (2 / 61))
    c = calibrate(j, rrf, negatives=negs, n_resamples=10)
    assert bool(c.summary.loc["rrf", "rank_based"])
    assert any("1/(60 + rank) terms (normalized)" in w for w in c.warnings)


def test_row_order_of_the_run_does_not_matter_and_inputs_are_not_mutated():
    j, r, negs = two_rankings(n_pos=12, n_neg=12, n_docs=50, seed=9)
    before = r.copy()
    a = calibrate(j, r, negatives=negs, n_resamples=50)
    pd.testing.assert_frame_equal(r, before)
    shuffled = r.sample(frac=1.0, random_state=1).reset_index(drop=True)
    b = calibrate(j, shuffled, negatives=negs, n_resamples=50)
    # Systems are listed in first-appearance order; the numbers do not depend on row order.
    pd.testing.assert_frame_equal(a.summary, b.summary.loc[a.summary.index])
    assert a.metrics("dense") == b.metrics("dense")


def test_wire_format_inputs_go_through_the_readers():
    run = [
        {"system": "v", "query_id": "p0", "ranking": ["a", "b"], "scores": [0.9, 0.4]},
        {"system": "v", "query_id": "n0", "ranking": ["c"], "scores": [0.2]},
    ]
    judgments = [{"query_id": "p0", "doc_uri": "a", "relevance": 1}]
    queries = [{"query_id": "n0", "query": "weather in Paris", "expect_none": True}]
    c = calibrate(judgments, run, queries=queries)
    assert row(c, "v")["n_positive"] == 1 and row(c, "v")["n_negative"] == 1
    assert row(c, "v")["negative_satisfaction"] == 1.0
    assert c.top1.set_index("query_id").loc["n0", "query"] == "weather in Paris"


def test_a_ranking_whose_top_hit_has_no_score_is_left_out_and_reported():
    j, r, negs = top1_case([0.9, 0.8], [0.1, 0.2])
    r.loc[r["query_id"] == "n1", "score"] = np.nan
    c = calibrate(j, r, negatives=negs)
    assert c.missing_negatives == {"s": ["n1"]}
    assert row(c)["n_negative"] == 1


# --------------------------------------------------------------------------------------------
# Bare (label, score) pairs: calibrate_scores, what the displays' from_predictions call.


def test_calibrate_scores_figures_match_the_written_out_definitions():
    from retrieval_eval.analysis.calibration import calibrate_scores

    s = [0.9, 0.2, 0.8, 0.7, 0.6, 0.6, 0.1, 0.6, 0.65]
    y = [True, False, True, True, False, True, False, True, False]
    pos = [x for x, t in zip(s, y) if t]
    neg = [x for x, t in zip(s, y) if not t]
    c = calibrate_scores(y, s, name="m", n_resamples=50)
    assert c.systems == ["m"]
    check_figures(pos, neg, c.summary.loc["m"])
    assert row(c, "m")["n_positive"] == len(pos) and row(c, "m")["n_negative"] == len(neg)
    assert c.top1["query_id"].tolist() == [f"q{i}" for i in range(len(s))]


def test_calibrate_scores_is_calibrate_on_one_hit_rankings():
    from retrieval_eval.analysis.calibration import calibrate_scores

    y, s = [True, True, False, True, False], [0.91, 0.75, 0.3, 0.62, 0.71]
    run = pd.DataFrame(
        {
            "system": pd.array(["x"] * 5, dtype=ID),
            "query_id": pd.array([f"q{i}" for i in range(5)], dtype=ID),
            "rank": np.ones(5, dtype=np.int64),
            "doc_id": pd.array([f"d{i}" for i in range(5)], dtype=ID),
            "score": np.array(s),
        }
    )
    judgments = pd.DataFrame(
        {
            "query_id": pd.array(["q0", "q1", "q3"], dtype=ID),
            "doc_uri": pd.array(["d0", "d1", "d3"], dtype=ID),
            "relevance": np.ones(3, dtype=np.int64),
        }
    )
    for kw in ({}, {"cutoff": 0.7}, {"quantile": 0.5}):
        got = calibrate_scores(y, s, name="x", n_resamples=20, **kw)
        want = calibrate(judgments, run, negatives=["q2", "q4"], n_resamples=20, **kw)
        pd.testing.assert_frame_equal(got.summary, want.summary)
        pd.testing.assert_frame_equal(got.intervals, want.intervals)
        pd.testing.assert_frame_equal(got.top1, want.top1)
        assert got.warnings == want.warnings


def test_calibrate_scores_refuses_mismatched_or_non_finite_scores():
    from retrieval_eval.analysis.calibration import calibrate_scores

    with pytest.raises(ValueError, match="y_true has 1 values but y_score has 2"):
        calibrate_scores([True], [0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        calibrate_scores([True, False], [0.1, np.nan])
