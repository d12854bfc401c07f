"""The viz layer's public functions and classes carry numpydoc docstrings (Parameters /
Returns / Examples, as scikit-learn's and pandas' do), and every example runs as written."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import retrieval_eval.viz as viz

MODULES = sorted(m.name for m in pkgutil.iter_modules(viz.__path__))
CALLABLES = sorted(n for n in viz.EXPORTS if inspect.isfunction(getattr(viz, n)) or inspect.isclass(getattr(viz, n)))


def _section(doc: str, name: str) -> bool:
    return f"\n{name}\n{'-' * len(name)}\n" in f"\n{doc}\n"


def _takes_arguments(func) -> bool:
    return any(p.name not in ("self", "cls") for p in inspect.signature(func).parameters.values())


def _public_methods(cls):
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        if inspect.isfunction(func):
            yield name, func


@pytest.mark.parametrize("name", CALLABLES)
def test_public_callables_have_numpydoc_sections(name):
    obj = getattr(viz, name)
    doc = inspect.getdoc(obj) or ""
    missing = []
    if inspect.isfunction(obj):
        needed = ["Returns", "Examples"] + ["Parameters"] * _takes_arguments(obj)
        missing = [s for s in needed if not _section(doc, s)]
    else:
        needed = ["Examples"] + ["Parameters"] * _takes_arguments(obj.__init__)
        missing = [s for s in needed if not _section(doc, s)]
        for method, func in _public_methods(obj):
            mdoc = inspect.getdoc(func) or ""
            needed = ["Returns"] + ["Parameters"] * _takes_arguments(func)
            missing += [f"{method}: {s}" for s in needed if not _section(mdoc, s)]
    assert not missing, f"{name} lacks {missing}"


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_run(module):
    mod = importlib.import_module(f"retrieval_eval.viz.{module}")
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    out: list[str] = []
    for test in doctest.DocTestFinder().find(mod, mod.__name__):
        runner.run(test, out=out.append)
        plt.close("all")
    assert runner.failures == 0, "".join(out)
