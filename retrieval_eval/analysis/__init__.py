"""Layer 4, analysis: what the toolkit concludes from the engine's per-query frames.

Its parts, bottom up (docs/architecture.md has the map and the import rule between them):

* :mod:`.stats`: significance tests, intervals and corrections, in plain numpy;
* :mod:`.evaluation`: ``evaluate``/``score``, the :class:`Evaluation` result, strata,
  measurements and the streamed path;
* :mod:`.calibration`: out-of-distribution cutoffs, separation, guarantees, comparison of
  calibrations and score shift;
* :mod:`.drift`: labels whose text moved, and re-anchoring them;
* :mod:`.trust`: validation of the judgments and agreement between labellers;
* :mod:`.decisions`: gates, the JSON report and paired comparison of systems;
* :mod:`.handoff` (results hand their plots to viz by name) and :mod:`.jsonable`, used by all.

Imports :mod:`retrieval_eval.engine` and the layers below it only. The old flat module paths
(``retrieval_eval.analysis.compare``, ...) still import, with a DeprecationWarning
(:mod:`.moved`).
"""

from .moved import install as _install_old_paths

_install_old_paths()
