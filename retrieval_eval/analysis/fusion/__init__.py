"""Run fusion: several systems' rankings of the same queries combined into one run.

* :mod:`.normalize`: per-ranking score normalisations (min-max, max, sum, z-score, rank, borda);
* :mod:`.fuse`: :func:`fuse` (RRF, CombSUM, CombMNZ, CombMAX/MIN/MED/ANZ, weighted sum).

The definitions are ranx's (``ranx.fuse``), checked against it in the tests; a fused run that is
a function of rank (RRF, the rank and borda normalisations) is marked so in its ``attrs``, and
the calibration's rank-based check reads the mark.
"""

from .fuse import FUSION_METHODS, RANK_BASED_ATTR, fuse
from .normalize import NORMALIZATIONS, normalize

__all__ = ["FUSION_METHODS", "NORMALIZATIONS", "RANK_BASED_ATTR", "fuse", "normalize"]
