"""The data model: the one id dtype, and the constants every layer shares.

Base layer: imports nothing of this package. Every id column (query, system, doc, chunk,
stratum) is a pandas string column of dtype :data:`ID`, under pandas 2 and 3 alike.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["ID", "UNSTRATIFIED"]

#: The dtype of every id column: pandas' string dtype (pyarrow-backed under pandas 3).
ID = pd.StringDtype()
#: The stratum of a query whose labels name none.
UNSTRATIFIED = "_unstratified"
