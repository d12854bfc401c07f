"""The layout's rules (docs/architecture.md), checked by reading every module's imports.

Layers import downward only; inside the analysis layer its parts (subpackages) import downward
or sideways only, reaching up only from a function and only from the modules that say why; no
module imports an old path of a moved module; no two modules import each other, directly or
around a circle (function-level imports included); no module reaches into another's private
names; modules stay short. The checks read the source with ``ast``: nothing is imported to run
them.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "retrieval_eval"

#: The layers, bottom up. A module may import its own layer and those below it.
LAYERS = ("base", "io", "datasets", "engine", "analysis", "viz", "cli")
#: The faces: the top-level package, ``python -m`` and the Dask entry point. They may import
#: any layer, and no module of the package imports them.
FACES = {"retrieval_eval", "retrieval_eval.__main__", "retrieval_eval.dask"}
#: The one module allowed to name the layer above it, by string (results hand their plots and
#: HTML to viz as pandas' DataFrame.plot finds its backend).
HANDOFF = "retrieval_eval.analysis.handoff"

#: The analysis layer's parts (its subpackages), bottom up by level. A part imports parts of its
#: own level (sideways) and below; the layer's top-level modules (``handoff``, ``jsonable``,
#: ``moved``) are level 0 with ``stats``. A new subpackage must be placed here (and in
#: docs/architecture.md's map) before it passes.
ANALYSIS_PARTS = {
    "stats": 0,
    "evaluation": 1,
    "judged": 1,
    "calibration": 2,
    "drift": 2,
    "trust": 2,
    "failure": 2,
    "fusion": 2,
    "decisions": 3,
}
#: The modules that may import a higher part, from inside a function (or for type checking
#: only) so that loading a lower part never loads a higher one, and why.
ANALYSIS_REACH_UP = {
    "retrieval_eval.analysis.evaluation": "re-exports Report (decisions), loaded on first use",
    "retrieval_eval.analysis.evaluation.core": "build_report returns a Report; the worst stratum "
    "reads the gates' order",
    "retrieval_eval.analysis.evaluation.result": "Evaluation's one-line methods (.report(), "
    ".validation, .worst_stratum, negatives) call the "
    "analyses built on an evaluation",
}
#: The analysis layer's old flat module names (retrieval_eval/analysis/moved.py answers them with
#: a DeprecationWarning); the package itself imports the new paths.
OLD_ANALYSIS_PATHS = {
    "result",
    "strata",
    "streaming",
    "blocks",
    "heads",
    "measurement",
    "calibration_input",
    "calibration_result",
    "calibration_compare",
    "cutoffs",
    "separation",
    "rank_based",
    "guarantee",
    "shift",
    "drift_match",
    "validation",
    "agreement",
    "gates",
    "report",
    "compare",
}

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

#: Known breaches being worked off (each entry names what still breaks a rule). Empty when the
#: layout is done; a fixed breach must leave this list, so the list never hides a new one.
KNOWN_UPWARD: set[str] = set()
KNOWN_CIRCLES: set[frozenset[str]] = set()
KNOWN_PRIVATE: set[tuple[str, str]] = set()
KNOWN_LONG_MODULES: set[str] = set()
KNOWN_LONG_FUNCTIONS: set[str] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per run (every check reads every module)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def layer_of(module: str) -> str | None:
    """The layer of a module (None for a face)."""
    if module in FACES:
        return None
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS):
        return parts[1]
    return "base"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if MODULES[module].name != "__init__.py":
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str) -> list[tuple[str, str | None, int]]:
    """Every (imported module, imported name or None, line) of ``module``, at any depth."""
    tree = parsed(MODULES[module])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if not target.startswith("retrieval_eval"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:
                    out.append((sub, None, node.lineno))
                else:
                    out.append((target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            out.extend((a.name, None, node.lineno) for a in node.names if a.name.startswith("retrieval_eval"))
    return out


def deferred_lines(module: str) -> set[int]:
    """The lines of ``module``'s imports that run late: inside a function, or only for type
    checking (``if TYPE_CHECKING:``)."""
    tree = parsed(MODULES[module])
    out: set[int] = set()

    def visit(node, late):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and late:
            out.add(node.lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            late = True
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, late)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, late)

    visit(tree, False)
    return out


def analysis_part(module: str) -> str | None:
    """The analysis subpackage of a module ("" for the layer's top-level modules; None outside)."""
    parts = module.split(".")
    if parts[:2] != ["retrieval_eval", "analysis"]:
        return None
    if len(parts) > 3 or (len(parts) == 3 and MODULES[module].name == "__init__.py"):
        return parts[2]
    return ""


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _, _ in imports(m):
            # importing a.b.c runs the package a.b's __init__ too; the edge that matters for a
            # circle is the module itself.
            if target != m and target in MODULES:
                edges[m].add(target)
    return edges


def test_every_module_has_a_layer():
    for m in MODULES:
        layer = layer_of(m)
        assert layer is None or layer in LAYERS, m


def test_layers_import_downward_only():
    breaches = []
    known = set()
    for m in MODULES:
        mine = layer_of(m)
        for target, _, line in imports(m):
            if target in FACES and target != "retrieval_eval":
                breaches.append(f"{m}:{line} imports the face {target}")
                continue
            if target == "retrieval_eval" or (target not in MODULES and target.rsplit(".", 1)[0] not in MODULES):
                if mine is not None and target == "retrieval_eval":
                    breaches.append(f"{m}:{line} imports the top-level package")
                continue
            theirs = layer_of(target)
            if mine is not None and theirs is not None and LAYERS.index(theirs) > LAYERS.index(mine):
                if f"{m} -> {target}" in KNOWN_UPWARD:
                    known.add(f"{m} -> {target}")
                    continue
                breaches.append(f"{m}:{line} ({mine}) imports {target} ({theirs})")
    assert not breaches, "\n".join(breaches)
    assert known == KNOWN_UPWARD, f"fixed, remove from KNOWN_UPWARD: {KNOWN_UPWARD - known}"


def test_analysis_parts_import_downward_or_sideways():
    breaches = []
    reached = set()
    for m in MODULES:
        mine = analysis_part(m)
        if mine is None:
            continue
        if mine and mine not in ANALYSIS_PARTS:
            breaches.append(f"{m}: the analysis part {mine!r} has no place in ANALYSIS_PARTS")
            continue
        late = deferred_lines(m)
        for target, _, line in imports(m):
            theirs = analysis_part(target) if target in MODULES else None
            if theirs is None or theirs == mine or theirs not in ANALYSIS_PARTS:
                continue
            if ANALYSIS_PARTS[theirs] <= ANALYSIS_PARTS.get(mine, 0):
                continue
            if m in ANALYSIS_REACH_UP and line in late:
                reached.add(m)
                continue
            how = "from a function" if line in late else "at import time"
            breaches.append(f"{m}:{line} ({mine or 'analysis'}) imports {target} ({theirs}) {how}")
    assert not breaches, "\n".join(breaches)
    assert reached == set(ANALYSIS_REACH_UP), f"reach up no more, remove: {set(ANALYSIS_REACH_UP) - reached}"


def test_no_module_imports_an_old_analysis_path():
    found = []
    for m in MODULES:
        for target, name, line in imports(m):
            for old in (target, f"{target}.{name}"):
                package, _, last = old.rpartition(".")
                if package == "retrieval_eval.analysis" and last in OLD_ANALYSIS_PATHS:
                    found.append(f"{m}:{line} imports the old path {old}")
    assert not found, "\n".join(found)


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    edges = _edges()
    # A package's __init__ that re-exports its modules is not a circle with them.
    for m in list(edges):
        if MODULES[m].name == "__init__.py":
            edges[m] = {t for t in edges[m] if not t.startswith(m + ".")}
    found = {frozenset(c) for c in _circles(edges)}
    assert found <= KNOWN_CIRCLES, "\n".join(" <-> ".join(sorted(c)) for c in found - KNOWN_CIRCLES)
    assert not KNOWN_CIRCLES - found, f"fixed, remove from KNOWN_CIRCLES: {KNOWN_CIRCLES - found}"


def test_no_private_name_crosses_a_module():
    found = set()
    for m in MODULES:
        tree = parsed(MODULES[m])
        aliases = {}
        for target, name, _ in imports(m):
            if name is not None and name.startswith("_") and name != "__version__":
                found.add((m, f"{target}.{name}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(m, node)
                for a in node.names:
                    if f"{target}.{a.name}" in MODULES:
                        aliases[a.asname or a.name] = f"{target}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("retrieval_eval") and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.add((m, f"{aliases[node.value.id]}.{node.attr}"))
    assert found <= KNOWN_PRIVATE, "\n".join(f"{m} uses {n}" for m, n in sorted(found - KNOWN_PRIVATE))
    assert not KNOWN_PRIVATE - found, f"fixed, remove from KNOWN_PRIVATE: {KNOWN_PRIVATE - found}"


def test_only_the_handoff_names_a_layer_by_string():
    for m, path in MODULES.items():
        if m == HANDOFF:
            continue
        text = path.read_text(encoding="utf-8")
        assert 'import_module("retrieval_eval' not in text, m


def test_modules_stay_short():
    long = {m for m, p in MODULES.items() if len(p.read_text(encoding="utf-8").splitlines()) > MAX_MODULE_LINES}
    assert long <= KNOWN_LONG_MODULES, sorted(long - KNOWN_LONG_MODULES)
    assert not KNOWN_LONG_MODULES - long, f"fixed, remove: {KNOWN_LONG_MODULES - long}"


def _long_functions() -> set[str]:
    """Functions over the limit whose first lines do not say why (``# long: <reason>``)."""
    out = set()
    for m, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                head = "\n".join(lines[node.lineno - 1 : node.lineno + 2])
                if size > MAX_FUNCTION_LINES and "# long:" not in head:
                    out.add(f"{m}.{node.name}")
    return out


def test_long_functions_say_why():
    long = _long_functions()
    assert long <= KNOWN_LONG_FUNCTIONS, sorted(long - KNOWN_LONG_FUNCTIONS)
    assert not KNOWN_LONG_FUNCTIONS - long, f"fixed, remove: {KNOWN_LONG_FUNCTIONS - long}"


@pytest.mark.parametrize(
    "planted, check, message",
    [
        (
            {"analysis/planted.py": "from ..viz.html import box\n"},
            "test_layers_import_downward_only",
            "imports retrieval_eval.viz.html",
        ),
        (
            {"analysis/planted.py": "def f():\n    from ..viz import html\n"},
            "test_layers_import_downward_only",
            "imports retrieval_eval.viz.html",
        ),
        (
            {"analysis/planted.py": "from .other import _helper\n"},
            "test_no_private_name_crosses_a_module",
            "other._helper",
        ),
        (
            {"analysis/planted.py": "from . import other\nother._helper()\n"},
            "test_no_private_name_crosses_a_module",
            "other._helper",
        ),
        (
            {
                "analysis/planted.py": "from . import other\n",
                "analysis/other.py": "def f():\n    from . import planted\n",
            },
            "test_no_import_circles",
            "analysis.other <-> retrieval_eval.analysis.planted",
        ),
        (
            {
                "analysis/evaluation/__init__.py": "",
                "analysis/decisions/__init__.py": "",
                "analysis/decisions/gates.py": "",
                "analysis/evaluation/planted.py": "from ..decisions import gates\n",
            },
            "test_analysis_parts_import_downward_or_sideways",
            "decisions.gates (decisions) at import time",
        ),
        (
            {
                "analysis/evaluation/__init__.py": "",
                "analysis/decisions/__init__.py": "",
                "analysis/decisions/gates.py": "",
                "analysis/evaluation/planted.py": "def f():\n    from ..decisions.gates import worst_of\n",
            },
            "test_analysis_parts_import_downward_or_sideways",
            "from a function",
        ),
        (
            {"analysis/nowhere/__init__.py": ""},
            "test_analysis_parts_import_downward_or_sideways",
            "'nowhere' has no place",
        ),
        (
            {"analysis/planted.py": "from .compare import compare\n"},
            "test_no_module_imports_an_old_analysis_path",
            "the old path retrieval_eval.analysis.compare",
        ),
        (
            {"analysis/planted.py": "from . import gates\n"},
            "test_no_module_imports_an_old_analysis_path",
            "the old path retrieval_eval.analysis.gates",
        ),
    ],
)
def test_the_checks_catch_a_planted_breach(tmp_path, monkeypatch, planted, check, message):
    """Each rule fails on a package that breaks it (so a green run means something)."""
    fake = tmp_path / "retrieval_eval"
    files = {
        "__init__.py": "",
        "analysis/__init__.py": "",
        "viz/__init__.py": "",
        "viz/html.py": "",
        "analysis/other.py": "",
        **planted,
    }
    for name, text in files.items():
        (fake / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / name).write_text(text)
    modules = {}
    for path in sorted(fake.rglob("*.py")):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    monkeypatch.setitem(globals(), "MODULES", modules)
    for known in ("KNOWN_UPWARD", "KNOWN_CIRCLES", "KNOWN_PRIVATE"):
        monkeypatch.setitem(globals(), known, set())
    monkeypatch.setitem(globals(), "ANALYSIS_REACH_UP", {})
    with pytest.raises(AssertionError, match=re.escape(message)):
        globals()[check]()
