"""trec_eval's parameters the base parser does not read: ``set_F`` with a beta other than 1
(``set_F.0.5``, ``set_F_0.5``) and nDCG's gain maps (``ndcg.1=3,2=9``).

``set_F.b`` is the F-measure of the retrieved set with that beta (:mod:`.sets`), named
``set_F_0.5`` (trec_eval prints ``set_F`` whatever the beta; several betas in one argument make
one measure each, where trec_eval keeps the first). ``ndcg.1=3,2=9`` is nDCG with grade 1 gaining
3 and grade 2 gaining 9 (a grade not listed gains itself), trec_eval's ``-m ndcg.<gains>``:
the same measure as ir_measures' ``nDCG(gains={1:3,2:9})`` (:mod:`.variants`), so named
``ndcg(gains={1:3,2:9})``. Verified against pytrec_eval (set_F) and against pytrec_eval on the
mapped qrels (gain maps: pytrec_eval 0.5 aborts on ``ndcg.1=3``).
"""

from __future__ import annotations

import re

from .declare import Measure, make

FAMILIES = ()  # parameters of families declared elsewhere (set_F, ndcg)


def parse(text: str, parse_measure=None):
    """The measures of ``set_F.0.5``, ``set_F_2``, ``ndcg.1=3,2=9``; None for other names."""
    text = text.strip()
    m = re.fullmatch(r"set_F[._]([0-9.,]+)", text)
    if m:
        out = []
        for beta in filter(None, m.group(1).split(",")):
            if not re.fullmatch(r"\d+(\.\d+)?|\.\d+", beta):
                raise ValueError(f"set_F: beta must be a number >= 0, got {beta!r}")
            b = float(beta)
            out.append(Measure("set_F", b, None, name=f"set_F_{b:g}")
                       if b != 1.0 else make("set_F", 1.0))
        return out
    m = re.fullmatch(r"ndcg\.((?:-?\d+=\d+,?)+)", text)
    if m:
        pairs = ",".join(f"{k}:{v}" for k, v in re.findall(r"(-?\d+)=(\d+)", m.group(1)))
        return parse_measure(f"nDCG(gains={{{pairs}}})")
    return None
