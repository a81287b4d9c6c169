"""The synthesizers the benchmark can run: those of :mod:`sklearn_dpsynth.registry`.

A method is chosen by its registry name (``independent``, ``mst``, ``aim``,
``dptbart``, ``synlm``, or any name registered with
``sklearn_dpsynth.registry.register_method``).  Every run builds it with the
data set's public domain and the seed; per-run constructor arguments come
from ``run_benchmark(..., method_kwargs=...)``.
"""

from __future__ import annotations

from typing import Any

from sklearn_dpsynth.registry import available_methods, get_method

__all__ = ["available_methods", "build", "check_methods"]


def check_methods(names: list[str]) -> None:
    """Import every method now, so that an unknown name or a missing extra fails fast.

    Parameters
    ----------
    names : list of str
        Registry names.

    Raises
    ------
    ValueError
        For an unknown name.
    ImportError
        When a method's extra is not installed.
    """
    for name in names:
        get_method(name)


def build(name: str, *, domain: Any, random_state: int, **params: Any) -> Any:
    """A new, unfitted synthesizer for one benchmark run.

    Parameters
    ----------
    name : str
        Registry name of the method.
    domain : mapping
        Public domain of the data set.
    random_state : int
        Seed of the synthesizer.
    **params
        Further constructor arguments.

    Returns
    -------
    estimator
    """
    return get_method(name)(domain=domain, random_state=random_state, **params)
