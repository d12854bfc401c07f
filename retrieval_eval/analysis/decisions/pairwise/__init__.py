"""The parts of a pairwise comparison (:func:`retrieval_eval.analysis.compare.compare`).

``columns``: which per-query columns a list of metric names stands for; ``cube``: the
(system, metric, query) values, the pairs, the tests and the result frames; ``frames``: frames
to JSON and back with their dtypes (what a saved result is made of).
"""
