"""trec_eval's gain maps on ``G``, ``ndcg_rel`` and ``Rndcg`` (``-m G.1=3``, ``ndcg_rel.1=3,2=9``,
``Rndcg.0=1,1=3``): values, names and refusals.

Oracles. pytrec_eval (trec_eval 9.0.8) aborts on a gain map in a measure name, so:

* **pytrec_eval on mapped qrels**, where replacing each grade by its gain is exactly the same
  measure per trec_eval's C code. That holds for ``G`` and ``ndcg_rel`` whenever every gain is
  >= 0: both read only the gains (``m_G.c``, ``m_ndcg_rel.c`` never look at ``-l``; ndcg_rel's
  "relevant" is gain > 0), and a mapped grade stays a judged one. It does not hold for a
  negative gain: in the mapped qrels a negative grade is "unjudged" (``RELVALUE_UNJUDGED``),
  gain 0, where trec_eval adds the negative gain where that document is retrieved. ``Rndcg``
  also returns 0 for a query with no relevant label, judged on the **grade** with ``-l``
  (``res_rels.num_rel``): substitutable only where the map keeps every grade on its side of
  the level (grade >= l exactly when gain >= l).
* **Hand-computed cases**, with the arithmetic in comments, for the rest: a map that reorders
  the ideal ranking, a grade mapped to 0, a grade not in the map, a negative grade in the
  qrels, a negative gain, an empty ranking, no relevant document, Rndcg's level.
* **A line-by-line transcription of trec_eval's C code** (``gain_init.c``'s ``setup_gains`` /
  ``get_gain``, and the loops of ``m_G.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``) for generated
  data with the maps that cannot be substituted; the transcription itself is first checked
  against pytrec_eval where they meet (no map; substitutable maps).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")
trec = importlib.import_module("tests.engine.test_measures_trec")
cat = importlib.import_module("retrieval_eval.engine.measures")

FAMILIES = ("G", "ndcg_rel", "Rndcg")


# ------------------------------------------------------------------ trec_eval's C, transcribed


def trec_order(rows, qid):
    """The query's ranking in trec_eval's order (score, then doc id, both descending)."""
    return [d for s, d in sorted(((float(s), d) for q, d, s in rows if q == qid), reverse=True)]


def setup_gains(table, qrels):
    """gain_init.c's setup_gains: [rel_level, gain, num_at_level], sorted by gain ascending."""
    levels = [g for g in qrels.values() if g >= 0]
    num_rel_levels = max(levels) + 1 if levels else 0
    gains = [[k, float(v), 0] for k, v in table.items()]
    for i in range(num_rel_levels):
        count = sum(1 for g in levels if g == i)
        for entry in gains:
            if entry[0] == i:
                entry[2] = count
                break
        else:
            gains.append([i, float(i), count])
    return sorted(gains, key=lambda e: e[1])  # integer gains: comp_rel_gain is exact


def get_gain(rel, gains):
    for level, gain, _ in gains:
        if level == rel:
            return gain
    return 0.0


def div(a, b):
    with np.errstate(all="ignore"):
        return float(np.float64(a) / np.float64(b))


