"""Validation helpers shared by estimators."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

__all__ = ["check_rng", "check_n_samples", "COMMON_CONSTRAINTS",
           "check_common_params", "DEPRECATED_NAME"]

#: Parameter constraints shared by every synthesizer (merge into a subclass's).
COMMON_CONSTRAINTS: dict = {
    "domain": [dict, list, Integral, None],
    "n_bins": [Interval(Integral, 2, None, closed="left")],
    "preprocessing": [StrOptions({"private", "private-lenient", "non-private"})],
    "preprocessing_budget": [Interval(Real, 0, 1, closed="neither")],
    "max_categories": [Interval(Integral, 1, None, closed="left")],
    "bin_value": [StrOptions({"midpoint", "uniform"})],
    "random_state": ["random_state", np.random.Generator],
}

#: The extra constraint of a renamed hyperparameter's old name (default ``"deprecated"``).
DEPRECATED_NAME = Hidden(StrOptions({"deprecated"}))


def check_common_params(estimator: Any) -> None:
    """Validate an estimator's hyperparameters against its constraints."""
    estimator._validate_params()


def check_rng(random_state: Any) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        ``None`` draws fresh OS entropy; an int seeds a new generator; a
        RandomState seeds a new generator from one draw of it; a Generator is
        used as is (so repeated calls continue its stream).

    Returns
    -------
    numpy.random.Generator
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, (Integral, np.integer)) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    raise ValueError(
        f"random_state must be None, an int, a RandomState or a Generator; got {random_state!r}.")


def check_n_samples(n_samples: Any) -> int:
    """Validate a number of rows to generate (a non-negative int)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, (Integral, np.integer)):
        raise TypeError(f"n_samples must be an int or None, got {n_samples!r}.")
    if n_samples < 0:
        raise ValueError(f"n_samples must be >= 0, got {n_samples}.")
    return int(n_samples)
