"""How a result hands its drawing and rendering to :mod:`retrieval_eval.viz`, the layer above.

``Calibration.plot()``, ``Evaluation._repr_html_()``, ``Comparison.to_latex()`` ... stay one
line on the result, as ``DataFrame.plot`` does in pandas, but the code that draws or renders
lives in the viz layer. A layer may not import the one above it, so the result reaches viz by
name, on first use, the way pandas finds its plotting backend (``importlib.import_module``).
This module is the one place that does so (the import-rule test allows it here only).
"""

from __future__ import annotations

import importlib
from typing import Any


def viz(*names: str) -> Any:
    """The viz layer's objects ``names`` (one object for one name, a tuple for several).

    Parameters
    ----------
    *names : str
        Public names of :mod:`retrieval_eval.viz` (``"plot_calibration"``, ``"box"`` ...).

    Returns
    -------
    object or tuple
        What :mod:`retrieval_eval.viz` exports under those names, imported on first use.

    Examples
    --------
    >>> box, esc = viz("box", "esc")
    >>> esc("<b>")
    '&lt;b&gt;'
    """
    module = importlib.import_module("retrieval_eval.viz")
    found = tuple(getattr(module, name) for name in names)
    return found[0] if len(found) == 1 else found
