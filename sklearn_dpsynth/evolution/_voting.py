"""Nearest-neighbour voting of the private rows over candidate rows.

Each private row casts one vote, for its nearest candidate under the
workload-aware distance; adding or removing one row changes one bin of the
vote histogram by exactly 1 (L2 sensitivity 1).  The histogram is private
and must only be released through the ledger (:func:`noisy_vote_distribution`).
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from ..privacy import PrivacyLedger, gaussian_sigma
from ._distance import nearest_candidates

__all__ = ["vote_histogram", "noisy_vote_distribution"]

Marginal = tuple[int, ...]


def vote_histogram(table: Any, candidates: np.ndarray,
                   workload: Sequence[tuple[Marginal, float]], priority: np.ndarray,
                   chunk_rows: int = 65536,
                   positions: Sequence[np.ndarray | None] | None = None) -> np.ndarray:
    """Number of private rows whose nearest candidate is each candidate (private).

    Parameters
    ----------
    table : encoded table
        The private rows (``iter_chunks``, ``sizes``).
    candidates : ndarray of int, shape (n_candidates, n_columns)
    workload : sequence of (tuple of int, float)
        Marginals and weights of the distance.
    priority : ndarray of shape (n_candidates,)
        Public tie-breaking order (see :func:`nearest_candidates`).
    chunk_rows : int, default=65536
        Rows read at once.
    positions : sequence of (ndarray or None), optional
        Code positions of ordered columns for the scaled-L1 distance (see
        :func:`~sklearn_dpsynth.evolution.workload_distance`); public.

    Returns
    -------
    ndarray of float, shape (n_candidates,)
    """
    votes = np.zeros(candidates.shape[0])
    for chunk in table.iter_chunks(chunk_rows):
        # Equal rows vote alike: search once per distinct row, weigh by its count.
        rows, counts = np.unique(chunk, axis=0, return_counts=True)
        nearest = nearest_candidates([rows], candidates, table.sizes, workload, priority,
                                     positions)
        votes += np.bincount(nearest, weights=counts, minlength=candidates.shape[0])
    return votes


def noisy_vote_distribution(votes: np.ndarray, rho: float, ledger: PrivacyLedger,
                            rng: np.random.Generator, target: str,
                            threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Release the vote histogram with discrete Gaussian noise; threshold, clip, normalise.

    Parameters
    ----------
    votes : ndarray
        The exact histogram (sensitivity 1).
    rho : float
        zCDP cost of the release.
    ledger : PrivacyLedger
        Records the release.
    rng : numpy.random.Generator
        Source of the noise.
    target : str
        Ledger description.
    threshold : float, default=0.0
        Noisy votes below ``threshold * sigma`` become 0 (post-processing;
        0 is the paper's plain clipping).

    Returns
    -------
    probabilities : ndarray
        Clipped, normalised noisy votes (uniform, with a UserWarning, when
        all clip to 0).
    noisy : ndarray
        The noisy votes as released (their sum estimates the row count; a
        ranking by them is post-processing).
    """
    sigma = gaussian_sigma(rho)
    noisy = ledger.gaussian(votes, sigma=sigma, rng=rng, target=target, n_cells=votes.size)
    clipped = np.where(noisy >= threshold * sigma, np.maximum(noisy, 0.0), 0.0)
    total = clipped.sum()
    if total > 0:
        probs = clipped / total
    else:
        # Decided by the noisy votes only: the warning is post-processing.
        warnings.warn(f"{target}: every noisy vote fell below the threshold, so the noise "
                      f"swamped the votes and the candidates get uniform probabilities (no "
                      f"information from the data). Raise epsilon, lower threshold or use "
                      f"fewer candidates.", UserWarning, stacklevel=3)
        probs = np.full(votes.size, 1.0 / votes.size)
    return probs, noisy