def c_measures(table, qrels, ranking, level):
    """G, ndcg_rel and Rndcg of one query, as m_G.c, m_ndcg_rel.c and m_Rndcg.c compute them."""
    rels = [qrels[d] if d in qrels and qrels[d] >= 0 else (-2 if d in qrels else -1) for d in ranking]
    num_ret, num_rel = len(rels), sum(1 for g in qrels.values() if g >= level)
    gains = setup_gains(table, qrels)

    def walker():
        """The ideal walk shared by the three: yields the ideal gain at each step."""
        state = {"cur": len(gains) - 1, "n": 0}

        def step():
            state["n"] += 1
            while state["cur"] >= 0 and state["n"] > gains[state["cur"]][2]:
                state["n"] = 1
                state["cur"] -= 1
            return gains[state["cur"]][1] if state["cur"] >= 0 else 0.0

        return step, (gains[-1][1] if gains else 0.0)

    # m_G.c
    step, ideal_gain = walker()
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    i = 0
    while i < num_ret and ideal_gain > 0.0:
        results_gain = get_gain(rels[i], gains)
        sum_results += results_gain
        ideal_gain = step()
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
        sum_cost += ideal_gain if ideal_gain >= 1.0 else 1.0
        if results_gain != 0:
            results_g += results_gain / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < num_ret:
        results_gain = get_gain(rels[i], gains)
        sum_results += results_gain
        sum_cost += 1.0
        if results_gain != 0:
            results_g += results_gain / math.log2(2 + sum_cost - sum_results)
        i += 1
    while ideal_gain > 0.0:
        ideal_gain = step()
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
    g_value = results_g / sum_ideal if sum_ideal > 0.0 else 0.0

    # m_ndcg_rel.c
    step, ideal_gain = walker()
    results_dcg = ideal_dcg = total = 0.0
    num_rel_ret = n_rel = 0
    i = 0
    while i < num_ret and ideal_gain > 0.0:
        results_gain = get_gain(rels[i], gains)
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        ideal_gain = step()
        if ideal_gain > 0.0:
            n_rel += 1
            ideal_dcg += ideal_gain / math.log2(i + 2)
        if results_gain > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while i < num_ret:
        results_gain = get_gain(rels[i], gains)
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        if results_gain > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while ideal_gain > 0.0:
        ideal_gain = step()
        if ideal_gain > 0.0:
            n_rel += 1
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    total += (n_rel - num_rel_ret) * div(results_dcg, ideal_dcg)  # NaN when 0 / 0
    ndcg_rel = total / n_rel if total > 0.0 else 0.0

    # m_Rndcg.c
    if num_rel == 0:
        return {"G": g_value, "ndcg_rel": ndcg_rel, "Rndcg": 0.0}
    step, ideal_gain = walker()
    old = ideal_gain
    results_dcg = ideal_dcg = total = 0.0
    changed = 0

    def at_boundary():
        """m_Rndcg.c's "at boundary for changed ideal gain": the nDCG so far, for the mean."""
        nonlocal old, total, changed
        if old != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changed += 1
            old = ideal_gain

    i = 0
    while i < num_ret and ideal_gain > 0.0:
        results_gain = get_gain(rels[i], gains)
        ideal_gain = step()
        at_boundary()
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    if i < num_ret:
        while i < num_ret:
            results_gain = get_gain(rels[i], gains)
            if results_gain != 0:
                results_dcg += results_gain / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changed += 1
    while ideal_gain > 0.0:
        ideal_gain = step()
        at_boundary()
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    return {"G": g_value, "ndcg_rel": ndcg_rel, "Rndcg": div(total, changed)}


def transcribed(qrels_rows, rows, table, level=1):
    """{query: {family: value}} by the transcription, for the queries trec_eval evaluates."""
    out = {}
    for qid in dict.fromkeys(q for q, _, _ in qrels_rows):
        ranking = trec_order(rows, qid)
        if not ranking:
            continue  # trec_eval evaluates the queries the run answers
        qrels = {d: g for q, d, g in qrels_rows if q == qid}
        out[qid] = c_measures(table, qrels, ranking, level)
    return out


# ------------------------------------------------------------------------------ data


def generated(seed, grades=(0, 0, 1, 2, 3)):
    """Graded qrels (0..3 by default) and a run with tied scores, 25 queries."""
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(25):
        pool = [f"d{i}" for i in rng.choice(90, size=45, replace=False)]
        qrels += [(f"q{q}", d, int(rng.choice(grades))) for d in pool[: int(rng.integers(1, 30))]]
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 40))]
        rows += [(f"q{q}", d, s) for d, s in zip(docs, np.round(rng.random(len(docs)) * 4) / 4)]
    return qrels, rows


def datasets():
    yield trec.EDGE_QRELS, trec.EDGE_RUN  # ties, negative grades, no relevant label, ...
    for seed in range(4):
        yield generated(seed)
    yield generated(9, grades=(-1, 0, 0, 1, 2, 3))  # negative grades: in the pool, unjudged


