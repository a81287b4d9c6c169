"""Registry of the synthesizers the benchmark can run.

A method registers with one line::

    register("mst", "sklearn_dpsynth:MSTSynthesizer", compress=True)

The class is named by an import string (``"module:attribute"``) and only
imported when the method is chosen, so a method whose class is not written
yet errors only if it is run.  A class or factory may also be registered
directly (tests do this).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Method", "register", "get_method", "resolve", "REGISTRY"]


@dataclass(frozen=True)
class Method:
    """A registered synthesizer.

    Attributes
    ----------
    name : str
        Name used on the command line.
    target : str or callable
        ``"module:Class"`` import string, or the class/factory itself.
    kwargs : dict
        Default constructor arguments.
    """

    name: str
    target: str | Callable[..., Any]
    kwargs: dict = field(default_factory=dict)

    def resolve(self) -> Callable[..., Any]:
        """Import and return the class (or factory)."""
        try:
            return resolve(self.target)
        except (ImportError, AttributeError) as exc:
            raise ImportError(
                f"Benchmark method {self.name!r} ({self.target}) is not available: {exc}"
            ) from exc

    def build(self, *, domain: Any, random_state: int, **overrides: Any) -> Any:
        """Instantiate the synthesizer with its defaults, the domain and the seed.

        Parameters
        ----------
        domain : mapping
            Public domain of the data set.
        random_state : int
            Seed of the synthesizer.
        **overrides
            Constructor arguments that replace the registered defaults.

        Returns
        -------
        estimator
        """
        kwargs = {**self.kwargs, **overrides}
        return self.resolve()(domain=domain, random_state=random_state, **kwargs)


#: Registered methods, by name.
REGISTRY: dict[str, Method] = {}


def resolve(target: str | Callable[..., Any]) -> Callable[..., Any]:
    """Return the object named by ``"package.module:attribute.path"`` (or ``target`` itself).

    Parameters
    ----------
    target : str or callable
        Import string or object.

    Returns
    -------
    object
    """
    if callable(target):
        return target
    if not isinstance(target, str) or target.count(":") != 1:
        raise ValueError(f"target must be 'module:attribute' or a callable, got {target!r}.")
    module_name, attribute = target.split(":")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


def register(name: str, target: str | Callable[..., Any], **default_kwargs: Any) -> Method:
    """Register (or replace) a method under ``name``.

    Parameters
    ----------
    name : str
        Method name.
    target : str or callable
        ``"module:Class"`` import string (resolved lazily) or a class.
    **default_kwargs
        Default constructor arguments.

    Returns
    -------
    Method
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}.")
    if not (callable(target) or (isinstance(target, str) and target.count(":") == 1)):
        raise ValueError(f"target must be 'module:attribute' or a callable, got {target!r}.")
    method = Method(name, target, dict(default_kwargs))
    REGISTRY[name] = method
    return method


def get_method(name: str) -> Method:
    """The registered method called ``name`` (ValueError listing the choices otherwise)."""
    if name not in REGISTRY:
        raise ValueError(f"Unknown method {name!r}; registered: {sorted(REGISTRY)}.")
    return REGISTRY[name]


register("independent", "sklearn_dpsynth:IndependentSynthesizer")
register("mst", "sklearn_dpsynth:MSTSynthesizer")
register("aim", "sklearn_dpsynth:AIMSynthesizer")
register("dptbart", "sklearn_dpsynth:DPTBARTSynthesizer")
register("synlm", "sklearn_dpsynth:SynLMSynthesizer")
