"""trec_eval's output line, ``"%-22s\\t%s\\t%6.4f"``: :func:`trec_line` and :func:`trec_value`, shared
by the ``trec_eval`` command (:mod:`.trec_eval`, which re-exports them) and its ``-R prefs``,
``qrels_prefs``, ``qrels_jg`` half (:mod:`.trec_eval_prefs`), which the command calls: kept
here so that neither imports the other for them.
"""

from __future__ import annotations

from .term import escape

__all__ = ["trec_line", "trec_value"]


def trec_value(value, kind: str) -> str:
    """A value as trec_eval prints it: ``%ld`` for a count, ``'%s'`` for relstring's string,
    ``%6.4f`` otherwise."""
    if kind == "str":
        return f"'{value}'"
    return str(int(round(value))) if kind == "int" else "%6.4f" % value


def trec_line(name: str, qid: str, value, kind: str) -> str:
    return f"{name:<22}\t{escape(qid)}\t{trec_value(value, kind)}"
