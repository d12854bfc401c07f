"""A line-by-line Python port of trec_eval 10.0's preference code (``form_prefs_counts.c`` and the
``m_prefs_*.c`` measures), query by query with plain loops: the independent oracle of
:mod:`retrieval_eval.engine.measures.prefs` (which is vectorized and shares none of this).

Test-only. Inputs are plain tuples: preference lines ``(qid, jg, jsg, doc, level)`` and run
lines ``(qid, doc, score)``.
"""

from __future__ import annotations

from collections import defaultdict

NAMES = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)


class JG:
    def __init__(self):
        self.ful_ret = self.poss_ret = self.ful_imp = self.poss_imp = self.notoccur = 0
        self.num_rel = self.num_rel_ret = self.num_nonrel = self.num_nonrel_ret = 0
        self.ecs = []  # [(level, [ranks])] when EC
        self.pa = None
        self.rel_array = None


def _docid_ranks(lines, run, max_ret):
    judged = {d for _, _, _, d, _ in lines}
    ranked = sorted(run, key=lambda r: (-r[1], r[0]))  # comp_sim_docno of form_prefs_counts: docno ascending
    if max_ret is not None:
        ranked = ranked[:max_ret]
    ret = [d for d, _ in ranked if d in judged]
    rank = {d: i for i, d in enumerate(ret)}
    for k, d in enumerate(sorted(judged - set(ret))):
        rank[d] = len(ret) + k
    return rank, len(ret), len(judged)


def _ec(jg, lines, njr, ca):
    for level, _, r in lines:
        if not jg.ecs or jg.ecs[-1][0] != level:
            jg.ecs.append((level, []))
        jg.ecs[-1][1].append(r)
    for e1, (lv1, ranks1) in enumerate(jg.ecs):
        n_ret = sum(1 for r in ranks1 if r < njr)
        if lv1 > 0.0:
            jg.num_rel_ret += n_ret
            jg.num_rel += len(ranks1)
        else:
            jg.num_nonrel_ret += n_ret
            jg.num_nonrel += len(ranks1)
        for _lv2, ranks2 in jg.ecs[e1 + 1 :]:
            for p1 in ranks1:
                for p2 in ranks2:
                    ca[(p1, p2)] += 1
                    if p1 < p2:
                        if p2 < njr:
                            jg.ful_ret += 1
                        elif p1 < njr:
                            jg.ful_imp += 1
                        else:
                            jg.notoccur += 1
                    elif p1 < njr:
                        jg.poss_ret += 1
                    elif p2 < njr:
                        jg.poss_imp += 1
                    else:
                        jg.notoccur += 1
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp


def _pa(jg, lines, nj, njr, ca):
    pa = [[0] * nj for _ in range(nj)]
    rel = [-1.0] * nj
    for i, (level, jsg, r) in enumerate(lines):
        if (rel[r] > 0 and level == 0) or (rel[r] == 0 and level > 0):
            raise ValueError("both 0 and non-0")
        rel[r] = level
        for level2, jsg2, r2 in lines[i + 1 :]:
            if jsg2 == jsg and level2 < level:
                pa[r][r2] = 1
    for k in range(nj):  # Warshall: the closure trec_eval's repeated products reach
        for i in range(nj):
            if pa[i][k]:
                for j in range(nj):
                    if pa[k][j]:
                        pa[i][j] = 1
    for i in range(nj):
        if pa[i][i]:
            raise ValueError("inconsistent")
    jg.pa, jg.rel_array = pa, rel
    for i in range(nj):
        if rel[i] > 0:
            jg.num_rel += 1
            jg.num_rel_ret += i < njr
        elif rel[i] == 0:
            jg.num_nonrel += 1
            jg.num_nonrel_ret += i < njr
        for j in range(nj):
            if not pa[i][j]:
                continue
            ca[(i, j)] += 1
            if i < njr and j < njr:
                jg.poss_ret += 1
                jg.ful_ret += i < j
            elif i < njr:
                jg.ful_imp += 1
                jg.poss_imp += 1
            elif j < njr:
                jg.poss_imp += 1
            else:
                jg.notoccur += 1


def _recalc_ec(jg, njr, keep, ret_only):
    ful = poss = 0
    last = jg.ecs[-1][1][:keep]
    for e1 in range(len(jg.ecs)):
        for e2 in range(e1 + 1, len(jg.ecs) - 1):
            for p1 in jg.ecs[e1][1]:
                for p2 in jg.ecs[e2][1]:
                    if ret_only and (p1 >= njr or p2 >= njr):
                        continue
                    if p1 < p2 and p1 < njr:
                        ful += 1
                    else:
                        poss += 1
    for e1 in range(len(jg.ecs)):
        for p1 in jg.ecs[e1][1]:
            if ret_only and p1 >= njr:
                continue
            for p2 in last:
                if ret_only and p2 >= njr:
                    break
                if p1 < p2 and p1 < njr:
                    ful += 1
                else:
                    poss += 1
    return ful, poss + ful


