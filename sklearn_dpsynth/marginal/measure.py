"""Measuring marginals of the private table through the privacy ledger.

Shared by the marginal-based synthesizers: the Gaussian mechanism applied
to a set of contingency tables with per-marginal noise scales that add up
to a given zCDP budget.
"""

from __future__ import annotations

from typing import Hashable, Iterator, Sequence

import numpy as np

from ..backends import EncodedTable
from ..privacy import PrivacyLedger, gaussian_sigma

__all__ = ["weighted_sigmas", "measure_marginals", "measure_marginal_halves",
           "release_halves", "describe"]


def weighted_sigmas(rho: float, weights: Sequence[float]) -> np.ndarray:
    """Noise scales of a set of sensitivity-1 measurements costing ``rho`` in total.

    Marginal ``i`` gets ``sigma_i = sigma / w_i`` with
    ``sigma = sqrt(sum_i w_i^2 / (2 rho))``; its zCDP cost is
    ``1 / (2 sigma_i^2) = rho * w_i^2 / sum_j w_j^2`` and the costs add up
    to ``rho``.  Equal weights give ``sigma = sqrt(m / (2 rho))`` for ``m``
    marginals (the Gaussian mechanism on their concatenation, of L2
    sensitivity ``sqrt(m)``); only the ratios of the weights matter.

    Parameters
    ----------
    rho : float
        zCDP budget of the whole set, ``> 0``.
    weights : sequence of float
        Positive relative weights, one per marginal.

    Returns
    -------
    ndarray of shape (len(weights),)
    """
    weights = np.asarray(weights, dtype=float)
    if weights.size == 0:
        return weights
    if not (rho > 0):
        raise ValueError(f"rho must be > 0, got {rho!r}.")
    if not np.all(np.isfinite(weights) & (weights > 0)):
        raise ValueError("weights must be finite and > 0.")
    sigma = gaussian_sigma(rho, sensitivity=float(np.sqrt(np.sum(weights**2))))
    return sigma / weights


def describe(labels: Sequence[Hashable], clique: Sequence[int]) -> str:
    """Readable ledger target of a marginal, e.g. ``"2-way marginal ('a', 'b')"``."""
    names = tuple(labels[c] for c in clique)
    shown = repr(names[0]) if len(names) == 1 else repr(names)
    return f"{len(names)}-way marginal {shown}"


def measure_marginals(
    table: EncodedTable,
    cliques: Sequence[Sequence[int]],
    sigmas: Sequence[float],
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """Noisy counts of marginals of the private table (discrete Gaussian mechanism).

    Every marginal is a contingency table of integer counts whose L2
    sensitivity is 1 under add/remove-one-row neighbours; each is released
    through ``ledger.gaussian`` (exact integer noise) with its own noise
    scale, so each costs ``1 / (2 sigma_i^2)``.  A weight changes only the
    noise scale, never the counts: every released value is an integer.

    Parameters
    ----------
    table : EncodedTable
        The private encoded table (its column names name the ledger
        targets).
    cliques : sequence of sequence of int
        Column positions of each marginal.
    sigmas : sequence of float
        Noise standard deviation of each marginal.
    ledger : PrivacyLedger
        Records every release.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    list of ndarray
        Flattened (C-order) noisy counts of every marginal (integers).
    """
    return [ledger.gaussian(counts, sigma=float(sigma), rng=rng, target=target,
                            n_cells=counts.size)
            for counts, sigma, target in _counted(table, cliques, sigmas)]


def measure_marginal_halves(
    table: EncodedTable,
    cliques: Sequence[Sequence[int]],
    sigmas: Sequence[float],
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every marginal measured twice, each time with half its budget.

    Marginal ``i`` is released twice through ``ledger.gaussian`` with
    independent noise of scale ``sqrt(2) sigma_i``: each release costs
    ``1 / (4 sigma_i^2)``, the two together ``1 / (2 sigma_i^2)``, what
    :func:`measure_marginals` spends on one release at ``sigma_i`` (zCDP
    composes additively), and the ledger records both releases.  The mean
    of the two halves has noise variance ``sigma_i^2``, as one release at
    ``sigma_i`` (the discrete Gaussian sum is not itself discrete Gaussian;
    its variance is), and the two halves' independent noises let the
    estimation check itself against held-out measurements
    (``sklearn_dpsynth.pgm.estimation.holdout_stop_factor``).

    Parameters
    ----------
    table, cliques, sigmas, ledger, rng
        As in :func:`measure_marginals`; ``sigmas`` is the noise of the
        mean of the two halves.

    Returns
    -------
    list of (ndarray, ndarray)
        The two halves' flattened noisy counts (integers) of every marginal.
    """
    return [release_halves(ledger, counts, sigma, rng, target)
            for counts, sigma, target in _counted(table, cliques, sigmas)]


def release_halves(ledger: PrivacyLedger, counts: np.ndarray, sigma: float,
                   rng: np.random.Generator, target: str) -> tuple[np.ndarray, np.ndarray]:
    """One marginal's ``counts`` released as two halves of the budget of one release at ``sigma``.

    Two ``ledger.gaussian`` releases with independent noise of scale
    ``sqrt(2) sigma`` (``1 / (4 sigma^2)``-zCDP each, together the cost of
    one release at ``sigma``), recorded as ``"<target>, half k of 2"``.

    Parameters
    ----------
    ledger : PrivacyLedger
        Records and draws both releases.
    counts : ndarray
        The true counts (flattened).
    sigma : float
        Noise scale of the mean of the two halves.
    rng : numpy.random.Generator
        Source of the noise.
    target : str
        What is released (see :func:`describe`).

    Returns
    -------
    (ndarray, ndarray)
        The two halves' noisy counts, in release order.
    """
    half_sigma = float(np.sqrt(2.0) * sigma)
    first, second = (ledger.gaussian(counts, sigma=half_sigma, rng=rng,
                                     target=f"{target}, half {k} of 2", n_cells=counts.size)
                     for k in (1, 2))
    return first, second


def _counted(table: EncodedTable, cliques: Sequence[Sequence[int]],
             sigmas: Sequence[float]) -> Iterator[tuple[np.ndarray, float, str]]:
    """``(counts, sigma, target)`` of every marginal, counted one at a time."""
    if len(cliques) != len(sigmas):
        raise ValueError("cliques and sigmas must have the same length.")
    for clique, sigma in zip(cliques, sigmas):
        yield table.counts(clique).ravel(), sigma, describe(table.columns, clique)
