"""Workloads of marginals and the "DP workload" baseline.

:func:`measure_workload_table` answers a workload of marginals on the private
table with the Gaussian mechanism (every marginal has L2 sensitivity 1); it
is the measurement step of PMW-pub and, exposed as :func:`measure_workload`,
the paper's "DP workload" baseline: noisy answers, no synthetic data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._marginals import project_to_simplex
from ..backends import encode_table
from .._validation import check_rng
from ..domain import Domain
from ..marginal.measure import measure_marginals, weighted_sigmas
from ..marginal.workload import workload_positions
from ..preprocessing import check_table
from ..privacy import PrivacyLedger, check_budget

__all__ = ["NoisyWorkload", "measure_workload", "measure_workload_table", "noisy_total"]

Marginal = tuple[int, ...]


def measure_workload_table(
    table: Any,
    workload: Sequence[tuple[Marginal, float]],
    rho: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Noisy answers of a workload of marginals (Gaussian mechanism, ``rho`` in total).

    Marginal ``i`` gets noise ``sigma / w_i`` (``w_i`` its weight) with
    ``sigma`` chosen by ``weighted_sigmas`` so that the costs add up to
    ``rho``; the releases are ``measure_marginals``'s (each recorded by
    ``ledger.gaussian``).

    Parameters
    ----------
    table : encoded table
        The private rows (``counts``, ``columns``).
    workload : sequence of (tuple of int, float)
        Marginals (column positions) and weights.
    rho : float
        zCDP budget of the whole workload.
    ledger : PrivacyLedger
        Records every release.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    answers : list of ndarray
        Noisy counts of every marginal, shaped like the contingency table.
    sigmas : ndarray
        Noise standard deviation of every marginal.
    """
    sigmas = weighted_sigmas(rho, [w for _, w in workload])
    marginals = [m for m, _ in workload]
    flat = measure_marginals(table, marginals, sigmas, ledger, rng)
    shapes = [tuple(int(table.sizes[j]) for j in m) for m in marginals]
    return [y.reshape(shape) for y, shape in zip(flat, shapes)], sigmas


def noisy_total(answers: Sequence[np.ndarray], sigmas: Sequence[float]) -> float:
    """Inverse-variance combination of the sums of noisy count tables (at least 1).

    The sum of a table of ``k`` cells with noise ``sigma`` has variance
    ``k sigma^2``; post-processing of the noisy answers.
    """
    variances = np.array([s * s * np.size(a) for a, s in zip(answers, sigmas)])
    sums = np.array([np.sum(a) for a in answers])
    return max(float(np.sum(sums / variances) / np.sum(1.0 / variances)), 1.0)


@dataclass
class NoisyWorkload:
    """Noisy answers of a workload of marginals (the "DP workload" baseline).

    Attributes
    ----------
    marginals : list of tuple
        Column names of every marginal.
    answers : list of ndarray
        Noisy counts of every marginal (axes in the marginal's column order;
        codes of the domain).
    sigmas : ndarray
        Noise standard deviation of every marginal.
    domain : Domain
        The public domain the counts are indexed by.
    privacy_ledger : PrivacyLedger
        Every release and its cost.
    """

    marginals: list
    answers: list
    sigmas: np.ndarray
    domain: Domain
    privacy_ledger: PrivacyLedger = field(repr=False)

    @property
    def n_records(self) -> float:
        """Inverse-variance estimate of the row count from the answers' sums."""
        return noisy_total(self.answers, self.sigmas)

    def distributions(self) -> list[np.ndarray]:
        """Every answer projected onto the probability simplex (post-processing).

        Returns
        -------
        list of ndarray
            Non-negative, summing to 1, shaped like the answers.
        """
        total = self.n_records
        return [project_to_simplex(a, total) / total for a in self.answers]


def measure_workload(
    X: Any,
    *,
    domain: dict,
    workload: Any = None,
    epsilon: float,
    delta: float = 1e-9,
    n_bins: int = 32,
    random_state: Any = None,
) -> NoisyWorkload:
    """Answer a workload of marginals with the Gaussian mechanism: no synthetic data.

    The baseline "DP workload" of Swanberg et al.: every marginal of the
    workload is released once with Gaussian noise, the whole budget split
    so that the noise of marginal ``i`` is ``sigma / w_i``.

    **Privacy argument.** Under add/remove-one-row neighbours every marginal
    (contingency table) has L2 sensitivity 1; marginal ``i`` with noise
    ``sigma_i`` is ``1 / (2 sigma_i^2)``-zCDP and the costs add up to the
    zCDP budget of ``(epsilon, delta)`` (zCDP composes additively).  The
    domain is declared (public), so nothing else touches the data; the
    ledger records every release.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_features)
        The private table.
    domain : dict
        Public domain of *every* column (``{column: entry}`` as for the
        synthesizers).
    workload : list, default=None
        Marginals: entries ``(columns, weight)`` or bare tuples of column
        names; ``None`` is every 2-way marginal of at most 10,000 cells.
    epsilon : float
        Privacy budget, finite and ``> 0``.
    delta : float, default=1e-9
        Privacy parameter in (0, 1).
    n_bins : int, default=32
        Uniform bins of ``(low, high)`` numeric declarations.
    random_state : int, Generator or None, default=None
        Seeds the noise.

    Returns
    -------
    NoisyWorkload

    Examples
    --------
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> from sklearn_dpsynth.public import measure_workload
    >>> data = make_bayesnet(n_samples=2000, n_features=4, random_state=0)
    >>> noisy = measure_workload(data.frame, domain=data.domain, epsilon=1.0, random_state=0)
    >>> len(noisy.answers)
    6
    """
    epsilon, delta = check_budget(epsilon, delta)
    frame, _ = check_table(X)
    if not isinstance(domain, dict):
        raise ValueError("domain must be a dict declaring every column.")
    missing = [c for c in frame.columns if c not in domain]
    if missing:
        raise ValueError(f"domain: column(s) {missing} are not declared.")
    dom = Domain.from_declaration({c: domain[c] for c in frame.columns}, n_bins=n_bins)
    table = encode_table(frame, dom)
    positions = workload_positions(workload, dom.columns, dom.sizes)
    ledger = PrivacyLedger(epsilon, delta)
    answers, sigmas = measure_workload_table(table, positions, ledger.rho_remaining(), ledger,
                                             check_rng(random_state))
    names = [tuple(dom.columns[j] for j in m) for m, _ in positions]
    return NoisyWorkload(names, answers, sigmas, dom, ledger)
