"""Layer 3, analysis: evaluation, calibration, drift, comparison, statistics, validation, gates
and the report, all working on the engine's per-query frames.

Imports :mod:`retrieval_eval.engine` and the layers below it only.
"""
