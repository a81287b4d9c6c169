"""The method registry: every synthesizer by short name.

One place lists the methods of the library -- the benchmark harness, the
demo job (``python -m sklearn_dpsynth``), the test suite's contract tests and
the command line read it.  Each entry holds a short name (``"mst"``), the
estimator class as an import string (``"sklearn_dpsynth.marginal:MSTSynthesizer"``,
imported only when the method is asked for, so the core works without the
optional extras), its family, the extra it needs and a one-line description.

>>> from sklearn_dpsynth.registry import available_methods, get_method
>>> available_methods(family="marginal")
['independent', 'mst', 'aim']
>>> get_method("mst").__name__
'MSTSynthesizer'

The library's own methods are registered at the bottom of this module: a new
synthesizer of the library adds its line there.  Code outside the library
registers its own with the same call::

    register_method("mymethod", "mypackage.module:MySynthesizer", family="marginal",
                    description="One line on what it does.")

A registered method is a :class:`~sklearn_dpsynth.BaseSynthesizer` subclass
(or any estimator with the same ``fit(X, *, epsilon, delta)``, ``sample``,
``score`` and ``privacy_ledger_`` contract) whose constructor accepts
``domain`` and ``random_state``.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

__all__ = [
    "EXTRAS",
    "MethodSpec",
    "available_methods",
    "get_method",
    "get_method_spec",
    "register_method",
]

#: Optional extras of the package (``pip install sklearn-dpsynth[extra]``) and
#: the modules each one provides.
EXTRAS: dict[str, tuple[str, ...]] = {
    "neural": ("torch", "opacus"),
}

_FAMILIES = ("marginal", "neural", "public", "evolution", "other")


@dataclass(frozen=True)
class MethodSpec:
    """A registered synthesizer.

    Attributes
    ----------
    name : str
        Short name (command line, benchmarks, tests).
    target : str or type
        ``"package.module:ClassName"``, imported on first use, or the class
        itself.
    family : str
        ``"marginal"``, ``"neural"``, ``"public"``, ``"evolution"`` or
        ``"other"``.
    extra : str or None
        The optional extra the method needs (a key of :data:`EXTRAS`), or
        None when the core install suffices.
    description : str
        One line on what the method does.
    """

    name: str
    target: str | type
    family: str
    extra: str | None
    description: str

    def missing_modules(self) -> list[str]:
        """Modules of the method's extra that cannot be found (empty when installed).

        Returns
        -------
        list of str
        """
        if self.extra is None:
            return []
        return [module for module in EXTRAS[self.extra] if not _importable(module)]

    @property
    def installed(self) -> bool:
        """Whether the modules of the method's extra are installed."""
        return not self.missing_modules()

    def load(self) -> type:
        """Import and return the estimator class.

        Returns
        -------
        type

        Raises
        ------
        ImportError
            When the method's extra is not installed (the message names the
            extra and the missing modules) or the import string is broken.
        """
        missing = self.missing_modules()
        if missing:
            raise ImportError(
                f"Method {self.name!r} needs the [{self.extra}] extra "
                f"({', '.join(missing)} not installed): "
                f"pip install 'sklearn-dpsynth[{self.extra}]'.")
        if isinstance(self.target, type):
            return self.target
        module_name, _, attribute = self.target.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise ImportError(
                f"Method {self.name!r} is registered as {self.target!r}, "
                f"which cannot be imported: {exc}") from exc


_REGISTRY: dict[str, MethodSpec] = {}


