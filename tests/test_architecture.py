"""The package's layers, enforced by parsing every import with ``ast``.

A module may import from its own layer or from lower ones, never from a
higher one; a few pairs are forbidden outright (the engine ``pgm`` knows
nothing of privacy or of domains).  Imports inside functions count too: a
lazy import is still a dependency.  Docs: ``docs/contributing.rst``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "sklearn_dpsynth"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

#: Layers, lowest first.  Keys are the package's top-level units: a
#: subpackage or a module directly under ``sklearn_dpsynth/`` (``__init__``
#: is the package's own ``__init__.py``).  A new unit must be added here
#: (the test fails until it is).
LAYERS: list[tuple[str, ...]] = [
    # 0 -- ground: no imports from the package above this line
    ("pgm", "domain", "_validation", "exceptions", "_marginals", "_tableio", "_progress"),
    # 1 -- privacy arithmetic, data sets, metrics
    ("privacy", "datasets", "metrics"),
    # 2 -- input forms, domain learning, public domains, encoded tables
    ("preprocessing", "_input", "_domain_learning", "public_domain", "backends",
     "_column_kinds"),
    # 3 -- the estimator contract
    ("_base",),
    # 4 -- the synthesizers (public-data and evolution methods go here too)
    ("marginal", "neural", "public", "evolution", "pipeline"),
    # 5 -- the method catalogue (imports its classes lazily, by name)
    ("registry",),
    # 6 -- the HTML quality report (on top of metrics and the estimators)
    ("report",),
    # 7 -- the package's front door, saving models (which reads its version)
    #      and its command lines
    ("__init__", "__main__", "persistence", "cli"),
]

#: Imports forbidden even where the layers would allow them.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "pgm": ("privacy", "domain"),
}

#: Top-level packages the library must never import.
OUTSIDE = ("benchmarks", "tests")

RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``source``."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            if node.module is None:  # from . import a, b: each name may be a module
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def _unit(module: str) -> str | None:
    """The top-level unit of a module of the package (None outside it)."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """Layer violations of one module's source, as readable lines."""
    own = _unit(module)
    problems = []
    for line, target in _imported_modules(source, module, is_package):
        where = f"{module}:{line} imports {target}"
        if target.split(".")[0] in OUTSIDE:
            problems.append(f"{where}: the library must not import {target.split('.')[0]}")
            continue
        unit = _unit(target)
        if unit is None or unit == own:
            continue
        if unit not in RANK:
            problems.append(f"{where}: {unit!r} is in no layer; add it to LAYERS in "
                            "tests/test_architecture.py")
        elif unit in FORBIDDEN.get(own, ()):
            problems.append(f"{where}: {own} must never import {unit}")
        elif own in RANK and RANK[unit] > RANK[own]:
            problems.append(f"{where}: layer {RANK[own]} ({own}) imports from higher "
                            f"layer {RANK[unit]} ({unit})")
    return problems


def _package_modules() -> list[Path]:
    return sorted(path for path in ROOT.rglob("*.py") if "__pycache__" not in path.parts)


def test_every_unit_of_the_package_is_in_a_layer():
    units = {_unit(_module_name(path)) for path in _package_modules()}
    missing = sorted(units - set(RANK))
    assert not missing, f"add {missing} to LAYERS in tests/test_architecture.py"


def test_no_import_runs_up_a_layer():
    problems = []
    for path in _package_modules():
        problems += violations(path.read_text(), _module_name(path),
                               is_package=path.name == "__init__.py")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("module, source, message", [
    ("sklearn_dpsynth.pgm.model", "from ..privacy import ledger", "pgm must never import privacy"),
    ("sklearn_dpsynth.pgm.model", "import sklearn_dpsynth.domain", "pgm must never import domain"),
    ("sklearn_dpsynth.privacy.ledger", "def f():\n    from .._base import BaseSynthesizer",
     "layer 1 (privacy) imports from higher layer 3 (_base)"),
    ("sklearn_dpsynth.metrics.fidelity", "from sklearn_dpsynth.marginal import mst",
     "layer 1 (metrics) imports from higher layer 4 (marginal)"),
    ("sklearn_dpsynth._base", "from . import registry", "higher layer 5 (registry)"),
    ("sklearn_dpsynth.marginal.mst", "from ..newthing import x", "'newthing' is in no layer"),
    ("sklearn_dpsynth.domain", "import benchmarks.run", "must not import benchmarks"),
])
def test_the_checker_catches_violations(module, source, message):
    found = violations(source, module)
    assert len(found) == 1 and message in found[0], found


@pytest.mark.parametrize("module, source, is_package", [
    ("sklearn_dpsynth.marginal.mst", "from ..pgm import estimate\nfrom .. import privacy", False),
    ("sklearn_dpsynth.marginal", "from .mst import MSTSynthesizer", True),
    ("sklearn_dpsynth.pgm.model", "from .factor import Factor\nimport numpy", False),
    ("sklearn_dpsynth.__main__", "from .registry import get_method", False),
])
def test_the_checker_allows_downward_and_local_imports(module, source, is_package):
    assert violations(source, module, is_package) == []
