"""Re-execute notebooks in place so their stored outputs match the code (needs nbclient).

    python scripts/execute_notebooks.py notebooks/*.ipynb

nbval then compares these stored outputs with a fresh run in CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main(paths: list[str]) -> int:
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(Path(path).parent)}}
        ).execute()
        for cell in nb.cells:  # wall-clock timings are not documentation
            cell.metadata.pop("execution", None)
        nb.metadata.pop("widgets", None)  # widget state is rebuilt by the kernel
        nbformat.write(nb, path)
        print(f"executed {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
