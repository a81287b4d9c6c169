"""DP-SGD planning of the neural synthesizers: the row count, the batch, the steps.

A private fit of a neural synthesizer makes two accesses to the data:

1. the number of rows, released with the discrete Gaussian mechanism
   (sensitivity 1 under add/remove-one-row neighbours) using a small share
   of the budget (:func:`sklearn_dpsynth.privacy.noisy_row_count`); it sets the Poisson sampling rate
   ``q = expected_batch / n_noisy`` and the number of steps, and is the
   model's estimate of the table size;
2. DP-SGD: ``steps`` compositions of the Poisson-subsampled Gaussian
   mechanism with noise multiplier ``sigma``, calibrated so that the
   ledger's total ``(epsilon, delta)`` equals the budget.  The accounting
   itself (the Renyi curve, the calibration, the ledger entry) lives in
   :mod:`sklearn_dpsynth.privacy.dpsgd`; this module only chooses the batch
   and the number of steps (:func:`plan_dpsgd`).

:func:`suggest_batch_size` is the batch-size helper in the spirit of TAN
(Sander et al. 2023): for a given number of epochs, the smallest expected
batch whose calibrated noise multiplier reaches ``min_noise_multiplier``
(about 2, above which the privacy of the subsampled Gaussian depends mostly
on ``sigma / q``, so a bigger batch buys a proportionally lower effective
noise and nothing is wasted on a too-small one).

Nothing here needs torch or opacus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..privacy import PrivacyLedger, calibrate_dpsgd, calibrate_noise_multiplier, rdp_orders

__all__ = [
    "COUNT_BUDGET_SHARE",
    "DPSGDPlan",
    "plan_dpsgd",
    "suggest_batch_size",
]

#: Share of the remaining zCDP budget spent on the noisy row count.
COUNT_BUDGET_SHARE = 0.02


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
        Its noise multiplier and orders come from
        :func:`~sklearn_dpsynth.privacy.calibrate_dpsgd`.
    """
    batch = float(min(batch_size, n_rows))
    rate = batch / n_rows
    steps = _steps(epochs, n_rows, batch)
    sigma, orders = calibrate_dpsgd(ledger, rate, steps)
    return DPSGDPlan(batch, rate, steps, sigma, orders)


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
