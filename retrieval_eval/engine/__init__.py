"""Layer 2, the engine: one vectorized scan of the run against the judgments, and the measures
computed from its arrays (:mod:`.measures`, one module per family).

Imports :mod:`retrieval_eval.io` and the layers below it only.
"""
