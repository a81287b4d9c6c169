"""The privacy budget a fit is given: its default delta and its validation.

Every entry point that takes ``(epsilon, delta)`` (the estimators' ``fit``,
the pipeline, the preprocessing, the workload measurement, the ledger)
validates them here, so the rules and their messages are the same
everywhere.
"""

from __future__ import annotations

import math
import warnings
from numbers import Real
from typing import Any

import numpy as np

__all__ = ["DEFAULT_DELTA", "MAX_EPSILON", "check_budget"]

#: The ``delta`` of a fit when none is given.
DEFAULT_DELTA = 1e-9

#: Largest epsilon a budget may declare.  The conversions of
#: ``privacy.accounting`` are accurate for every finite
#: epsilon; the limit keeps the noise scales of the mechanisms
#: (``sigma = sensitivity / sqrt(2 rho)``, with ``rho <= epsilon``) such that
#: ``sigma ** 2`` and the costs derived from it stay normal floats, far above
#: the underflow near ``1e-308``, however a method halves them.
MAX_EPSILON = 1e100

#: Above this delta a warning says that the guarantee is weak.
_LARGE_DELTA = 1e-3


def check_budget(epsilon: Any, delta: Any, *, warn: bool = True) -> tuple[float, float]:
    """Validate a privacy budget.

    Parameters
    ----------
    epsilon : float
        Must be finite, ``> 0`` and at most ``MAX_EPSILON`` (``1e100``).
    delta : float
        Must lie in (0, 1); above ``1e-3`` a ``UserWarning`` says that this
        is weak (``delta`` is the chance of an outright leak; pick it well
        below ``1 / n_rows``).  ``delta`` is public, so the warning is free.
    warn : bool, default=True
        Whether to give that warning (the ledger does not repeat it).

    Returns
    -------
    epsilon, delta : float

    Raises
    ------
    TypeError, ValueError
        Naming the offending parameter.
    """
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, (Real, np.number)):
            raise TypeError(f"{name} must be a real number, got {value!r}.")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}.")
    if epsilon > MAX_EPSILON:
        raise ValueError(f"epsilon must be at most {MAX_EPSILON:g}, got {epsilon!r}: beyond "
                         "it the noise scales underflow (and such a budget protects nothing).")
    if not (0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
    if warn and delta > _LARGE_DELTA:
        warnings.warn(
            f"delta={delta!r} is large: with probability up to delta the guarantee may fail "
            f"outright. Pick delta well below 1 / n_rows (the default is {DEFAULT_DELTA:g}; "
            f"anything above {_LARGE_DELTA:g} is rarely meaningful).", UserWarning, stacklevel=3)
    return float(epsilon), float(delta)
