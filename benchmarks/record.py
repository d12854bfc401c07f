#!/usr/bin/env python
"""Every benchmark's result as a JSON file, so a later run compares against it.

Each benchmark calls :func:`write` at its end: ``benchmarks/results/<bench>-<UTC time>.json``
holds the machine (cores, CPU model, load average before and after), the versions (python,
numpy, pandas, pyarrow, the peers), the git commit, the command line and every timing the
benchmark took. The files are small and committed.

    python benchmarks/record.py table                   # the latest result of each benchmark
    python benchmarks/record.py compare OLD.json NEW.json   # every figure side by side, NEW / OLD
    python benchmarks/record.py compare NEW.json        # against the previous result of its benchmark

Nothing here times anything: the benchmarks do, and pass their figures in.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

#: Packages whose versions each result names (those not installed are left out).
PACKAGES = (
    "retrieval_eval",
    "numpy",
    "pandas",
    "pyarrow",
    "scipy",
    "dask",
    "pytrec_eval_terrier",
    "pytrec_eval",
    "ranx",
    "ir_measures",
    "ir_datasets",
)


def machine() -> dict[str, Any]:
    """The machine a result was measured on: what makes two results comparable or not."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), model)
    except OSError:
        pass
    memory = None
    try:
        with open("/proc/meminfo") as info:
            memory = next((int(line.split()[1]) // 1024 for line in info if line.startswith("MemTotal:")), None)
    except OSError:
        pass
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": model,
        "memory_mib": memory,
        "system": platform.platform(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def commit() -> dict[str, Any]:
    """The git commit of the checkout the benchmark ran from, and whether it had changes."""

    def git(*args: str) -> str | None:
        try:
            return subprocess.run(
                ["git", "-C", str(HERE), *args], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


class Recorder:
    """Started when a benchmark starts (the load average then), written when it ends."""

    def __init__(self, bench: str, argv: list[str] | None = None) -> None:
        self.bench = bench
        self.argv = list(sys.argv[1:] if argv is None else argv)
        self.started = time.gmtime()
        self.load_before = list(os.getloadavg()) if hasattr(os, "getloadavg") else None

    def write(self, result: dict[str, Any], directory: Path | None = None) -> Path:
        """``result`` with the machine, versions and commit, as ``<bench>-<time>.json``."""
        directory = RESULTS if directory is None else directory
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H%MZ", self.started)
        record = {
            "bench": self.bench,
            "argv": self.argv,
            "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", self.started),
            "machine": dict(machine(), load_average_before=self.load_before),
            "versions": versions(),
            "git": commit(),
            "result": result,
        }
        path = directory / f"{self.bench}-{stamp}.json"
        n = 1
        while path.exists():  # two runs started in one minute: the second keeps the first
            n += 1
            path = directory / f"{self.bench}-{stamp}-{n}.json"
        path.write_text(json.dumps(record, indent=1, sort_keys=False, default=float) + "\n")
        print(f"result written to {path.relative_to(HERE.parent) if path.is_relative_to(HERE.parent) else path}")
        return path


def results(bench: str | None = None, directory: Path | None = None) -> list[Path]:
    """The result files (of ``bench``, or all), oldest first."""
    directory = RESULTS if directory is None else directory
    found = [p for p in directory.glob("*.json") if bench is None or json.loads(p.read_text()).get("bench") == bench]
    return sorted(found, key=lambda p: (json.loads(p.read_text()).get("started_utc", ""), p.name))


def figures(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number of a result, by its path (``rows.ours.wall_s``)."""
    out: dict[str, float] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            out.update(figures(item, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.update(figures(item, f"{prefix}[{i}]"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out[prefix] = float(value)
    return out


def compare(old: Path, new: Path) -> str:
    """Each figure both results have, with NEW / OLD; the two machines' load beside."""
    a, b = json.loads(old.read_text()), json.loads(new.read_text())
    fa, fb = figures(a["result"]), figures(b["result"])
    lines = [
        f"OLD {old.name}: commit {str(a['git']['commit'])[:10]}, load {a['machine']['load_average']}",
        f"NEW {new.name}: commit {str(b['git']['commit'])[:10]}, load {b['machine']['load_average']}",
        "",
        "| figure | old | new | new / old |",
        "|---|---|---|---|",
    ]
    for key in fa:
        if key in fb:
            ratio = f"{fb[key] / fa[key]:.2f}" if fa[key] else "-"
            lines.append(f"| {key} | {fa[key]:.4g} | {fb[key]:.4g} | {ratio} |")
    return "\n".join(lines)


def table(directory: Path | None = None) -> str:
    """The latest result of each benchmark: its headline figures (``result["summary"]``)."""
    latest: dict[str, Path] = {}
    for path in results(directory=directory):
        latest[json.loads(path.read_text())["bench"]] = path
    lines = ["| benchmark | when (UTC) | commit | load (1 min) | figures | file |", "|---|---|---|---|---|---|"]
    for bench, path in sorted(latest.items()):
        rec = json.loads(path.read_text())
        summary = rec["result"].get("summary", {})
        cells = "; ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in summary.items())
        load = rec["machine"].get("load_average_before") or rec["machine"]["load_average"]
        lines.append(
            f"| {bench} | {rec['started_utc']} | {str(rec['git']['commit'])[:10]} | {load[0]:.1f} | "
            f"{cells} | `results/{path.name}` |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("table", help="the latest result of each benchmark, as a Markdown table")
    cmp_ = sub.add_parser("compare", help="two results side by side (NEW / OLD)")
    cmp_.add_argument("files", type=Path, nargs="+", help="OLD NEW, or NEW alone (against its previous result)")
    args = parser.parse_args(argv)
    if args.command == "table":
        print(table())
        return 0
    if len(args.files) == 1:
        new = args.files[0].resolve()
        earlier = [p for p in results(json.loads(new.read_text())["bench"]) if p.resolve() != new]
        if not earlier:
            print(f"no earlier result of {new.name}'s benchmark under {RESULTS}", file=sys.stderr)
            return 2
        print(compare(earlier[-1], new))
        return 0
    print(compare(args.files[0], args.files[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
