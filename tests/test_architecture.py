"""The package's layers, enforced by parsing every import with ``ast``.

A module may import from its own layer or from lower ones, never from a
higher one; a few pairs are forbidden outright (the engine ``pgm`` knows
nothing of privacy or of domains).  A subpackage's private modules and
names (a leading underscore) are its own: no module outside it may import
them.  Imports inside functions count too: a lazy import is still a
dependency.  Docs: ``docs/contributing.rst``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

import pytest

PACKAGE = "sklearn_dpsynth"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

#: Layers, lowest first.  Keys are the package's top-level units: a
#: subpackage or a module directly under ``sklearn_dpsynth/`` (``__init__``
#: is the package's own ``__init__.py``).  A new unit must be added here
#: (the test fails until it is).
LAYERS: list[tuple[str, ...]] = [
    # 0 -- ground: no imports from the package above this line
    ("pgm", "domain", "_validation", "exceptions", "_marginals", "_tableio", "_progress",
     "_docstrings"),
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

#: The package's subpackages: their private modules and names are theirs
#: alone.  (The private modules directly under ``sklearn_dpsynth/``, such as
#: ``_validation`` or ``_base``, belong to the whole package and are open to
#: every unit the layers allow.)
SUBPACKAGES = frozenset(path.parent.name for path in ROOT.glob("*/__init__.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_statements(source: str, module: str,
                       is_package: bool) -> list[tuple[int, str, tuple[str, ...]]]:
    """``(line, absolute module name, names taken from it)`` of every import.

    ``import a.b`` takes no names; ``from a import x, y`` takes ``x`` and
    ``y`` from ``a``; ``from . import a, b`` imports the modules (or names)
    ``a`` and ``b`` of the package, returned as modules taking no names.
    """
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            if node.module is None:  # from . import a, b: each name may be a module
                found += [(node.lineno, f"{base}.{alias.name}", ()) for alias in node.names]
            else:
                found.append((node.lineno, base, tuple(alias.name for alias in node.names)))
    return found


def _imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``source``."""
    return [(line, target) for line, target, _ in _import_statements(source, module, is_package)]


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


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Imports of another subpackage's private modules or names, as readable lines.

    A module of subpackage ``A`` (or a module outside every subpackage) may
    not import a module of subpackage ``B != A`` whose path below ``B`` has a
    part starting with ``_`` (``marginal.aim._workload``), nor take a name
    starting with ``_`` from one of ``B``'s modules (``marginal.mst``'s
    ``_budget_shares``).  ``A``'s own private modules, at any depth, are
    ``A``'s to use.
    """
    own = _unit(module)
    problems = []
    for line, target, names in _import_statements(source, module, is_package):
        unit = _unit(target)
        if unit is None or unit == own or unit not in SUBPACKAGES:
            continue
        private = [part for part in target.split(".")[2:] if _is_private(part)]
        private += [name for name in names if _is_private(name)]
        if private:
            problems.append(f"{module}:{line} imports {target} ({', '.join(private)}): private "
                            f"to {unit}/; import a public module or name of {unit}/ instead")
    return problems


def _package_modules() -> list[Path]:
    return sorted(path for path in ROOT.rglob("*.py") if "__pycache__" not in path.parts)


def test_every_unit_of_the_package_is_in_a_layer():
    units = {_unit(_module_name(path)) for path in _package_modules()}
    missing = sorted(units - set(RANK))
    assert not missing, f"add {missing} to LAYERS in tests/test_architecture.py"


def _every_module(check: Callable[..., list[str]]) -> list[str]:
    """What ``check(source, module, is_package)`` finds in every module of the package."""
    problems = []
    for path in _package_modules():
        problems += check(path.read_text(), _module_name(path),
                          is_package=path.name == "__init__.py")
    return problems


def test_no_import_runs_up_a_layer():
    problems = _every_module(violations)
    assert not problems, "\n".join(problems)


def test_no_subpackage_reaches_into_another_ones_private_modules():
    problems = _every_module(private_imports)
    assert not problems, "\n".join(problems)


def test_the_subpackages_are_found():
    assert {"marginal", "neural", "public", "evolution", "metrics", "pgm", "domain"} <= SUBPACKAGES
    assert not SUBPACKAGES & {"_base", "_validation", "__init__"}


def test_the_domain_package_imports_only_the_ground():
    """Every module of ``domain/`` imports from the ground layer alone (``pgm`` lazily)."""
    modules = sorted((ROOT / "domain").glob("*.py"))
    assert len(modules) > 1
    found = []
    for path in modules:
        module = _module_name(path)
        found += [(module, target) for _, target in
                  _imported_modules(path.read_text(), module, path.name == "__init__.py")
                  if _unit(target) is not None and _unit(target) not in LAYERS[0]]
    assert not found, found


@pytest.mark.parametrize("module, source, private", [
    ("sklearn_dpsynth.public.jam", "from ..marginal.aim._select import CandidateScorer",
     "sklearn_dpsynth.marginal.aim._select (_select)"),
    ("sklearn_dpsynth.public.mst_public", "from ..marginal.mst import _budget_shares",
     "sklearn_dpsynth.marginal.mst (_budget_shares)"),
    ("sklearn_dpsynth.evolution.pe", "from ..public import _base",
     "sklearn_dpsynth.public (_base)"),
    ("sklearn_dpsynth.report._build", "import sklearn_dpsynth.metrics._tables as t",
     "sklearn_dpsynth.metrics._tables (_tables)"),
    ("sklearn_dpsynth.persistence._types",
     "def f():\n    from ..marginal._compression import DomainCompression",
     "sklearn_dpsynth.marginal._compression (_compression)"),
    ("sklearn_dpsynth.cli", "from .report._build import build_report",
     "sklearn_dpsynth.report._build (_build)"),
    ("sklearn_dpsynth.marginal.mst", "from ..metrics import _tables",
     "sklearn_dpsynth.metrics (_tables)"),
    ("sklearn_dpsynth.metrics.tables", "from ..domain._datetimes import _iso",
     "sklearn_dpsynth.domain._datetimes (_datetimes, _iso)"),
])
def test_the_checker_catches_private_imports(module, source, private):
    found = private_imports(source, module)
    assert len(found) == 1 and f"imports {private}: private" in found[0], found


@pytest.mark.parametrize("module, source, is_package", [
    ("sklearn_dpsynth.public.pmw", "from ._base import PublicDataSynthesizer", False),
    ("sklearn_dpsynth.marginal.aim._estimator", "from .._compression import X", False),
    ("sklearn_dpsynth.marginal", "from .aim._model import refit", True),
    ("sklearn_dpsynth.neural.text_training", "from .training import _clip, _step", False),
    ("sklearn_dpsynth.public._workload", "from .._validation import check_rng", False),
    ("sklearn_dpsynth.public.mst_public",
     "from ..marginal.selection import private_kruskal\nfrom ..marginal import PGMMixin", False),
    ("sklearn_dpsynth.public.jam", "from sklearn.utils._param_validation import Interval", False),
    ("sklearn_dpsynth.report._build", "from ..metrics.tables import __all__", False),
    ("sklearn_dpsynth.domain._core", "from ._specs import OTHER, ColumnSpec", False),
    ("sklearn_dpsynth.metrics.tables", "from ..domain import datetimes_as_seconds", False),
])
def test_the_checker_allows_own_private_and_public_imports(module, source, is_package):
    assert private_imports(source, module, is_package) == []


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
    ("sklearn_dpsynth.domain._specs", "from ..privacy import ledger",
     "layer 0 (domain) imports from higher layer 1 (privacy)"),
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


#: Private attributes of other libraries that model files read: scikit-learn's
#: parameter names of an estimator class, torch's set of non-persistent buffers.
FOREIGN_PRIVATE = frozenset({"_get_param_names", "_non_persistent_buffers_set"})


def test_model_files_and_the_cli_read_no_private_attribute_of_a_model():
    """``persistence/`` and ``cli`` reach a fitted model through its public attributes
    (``feature_dtypes_in_``, ...) and its class's ``_persisted_state_`` declaration,
    never through attributes such as ``model._form`` or ``model._sampling_rng``."""
    paths = [ROOT / "cli.py", *sorted((ROOT / "persistence").glob("*.py"))]
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and _is_private(node.attr)
                    and node.attr not in FOREIGN_PRIVATE
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self")):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert not found, found
