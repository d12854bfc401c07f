"""Layer 5, the command line: ``retrieval-eval`` and its verbs, a thin face on the library."""

from .app import main

__all__ = ["main"]
