"""Conversions between zero-concentrated DP, Renyi DP and (epsilon, delta)-DP.

zCDP (Bun & Steinke 2016) is the common currency of the library: the
Gaussian and exponential mechanisms have closed-form zCDP costs and zCDP
composes by addition.  A mechanism satisfies ``rho``-zCDP when it satisfies
``(alpha, alpha * rho)``-Renyi DP for every ``alpha > 1``.

The conversion to ``(epsilon, delta)`` uses the tight bound of Canonne,
Kamath & Steinke (2020, Prop. 12), equivalently Balle et al. (2020, Thm. 21)
applied to a Renyi curve:

.. math::

    \\varepsilon(\\delta) = \\min_{\\alpha > 1}\\;
        \\mathrm{RDP}(\\alpha) + \\log(1 - 1/\\alpha)
        - \\frac{\\log \\delta + \\log \\alpha}{\\alpha - 1}.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar

__all__ = [
    "rdp_to_epsilon",
    "rho_to_epsilon",
    "epsilon_to_rho",
    "gaussian_rho",
    "gaussian_sigma",
    "exponential_rho",
    "exponential_epsilon",
    "pure_dp_rho",
    "pure_dp_epsilon",
]


def _check_delta(delta: float) -> None:
    if not (0.0 < delta < 1.0) or not math.isfinite(delta):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")


def rdp_to_epsilon(
    orders: np.ndarray, rdp: np.ndarray, delta: float
) -> tuple[float, float]:
    """Convert a Renyi-DP curve given on a grid of orders to (epsilon, delta).

    Parameters
    ----------
    orders : array-like of float
        Renyi orders, each ``> 1``.
    rdp : array-like of float
        Renyi divergence bound at each order.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon over the grid (never negative).
    best_order : float
        The order that attains it.
    """
    _check_delta(delta)
    orders = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    if orders.shape != rdp.shape or orders.ndim != 1 or orders.size == 0:
        raise ValueError("orders and rdp must be 1-D arrays of the same length.")
    if np.any(orders <= 1.0):
        raise ValueError("every Renyi order must be > 1.")
    eps = rdp + np.log1p(-1.0 / orders) - (np.log(delta) + np.log(orders)) / (orders - 1)
    best = int(np.nanargmin(eps))
    return max(float(eps[best]), 0.0), float(orders[best])


def rho_to_epsilon(rho: float, delta: float) -> float:
    """Smallest epsilon such that ``rho``-zCDP implies (epsilon, delta)-DP.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``>= 0``.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
        Minimum over ``alpha > 1`` of the Canonne-Kamath-Steinke bound.
    """
    _check_delta(delta)
    if rho < 0 or not math.isfinite(rho):
        raise ValueError(f"rho must be finite and >= 0, got {rho!r}.")
    if rho == 0:
        return 0.0
    # The bound is convex in alpha near its minimum, located close to
    # 1 + sqrt(log(1/delta) / rho); search a bracket around it in log space.
    # The guess's excess over 1 is kept in log space: for a huge rho it is
    # far below the spacing of floats near 1.
    log_guess = 0.5 * (math.log(-math.log(delta)) - math.log(rho))
    lo, hi = min(math.log(1e-9), log_guess - 5.0), math.log(200.0) + max(log_guess, 0.0)

    def objective(log_excess: float) -> float:
        excess = math.exp(log_excess)
        alpha = 1.0 + excess
        return (alpha * rho + math.log(excess / alpha)
                - (math.log(delta) + math.log(alpha)) / excess)

    result = minimize_scalar(objective, bounds=(lo, hi), method="bounded",
                             options={"xatol": 1e-12})
    candidates = [result.fun, objective(log_guess)]
    return max(min(candidates), 0.0)


def epsilon_to_rho(epsilon: float, delta: float) -> float:
    """Largest ``rho`` such that ``rho``-zCDP implies (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    rho : float
        Solved to a relative precision of about 1e-12 by root finding on
        :func:`~sklearn_dpsynth.privacy.rho_to_epsilon`, which is increasing in ``rho``.
    """
    _check_delta(delta)
    if not (epsilon > 0) or not math.isfinite(epsilon):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}.")
    upper = epsilon  # rho <= epsilon always: eps(rho) >= rho
    while rho_to_epsilon(upper, delta) < epsilon:
        upper *= 2.0
    return brentq(lambda r: rho_to_epsilon(r, delta) - epsilon, 0.0, upper,
                  xtol=1e-300, rtol=1e-13, maxiter=500)


def gaussian_rho(sigma: float, sensitivity: float = 1.0) -> float:
    """zCDP cost ``Delta^2 / (2 sigma^2)`` of the Gaussian mechanism.

    Parameters
    ----------
    sigma : float
        Standard deviation of the added noise, ``> 0``.
    sensitivity : float, default=1.0
        L2 sensitivity of the released vector.

    Returns
    -------
    rho : float
    """
    if not (sigma > 0):
        raise ValueError(f"sigma must be > 0, got {sigma!r}.")
    return sensitivity**2 / (2.0 * sigma**2)


def gaussian_sigma(rho: float, sensitivity: float = 1.0) -> float:
    """Noise scale of a Gaussian mechanism that costs exactly ``rho``.

    Parameters
    ----------
    rho : float
        zCDP budget for this measurement, ``> 0``.
    sensitivity : float, default=1.0
        L2 sensitivity of the released vector.

    Returns
    -------
    sigma : float
        ``sensitivity / sqrt(2 rho)``.
    """
    if not (rho > 0):
        raise ValueError(f"rho must be > 0, got {rho!r}.")
    return sensitivity / math.sqrt(2.0 * rho)


def exponential_rho(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 8`` of the exponential mechanism.

    The mechanism samples with probability proportional to
    ``exp(epsilon * score / (2 * sensitivity))``; it is epsilon-DP and, by
    Cesar & Rogers (2021), ``epsilon^2 / 8``-zCDP.

    Parameters
    ----------
    epsilon : float
        Pure-DP parameter of the mechanism, ``> 0``.

    Returns
    -------
    rho : float
    """
    if not (epsilon > 0):
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    return epsilon**2 / 8.0


def exponential_epsilon(rho: float) -> float:
    """Pure-DP parameter of an exponential mechanism costing ``rho``-zCDP.

    Parameters
    ----------
    rho : float
        zCDP budget for the selection, ``> 0``.

    Returns
    -------
    epsilon : float
        ``sqrt(8 rho)``.
    """
    if not (rho > 0):
        raise ValueError(f"rho must be > 0, got {rho!r}.")
    return math.sqrt(8.0 * rho)


def pure_dp_rho(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 2`` of any epsilon-DP mechanism.

    The generic conversion (Bun & Steinke 2016, Prop. 1.4), used for
    mechanisms without a sharper bound, such as permute-and-flip.

    Parameters
    ----------
    epsilon : float
        Pure-DP parameter of the mechanism, ``> 0``.

    Returns
    -------
    rho : float
    """
    if not (epsilon > 0):
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    return epsilon**2 / 2.0


def pure_dp_epsilon(rho: float) -> float:
    """Pure-DP parameter ``sqrt(2 rho)`` of a generic epsilon-DP mechanism costing ``rho``.

    The inverse of :func:`~sklearn_dpsynth.privacy.pure_dp_rho`.

    Parameters
    ----------
    rho : float
        zCDP budget, ``> 0``.

    Returns
    -------
    epsilon : float
    """
    if not (rho > 0):
        raise ValueError(f"rho must be > 0, got {rho!r}.")
    return math.sqrt(2.0 * rho)
