"""The analysis layer's old flat module paths, kept working after the move into subpackages.

Until the layer had subpackages its modules sat side by side (``retrieval_eval.analysis.compare``,
``.gates``, ``.result``, ...). They moved (:data:`MOVED`: old name -> new module, under
``retrieval_eval.analysis``) so that the folder tree shows the layer's parts. Code written
against the old paths keeps working: importing one warns once (``DeprecationWarning``, naming the
new path) and hands back the moved module itself, so every name, private ones included, is the
same object as before and a patch through either path patches both.

No file is left at an old path (a file there would hide the move from git's rename detection):
the paths are answered by :class:`OldPaths`, a finder placed last on ``sys.meta_path``, as
``importlib`` documents for import hooks. It answers only the names of :data:`MOVED`.

Three old paths are packages now and do not warn: ``retrieval_eval.analysis.evaluation``,
``.calibration`` and ``.drift`` re-export the names their modules had. ``.stats`` did not move.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: Each moved module's old name (under ``retrieval_eval.analysis``) and its new path there.
MOVED = {
    "result": "evaluation.result",
    "strata": "evaluation.strata",
    "streaming": "evaluation.streaming",
    "blocks": "evaluation.blocks",
    "heads": "evaluation.heads",
    "measurement": "evaluation.measurement",
    "calibration_input": "calibration.calibration_input",
    "calibration_result": "calibration.calibration_result",
    "calibration_compare": "calibration.calibration_compare",
    "cutoffs": "calibration.cutoffs",
    "separation": "calibration.separation",
    "rank_based": "calibration.rank_based",
    "guarantee": "calibration.guarantee",
    "shift": "calibration.shift",
    "drift_match": "drift.drift_match",
    "validation": "trust.validation",
    "agreement": "trust.agreement",
    "gates": "decisions.gates",
    "report": "decisions.report",
    "compare": "decisions.compare",
}

LAYER = __name__.rpartition(".")[0]


class OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``retrieval_eval.analysis.<old>`` for the names of :data:`MOVED`; loading one warns
    and puts the moved module in its place in ``sys.modules``."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package != LAYER or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return None  # the default module; exec_module swaps the moved one in

    def exec_module(self, module):
        old = module.__name__
        new = f"{LAYER}.{MOVED[old.rpartition('.')[2]]}"
        warnings.warn(
            f"{old} moved to {new}; import it from there (the old path will be removed)",
            DeprecationWarning,
            stacklevel=2,
        )
        # importlib returns what sys.modules holds under the name once the module has run
        sys.modules[old] = importlib.import_module(new)


def install() -> None:
    """Put one :class:`OldPaths` last on ``sys.meta_path`` (once, however often it is called)."""
    if not any(isinstance(finder, OldPaths) for finder in sys.meta_path):
        sys.meta_path.append(OldPaths())