def ours(qrels, rows, names, level=1):
    return cat.compute(trec.judgments(qrels), trec.run(rows), names, level=level).set_index("query_id")


def spec(table):
    return ",".join(f"{k}={v}" for k, v in table.items())


# ------------------------------------------------- pytrec_eval, where substitution is exact

#: (map, levels) where replacing grades by gains is the same measure for all three families:
#: every gain >= 0, and for each level listed a grade is >= the level exactly when its gain is
#: (Rndcg's num_rel). {1:3,2:9} reorders nothing but spreads the gains; {1:5,2:4} swaps grades 1
#: and 2 in the ideal (grade 3 keeps 3); {3:1} makes grade 3 tie with grade 1 (one block);
#: {2:7,3:2} at level 2 keeps 2, 3 relevant and 1 not.
SUBSTITUTABLE = [
    ({1: 3, 2: 9}, (1,)),
    ({1: 5, 2: 4}, (1,)),
    ({3: 1}, (1,)),
    ({2: 7, 3: 2}, (1, 2)),
    ({0: 0, 1: 1, 2: 2, 3: 3}, (1, 2, 3)),
]
#: G and ndcg_rel never read the level, so any map with gains >= 0 is substitutable for them:
#: a grade mapped to 0 ({2: 0}), grade 0 given a gain ({0: 1}).
SUBSTITUTABLE_G_NDCG_REL = [{2: 0, 3: 20}, {0: 1, 3: 1}, {1: 0}, {0: 2, 1: 0, 2: 0, 3: 0}]


def check_against_mapped_qrels(table, families, level):
    for qrels, rows in datasets():
        mapped = [(q, d, table.get(g, g) if g >= 0 else g) for q, d, g in qrels]
        want = trec.oracle(mapped, rows, list(families), level)
        names = [f"{f}.{spec(table)}" for f in families]
        got = ours(qrels, rows, names, level)
        assert set(got.index) == set(want)
        for f, name in zip(families, names):
            col = cat.parse_measure(name)[0].name
            for q, values in want.items():
                assert got.loc[q, col] == pytest.approx(values[f], abs=1e-9), (f, table, level, q)


@pytest.mark.parametrize("table, levels", SUBSTITUTABLE)
def test_gain_maps_match_pytrec_eval_on_the_mapped_qrels(table, levels):
    for level in levels:
        check_against_mapped_qrels(table, FAMILIES, level)


@pytest.mark.parametrize("table", SUBSTITUTABLE_G_NDCG_REL)
@pytest.mark.parametrize("level", [1, 2])
def test_g_and_ndcg_rel_match_pytrec_eval_on_the_mapped_qrels_whatever_the_level(table, level):
    check_against_mapped_qrels(table, ("G", "ndcg_rel"), level)


def test_the_transcription_of_trec_evals_code_agrees_with_pytrec_eval():
    # The oracle of the next test, checked where pytrec_eval can speak: no map, and a map on
    # the qrels it replaces (all three families, levels 1 and 2).
    for qrels, rows in datasets():
        for table, level in [({}, 1), ({}, 2), ({1: 5, 2: 4}, 1), ({2: 0, 3: 20}, 1)]:
            mapped = [(q, d, table.get(g, g) if g >= 0 else g) for q, d, g in qrels]
            want = trec.oracle(mapped, rows, list(FAMILIES), level)
            got = transcribed(qrels, rows, table, level)
            if table == {2: 0, 3: 20}:  # G and ndcg_rel only (the map crosses level 1 for Rndcg)
                want = {q: {f: v[f] for f in ("G", "ndcg_rel")} for q, v in want.items()}
            for q, values in want.items():
                for f, v in values.items():
                    if f in FAMILIES:
                        assert got[q][f] == pytest.approx(v, abs=1e-9), (table, level, q, f)


# ----------------------------------------- trec_eval's code, where substitution is not exact

