"""Privacy accounting of DP-SGD through the library's ledger.

A private fit of a neural synthesizer makes two accesses to the data:

1. the number of rows, released with the Gaussian mechanism (sensitivity 1
   under add/remove-one-row neighbours) using a small share of the budget;
   it sets the Poisson sampling rate ``q = expected_batch / n_noisy`` and the
   number of steps, and is the model's estimate of the table size;
2. DP-SGD: ``steps`` compositions of the Poisson-subsampled Gaussian
   mechanism with noise multiplier ``sigma``.  Its Renyi-DP curve is
   computed with Opacus's analysis (Mironov, Talwar & Zhang 2019) on a grid
   of orders, and ``sigma`` is calibrated so that the ledger's total
   ``(epsilon, delta)`` -- Renyi curves and zCDP entries composed order by
   order, then converted with the bound of Canonne, Kamath & Steinke --
   equals the budget.

:func:`suggest_batch_size` is the batch-size helper in the spirit of TAN
(Sander et al. 2023): for a given number of epochs, the smallest expected
batch whose calibrated noise multiplier reaches ``min_noise_multiplier``
(about 2, above which the privacy of the subsampled Gaussian depends mostly
on ``sigma / q``, so a bigger batch buys a proportionally lower effective
noise and nothing is wasted on a too-small one).

This module needs opacus (imported on use) for the Renyi analysis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..privacy import PrivacyLedger

__all__ = [
    "COUNT_BUDGET_SHARE",
    "DPSGD_MECHANISM",
    "DPSGDPlan",
    "calibrate_noise_multiplier",
    "dpsgd_rdp",
    "noisy_row_count",
    "plan_dpsgd",
    "rdp_orders",
    "spend_dpsgd",
    "suggest_batch_size",
]

#: Share of the remaining zCDP budget spent on the noisy row count.
COUNT_BUDGET_SHARE = 0.02

#: Mechanism name recorded in the ledger.
DPSGD_MECHANISM = "DP-SGD (Poisson-subsampled Gaussian)"

#: Largest Renyi order considered.
_MAX_ORDER = 10_000

#: Noise multipliers searched.
_SIGMA_RANGE = (1e-2, 1e5)


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
        12.  Fractional orders, slow to evaluate with Opacus's analysis, are
        added only where the estimate says they matter (half-integers below
        12 when it is below 12, orders in (1, 1.25) when it is below 1.5).
    """
    best = 1.0 + 2.0 * math.log(1.0 / delta) / epsilon
    if top is None:
        top = 4.0 * best
    top = float(min(max(top, 64.0), _MAX_ORDER))
    parts = [np.arange(2.0, 12.0), np.round(np.geomspace(12.0, top, 48))]
    if best < 12:
        parts.append(np.concatenate([[1.25, 1.5, 1.75], np.arange(2.5, 12.0)]))
    if best < 1.5:
        parts.append(1.0 + np.geomspace(0.01, 0.2, 12))
    return np.unique(np.concatenate(parts))


def dpsgd_rdp(sample_rate: float, noise_multiplier: float, steps: int,
              orders: np.ndarray) -> np.ndarray:
    """Renyi-DP curve of ``steps`` Poisson-subsampled Gaussian steps (Opacus analysis).

    Parameters
    ----------
    sample_rate : float
        Poisson sampling rate ``q`` in (0, 1].
    noise_multiplier : float
        Noise standard deviation over the clipping norm.
    steps : int
        Number of steps.
    orders : ndarray of float
        Renyi orders.

    Returns
    -------
    rdp : ndarray of float, same shape as ``orders``
    """
    from opacus.accountants.analysis.rdp import compute_rdp

    with np.errstate(over="ignore", invalid="ignore"):
        rdp = compute_rdp(q=float(sample_rate), noise_multiplier=float(noise_multiplier),
                          steps=int(steps), orders=[float(a) for a in orders])
    return np.where(np.isfinite(rdp), rdp, np.inf)


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


def spend_dpsgd(ledger: PrivacyLedger, *, sample_rate: float, noise_multiplier: float,
                steps: int, max_grad_norm: float, orders: np.ndarray, target: str):
    """Record a DP-SGD run in the ledger (raises if it would exceed the budget).

    Parameters
    ----------
    ledger : PrivacyLedger
    sample_rate, noise_multiplier : float
    steps : int
    max_grad_norm : float
        Clipping norm (the sensitivity of one step's sum).
    orders : ndarray of float
    target : str
        What is released (e.g. ``"transformer weights"``).

    Returns
    -------
    LedgerEntry
    """
    curve = dpsgd_rdp(sample_rate, noise_multiplier, steps, orders)
    return ledger.spend(target=target, mechanism=DPSGD_MECHANISM, rdp=(orders, curve),
                        noise_scale=noise_multiplier * max_grad_norm,
                        sensitivity=max_grad_norm, steps=int(steps),
                        sample_rate=float(sample_rate),
                        noise_multiplier=float(noise_multiplier),
                        max_grad_norm=float(max_grad_norm))


