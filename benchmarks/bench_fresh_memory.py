"""What touching new memory costs on this machine: the reason cold runs vary as they do.

A process's first touch of a page is a page fault. On a virtual machine whose free memory goes
back to its host, a page the guest has not used for a few seconds must first be given back by
the host, which costs far more than the fault itself. numpy asks for huge pages (2 MB) for
arrays of 4 MB or more; those come from the guest's free 2 MB blocks, which are mostly such
memory. Measured here on 2026-11-30 (2 cores, KVM), a new 400 MB array:

* huge pages, memory freed seconds ago or never used: 0.54-0.96 s (about 2 ms per MB);
* huge pages, memory this process freed just before: 0.04-0.05 s;
* 4 KB pages (numpy's huge-page advice turned off): 0.15-0.25 s, whichever memory it is.

So a cold run's time depends on what ran before it: the first of a series, after a pause, pays
for its whole peak (about 0.9 GB at 10M rows); the next ones mostly reuse what the previous
process freed. ``bench_metrics.py`` reports the median of 5 cold runs in a row for that reason.

    python benchmarks/bench_fresh_memory.py          # numpy's default (huge pages)
    python benchmarks/bench_fresh_memory.py --small-pages
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np


def touch(label: str, n: int) -> np.ndarray:
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    values = np.ones(n)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"{label:<34} {took:.3f} s (system {after.ru_stime - before.ru_stime:.3f} s, "
        f"{after.ru_minflt - before.ru_minflt} page faults)"
    )
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small-pages", action="store_true", help="turn numpy's huge-page advice off")
    parser.add_argument("--mb", type=int, default=400, help="size of each array (default 400 MB)")
    parser.add_argument("--pause", type=float, default=4.0, help="seconds before the last array")
    args = parser.parse_args(argv)
    if args.small_pages:
        core = getattr(np, "_core", None) or np.core  # numpy 2, numpy 1
        core.multiarray._set_madvise_hugepage(False)  # what NUMPY_MADVISE_HUGEPAGE=0 does
    n = args.mb * 2**20 // 8
    print(f"numpy huge pages: {'off' if args.small_pages else 'on'}; arrays of {args.mb} MB")
    values = touch("new memory", n)
    del values
    values = touch("memory freed just before", n)
    del values
    time.sleep(args.pause)
    touch(f"memory freed {args.pause:g} s before", n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