#: Maps whose mapped qrels would mean something else: negative gains (a negative grade reads as
#: unjudged), maps that move a grade across the level (Rndcg's num_rel reads the grade), and
#: maps that give every relevant grade a gain <= 0 (Rndcg's 0 / 0).
NOT_SUBSTITUTABLE = [
    {1: -1},
    {1: 4, 2: -3, 3: 1},
    {0: -1, 3: -2},
    {1: 0},
    {0: 1},
    {0: 3, 1: 0},
    {1: 0, 2: 0, 3: 0},
    {1: -2, 2: -2, 3: -2},
    {2: 1, 3: 0, 7: 50},
]


@pytest.mark.parametrize("table", NOT_SUBSTITUTABLE)
@pytest.mark.parametrize("level", [1, 2])
def test_gain_maps_match_trec_evals_code_on_generated_data(table, level):
    names = [f"{f}.{spec(table)}" for f in FAMILIES]
    cols = [cat.parse_measure(n)[0].name for n in names]
    for qrels, rows in datasets():
        want = transcribed(qrels, rows, table, level)
        got = ours(qrels, rows, names, level)
        assert set(got.index) == set(want)
        for f, col in zip(FAMILIES, cols):
            for q, values in want.items():
                if math.isnan(values[f]):
                    assert math.isnan(got.loc[q, col]), (f, table, level, q)
                else:
                    assert got.loc[q, col] == pytest.approx(values[f], abs=1e-9), (f, table, level, q)


# ---------------------------------------------------------------------- by hand

LOG3 = math.log2(3)


def one(qrels, ranking, name, level=1):
    """One query's value of ``name``: ``ranking`` is the run's doc ids, best first."""
    rows = [("q", d, float(len(ranking) - i)) for i, d in enumerate(ranking)]
    got = ours(qrels, rows, [name], level)
    return got.loc["q", cat.parse_measure(name)[0].name]


def test_a_map_that_reorders_the_ideal_ranking():
    # Grades a=2, b=1, c=1; G.1=10 makes grade 1 the best: gains a=2, b=10, c=10, ideal
    # b, c, a (10, 10, 2). Ranking a, b.
    qrels = [("q", "a", 2), ("q", "b", 1), ("q", "c", 1)]
    # ndcg_rel: DCG a = 2, a+b = 2 + 10/log2 3; ideal DCG@1 = 10, @2 = 10 + 10/log2 3;
    # average over L = 3 positive-gain documents: a (2/10), b ((2 + 10/log2 3)/(10 + 10/log2 3)),
    # c not retrieved: the final DCG over the full ideal (10 + 10/log2 3 + 2/2).
    final = 2 + 10 / LOG3
    idcg = 10 + 10 / LOG3 + 2 / 2
    want = (2 / 10 + final / (10 + 10 / LOG3) + final / idcg) / 3
    assert one(qrels, ["a", "b"], "ndcg_rel.1=10") == pytest.approx(want, abs=1e-12)
    # Without the map the ideal is a, b, c (2, 1, 1): a alone is ideal at rank 1.
    plain = (1 + (2 + 1 / LOG3) / (2 + 1 / LOG3) + (2 + 1 / LOG3) / (2 + 1 / LOG3 + 1 / 2)) / 3
    assert one(qrels, ["a", "b"], "ndcg_rel") == pytest.approx(plain, abs=1e-12)
    # Rndcg: the ideal gains 10, 10, 2 change after rank 2 (10 -> 2) and after rank 3 (2 -> 0):
    # nDCG@2 = (2 + 10/log2 3) / (10 + 10/log2 3), nDCG@3 = the same DCG / idcg; no rank left.
    want = ((2 + 10 / LOG3) / (10 + 10 / LOG3) + (2 + 10 / LOG3) / idcg) / 2
    assert one(qrels, ["a", "b"], "Rndcg.1=10") == pytest.approx(want, abs=1e-12)
    # G: cost = sum of max(ideal gain, 1): rank 1 10, rank 2 20; gain so far 2, then 12.
    # a: 2 / log2(2 + 10 - 2), b: 10 / log2(2 + 20 - 12); over the ideal total 22.
    want = (2 / math.log2(10) + 10 / math.log2(10)) / 22
    assert one(qrels, ["a", "b"], "G.1=10") == pytest.approx(want, abs=1e-12)