def _importable(module: str) -> bool:
    """Whether ``module`` can be found, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _check_target(target: object) -> None:
    """Raise unless ``target`` is a class or a ``"module:Class"`` string."""
    if isinstance(target, type):
        return
    if isinstance(target, str):
        module_name, colon, attribute = target.partition(":")
        if colon and module_name and attribute.isidentifier():
            return
    raise ValueError(
        f"target must be a class or a 'package.module:ClassName' string, got {target!r}.")


def register_method(
    name: str,
    target: str | type,
    *,
    family: str,
    description: str,
    extra: str | None = None,
    replace: bool = False,
) -> MethodSpec:
    """Register a synthesizer under a short name.

    Parameters
    ----------
    name : str
        Short name: lower-case letters, digits and underscores, starting
        with a letter.
    target : str or type
        ``"package.module:ClassName"`` (imported lazily by
        :func:`get_method`) or the class itself.
    family : str
        ``"marginal"``, ``"neural"``, ``"public"``, ``"evolution"`` or
        ``"other"``.
    description : str
        One line on what the method does.
    extra : str or None, default=None
        The optional extra the method needs (a key of :data:`EXTRAS`).
    replace : bool, default=False
        Whether an existing entry of the same name may be replaced.

    Returns
    -------
    MethodSpec
        The new entry.

    Raises
    ------
    ValueError
        On a malformed name, target, family or extra, or when ``name`` is
        taken and ``replace`` is False.
    """
    if not (isinstance(name, str) and name.isidentifier() and name == name.lower()
            and name[0].isalpha()):
        raise ValueError(f"name must be a lower-case identifier, got {name!r}.")
    _check_target(target)
    if family not in _FAMILIES:
        raise ValueError(f"family must be one of {list(_FAMILIES)}, got {family!r}.")
    if extra is not None and extra not in EXTRAS:
        raise ValueError(f"extra must be None or one of {sorted(EXTRAS)}, got {extra!r}.")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("description must be a non-empty string.")
    if name in _REGISTRY and not replace:
        raise ValueError(f"A method named {name!r} is already registered; "
                         "pass replace=True to replace it.")
    spec = MethodSpec(name, target, family, extra, description.strip())
    _REGISTRY[name] = spec
    return spec


def available_methods(family: str | None = None, *, installed_only: bool = False) -> list[str]:
    """Names of the registered methods, in registration order.

    Parameters
    ----------
    family : str or None, default=None
        Only the methods of this family.
    installed_only : bool, default=False
        Only the methods whose extra is installed.

    Returns
    -------
    list of str
    """
    return [name for name, spec in _REGISTRY.items()
            if (family is None or spec.family == family)
            and (not installed_only or spec.installed)]


def get_method_spec(name: str) -> MethodSpec:
    """The registry entry of a method.

    Parameters
    ----------
    name : str
        A registered short name.

    Returns
    -------
    MethodSpec

    Raises
    ------
    ValueError
        For an unknown name; the message lists the registered names.
    """
    if name not in _REGISTRY:
        raise ValueError(f"Unknown method {name!r}; registered methods: "
                         f"{', '.join(_REGISTRY)}.")
    return _REGISTRY[name]


def get_method(name: str) -> type:
    """The estimator class of a registered method, imported now.

    Parameters
    ----------
    name : str
        A registered short name, e.g. ``"mst"``.

    Returns
    -------
    type
        The estimator class.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the registered names.
    ImportError
        When the method's extra (e.g. torch and opacus for ``[neural]``) is
        not installed; the message names the extra.
    """
    return get_method_spec(name).load()


register_method("independent", "sklearn_dpsynth.marginal:IndependentSynthesizer",
                family="marginal",
                description="Product of noisy 1-way marginals; the baseline to beat.")
register_method("mst", "sklearn_dpsynth.marginal:MSTSynthesizer", family="marginal",
                description="Noisy 1- and 2-way marginals on a private maximum spanning "
                            "tree, fitted with Private-PGM (McKenna et al. 2021).")
register_method("aim", "sklearn_dpsynth.marginal:AIMSynthesizer", family="marginal",
                description="Adaptive, workload-aware selection of marginals, "
                            "fitted with Private-PGM (McKenna et al. 2022).")
register_method("dptbart", "sklearn_dpsynth.neural:DPTBARTSynthesizer", family="neural",
                extra="neural",
                description="Causal transformer over one token per column, trained "
                            "with DP-SGD (Castellon et al. 2023).")
register_method("synlm", "sklearn_dpsynth.neural:SynLMSynthesizer", family="neural",
                extra="neural",
                description="Causal transformer over BEGIN-framed fields in random "
                            "order, trained with DP-SGD (Sablayrolles et al. 2023).")
register_method("dp2stage", "sklearn_dpsynth.neural:DP2StageSynthesizer", family="neural",
                extra="neural",
                description="Rows as text: template learning on pseudo or public data, "
                            "then value-weighted DP fine-tuning (Afonja et al. 2024).")
register_method("pmw_pub", "sklearn_dpsynth.public:PMWPubSynthesizer", family="public",
                description="Noisy workload answers, then non-negative reweighting of public "
                            "records (PMW-pub; Liu et al. 2021).")
register_method("mst_public", "sklearn_dpsynth.public:MSTPublicSynthesizer", family="public",
                description="MST's selection and measurements, with public records "
                            "reweighted in place of Private-PGM (Swanberg et al.).")
register_method("jam", "sklearn_dpsynth.public:JAMSynthesizer", family="public",
                description="AIM-style rounds that choose, per marginal, a private measurement "
                            "or the public table's answer (Fuentes et al. 2024).")
register_method("pe", "sklearn_dpsynth.evolution:PrivateEvolutionSynthesizer",
                family="evolution",
                description="Private Evolution: nearest-neighbour votes of private rows on "
                            "generated candidates (Swanberg et al.).")