def _recalc_pa(jg, nj, njr, ret_only):
    scan = njr if ret_only else nj
    seen, first = 0, scan
    for i in range(scan):
        if jg.rel_array[i] == 0.0:
            seen += 1
            if seen == jg.num_rel + 1:
                first = i
                break
    ful = poss = 0
    top = njr if ret_only else nj
    for i in range(top):
        if i >= first and jg.rel_array[i] == 0.0:
            continue
        for j in range(top):
            if j == i or (j >= first and jg.rel_array[j] == 0.0) or not jg.pa[i][j]:
                continue
            if i < njr and i < j:
                ful += 1
            else:
                poss += 1
    return ful, poss + ful


def _rnonrel(jgs, nj, njr, ret_only):
    total = 0.0
    for jg in jgs:
        r, n = (jg.num_rel_ret, jg.num_nonrel_ret) if ret_only else (jg.num_rel, jg.num_nonrel)
        if r >= n:
            if ret_only:
                ful, poss = jg.ful_ret, jg.poss_ret
            else:
                ful, poss = jg.ful_ret + jg.ful_imp, jg.poss_ret + jg.poss_imp + jg.notoccur
            ful += jg.num_rel_ret * (r - n)
            poss += jg.num_rel * (r - n)
        elif jg.pa is None:
            ful, poss = _recalc_ec(jg, njr, r, ret_only)
        else:
            ful, poss = _recalc_pa(jg, nj, njr, ret_only)
        total += ful / poss if poss else float("nan")
    return total / len(jgs) if total > 0.0 else 0.0


def _pairs(ca, nj, njr, which):
    total, num = 0.0, 0
    for i in range(nj):
        for j in range(i + 1, nj):
            c1, c2 = ca.get((i, j), 0), ca.get((j, i), 0)
            if not (c1 or c2):
                continue
            both, one = j < njr, i < njr <= j
            if (which == "ret" and not both) or (which == "imp" and not (both or one)):
                continue
            num += 1
            if both or one:
                total += c1 / (c1 + c2)
    return total / num if num else 0.0


def _query(lines, run, max_ret):
    rank, njr, nj = _docid_ranks(lines, run, max_ret)
    by_jg = defaultdict(list)
    for _, jg, jsg, d, level in lines:
        by_jg[jg].append((jsg, level, rank[d]))
    ca: dict = defaultdict(int)
    jgs = []
    for name in sorted(by_jg):
        group = sorted(by_jg[name], key=lambda t: (t[0], -t[1], t[2]))
        jg = JG()
        if len({t[0] for t in group}) > 1:
            _pa(jg, [(lv, s, r) for s, lv, r in group], nj, njr, ca)
        else:
            _ec(jg, [(lv, s, r) for s, lv, r in group], njr, ca)
        jgs.append(jg)
    out = {}
    ful_ret = sum(j.ful_ret for j in jgs)
    ful = ful_ret + sum(j.ful_imp for j in jgs)
    poss_ret = sum(j.poss_ret for j in jgs)
    poss_ri = poss_ret + sum(j.poss_imp for j in jgs)
    poss = poss_ri + sum(j.notoccur for j in jgs)
    out["prefs_num_prefs_poss"], out["prefs_num_prefs_ful"], out["prefs_num_prefs_ful_ret"] = poss, ful, ful_ret
    for suffix, f, p, fj, pj in (
        ("", ful, poss, lambda j: j.ful_ret + j.ful_imp, lambda j: j.poss_ret + j.poss_imp + j.notoccur),
        ("_ret", ful_ret, poss_ret, lambda j: j.ful_ret, lambda j: j.poss_ret),
        ("_imp", ful, poss_ri, lambda j: j.ful_ret + j.ful_imp, lambda j: j.poss_ret + j.poss_imp),
    ):
        out["prefs_simp" + suffix] = f / p if p else 0.0
        s = sum(fj(j) / pj(j) for j in jgs if pj(j))
        out["prefs_avgjg" + suffix] = s / len(jgs) if s > 0 else 0.0
    out["prefs_pair"] = _pairs(ca, nj, njr, "all")
    out["prefs_pair_ret"] = _pairs(ca, nj, njr, "ret")
    out["prefs_pair_imp"] = _pairs(ca, nj, njr, "imp")
    out["prefs_avgjg_Rnonrel"] = _rnonrel(jgs, nj, njr, False)
    out["prefs_avgjg_Rnonrel_ret"] = _rnonrel(jgs, nj, njr, True)
    return out


def c_prefs(prefs_lines, run_lines, max_ret=None):
    """``{qid: {measure: value}}`` for the queries of the preferences that the run answers."""
    runs = defaultdict(list)
    for q, d, s in run_lines:
        runs[q].append((d, s))
    by_q = defaultdict(list)
    for line in prefs_lines:
        by_q[line[0]].append(line)
    return {q: _query(by_q[q], runs[q], max_ret) for q in sorted(by_q) if q in runs}