def test_a_grade_mapped_to_zero_leaves_the_ideal_and_gains_nothing():
    # a=2, b=1, c=1 with 1=0: only a has a positive gain (2); the ideal is [a].
    qrels = [("q", "a", 2), ("q", "b", 1), ("q", "c", 1)]
    # Ranking b, a: G: b gains 0 (no term); a at rank 2: cost 2 + 1 = 3, gain so far 2:
    # 2 / log2(2 + 3 - 2), over the ideal total 2.
    assert one(qrels, ["b", "a"], "G.1=0") == pytest.approx(1 / LOG3, abs=1e-12)
    # ndcg_rel: L = 1 (b and c are not "relevant" any more); a at rank 2 past the ideal list:
    # (2/log2 3) / 2.
    assert one(qrels, ["b", "a"], "ndcg_rel.1=0") == pytest.approx(1 / LOG3, abs=1e-12)
    # Rndcg (level 1: b and c are still relevant by grade): the ideal 2 drops to 0 after rank
    # 1: nDCG@1 = 0 / 2; the ranking runs 1 rank past it, not 2: no final point. Rndcg = 0.
    assert one(qrels, ["b", "a"], "Rndcg.1=0") == 0.0
    # Ranking b, x, a (3 documents, 2 past the ideal list): the final nDCG counts too:
    # (0 + (2/log2 4)/2) / 2 = 0.25.
    assert one(qrels, ["b", "x", "a"], "Rndcg.1=0") == pytest.approx(0.25, abs=1e-12)


def test_a_grade_not_in_the_map_gains_itself():
    # a=3, b=1 with 1=5: a keeps gain 3, b gains 5; ideal b, a (5, 3). Ranking a, b.
    qrels = [("q", "a", 3), ("q", "b", 1)]
    # G: cost 5 then 8; gain so far 3 then 8: 3/log2(2 + 5 - 3) + 5/log2(2 + 8 - 8), over 8.
    assert one(qrels, ["a", "b"], "G.1=5") == pytest.approx((3 / 2 + 5 / 1) / 8, abs=1e-12)
    # ndcg_rel: a: 3 / 5; b: (3 + 5/log2 3) / (5 + 3/log2 3); over L = 2.
    want = (3 / 5 + (3 + 5 / LOG3) / (5 + 3 / LOG3)) / 2
    assert one(qrels, ["a", "b"], "ndcg_rel.1=5") == pytest.approx(want, abs=1e-12)


def test_a_negative_grade_in_the_qrels_gains_nothing_whatever_the_map():
    # c is in the pool but unjudged (grade -1): get_gain(RELVALUE_UNJUDGED) is 0, and it is not
    # in the ideal. a=1 with 1=4. Ranking c, a.
    qrels = [("q", "a", 1), ("q", "c", -1)]
    # G: a at rank 2: cost 4 + 1 = 5, gain so far 4: 4 / log2(2 + 5 - 4) over 4.
    assert one(qrels, ["c", "a"], "G.1=4") == pytest.approx(1 / LOG3, abs=1e-12)
    assert one(qrels, ["c", "a"], "G.0=9,1=4") == pytest.approx(1 / LOG3, abs=1e-12)
    # ndcg_rel / Rndcg: nDCG at a's rank = (4/log2 3) / 4 (the ideal list has one document);
    # Rndcg: one boundary, after rank 1: nDCG@1 = 0; the ranking is 1 past it: no final point.
    assert one(qrels, ["c", "a"], "ndcg_rel.1=4") == pytest.approx(1 / LOG3, abs=1e-12)
    assert one(qrels, ["c", "a"], "Rndcg.1=4") == 0.0


