"""Layer 2, the engine: one vectorized scan of the run against the judgments, and the measures
computed from its arrays.

* :mod:`.kernels`: hash codes of ids, hash joins and groups, ranges (the vectorized primitives);
* :mod:`.labels`: judgments reduced to codes (the last label of a pair wins), strata;
* :mod:`.scan`: order, duplicates, depth and the label join, read in steps of whole rankings;
* :mod:`.measures`: one module per measure family, each declaring its families and computing
  them (:mod:`.measures.registry` collects them and parses names; :mod:`.measures.seed` holds
  the seed metrics, computed inside the scan);
* :mod:`.metrics`: the seed metrics' per-query frame (``compute``) and its aggregate.

Imports :mod:`retrieval_eval.io` and the layers below it only.
"""
