"""Readable names for plots: ``ndcg_linear@10`` -> ``nDCG@10 (linear gain)``, and ``labels=``.

A figure goes into a paper or a slide, where a code name (``ndcg_linear@10``) is noise and a
bare ``nDCG@10`` can mislead (which gain?). :func:`display_name` gives every metric a readable
name that keeps the gain, and a ``labels`` mapping (``{name: shown}``, for systems or
metrics) overrides any name.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["display_name"]

_BASES = {
    "ndcg": ("nDCG", " (exp. gain)"),
    "ndcg_linear": ("nDCG", " (linear gain)"),
    "recall": ("Recall", ""),
    "precision": ("P", ""),
    "mrr": ("MRR", ""),
    "map": ("MAP", ""),
    "hit_rate": ("Hit rate", ""),
    "judged": ("Judged", ""),
}


def display_name(name: str, labels: Mapping[str, str] | None = None) -> str:
    """The name to show for a metric or a system.

    Parameters
    ----------
    name : str
        A metric column (``ndcg_linear@10``, ``recall@k``) or a system name.
    labels : mapping, optional
        ``{name: shown}``; a name found here is shown as given.

    Returns
    -------
    str
        ``labels[name]``, else a seed metric's readable name with its gain
        (``nDCG@10 (exp. gain)``), else ``name`` unchanged.

    Examples
    --------
    >>> display_name("ndcg_linear@10"), display_name("bm25", {"bm25": "BM25"})
    ('nDCG@10 (linear gain)', 'BM25')
    """
    if labels and name in labels:
        return str(labels[name])
    base, at, k = str(name).partition("@")
    if base not in _BASES:
        return str(name)
    shown, gain = _BASES[base]
    return f"{shown}{at}{k}{gain}"
