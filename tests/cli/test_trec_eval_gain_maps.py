"""``retrieval-eval trec_eval -m G.1=3 -m ndcg_rel.1=3,2=9 -m Rndcg.0=1,1=3``: trec_eval's names
(meas_init.c's ``append_string``: the family, ``_`` and the parameters as typed), trec_eval's
order and 4-decimal values.

Oracle for the values: pytrec_eval (trec_eval 9.0.8) on qrels whose grades are replaced by
their gains, where that is the same measure (see tests/engine/test_catalogue_gain_maps.py:
every gain >= 0, and for Rndcg every grade on the same side of the level as its gain).
pytrec_eval aborts on a gain map in a measure name, so it cannot speak for the names.
"""

from __future__ import annotations

import importlib
import io

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")
trec = importlib.import_module("tests.engine.test_measures_trec")
maps = importlib.import_module("tests.engine.test_catalogue_gain_maps")
generated = maps.generated


def write(tmp_path, qrels, rows):
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(rows)))
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


def cli(paths, *args):
    from retrieval_eval.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["trec_eval", *args, *paths], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_the_trec_eval_command_prints_gain_maps_as_trec_eval(tmp_path):
    qrels, rows = generated(5)
    paths = write(tmp_path, qrels, rows)
    code, out, err = cli(paths, "-q", "-m", "Rndcg.1=3,2=9", "-m", "ndcg_rel.1=3,2=9", "-m", "G.1=3")
    assert (code, err) == (0, "")
    lines = [line.split("\t") for line in out.splitlines()]
    # trec_eval's order (G, ndcg_rel, Rndcg), each named as typed (meas_init.c's append_string).
    printed = ["G_1=3", "ndcg_rel_1=3,2=9", "Rndcg_1=3,2=9"]
    assert [n.rstrip() for n, q, _ in lines if q == "all"] == printed
    assert [n.rstrip() for n, q, _ in lines if q == "q0"] == printed
    # Values: pytrec_eval on the mapped qrels (substitutable: gains >= 0 and, at level 1, every
    # grade stays on its side of the level), rounded to trec_eval's 4 decimals.
    want = {}
    for f, table in (("G", {1: 3}), ("ndcg_rel", {1: 3, 2: 9}), ("Rndcg", {1: 3, 2: 9})):
        mapped = [(q, d, table.get(g, g)) for q, d, g in qrels]
        for q, values in trec.oracle(mapped, rows, [f]).items():
            want[(f, q)] = values[f]
    seen = 0
    for name, q, value in lines:
        f = name.rstrip().split("_1=")[0]
        if q == "all":
            mean = np.mean([v for (ff, _), v in want.items() if ff == f])
            assert float(value) == pytest.approx(round(mean, 4), abs=1e-12), name
        else:
            assert float(value) == pytest.approx(round(want[(f, q)], 4), abs=1e-12), (name, q)
            seen += 1
    assert seen == 3 * len({q for f, q in want})


def test_the_trec_eval_command_keeps_the_first_gain_map_and_all_trecs_place(tmp_path):
    paths = write(tmp_path, trec.EDGE_QRELS[:10], trec.EDGE_RUN[:12])
    names = lambda out: [line.split("\t")[0].rstrip() for line in out.splitlines()]  # noqa: E731
    code, out, _ = cli(paths, "-m", "G.1=3", "-m", "G", "-m", "G.2=5")
    assert code == 0 and names(out) == ["G_1=3"]
    _, plain, _ = cli(paths, "-m", "all_trec")
    _, mapped, _ = cli(paths, "-m", "all_trec", "-m", "ndcg_rel.0=1")
    assert names(mapped) == ["ndcg_rel_0=1" if n == "ndcg_rel" else n for n in names(plain)]
    code, _, err = cli(paths, "-m", "Rndcg.1=2.x")
    assert code == 2 and "a number gain" in err and err.count("\n") == 1


def test_the_trec_eval_command_prints_a_nan_rndcg_and_its_mean(tmp_path):
    # q: its one relevant grade mapped to 0: trec_eval's 0 / 0 (it prints -nan on x86-64 glibc,
    # nan elsewhere; Python's "%6.4f" prints nan); the mean over queries is NaN too.
    paths = write(tmp_path, [("p", "a", 2), ("q", "a", 1)], [("p", "a", 1.0), ("q", "a", 1.0)])
    code, out, _ = cli(paths, "-q", "-m", "Rndcg.1=0")
    assert code == 0
    assert out.splitlines() == [
        f"{'Rndcg_1=0':<22}\tp\t1.0000",
        f"{'Rndcg_1=0':<22}\tq\t   nan",
        f"{'Rndcg_1=0':<22}\tall\t   nan",
    ]