def noisy_row_count(ledger: PrivacyLedger, n_rows: int, rho: float,
                    rng: np.random.Generator) -> float:
    """Release the number of rows with the Gaussian mechanism (sensitivity 1).

    Parameters
    ----------
    ledger : PrivacyLedger
    n_rows : int
        The true (private) count.
    rho : float
        zCDP budget of the release.
    rng : numpy.random.Generator

    Returns
    -------
    count : float
        The noisy count, floored at 1.
    """
    sigma = ledger.sigma_for(rho)
    noisy = ledger.gaussian(np.array([float(n_rows)]), sigma=sigma, rng=rng,
                            target="number of rows")
    return max(float(noisy[0]), 1.0)


def _steps(epochs: float, n_rows: float, batch_size: float) -> int:
    return max(math.ceil(epochs * n_rows / batch_size), 1)


@dataclass(frozen=True)
class DPSGDPlan:
    """Batch, steps and noise of a DP-SGD run that exactly meets the budget.

    Attributes
    ----------
    expected_batch_size : float
    sample_rate : float
    steps : int
    noise_multiplier : float
    orders : ndarray
    """

    expected_batch_size: float
    sample_rate: float
    steps: int
    noise_multiplier: float
    orders: np.ndarray


def plan_dpsgd(ledger: PrivacyLedger, n_rows: float, epochs: float,
               batch_size: float) -> DPSGDPlan:
    """Sampling rate, steps and calibrated noise for ``epochs`` passes.

    Parameters
    ----------
    ledger : PrivacyLedger
    n_rows : float
        The *noisy* row count.
    epochs : float
        Expected passes over the data.
    batch_size : float
        Expected batch size (capped at ``n_rows``).

    Returns
    -------
    DPSGDPlan
    """
    batch = float(min(batch_size, n_rows))
    rate = batch / n_rows
    steps = _steps(epochs, n_rows, batch)
    orders = rdp_orders(ledger.epsilon, ledger.delta)
    while True:
        sigma = calibrate_noise_multiplier(ledger, rate, steps, orders)
        if _best_order(ledger, rate, sigma, steps, orders) < orders[-1] or \
                orders[-1] >= _MAX_ORDER:
            return DPSGDPlan(batch, rate, steps, sigma, orders)
        orders = rdp_orders(ledger.epsilon, ledger.delta, top=4 * orders[-1])


def _best_order(ledger, rate, sigma, steps, orders) -> float:
    from ..privacy import rdp_to_epsilon

    curve = dpsgd_rdp(rate, sigma, steps, orders)
    return rdp_to_epsilon(orders, curve, ledger.delta)[1]


def suggest_batch_size(ledger: PrivacyLedger, n_rows: float, epochs: float,
                       min_noise_multiplier: float = 2.0) -> int:
    """Smallest expected batch whose calibrated noise multiplier reaches a floor (TAN).

    Parameters
    ----------
    ledger : PrivacyLedger
        The budget left for DP-SGD.
    n_rows : float
        The noisy row count.
    epochs : float
        Expected passes over the data.
    min_noise_multiplier : float, default=2.0
        The floor.

    Returns
    -------
    batch_size : int
        In ``[1, n_rows]``; ``n_rows`` (full batch) if even that stays below
        the floor.
    """
    orders = rdp_orders(ledger.epsilon, ledger.delta)

    def sigma_at(batch: float) -> float:
        steps = _steps(epochs, n_rows, batch)
        return calibrate_noise_multiplier(ledger, batch / n_rows, steps, orders)

    high = float(max(math.floor(n_rows), 1))
    if sigma_at(high) < min_noise_multiplier:
        return int(high)
    # sigma grows with the batch at fixed epochs: halve down to a crossing (tiny
    # batches are slow to account and never the answer), then refine in log space
    low = high
    while low > 1.0:
        low, high = max(low / 2.0, 1.0), low
        if sigma_at(low) < min_noise_multiplier:
            break
    else:
        return 1
    log_batch = brentq(lambda b: sigma_at(math.exp(b)) - min_noise_multiplier,
                       math.log(low), math.log(high), xtol=0.02)
    batch = min(math.ceil(math.exp(log_batch + 0.02)), int(n_rows))
    while batch < high and sigma_at(batch) < min_noise_multiplier:
        batch = min(math.ceil(batch * 1.02), int(high))
    return int(batch)
