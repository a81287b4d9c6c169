"""Noise-adding and selection mechanisms, drawing from a seeded Generator.

These functions only add noise or select; they do not account.  Estimators
call them through :class:`~sklearn_dpsynth.privacy.PrivacyLedger`, which
records the cost of every call before releasing the result.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gaussian_mechanism", "exponential_mechanism", "permute_and_flip"]


def _check_scale(name: str, value: float) -> None:
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}.")


def gaussian_mechanism(
    values: np.ndarray, sigma: float, rng: np.random.Generator
) -> np.ndarray:
    """Add i.i.d. ``N(0, sigma^2)`` noise to every entry of ``values``.

    Parameters
    ----------
    values : array-like of float
        The exact answers (e.g. a histogram of counts).
    sigma : float
        Noise standard deviation, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    noisy : ndarray of float, same shape as ``values``
    """
    _check_scale("sigma", sigma)
    values = np.asarray(values, dtype=float)
    return values + rng.normal(0.0, sigma, size=values.shape)


def _check_scores(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=float).ravel()
    if scores.size == 0:
        raise ValueError("scores must contain at least one candidate.")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite.")
    return scores


def exponential_mechanism(
    scores: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    sensitivity: float = 1.0,
) -> int:
    """Select an index with probability ``∝ exp(epsilon * score / (2 Δ))``.

    Implemented as report-noisy-max with Gumbel noise of scale
    ``2 Δ / epsilon``, which samples exactly from the exponential
    mechanism's distribution.  It is epsilon-DP and ``epsilon^2/8``-zCDP.

    Parameters
    ----------
    scores : array-like of float
        Quality score of each candidate (higher is better).
    epsilon : float
        Privacy parameter, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness.
    sensitivity : float, default=1.0
        Largest change of any score between neighbouring data sets.

    Returns
    -------
    index : int
    """
    _check_scale("epsilon", epsilon)
    _check_scale("sensitivity", sensitivity)
    scores = _check_scores(scores)
    gumbel = rng.gumbel(0.0, 2.0 * sensitivity / epsilon, size=scores.shape)
    return int(np.argmax(scores + gumbel))


def permute_and_flip(
    scores: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    sensitivity: float = 1.0,
) -> int:
    """Permute-and-flip selection (McKenna & Sheldon, 2020).

    Visits candidates in random order and accepts candidate ``r`` with
    probability ``exp(epsilon * (score_r - max score) / (2 Δ))``.  It is
    epsilon-DP and never worse in expected score than the exponential
    mechanism.  It is not known to have the exponential mechanism's
    bounded-range property, so the ledger charges it the generic pure-DP
    to zCDP cost ``epsilon^2/2`` (Bun & Steinke 2016, Prop. 1.4).

    Parameters
    ----------
    scores : array-like of float
        Quality score of each candidate (higher is better).
    epsilon : float
        Privacy parameter, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness.
    sensitivity : float, default=1.0
        Largest change of any score between neighbouring data sets.

    Returns
    -------
    index : int
    """
    _check_scale("epsilon", epsilon)
    _check_scale("sensitivity", sensitivity)
    scores = _check_scores(scores)
    accept = np.exp(epsilon * (scores - scores.max()) / (2.0 * sensitivity))
    while True:
        for index in rng.permutation(scores.size):
            if rng.random() <= accept[index]:
                return int(index)