def test_a_negative_gain_counts_where_retrieved_and_never_in_the_ideal():
    # a=2, b=1 with 1=-1: ideal [a] (gain 2). Ranking b, a.
    qrels = [("q", "a", 2), ("q", "b", 1)]
    # G: b: cost 2, gain so far -1: -1 / log2(2 + 2 + 1) = -1/log2 5; a: cost 3, gain so far 1:
    # 2 / log2(2 + 3 - 1) = 1; over 2.
    want = (-1 / math.log2(5) + 1) / 2
    assert one(qrels, ["b", "a"], "G.1=-1") == pytest.approx(want, abs=1e-12)
    # ndcg_rel: L = 1; a at rank 2: DCG -1 + 2/log2 3, over the ideal 2.
    want = (-1 + 2 / LOG3) / 2
    assert one(qrels, ["b", "a"], "ndcg_rel.1=-1") == pytest.approx(want, abs=1e-12)
    # Ranking b alone: a is not retrieved: (1 - 0) * DCG / ideal = -1/2 < 0: trec_eval keeps 0.
    assert one(qrels, ["b"], "ndcg_rel.1=-1") == 0.0
    # Rndcg: one boundary after rank 1: DCG@1 = -1 over 2.
    assert one(qrels, ["b", "a"], "Rndcg.1=-1") == pytest.approx(-0.5, abs=1e-12)


def test_an_empty_ranking_scores_zero():
    # -c: a judged query the run does not answer is an empty ranking. G: no term, ideal 3 > 0:
    # 0. ndcg_rel: sum = L * 0 / ideal = 0: 0. Rndcg: boundaries with DCG 0: 0.
    j = trec.judgments([("q", "a", 1), ("q", "b", 2), ("p", "a", 1)])
    r = trec.run([("p", "a", 1.0)])
    names = [f"{f}.1=3" for f in FAMILIES]
    got = cat.compute(j, r, names, complete=True).set_index("query_id").drop(columns="system")
    assert got.loc["q"].tolist() == [0.0, 0.0, 0.0]


def test_no_relevant_document():
    # Every grade 0 and no map: no positive gain: G 0 (ideal total 0), ndcg_rel 0, Rndcg 0
    # (num_rel 0: it returns first).
    qrels = [("q", "a", 0), ("q", "b", 0)]
    for f in FAMILIES:
        assert one(qrels, ["a", "b"], f"{f}.1=3") == 0.0
    # 0=2: grade 0 gains 2, so there is a positive gain; still no relevant label for Rndcg.
    # G: a: cost 2, gain 2: 2/log2(2); b: cost 4, gain 4: 2/log2(2); over 4: 1.
    assert one(qrels, ["a", "b"], "G.0=2") == 1.0
    assert one(qrels, ["a", "b"], "ndcg_rel.0=2") == 1.0
    assert one(qrels, ["a", "b"], "Rndcg.0=2") == 0.0


def test_rndcg_with_relevant_labels_but_no_positive_gain_is_nan_as_trec_evals_0_over_0():
    # a=1 relevant (level 1), mapped to 0: no boundary with a positive ideal DCG, so m_Rndcg.c
    # divides sum 0 by 0 points. Its mean over queries is NaN too (trec_eval's sum / num_q).
    qrels = [("q", "a", 1), ("q", "b", 0), ("p", "a", 2)]
    rows = [("q", "a", 1.0), ("p", "a", 1.0)]
    got = ours(qrels, rows, ["Rndcg.1=0"])
    assert math.isnan(got.loc["q", "Rndcg(gains={1:0})"])
    assert got.loc["p", "Rndcg(gains={1:0})"] == 1.0
    assert math.isnan(
        cat.summarize(cat.compute(trec.judgments(qrels), trec.run(rows), ["Rndcg.1=0"]))["Rndcg(gains={1:0})"].iloc[0]
    )


def test_rndcg_reads_the_level_on_the_grade_not_on_the_gain():
    # a=1, b=2 with 1=5. Level 2: b is relevant (num_rel 1). Ideal a, b (5, 2). Ranking b.
    # Boundaries after rank 1 (5 -> 2): DCG@1 = 2 over 5; after rank 2 (2 -> 0): DCG 2 over
    # 5 + 2/log2 3. Mean of the two.
    qrels = [("q", "a", 1), ("q", "b", 2)]
    want = (2 / 5 + 2 / (5 + 2 / LOG3)) / 2
    assert one(qrels, ["b"], "Rndcg.1=5", level=2) == pytest.approx(want, abs=1e-12)
    # Level 3: no grade >= 3, though a gains 5: 0.
    assert one(qrels, ["b"], "Rndcg.1=5", level=3) == 0.0
    # G and ndcg_rel do not read the level.
    for f in ("G", "ndcg_rel"):
        assert one(qrels, ["b"], f"{f}.1=5", level=3) == one(qrels, ["b"], f"{f}.1=5", level=1)


