"""``retrieval_eval.viz`` exports every public name of the layer, each from the module that
defines it: the analysis layer reaches its Displays and renderers only through that map
(``analysis/handoff.py``), so a name missing from it, or pointing at the wrong module, breaks a
result's ``.plot()``."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import retrieval_eval.viz as viz

MODULES = sorted(m.name for m in pkgutil.iter_modules(viz.__path__))


@pytest.mark.parametrize("name, module", sorted(viz.EXPORTS.items()))
def test_every_export_is_defined_by_its_module(name, module):
    mod = importlib.import_module(f"retrieval_eval.viz.{module}")
    assert name in getattr(mod, "__all__", ()), f"{module}.__all__ lacks {name}"
    obj = getattr(viz, name)
    assert obj is getattr(mod, name)
    defined_in = getattr(obj, "__module__", None)
    if callable(obj) and defined_in is not None:
        assert defined_in == f"retrieval_eval.viz.{module}", f"{name} is defined in {defined_in}"


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_of_a_module_is_exported(module):
    mod = importlib.import_module(f"retrieval_eval.viz.{module}")
    missing = [n for n in getattr(mod, "__all__", ()) if viz.EXPORTS.get(n) != module]
    assert not missing, f"{module} exports {missing} that viz.EXPORTS does not map to it"


def test_the_handoff_names_resolve():
    """Every name the results hand off (``handoff.viz("...")``) is exported (or is a module of
    the layer: ``viz("html")``)."""
    import ast
    from pathlib import Path

    analysis = Path(viz.__file__).parents[1] / "analysis"
    names = set()
    for path in analysis.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "viz":
                names |= {a.value for a in node.args if isinstance(a, ast.Constant)}
    assert names, "no handoff found: the test would pass vacuously"
    known = set(viz.EXPORTS) | set(MODULES)
    assert names <= known, sorted(names - known)
    for name in names:
        assert getattr(viz, name) is not None
