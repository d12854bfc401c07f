"""``prefs_avgjg_Rnonrel`` and ``prefs_avgjg_Rnonrel_ret`` (trec_eval's ``m_prefs_avgjg_Rnonrel.c``,
``m_prefs_avgjg_Rnonrel_ret.c``), with trec_eval's arithmetic to the letter, for every judgment
group at once.

Per judgment group, R relevant documents (level above 0) and N non-relevant ones (level 0):

* R >= N: the group's fulfilled and possible counts, plus R - N imagined non-relevant
  documents below every relevant one: fulfilled += R_ret (R - N), possible += R (R - N);
* R < N: the counts again, keeping only the first R non-relevant documents (by docid rank:
  retrieved ones in ranking order, then the others by doc id). In a complete group (one
  sub-group) trec_eval counts the preferences among the upper classes, then every line of the
  group (those of the last class included) against those first R documents of its last class;
  in a partial group, the closure's preferences without the other non-relevant documents.
  A preference counts as fulfilled when its preferred document is retrieved and above the other.

The ``_ret`` variant takes R and N among retrieved documents and counts only preferences with
both documents retrieved; as trec_eval does, its partial-group branch keeps the first
``num_rel`` (not ``num_rel_ret``) retrieved non-relevant documents and its R >= N branch adds
``num_rel`` (R - N) to the possible count. The groups' ratios are averaged as
:func:`.prefs.avg_over_groups` does (a 0 / 0 group, NaN, makes the query 0, as in trec_eval).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def avg_over_groups(ratio: np.ndarray, g_rid: np.ndarray, n: int) -> np.ndarray:
    """trec_eval's JG average: the sum of the groups' ratios over the number of groups, 0 when
    the sum is not above 0 (a NaN ratio, trec_eval's 0 / 0, makes the sum NaN: 0 too)."""
    total = np.zeros(n)
    np.add.at(total, g_rid, ratio)
    groups = np.bincount(g_rid, minlength=n)
    with np.errstate(invalid="ignore"):
        return np.where(total > 0, total / np.maximum(groups, 1), 0.0)


def _last_class(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per row: whether it is in its group's last (lowest level) class, and its place there."""
    g, lv = rows["g"].to_numpy(), rows["level"].to_numpy()
    low = pd.Series(lv).groupby(g).transform("min").to_numpy()
    last = lv == low
    place = pd.Series(last.astype(np.int64)).groupby(g).cumsum().to_numpy() - 1
    return last, place


def _above_in(keys_s: np.ndarray, g: np.ndarray, a: np.ndarray, span: int) -> np.ndarray:
    """For each (g, a): how many keys of ``keys_s`` (sorted g * span + docid) in group g exceed a."""
    pos = np.searchsorted(keys_s, g * span + a, side="right")
    end = np.searchsorted(keys_s, (g + 1) * span, side="left")
    return end - pos


def _ec_recalc(
    rows: pd.DataFrame, pairs: pd.DataFrame, r_keep: np.ndarray, njr_g: np.ndarray, n_groups: int, ret_only: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(fulfilled, possible) per complete group, keeping ``r_keep[g]`` of its last class."""
    ec = ~rows["pa"].to_numpy()
    g, docid = rows["g"].to_numpy(), rows["docid"].to_numpy()
    ret = rows["ret"].to_numpy()
    last, place = _last_class(rows)
    span = int(docid.max()) + 2 if len(docid) else 1
    in_s = ec & last & (place < r_keep[g])
    if ret_only:
        in_s &= ret
    keys_s = np.sort(g[in_s] * span + docid[in_s])
    size_s = np.bincount(g[in_s], minlength=n_groups)
    # every line of the group against S (the last class's own lines included, as trec_eval's loop)
    a_rows = ec & ret if ret_only else ec
    fulfilled = np.where(ret[a_rows], _above_in(keys_s, g[a_rows], docid[a_rows], span), 0)
    ful = np.bincount(g[a_rows], weights=fulfilled, minlength=n_groups)
    tot = np.bincount(g[a_rows], minlength=n_groups) * size_s
    # the preferences between the upper classes
    last_keys = np.unique(g[ec & last] * span + docid[ec & last])
    pg, pa_, pb = (pairs[c].to_numpy() for c in ("g", "a", "b"))
    keep = ~np.isin(pg * span + pb, last_keys) & ~rows_pa(rows, n_groups)[pg]
    if ret_only:
        keep &= (pa_ < njr_g[pg]) & (pb < njr_g[pg])
    ok = keep & (pa_ < pb) & (pa_ < njr_g[pg])
    ful = ful + np.bincount(pg[ok], minlength=n_groups)
    tot = tot + np.bincount(pg[keep], minlength=n_groups)
    return ful, tot


def rows_pa(rows: pd.DataFrame, n_groups: int) -> np.ndarray:
    """Per group: whether it is a partial order (several sub-groups)."""
    out = np.zeros(n_groups, dtype=bool)
    out[rows["g"].to_numpy()] = rows["pa"].to_numpy()
    return out


def _pa_recalc(
    rows: pd.DataFrame, pairs: pd.DataFrame, r_keep: np.ndarray, njr_g: np.ndarray, n_groups: int, ret_only: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(fulfilled, possible) per partial group, without its non-relevant documents past the
    first ``r_keep[g]`` (among retrieved ones for ``ret_only``)."""
    docs = rows[rows["pa"].to_numpy()].drop_duplicates(["g", "docid"], keep="last").sort_values(["g", "docid"])
    g, docid, lv = docs["g"].to_numpy(), docs["docid"].to_numpy(), docs["level"].to_numpy()
    non = lv == 0
    if ret_only:
        non &= docs["ret"].to_numpy()
    ordinal = pd.Series(non.astype(np.int64)).groupby(g).cumsum().to_numpy()
    dropped = non & (ordinal > r_keep[g])
    span = int(rows["docid"].max()) + 2 if len(rows) else 1
    gone = np.unique(g[dropped] * span + docid[dropped])
    pg, pa_, pb = (pairs[c].to_numpy() for c in ("g", "a", "b"))
    keep = rows_pa(rows, n_groups)[pg] & ~np.isin(pg * span + pa_, gone) & ~np.isin(pg * span + pb, gone)
    if ret_only:
        keep &= (pa_ < njr_g[pg]) & (pb < njr_g[pg])
    ok = keep & (pa_ < pb) & (pa_ < njr_g[pg])
    return np.bincount(pg[ok], minlength=n_groups), np.bincount(pg[keep], minlength=n_groups)


def rnonrel(
    rows: pd.DataFrame, pairs: pd.DataFrame, c: dict[str, np.ndarray], njr_g: np.ndarray, g_rid: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """``prefs_avgjg_Rnonrel`` and ``prefs_avgjg_Rnonrel_ret`` per ranking."""
    n_groups = len(g_rid)
    pa = rows_pa(rows, n_groups)
    out = []
    for ret_only in (False, True):
        r, nn = (c["rel_ret"], c["nonrel_ret"]) if ret_only else (c["rel"], c["nonrel"])
        extra = r - nn
        if ret_only:
            ful = c["ful_ret"] + c["rel_ret"] * extra
            poss = c["poss_ret"] + c["rel"] * extra
        else:
            ful = c["ful_ret"] + c["ful_imp"] + c["rel_ret"] * extra
            poss = c["poss_ret"] + c["poss_imp"] + c["notoccur"] + c["rel"] * extra
        ec_f, ec_t = _ec_recalc(rows, pairs, r, njr_g, n_groups, ret_only)
        pa_f, pa_t = _pa_recalc(rows, pairs, c["rel"] if ret_only else r, njr_g, n_groups, ret_only)
        small = r < nn
        ful = np.where(small, np.where(pa, pa_f, ec_f), ful).astype(np.float64)
        poss = np.where(small, np.where(pa, pa_t, ec_t), poss).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(avg_over_groups(ful / poss, g_rid, n))
    return out[0], out[1]
