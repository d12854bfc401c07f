"""The one exception type for malformed input."""

from __future__ import annotations


class FormatError(ValueError):
    """Malformed input, with the spec's message: ``<label>:<line>: <what is wrong>``.

    ``label`` names the input (``judgments``, ``run``, a path), ``line`` is the file's real
    1-based line number (None when the problem is not on one line), ``detail`` the bare text.
    ``str(err)`` is the full one-line message a user sees.
    """

    def __init__(self, label: str, line: int | None, detail: str) -> None:
        self.label = label
        self.line = line
        self.detail = detail
        where = f"{label}:{line}" if line is not None else label
        super().__init__(f"{where}: {detail}")

    def __reduce__(self):
        # Pickled by its three fields (a Dask worker sends it back to the client).
        return (type(self), (self.label, self.line, self.detail))
