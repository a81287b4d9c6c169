"""Privacy accounting of DP-SGD: the subsampled Gaussian's Renyi curve and noise calibration.

DP-SGD runs ``steps`` compositions of the Poisson-subsampled Gaussian
mechanism: each step samples every row independently with probability
``q`` (the sample rate), clips each row's gradient to L2 norm ``C`` and
adds ``N(0, (sigma C)^2)`` noise to their sum, where ``sigma`` is the noise
multiplier.  Under add/remove-one-row neighbours one step is
``(alpha, eps_step(alpha))``-Renyi DP with (Mironov, Talwar & Zhang 2019)

.. math::

    \\varepsilon_{\\mathrm{step}}(\\alpha) = \\frac{\\log A_\\alpha}{\\alpha - 1},
    \\qquad
    A_\\alpha = \\mathbb{E}_{z \\sim \\mathcal{N}(0, \\sigma^2)}
        \\left[\\left(1 - q + q\\, e^{(2z - 1) / (2\\sigma^2)}\\right)^\\alpha\\right],

the ratio inside being that of the mixture ``(1 - q) N(0, sigma^2) + q N(1,
sigma^2)`` to ``N(0, sigma^2)``.  Renyi curves compose by addition, so
``steps`` steps cost ``steps * eps_step(alpha)`` at every order.

How ``A_alpha`` is evaluated:

* integer ``alpha``: the binomial expansion is a finite sum,
  ``A - 1 = sum_{k=2}^{alpha} C(alpha, k) (1 - q)^(alpha - k) q^k
  (exp((k^2 - k) / (2 sigma^2)) - 1)`` (the terms ``k = 0, 1`` sum to
  exactly 1), added in log space; every term is positive, so ``A - 1`` keeps
  its relative precision even when the curve is tiny;
* fractional ``alpha``: ``A - 1`` is the integral of
  ``phi(z) * ((1 + x)^alpha - 1 - alpha x)`` with ``x = q (e^u - 1)``,
  ``u = (2z - 1) / (2 sigma^2)`` (the subtracted ``1 + alpha x`` integrates
  to 1), computed with the trapezoidal rule on a grid fine enough for the
  integrand's analytic strip (half-width ``pi sigma^2``) and the Gaussian
  weight, where its error is far below double precision.

Nothing here needs torch: the neural synthesizers and any other DP-SGD
method import these functions from :mod:`sklearn_dpsynth.privacy`.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp

from .accounting import rdp_to_epsilon
from .ledger import LedgerEntry, PrivacyLedger
from .mechanisms import SubsampledGaussian

__all__ = [
    "DPSGD_MECHANISM",
    "calibrate_dpsgd",
    "calibrate_noise_multiplier",
    "dpsgd_rdp",
    "rdp_orders",
    "spend_dpsgd",
    "subsampled_gaussian_rdp",
]

#: Mechanism name recorded in the ledger for a DP-SGD run.
DPSGD_MECHANISM = SubsampledGaussian.name

#: Largest Renyi order considered by :func:`rdp_orders` and :func:`calibrate_dpsgd`.
MAX_ORDER = 10_000

#: Noise multipliers searched by :func:`calibrate_noise_multiplier`.
_SIGMA_RANGE = (1e-2, 1e5)

#: Half-width of the integration range, in noise standard deviations.
_TAIL_WIDTH = 16.0

#: Below this ``|x|`` the fractional integrand uses its binomial series.
_SERIES_LIMIT = 0.1

#: Terms of that series (``0.1 ** 26`` is far below double precision).
_SERIES_TERMS = 26


# ----------------------------------------------------------------- the curve
def _check_rate_and_noise(sample_rate: float, noise_multiplier: float) -> None:
    if not (0.0 < sample_rate <= 1.0):
        raise ValueError(f"sample_rate must lie in (0, 1], got {sample_rate!r}.")
    if not (noise_multiplier > 0) or not math.isfinite(noise_multiplier):
        raise ValueError(f"noise_multiplier must be finite and > 0, got {noise_multiplier!r}.")


def _log_expm1(t: np.ndarray) -> np.ndarray:
    """``log(exp(t) - 1)`` for ``t > 0``, accurate for tiny and for huge ``t``."""
    small = t < 30.0
    out = np.empty_like(t)
    out[small] = np.log(np.expm1(t[small]))
    out[~small] = t[~small] + np.log1p(-np.exp(-t[~small]))
    return out


def _log_excess_integer(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    """``log(A_alpha - 1)`` for integer orders ``alpha >= 2`` (finite binomial sum)."""
    counts = (alphas - 1).astype(int)  # k = 2 .. alpha
    alpha = np.repeat(alphas, counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    k = np.arange(alpha.size) - np.repeat(starts, counts) + 2.0
    log_binomial = gammaln(alpha + 1.0) - gammaln(k + 1.0) - gammaln(alpha - k + 1.0)
    log_terms = (log_binomial + (alpha - k) * math.log1p(-q) + k * math.log(q)
                 + _log_expm1((k * k - k) / (2.0 * sigma * sigma)))
    peaks = np.maximum.reduceat(log_terms, starts)
    sums = np.add.reduceat(np.exp(log_terms - np.repeat(peaks, counts)), starts)
    return peaks + np.log(sums)


def _log_binomial_excess(x: np.ndarray, alpha: float) -> np.ndarray:
    """``log((1 + x)^alpha - 1 - alpha x)`` for ``x > -1`` (positive for ``x != 0``)."""
    out = np.full_like(x, -np.inf)
    tiny = np.abs(x) <= _SERIES_LIMIT
    if np.any(tiny):
        coefficient, series = alpha * (alpha - 1.0) / 2.0, np.zeros(np.count_nonzero(tiny))
        power = x[tiny] ** 2
        for m in range(2, _SERIES_TERMS):
            series += coefficient * power
            coefficient *= (alpha - m) / (m + 1.0)
            power = power * x[tiny]
        with np.errstate(divide="ignore"):
            out[tiny] = np.log(series)
    up = x > _SERIES_LIMIT
    log_power = alpha * np.log1p(x[up])
    out[up] = log_power + np.log1p(-(1.0 + alpha * x[up]) * np.exp(-log_power))
    down = x < -_SERIES_LIMIT
    out[down] = np.log(np.exp(alpha * np.log1p(x[down])) - 1.0 - alpha * x[down])
    return out


def _log_excess_fractional(q: float, sigma: float, alpha: float) -> float:
    """``log(A_alpha - 1)`` by the trapezoidal rule (any ``alpha > 1``)."""
    step = min(sigma / 4.0, sigma * sigma / 4.0)
    low, high = -_TAIL_WIDTH * sigma, alpha + _TAIL_WIDTH * sigma
    z = np.linspace(low, high, int(math.ceil((high - low) / step)) + 1)
    u = (2.0 * z - 1.0) / (2.0 * sigma * sigma)
    x = q * np.expm1(u)
    log_weight = -z * z / (2.0 * sigma * sigma) - math.log(sigma * math.sqrt(2.0 * math.pi))
    log_integrand = _log_binomial_excess(x, alpha) + log_weight
    return float(logsumexp(log_integrand) + math.log(z[1] - z[0]))


def subsampled_gaussian_rdp(sample_rate: float, noise_multiplier: float,
                            orders: Sequence[float]) -> np.ndarray:
    """Renyi-DP curve of one step of the Poisson-subsampled Gaussian mechanism.

    Parameters
    ----------
    sample_rate : float
        Poisson sampling rate ``q`` in (0, 1].
    noise_multiplier : float
        Noise standard deviation over the L2 sensitivity (the clipping norm).
    orders : sequence of float
        Renyi orders, each ``> 1``.

    Returns
    -------
    rdp : ndarray of float, same shape as ``orders``
        ``log(A_alpha) / (alpha - 1)`` (see the module docstring); ``inf``
        where it overflows.  With ``q = 1`` it is the Gaussian's
        ``alpha / (2 sigma^2)``.
    """
    _check_rate_and_noise(sample_rate, noise_multiplier)
    alphas = np.asarray(orders, dtype=float)
    if alphas.ndim != 1 or not np.all(alphas > 1.0) or not np.all(np.isfinite(alphas)):
        raise ValueError("orders must be a 1-D sequence of finite Renyi orders > 1.")
    sigma = float(noise_multiplier)
    if sample_rate == 1.0:
        return alphas / (2.0 * sigma * sigma)
    log_excess = np.empty_like(alphas)
    integer = alphas == np.round(alphas)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if np.any(integer):
            log_excess[integer] = _log_excess_integer(float(sample_rate), sigma,
                                                      alphas[integer])
        for index in np.flatnonzero(~integer):
            log_excess[index] = _log_excess_fractional(float(sample_rate), sigma,
                                                       float(alphas[index]))
        rdp = np.logaddexp(0.0, log_excess) / (alphas - 1.0)
    return np.where(np.isfinite(rdp), rdp, np.inf)


def dpsgd_rdp(sample_rate: float, noise_multiplier: float, steps: int,
              orders: Sequence[float]) -> np.ndarray:
    """Renyi-DP curve of ``steps`` Poisson-subsampled Gaussian steps.

    Parameters
    ----------
    sample_rate : float
        Poisson sampling rate ``q`` in (0, 1].
    noise_multiplier : float
        Noise standard deviation over the clipping norm.
    steps : int
        Number of steps, ``>= 0``.
    orders : sequence of float
        Renyi orders, each ``> 1``.

    Returns
    -------
    rdp : ndarray of float, same shape as ``orders``
        ``steps * subsampled_gaussian_rdp(...)`` (composition), ``inf``
        where it overflows.
    """
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}.")
    rdp = int(steps) * subsampled_gaussian_rdp(sample_rate, noise_multiplier, orders)
    return np.where(np.isfinite(rdp), rdp, np.inf)


def rdp_orders(epsilon: float, delta: float, top: float | None = None) -> np.ndarray:
    """Grid of Renyi orders around those an ``(epsilon, delta)`` conversion needs.

    Parameters
    ----------
    epsilon, delta : float
        The target budget: the best order of the conversion is about
        ``1 + 2 log(1/delta) / epsilon``.
    top : float, optional
        Largest order; by default four times that estimate, in [64, 10000].

    Returns
    -------
    orders : ndarray of float
        Sorted and unique: the integers from 2, geometrically spaced above
        12.  Fractional orders are added only where the estimate says they
        matter (half-integers below 12 when it is below 12, orders in
        (1, 1.25) when it is below 1.5).
    """
    best = 1.0 + 2.0 * math.log(1.0 / delta) / epsilon
    if top is None:
        top = 4.0 * best
    top = float(min(max(top, 64.0), MAX_ORDER))
    parts = [np.arange(2.0, 12.0), np.round(np.geomspace(12.0, top, 48))]
    if best < 12:
        parts.append(np.concatenate([[1.25, 1.5, 1.75], np.arange(2.5, 12.0)]))
    if best < 1.5:
        parts.append(1.0 + np.geomspace(0.01, 0.2, 12))
    return np.unique(np.concatenate(parts))


# ------------------------------------------------------------ the calibration
def _epsilon(ledger: PrivacyLedger, sample_rate: float, sigma: float, steps: int,
             orders: np.ndarray) -> float:
    return ledger.epsilon_if(rdp=(orders, dpsgd_rdp(sample_rate, sigma, steps, orders)))


def calibrate_noise_multiplier(ledger: PrivacyLedger, sample_rate: float, steps: int,
                               orders: np.ndarray) -> float:
    """Smallest noise multiplier whose DP-SGD run fits the ledger's remaining budget.

    Parameters
    ----------
    ledger : PrivacyLedger
        Holds the budget and what was spent already.
    sample_rate : float
        Poisson sampling rate in (0, 1].
    steps : int
        Number of DP-SGD steps.
    orders : ndarray of float
        Renyi orders of the curve.

    Returns
    -------
    sigma : float
        ``ledger.fits`` holds for the run's curve at ``sigma``, and the
        resulting total epsilon equals the budget up to ~1e-12 relative.

    Raises
    ------
    ValueError
        If even the largest noise searched (1e5) does not fit.
    """
    target = ledger.epsilon

    def excess(log_sigma: float) -> float:
        return _epsilon(ledger, sample_rate, math.exp(log_sigma), steps, orders) - target

    low, high = _bracket(excess)
    if high is None:
        raise ValueError("the remaining privacy budget is too small for DP-SGD: no noise "
                         "multiplier up to 1e5 fits; raise epsilon or lower epochs.")
    if low is None:
        return high
    log_sigma = brentq(excess, math.log(low), math.log(high), xtol=1e-14, rtol=1e-14,
                       maxiter=200)
    sigma = math.exp(log_sigma + 1e-13)
    for _ in range(100):
        if ledger.fits(rdp=(orders, dpsgd_rdp(sample_rate, sigma, steps, orders))):
            return sigma
        sigma *= 1.0 + 1e-10
    raise RuntimeError("noise calibration did not converge.")


def _bracket(excess) -> tuple[float | None, float | None]:
    """Noise multipliers ``low < high`` (a factor 2 apart) with ``excess`` changing sign.

    ``high`` is None when nothing up to the top of the range fits; ``low`` is
    None when the bottom of the range already fits (then ``high`` is it).
    """
    bottom, top = _SIGMA_RANGE
    sigma = 1.0
    if excess(math.log(sigma)) > 0:
        while sigma < top:
            sigma = min(2.0 * sigma, top)
            if excess(math.log(sigma)) <= 0:
                return max(sigma / 2.0, bottom), sigma
        return None, None
    while sigma > bottom:
        sigma = max(sigma / 2.0, bottom)
        if excess(math.log(sigma)) > 0:
            return sigma, min(2.0 * sigma, top)
    return None, bottom


def _best_order(delta: float, sample_rate: float, sigma: float, steps: int,
                orders: np.ndarray) -> float:
    curve = dpsgd_rdp(sample_rate, sigma, steps, orders)
    return rdp_to_epsilon(orders, curve, delta)[1]


def calibrate_dpsgd(ledger: PrivacyLedger, sample_rate: float,
                    steps: int) -> tuple[float, np.ndarray]:
    """Noise multiplier and Renyi grid of a DP-SGD run that exactly meets the budget.

    Calibrates on :func:`~sklearn_dpsynth.privacy.rdp_orders` of the ledger's budget and, while the
    best order of the run's own conversion is the top of the grid, again on
    a grid reaching four times further (up to ``MAX_ORDER``).

    Parameters
    ----------
    ledger : PrivacyLedger
        Holds the budget and what was spent already.
    sample_rate : float
        Poisson sampling rate in (0, 1].
    steps : int
        Number of DP-SGD steps.

    Returns
    -------
    noise_multiplier : float
        As :func:`~sklearn_dpsynth.privacy.calibrate_noise_multiplier` on the returned grid.
    orders : ndarray of float
        The grid; pass it to :func:`~sklearn_dpsynth.privacy.spend_dpsgd`.
    """
    orders = rdp_orders(ledger.epsilon, ledger.delta)
    while True:
        sigma = calibrate_noise_multiplier(ledger, sample_rate, steps, orders)
        if _best_order(ledger.delta, sample_rate, sigma, steps, orders) < orders[-1] or \
                orders[-1] >= MAX_ORDER:
            return sigma, orders
        orders = rdp_orders(ledger.epsilon, ledger.delta, top=4 * orders[-1])


def spend_dpsgd(ledger, *, sample_rate: float, noise_multiplier: float, steps: int,
                max_grad_norm: float, orders: Sequence[float], target: str) -> LedgerEntry:
    """Record a DP-SGD run in the ledger (raises if it would exceed the budget).

    :meth:`~sklearn_dpsynth.PrivacyLedger.release` of a
    :class:`~sklearn_dpsynth.privacy.SubsampledGaussian` whose run starts
    after the call (the training loop draws its noise).

    Parameters
    ----------
    ledger : PrivacyLedger or LedgerShare
        Where the run is recorded.
    sample_rate, noise_multiplier : float
        Poisson sampling rate and noise multiplier of every step.
    steps : int
        Number of steps.
    max_grad_norm : float
        Clipping norm (the sensitivity of one step's sum).
    orders : sequence of float
        Renyi orders of the recorded curve.
    target : str
        What is released (e.g. ``"transformer weights"``).

    Returns
    -------
    LedgerEntry
    """
    mechanism = SubsampledGaussian(sample_rate=sample_rate, noise_multiplier=noise_multiplier,
                                   steps=steps, max_grad_norm=max_grad_norm, orders=orders)
    ledger.release(mechanism, None, rng=None, target=target)
    return ledger.entries[-1]
