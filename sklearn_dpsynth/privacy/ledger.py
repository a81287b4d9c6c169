"""The privacy ledger: every access to private data, and what it cost.

A :class:`PrivacyLedger` is created by ``fit`` with the declared budget
``(epsilon, delta)``.  Each mechanism records an entry *before* its output is
released; an entry that would take the total past the budget raises
:class:`~sklearn_dpsynth.exceptions.BudgetExceededError` and releases
nothing.

Accounting
----------
Entries carry a zCDP cost ``rho``, an optional Renyi-DP curve (for
subsampled mechanisms such as DP-SGD, whose cost is not a multiple of
``alpha``), and an optional additive ``delta`` (for mechanisms that are
only approximately zCDP, e.g. a thresholded histogram over an unknown set of
categories).  Composition adds Renyi curves order by order and adds the
additive deltas; the final ``(epsilon, delta)`` is the tight conversion of
the composed curve at ``delta - sum(additive deltas)``.  With only zCDP
entries this is exactly ``rho_to_epsilon(sum rho, delta')``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from ..exceptions import BudgetExceededError
from .accounting import (
    epsilon_to_rho,
    exponential_epsilon,
    gaussian_rho,
    rdp_to_epsilon,
    rho_to_epsilon,
)
from .mechanisms import exponential_mechanism, gaussian_mechanism, permute_and_flip

__all__ = ["LedgerEntry", "PrivacyLedger"]

#: Relative slack allowed when checking a total against the budget; it only
#: absorbs floating-point rounding of sums that are equal on paper.
_RELATIVE_SLACK = 1e-9


@dataclass(frozen=True)
class LedgerEntry:
    """One access to the private data.

    Attributes
    ----------
    target : str
        What was measured (e.g. ``"marginal ('age', 'sex')"``).
    mechanism : str
        The mechanism used (e.g. ``"gaussian"``).
    rho : float
        zCDP cost (0 when the cost is given only as a Renyi curve).
    delta : float
        Additive delta of an approximately-zCDP mechanism (usually 0).
    noise_scale : float or None
        Noise standard deviation, or the Gumbel/exponential scale.
    sensitivity : float or None
        Sensitivity the noise was calibrated to.
    rdp_orders, rdp_values : tuple of float
        Renyi-DP curve of a non-zCDP mechanism (empty otherwise).
    details : dict
        Anything else worth showing (number of cells, steps, ...).
    """

    target: str
    mechanism: str
    rho: float = 0.0
    delta: float = 0.0
    noise_scale: float | None = None
    sensitivity: float | None = None
    rdp_orders: tuple = ()
    rdp_values: tuple = ()
    details: dict = field(default_factory=dict)

    def rdp_at(self, orders: np.ndarray) -> np.ndarray:
        """Renyi divergence of this entry at each order (``inf`` if unknown)."""
        orders = np.asarray(orders, dtype=float)
        values = self.rho * orders
        if self.rdp_orders:
            known = dict(zip(self.rdp_orders, self.rdp_values))
            values = values + np.array([known.get(float(a), np.inf) for a in orders])
        return values


class PrivacyLedger:
    """Budget and record of every private-data access made during a fit.

    Parameters
    ----------
    epsilon : float
        Total privacy budget, finite and ``> 0``.
    delta : float
        Total delta, in (0, 1).

    Attributes
    ----------
    entries : list of LedgerEntry
        The accesses, in order.

    Examples
    --------
    >>> import numpy as np
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-9)
    >>> rng = np.random.default_rng(0)
    >>> noisy = ledger.gaussian([10.0, 5.0], sigma=ledger.sigma_for(ledger.rho_remaining()),
    ...                         rng=rng, target="histogram of 'sex'")
    >>> eps, delta = ledger.spent()
    >>> bool(abs(eps - 1.0) < 1e-6)
    True
    """

    def __init__(self, epsilon: float, delta: float) -> None:
        if not (isinstance(epsilon, (int, float, np.floating, np.integer))
                and math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}.")
        if not (isinstance(delta, (int, float, np.floating, np.integer))
                and 0 < delta < 1):
            raise ValueError(f"delta must be a number in (0, 1), got {delta!r}.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.entries: list[LedgerEntry] = []

    # ------------------------------------------------------------------ totals
    @property
    def rho_spent(self) -> float:
        """Sum of the zCDP costs of all entries."""
        return float(sum(e.rho for e in self.entries))

    @property
    def additive_delta_spent(self) -> float:
        """Sum of the additive deltas of approximately-zCDP entries."""
        return float(sum(e.delta for e in self.entries))

    def _conversion_delta(self, extra_delta: float = 0.0) -> float:
        return self.delta - self.additive_delta_spent - extra_delta

    @property
    def rho_budget(self) -> float:
        """zCDP budget equivalent to ``(epsilon, delta)``.

        Computed at the delta left after additive deltas already spent, and
        ignoring Renyi-curve entries (see :meth:`rho_remaining`).
        """
        return epsilon_to_rho(self.epsilon, self._conversion_delta())

    def rho_remaining(self) -> float:
        """zCDP budget that can still be spent by zCDP mechanisms.

        Returns
        -------
        rho : float
            Exact when all entries are zCDP; with Renyi-curve entries it is
            the largest ``rho`` whose addition still fits, found by bisection.
        """
        if not any(e.rdp_orders for e in self.entries):
            return max(self.rho_budget - self.rho_spent, 0.0)
        lo, hi = 0.0, self.rho_budget
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if self.fits(rho=mid):
                lo = mid
            else:
                hi = mid
        return lo

    def epsilon_if(
        self,
        *,
        rho: float = 0.0,
        delta: float = 0.0,
        rdp: tuple[Sequence[float], Sequence[float]] | None = None,
    ) -> float:
        """Epsilon at the ledger's delta if one more entry were added.

        Parameters
        ----------
        rho, delta : float
            zCDP cost and additive delta of the candidate entry.
        rdp : (orders, values), optional
            Renyi curve of the candidate entry.

        Returns
        -------
        epsilon : float
            ``inf`` when the deltas alone exhaust the budget's delta.
        """
        conv_delta = self._conversion_delta(delta)
        if conv_delta <= 0:
            return math.inf
        total_rho = self.rho_spent + rho
        curves = [e for e in self.entries if e.rdp_orders]
        if not curves and rdp is None:
            return rho_to_epsilon(total_rho, conv_delta)
        orders = self._common_orders(curves, rdp)
        values = total_rho * orders
        for entry in curves:
            values = values + entry.rdp_at(orders)
        if rdp is not None:
            values = values + np.asarray(rdp[1], dtype=float)[
                np.searchsorted(np.asarray(rdp[0], dtype=float), orders)]
        return rdp_to_epsilon(orders, values, conv_delta)[0]

    @staticmethod
    def _common_orders(curves: list[LedgerEntry], rdp) -> np.ndarray:
        sets = [set(e.rdp_orders) for e in curves]
        if rdp is not None:
            sets.append({float(a) for a in rdp[0]})
        orders = sorted(set.intersection(*sets))
        if not orders:
            raise ValueError("Renyi curves in the ledger share no common order.")
        return np.asarray(orders, dtype=float)

    def fits(self, **candidate: Any) -> bool:
        """Whether an entry with the given costs would stay within budget.

        Parameters
        ----------
        **candidate
            ``rho``, ``delta`` and/or ``rdp`` as in :meth:`epsilon_if`.

        Returns
        -------
        bool
        """
        return self.epsilon_if(**candidate) <= self.epsilon * (1 + _RELATIVE_SLACK)

    def spent(self) -> tuple[float, float]:
        """The ``(epsilon, delta)`` guarantee of everything recorded so far.

        Returns
        -------
        epsilon : float
            Never above the budget's epsilon (spending past it raises).
        delta : float
            The budget's delta when anything was spent (the conversion uses
            it in full), else 0.
        """
        if not self.entries:
            return 0.0, 0.0
        return min(self.epsilon_if(), self.epsilon), self.delta

    # ---------------------------------------------------------------- spending
    def spend(
        self,
        *,
        target: str,
        mechanism: str,
        rho: float = 0.0,
        delta: float = 0.0,
        rdp: tuple[Sequence[float], Sequence[float]] | None = None,
        noise_scale: float | None = None,
        sensitivity: float | None = None,
        **details: Any,
    ) -> LedgerEntry:
        """Record an access; raise if it would exceed the budget.

        Parameters
        ----------
        target : str
            What is measured.
        mechanism : str
            Name of the mechanism.
        rho : float, default=0.0
            zCDP cost.
        delta : float, default=0.0
            Additive delta (approximate zCDP).
        rdp : (orders, values), optional
            Renyi-DP curve for mechanisms not expressed as zCDP.
        noise_scale, sensitivity : float, optional
            Shown in the summary.
        **details
            Extra information kept in the entry.

        Returns
        -------
        entry : LedgerEntry

        Raises
        ------
        BudgetExceededError
            If the total would exceed ``(epsilon, delta)``.
        """
        if rho < 0 or delta < 0 or not math.isfinite(rho):
            raise ValueError("rho and delta of an entry must be finite and >= 0.")
        if not self.fits(rho=rho, delta=delta, rdp=rdp):
            raise BudgetExceededError(
                f"measuring {target} with {mechanism} (rho={rho:.4g}, delta={delta:.3g}) "
                f"would exceed the budget epsilon={self.epsilon}, delta={self.delta}; "
                f"already spent epsilon={self.spent()[0]:.6g}."
            )
        orders, values = ((), ()) if rdp is None else (
            tuple(float(a) for a in rdp[0]), tuple(float(v) for v in rdp[1]))
        entry = LedgerEntry(target=target, mechanism=mechanism, rho=float(rho),
                            delta=float(delta), noise_scale=noise_scale,
                            sensitivity=sensitivity, rdp_orders=orders,
                            rdp_values=values, details=dict(details))
        self.entries.append(entry)
        return entry

    @staticmethod
    def sigma_for(rho: float, sensitivity: float = 1.0) -> float:
        """Gaussian noise scale that costs exactly ``rho`` at ``sensitivity``."""
        return sensitivity / math.sqrt(2.0 * rho)

    def gaussian(
        self,
        values: np.ndarray,
        *,
        sigma: float,
        rng: np.random.Generator,
        target: str,
        sensitivity: float = 1.0,
        **details: Any,
    ) -> np.ndarray:
        """Release ``values`` with the Gaussian mechanism and record it.

        Parameters
        ----------
        values : array-like
            Exact answers with L2 sensitivity ``sensitivity``.
        sigma : float
            Noise standard deviation.
        rng : numpy.random.Generator
            Source of randomness.
        target : str
            What is measured.
        sensitivity : float, default=1.0
            L2 sensitivity of ``values``.
        **details
            Extra information kept in the entry.

        Returns
        -------
        noisy : ndarray
        """
        rho = gaussian_rho(sigma, sensitivity)
        self.spend(target=target, mechanism="gaussian", rho=rho, noise_scale=sigma,
                   sensitivity=sensitivity, **details)
        return gaussian_mechanism(values, sigma, rng)

    def select(
        self,
        scores: np.ndarray,
        *,
        rho: float,
        rng: np.random.Generator,
        target: str,
        sensitivity: float = 1.0,
        method: str = "exponential",
        **details: Any,
    ) -> int:
        """Select a candidate privately and record the cost.

        Parameters
        ----------
        scores : array-like of float
            Quality of each candidate (higher is better).
        rho : float
            zCDP budget of this selection.
        rng : numpy.random.Generator
            Source of randomness.
        target : str
            What is selected.
        sensitivity : float, default=1.0
            Sensitivity of the scores.
        method : {"exponential", "permute-and-flip"}, default="exponential"
            The exponential mechanism runs at ``epsilon = sqrt(8 rho)``;
            permute-and-flip at ``epsilon = sqrt(2 rho)`` (generic pure-DP to
            zCDP conversion).
        **details
            Extra information kept in the entry.

        Returns
        -------
        index : int
        """
        if method == "exponential":
            epsilon = exponential_epsilon(rho)
            chooser: Callable = exponential_mechanism
        elif method == "permute-and-flip":
            epsilon = math.sqrt(2.0 * rho)
            chooser = permute_and_flip
        else:
            raise ValueError(
                f"method must be 'exponential' or 'permute-and-flip', got {method!r}.")
        self.spend(target=target, mechanism=method, rho=rho, noise_scale=epsilon,
                   sensitivity=sensitivity, n_candidates=int(np.size(scores)), **details)
        return chooser(scores, epsilon, rng, sensitivity=sensitivity)

    # ----------------------------------------------------------------- display
    def summary(self) -> pd.DataFrame:
        """One row per entry with its cost, plus the running epsilon.

        Returns
        -------
        table : pandas.DataFrame
            Columns ``target, mechanism, noise_scale, sensitivity, rho,
            delta, cumulative_epsilon``.
        """
        rows = []
        running = PrivacyLedger(self.epsilon, self.delta)
        for entry in self.entries:
            running.entries.append(entry)
            rows.append({
                "target": entry.target,
                "mechanism": entry.mechanism,
                "noise_scale": entry.noise_scale,
                "sensitivity": entry.sensitivity,
                "rho": entry.rho,
                "delta": entry.delta,
                "cumulative_epsilon": running.epsilon_if(),
            })
        columns = ["target", "mechanism", "noise_scale", "sensitivity", "rho", "delta",
                   "cumulative_epsilon"]
        return pd.DataFrame(rows, columns=columns)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        eps, _ = self.spent()
        return (f"PrivacyLedger(budget=(epsilon={self.epsilon:g}, delta={self.delta:g}), "
                f"spent epsilon={eps:.6g} in {len(self.entries)} entries, "
                f"rho={self.rho_spent:.6g})")
