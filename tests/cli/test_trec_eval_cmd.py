"""``retrieval-eval trec_eval``: trec_eval's text output, checked against pytrec_eval's values
formatted the way trec_eval prints them (``%-22s\\t%s\\t%6.4f``, counts as integers)."""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pytest

from retrieval_eval.cli.app import main
from retrieval_eval.cli.trec_eval import NICKNAMES, SUMMARY_ONLY, TREC_ORDER, VERSION_NICKNAMES

pytrec_eval = pytest.importorskip("pytrec_eval")

COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(11)
    qrels, run = {}, {}
    q_lines, r_lines = [], []
    for q in range(12):
        qid = f"{q + 1:03d}" if q % 3 else f"q{q}"
        pool = [f"D{i}" for i in rng.choice(80, size=40, replace=False)]
        for d in pool[: int(rng.integers(2, 25))]:
            g = int(rng.choice([0, 0, 1, 1, 2]))
            qrels.setdefault(qid, {})[d] = g
            q_lines.append(f"{qid} 0 {d} {g}")
        if q == 5:
            continue  # judged, not retrieved
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 35))]
        scores = np.round(rng.random(len(docs)) * 3, 1)
        for i, (d, s) in enumerate(zip(docs, scores)):
            run.setdefault(qid, {})[d] = float(s)
            r_lines.append(f"{qid} Q0 {d} {i + 1} {s} sysA")
    r_lines.append("zzz Q0 D1 1 1.0 sysA")  # a run query without qrels: not evaluated
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("\n".join(q_lines) + "\n")
    rp.write_text("\n".join(r_lines) + "\n")
    return str(qp), str(rp), qrels, run


def expected_text(qrels, run, families, per_query, level=1):
    """What trec_eval prints, from pytrec_eval's per-query values."""
    values = {}
    for fam in families:
        got = pytrec_eval.RelevanceEvaluator(qrels, {fam}, relevance_level=level).evaluate(run)
        for qid, vals in got.items():
            values.setdefault(qid, {}).update(vals)
    qids = sorted(values)
    first = values[qids[0]]
    # pytrec_eval's keys for each family, in trec_eval's parameter order.
    names = {
        fam: [k for k in first if k == fam or re.fullmatch(re.escape(fam) + r"_\d+(\.\d+)?", k)] for fam in families
    }
    ordered = [n for fam in TREC_ORDER if fam in families and fam not in ("runid", "num_q") for n in names[fam]]

    def fmt(name, qid, v):
        return f"{name:<22}\t{qid}\t{int(v)}" if name in COUNTS else f"{name:<22}\t{qid}\t{v:6.4f}"

    lines = []
    if per_query:
        for qid in qids:
            lines += [fmt(n, qid, values[qid][n]) for n in ordered if n not in SUMMARY_ONLY]
    if "runid" in families:
        lines.append(f"{'runid':<22}\tall\tsysA")
    if "num_q" in families:
        lines.append(f"{'num_q':<22}\tall\t{len(qids)}")
    for n in ordered:
        col = [values[q][n] for q in qids]
        if n in COUNTS:
            v = sum(col)
        elif n.startswith("gm_"):
            v = math.exp(sum(col) / len(col))
        else:
            v = sum(col) / len(col)
        lines.append(fmt(n, "all", v))
    return "\n".join(lines) + "\n"


def test_default_output_is_trec_evals_official_set(files):
    qp, rp, qrels, run = files
    code, out, err = cli("trec_eval", "--compat", "9.0.8", qp, rp)
    assert (code, err) == (0, "")
    assert out == expected_text(qrels, run, NICKNAMES["official"], per_query=False)


def test_per_query_output_of_all_trec_matches_trec_eval_line_for_line(files):
    qp, rp, qrels, run = files
    code, out, err = cli("trec_eval", "--compat", "9.0.8", "-q", "-m", "all_trec", qp, rp)
    assert (code, err) == (0, "")
    families = [f for f in VERSION_NICKNAMES["9.0.8"]["all_trec"]]
    assert out == expected_text(qrels, run, families, per_query=True)


def test_relevance_level_is_trec_evals_l(files):
    qp, rp, qrels, run = files
    code, out, _ = cli("trec_eval", "-q", "-l", "2", "-m", "map", "-m", "bpref", "-m", "P", qp, rp)
    assert code == 0
    assert out == expected_text(qrels, run, ["map", "bpref", "P"], per_query=True, level=2)


def test_parameters_replace_the_defaults_and_print_in_trec_evals_order(files):
    qp, rp, _, _ = files
    code, out, _ = cli("trec_eval", "-m", "ndcg_cut.10", "-m", "P.5,10", "-m", "map", qp, rp)
    assert code == 0
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == ["map", "P_5", "P_10", "ndcg_cut_10"]


def test_complete_averages_over_every_qrels_query(files):
    qp, rp, _, _ = files
    _, plain, _ = cli("trec_eval", "-q", "-m", "map", "-m", "num_ret", qp, rp)
    _, full, _ = cli("trec_eval", "-q", "-c", "-m", "map", "-m", "num_ret", qp, rp)
    assert "\t006\t" not in plain
    assert f"{'map':<22}\t006\t0.0000" in full and f"{'num_ret':<22}\t006\t0" in full
    maps = [float(ln.split("\t")[2]) for ln in full.splitlines() if ln.startswith("map ") and "\tall\t" not in ln]
    assert len(maps) == 12
    full_all = [ln for ln in full.splitlines() if ln.startswith("map ") and "\tall\t" in ln][0]
    assert float(full_all.split("\t")[2]) == pytest.approx(np.mean(maps), abs=1e-4)


def test_max_retrieved_is_trec_evals_M(tmp_path):
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 1\n")
    (tmp_path / "r").write_text("1 Q0 x 1 3 s\n1 Q0 a 2 2 s\n1 Q0 b 3 1 s\n")
    code, out, _ = cli(
        "trec_eval", "-M", "2", "-m", "num_ret", "-m", "num_rel_ret", str(tmp_path / "q"), str(tmp_path / "r")
    )
    assert code == 0
    assert out == f"{'num_ret':<22}\tall\t2\n{'num_rel_ret':<22}\tall\t1\n"


def test_a_repeated_doc_is_refused_as_trec_eval_refuses_it(tmp_path):
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 3 s\n1 Q0 a 2 2 s\n")
    code, out, err = cli("trec_eval", str(tmp_path / "q"), str(tmp_path / "r"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "repeats doc a" in err


def test_an_unknown_measure_is_a_one_line_error(files):
    qp, rp, _, _ = files
    code, _, err = cli("trec_eval", "-m", "mapp", qp, rp)
    assert code == 2 and err.count("\n") == 1 and "illegal measure 'mapp'" in err