# ------------------------------------------------------------------ names and refusals


@pytest.mark.parametrize(
    "typed, name",
    [
        ("G.1=3", "G(gains={1:3})"),
        ("ndcg_rel.1=3,2=9", "ndcg_rel(gains={1:3,2:9})"),
        ("Rndcg.0=1,1=3", "Rndcg(gains={0:1,1:3})"),
        ("Rndcg.1=3,0=1", "Rndcg(gains={0:1,1:3})"),
        ("G.1=-2", "G(gains={1:-2})"),
        ("G(gains={2:9,1:3})", "G(gains={1:3,2:9})"),
        ("Rndcg(rel=2,gains={1:3})", "Rndcg(rel=2,gains={1:3})"),
        ("ndcg.1=3,2=9", "ndcg(gains={1:3,2:9})"),
    ],
)
def test_a_gain_map_is_named_like_ndcgs_and_the_name_parses_back(typed, name):
    [m] = cat.parse_measure(typed)
    assert m.name == name and repr(m) == f"Measure({name!r})"
    assert cat.parse_measure(name) == [m]
    assert cat.parse_measures([typed, name]) == [m]  # one column


def test_a_gain_map_is_a_value_of_the_family():
    m = cat.parse_measure("ndcg_rel.2=9,1=3")[0]
    assert (m.family, m.param, m.rel) == ("ndcg_rel", ((1, 3), (2, 9)), None)
    assert cat.parse_measure("G")[0].param is None


def test_the_registry_lists_the_families_and_says_they_take_a_gain_map():
    table = cat.measures().set_index("name")
    for f in ("ndcg", *FAMILIES):
        assert "gains: grade=gain" in table.loc[f, "parameter"], f
        assert "gain map" in table.loc[f, "definition"], f
    assert {m.family for m in cat.parse_measure("G")} == {"G"}


@pytest.mark.parametrize(
    "typed, why",
    [
        ("G.1=3.5.1", "a number gain"),
        ("ndcg_rel.1=x", "a number gain"),
        ("Rndcg.-1=3", "grade >= 0"),
        ("G.1=3,1=4", "given two gains"),
        ("ndcg.1=3,1=5", "given two gains"),
        ("G.1=3,", "''"),
        ("ndcg.1=-3", "numbers >= 0"),
        ("P(gains={1:3})@5", "nDCG only"),
        ("G(gains={1:3})@10", "G@10"),
    ],
)
def test_a_gain_map_trec_eval_would_read_unreliably_is_refused_in_one_line(typed, why):
    with pytest.raises(ValueError) as err:
        cat.parse_measure(typed)
    assert why in str(err.value) and "\n" not in str(err.value)


def test_evaluate_takes_gain_maps_through_the_one_parser():
    import retrieval_eval as re_

    qrels, rows = generated(3)
    j, r = trec.judgments(qrels), trec.run(rows)
    names = ["G.1=3", "ndcg_rel(gains={1:3,2:9})", "Rndcg.1=3,2=9"]
    ev = re_.evaluate(j, r, k=10, measures=names)
    want = cat.compute(j, r, names, complete=True, order="rank").set_index("query_id")
    pq = ev.per_query.set_index("query_id")
    assert [ev.catalogue[n] for n in names] == ["G(gains={1:3})", "ndcg_rel(gains={1:3,2:9})", "Rndcg(gains={1:3,2:9})"]
    for asked in names:  # each column under the name asked for, the catalogue's canonical values
        col = ev.catalogue[asked]
        np.testing.assert_allclose(pq[asked].to_numpy(), want.loc[pq.index, col].to_numpy(), atol=1e-12)
        assert ev.summary[asked].iloc[0] == pytest.approx(pq[asked].mean(), abs=1e-12)
