"""The privacy ledger: every access to private data, and what it cost.

A :class:`PrivacyLedger` is created by ``fit`` with the declared budget
``(epsilon, delta)``.  Each mechanism records an entry *before* its output is
released; an entry that would take the total past the budget raises
:class:`~sklearn_dpsynth.exceptions.BudgetExceededError` and releases
nothing.  :meth:`PrivacyLedger.share` hands a part of the budget to a
sub-task (a :class:`LedgerShare`) that records in the same ledger but cannot
spend more than its part.

Accounting
----------
Entries carry a zCDP cost ``rho``, an optional Renyi-DP curve (for
subsampled mechanisms such as DP-SGD, whose cost is not a multiple of
``alpha``), and an optional additive ``delta`` (for mechanisms that are
only approximately zCDP, e.g. a thresholded histogram over an unknown set of
categories).  Composition adds Renyi curves order by order and adds the
additive deltas; the final ``(epsilon, delta)`` is the tight conversion of
the composed curve at ``delta - sum(additive deltas)``.  With only zCDP
entries this is exactly ``rho_to_epsilon(sum rho, delta')``.  Every cost
formula comes from :mod:`sklearn_dpsynth.privacy.accounting`; the Renyi
curves are checked by ``privacy._curves`` and the summary table is built
by ``privacy._summary``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import BudgetExceededError
from ._curves import RELATIVE_SLACK, Curve, as_curve, check_cost, common_orders
from ._summary import ledger_summary
from .accounting import epsilon_to_rho, gaussian_sigma, rdp_to_epsilon, rho_to_epsilon
from .budget import check_budget
from .mechanisms import DiscreteGaussian, ExponentialMechanism, Mechanism, PermuteAndFlip

__all__ = ["LedgerEntry", "LedgerShare", "PrivacyLedger", "ROW_COUNT_TARGET", "noisy_row_count"]

#: The selection mechanisms of :meth:`_Spending.select`, by ledger label.
_SELECTIONS = {cls.name: cls for cls in (ExponentialMechanism, PermuteAndFlip)}


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


class _Spending(ABC):
    """The spending API shared by :class:`PrivacyLedger` and :class:`LedgerShare`.

    Subclasses provide ``spend``, ``fits``, ``rho_remaining`` and
    ``delta_remaining``; the mechanisms and the child budgets are built on
    them.
    """

    @abstractmethod
    def spend(self, *, target: str, mechanism: str, **costs: Any) -> LedgerEntry:
        """Record an access; raise if it would exceed the budget."""

    @abstractmethod
    def fits(self, **candidate: Any) -> bool:
        """Whether an entry with the given costs would stay within budget."""

    @abstractmethod
    def rho_remaining(self) -> float:
        """zCDP budget that can still be spent."""

    @abstractmethod
    def delta_remaining(self) -> float:
        """Additive delta that can still be spent."""

    def release(self, mechanism: Mechanism, values: Any, *, rng: np.random.Generator | None,
                target: str, **details: Any) -> Any:
        """Record what ``mechanism`` costs, then release its output on ``values``.

        The one way estimators touch private data: the cost (the
        mechanism's privacy map, :meth:`~sklearn_dpsynth.privacy.Mechanism.cost`)
        is recorded first, and nothing is released when it does not fit.

        Parameters
        ----------
        mechanism : Mechanism
            The mechanism, built from public parameters.
        values
            The exact (private) answers the mechanism releases.
        rng : numpy.random.Generator
            Source of randomness.
        target : str
            What is released, for the ledger.
        **details
            Extra information kept in the entry (besides the mechanism's
            own public parameters).

        Returns
        -------
        The mechanism's output.

        Raises
        ------
        BudgetExceededError
            If the cost would exceed the budget (nothing is released).
        """
        cost = mechanism.cost()
        self.spend(target=target, mechanism=mechanism.name, rho=cost.rho, delta=cost.delta,
                   rdp=cost.rdp, noise_scale=mechanism.noise_scale,
                   sensitivity=mechanism.sensitivity, **{**mechanism.entry_fields, **details})
        return mechanism.release(values, rng)

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
        """Release integer ``values`` with the discrete Gaussian mechanism and record it.

        :meth:`release` with a
        :class:`~sklearn_dpsynth.privacy.DiscreteGaussian`.

        Parameters
        ----------
        values : array-like of int
            Exact integer answers with L2 sensitivity ``sensitivity``.
        sigma : float
            Scale of the noise.
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
        noisy : ndarray of float (integer-valued)
        """
        return self.release(DiscreteGaussian(sigma, sensitivity), values, rng=rng,
                            target=target, **details)

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

        :meth:`release` with the selection mechanism costing ``rho``.

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
            :class:`~sklearn_dpsynth.privacy.ExponentialMechanism` at
            ``epsilon = sqrt(8 rho)`` or
            :class:`~sklearn_dpsynth.privacy.PermuteAndFlip` at
            ``epsilon = sqrt(2 rho)`` (the generic pure-DP to zCDP
            conversion).
        **details
            Extra information kept in the entry.

        Returns
        -------
        index : int
        """
        if method not in _SELECTIONS:
            raise ValueError(f"method must be one of {sorted(_SELECTIONS)}, got {method!r}.")
        mechanism = _SELECTIONS[method].from_rho(rho, sensitivity)
        return self.release(mechanism, scores, rng=rng, target=target,
                            n_candidates=int(np.size(scores)), **details)

    def share(self, rho: float, delta: float = 0.0, *, label: str = "") -> "LedgerShare":
        """A part of the remaining budget for a sub-task, recorded here.

        Parameters
        ----------
        rho : float
            zCDP budget of the share, finite and ``>= 0``.
        delta : float, default=0.0
            Additive delta the share may spend, in [0, 1).
        label : str, default=""
            Shown in the ``share`` column of
            :meth:`~sklearn_dpsynth.PrivacyLedger.summary`
            (``"outer/inner"`` for a share of a share).

        Returns
        -------
        LedgerShare

        Raises
        ------
        BudgetExceededError
            If spending the whole share now would exceed this budget.
        """
        return LedgerShare(self, rho, delta, label=label)


class PrivacyLedger(_Spending):
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
        The accesses, in order (those made through shares included).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpsynth.privacy import gaussian_sigma
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-9)
    >>> rng = np.random.default_rng(0)
    >>> domain = ledger.share(rho=0.1 * ledger.rho_remaining(), label="domain")
    >>> _ = domain.gaussian([3, 4], sigma=gaussian_sigma(domain.rho_remaining()),
    ...                     rng=rng, target="histogram of 'age'")
    >>> noisy = ledger.gaussian([10, 5], sigma=gaussian_sigma(ledger.rho_remaining()),
    ...                         rng=rng, target="histogram of 'sex'")
    >>> eps, delta = ledger.spent()
    >>> bool(abs(eps - 1.0) < 1e-6)
    True
    >>> list(ledger.summary()["share"])
    ['domain', '']
    """

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon, self.delta = check_budget(epsilon, delta, warn=False)
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
        ignoring Renyi-curve entries (see
        :meth:`~sklearn_dpsynth.PrivacyLedger.rho_remaining`).
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

    def delta_remaining(self) -> float:
        """Additive delta that one more entry could still carry.

        Returns
        -------
        delta : float
            The largest additive delta whose entry (with no other cost) still
            fits, found by bisection: less than ``delta`` minus the additive
            deltas spent, since the conversion of the rest needs some delta.
        """
        lo, hi = 0.0, max(self._conversion_delta(), 0.0)
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if self.fits(delta=mid):
                lo = mid
            else:
                hi = mid
        return lo

    def epsilon_if(
        self,
        *,
        rho: float = 0.0,
        delta: float = 0.0,
        rdp: Curve | None = None,
    ) -> float:
        """Epsilon at the ledger's delta if one more entry were added.

        Parameters
        ----------
        rho, delta : float
            zCDP cost and additive delta of the candidate entry.
        rdp : (orders, values), optional
            Renyi curve of the candidate entry; the orders may come in any
            order (they are sorted with their values).

        Returns
        -------
        epsilon : float
            ``inf`` when the deltas alone exhaust the budget's delta.

        Raises
        ------
        ValueError
            If ``rdp`` is not a valid curve (the message names ``rdp``).
        """
        curve = None if rdp is None else as_curve(rdp)
        conv_delta = self._conversion_delta(delta)
        if conv_delta <= 0:
            return math.inf
        total_rho = self.rho_spent + rho
        curves = [e for e in self.entries if e.rdp_orders]
        if not curves and curve is None:
            return rho_to_epsilon(total_rho, conv_delta)
        orders = common_orders([e.rdp_orders for e in curves]
                               + ([] if curve is None else [curve[0]]))
        values = total_rho * orders
        for entry in curves:
            values = values + entry.rdp_at(orders)
        if curve is not None:
            values = values + curve[1][np.searchsorted(curve[0], orders)]
        return rdp_to_epsilon(orders, values, conv_delta)[0]

    def fits(self, **candidate: Any) -> bool:
        """Whether an entry with the given costs would stay within budget.

        Parameters
        ----------
        **candidate
            ``rho``, ``delta`` and/or ``rdp`` as in
            :meth:`~sklearn_dpsynth.PrivacyLedger.epsilon_if`.

        Returns
        -------
        bool
        """
        return self.epsilon_if(**candidate) <= self.epsilon * (1 + RELATIVE_SLACK)

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
        rdp: Curve | None = None,
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
            Renyi-DP curve for mechanisms not expressed as zCDP; stored
            sorted by order.
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
        check_cost(rho, delta)
        curve = None if rdp is None else as_curve(rdp)
        if not self.fits(rho=rho, delta=delta, rdp=curve):
            raise BudgetExceededError(
                f"measuring {target} with {mechanism} (rho={rho:.4g}, delta={delta:.3g}) "
                f"would exceed the budget epsilon={self.epsilon}, delta={self.delta}; "
                f"already spent epsilon={self.spent()[0]:.6g}."
            )
        orders, values = ((), ()) if curve is None else (
            tuple(float(a) for a in curve[0]), tuple(float(v) for v in curve[1]))
        entry = LedgerEntry(target=target, mechanism=mechanism, rho=float(rho),
                            delta=float(delta), noise_scale=noise_scale,
                            sensitivity=sensitivity, rdp_orders=orders,
                            rdp_values=values, details=dict(details))
        self.entries.append(entry)
        return entry

    # ----------------------------------------------------------------- display
    def summary(self) -> pd.DataFrame:
        """One row per entry: its own cost, then the guarantee of everything so far.

        Returns
        -------
        table : pandas.DataFrame
            One row per entry, in order, with the columns

            * ``target``, ``mechanism``, ``share`` (the label of the
              :class:`~sklearn_dpsynth.privacy.LedgerShare` it was spent through, ``""`` if none),
              ``noise_scale``, ``sensitivity``;
            * ``rho``: the entry's zCDP cost (NaN for an entry given only
              by a Renyi curve, e.g. DP-SGD, which is not zCDP);
            * ``epsilon``: the entry's own epsilon, as if it were alone,
              at the ledger's delta (its additive delta included);
            * ``order``: for Renyi-curve entries, the order attaining that
              epsilon (NaN otherwise);
            * ``delta``: the entry's additive delta (0 for exact zCDP and
              Renyi-DP mechanisms);
            * ``cumulative_epsilon``, ``cumulative_delta``: the
              ``(epsilon, delta)`` guarantee of this entry and all before
              it, composed exactly as
              :meth:`~sklearn_dpsynth.PrivacyLedger.spent` does.  The delta is the
              ledger's: the additive deltas so far plus the delta the
              conversion of the composed Renyi curve uses.
        """
        return ledger_summary(self)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        eps, _ = self.spent()
        return (f"PrivacyLedger(budget=(epsilon={self.epsilon:g}, delta={self.delta:g}), "
                f"spent epsilon={eps:.6g} in {len(self.entries)} entries, "
                f"rho={self.rho_spent:.6g})")


class LedgerShare(_Spending):
    """A part ``(rho, delta)`` of a budget, spent through its parent.

    Created by :meth:`~sklearn_dpsynth.PrivacyLedger.share` (or
    :meth:`~sklearn_dpsynth.privacy.LedgerShare.share`).
    It has the ledger's spending API; every entry is recorded in the parent,
    so the root ledger's ``entries`` and ``summary()`` show it in order.  A
    spend raises :class:`~sklearn_dpsynth.BudgetExceededError`
    and records nothing when it would take the share past its ``rho`` or
    its ``delta``, or the parent past its own budget.

    A Renyi-curve entry (e.g. DP-SGD) counts against the share's ``rho`` as
    the ``rho`` whose zCDP conversion gives the same epsilon, alone, at the
    ledger's delta.  This only divides the budget between sub-tasks: the
    guarantee is the root ledger's, which composes the curve itself, order
    by order.

    Parameters
    ----------
    parent : PrivacyLedger or LedgerShare
        The budget this share is taken from.
    rho : float
        zCDP budget of the share, finite and ``>= 0``.
    delta : float, default=0.0
        Additive delta the share may spend, in [0, 1).
    label : str, default=""
        Name of the share in the summary.

    Attributes
    ----------
    entries : list of LedgerEntry
        The entries spent through this share (and its own shares), in order.

    Examples
    --------
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-9)
    >>> budget = ledger.share(rho=0.001, delta=5e-10, label="domain")
    >>> _ = budget.spend(target="categories of 'sex'", mechanism="thresholded",
    ...                  rho=0.0006, delta=2e-10)
    >>> round(budget.rho_remaining(), 6), [e.target for e in ledger.entries]
    (0.0004, ["categories of 'sex'"])
    """

    def __init__(self, parent: PrivacyLedger | LedgerShare, rho: float,
                 delta: float = 0.0, *, label: str = "") -> None:
        if not (isinstance(rho, (int, float, np.floating, np.integer))
                and math.isfinite(rho) and rho >= 0):
            raise ValueError(f"rho of a budget share must be finite and >= 0, got {rho!r}.")
        if not (isinstance(delta, (int, float, np.floating, np.integer)) and 0 <= delta < 1):
            raise ValueError(f"delta of a budget share must lie in [0, 1), got {delta!r}.")
        if not parent.fits(rho=float(rho), delta=float(delta)):
            raise BudgetExceededError(
                f"a budget share of rho={rho:.4g}, delta={delta:.3g} exceeds what remains "
                "of its parent's budget.")
        self.parent = parent
        self.rho = float(rho)
        self.delta = float(delta)
        self.label = str(label)
        parent_label = getattr(parent, "path", "")
        self.path = "/".join(part for part in (parent_label, self.label) if part)
        self.entries: list[LedgerEntry] = []
        self._charges: list[float] = []

    @property
    def rho_spent(self) -> float:
        """zCDP charged to this share so far (curves at their linear bound)."""
        return float(sum(self._charges))

    @property
    def delta_spent(self) -> float:
        """Additive delta spent through this share so far."""
        return float(sum(e.delta for e in self.entries))

    def rho_remaining(self) -> float:
        """zCDP budget left: the share's own rest, at most what the parent has left.

        Returns
        -------
        rho : float
        """
        return max(min(self.rho - self.rho_spent, self.parent.rho_remaining()), 0.0)

    def delta_remaining(self) -> float:
        """Additive delta left: the share's own rest, at most what the parent allows.

        Returns
        -------
        delta : float
        """
        return max(min(self.delta - self.delta_spent, self.parent.delta_remaining()), 0.0)

    @property
    def root(self) -> PrivacyLedger:
        """The ledger at the top of the chain of shares."""
        parent = self.parent
        while isinstance(parent, LedgerShare):
            parent = parent.parent
        return parent

    def _charge(self, rho: float, curve: tuple[np.ndarray, np.ndarray] | None) -> float:
        """What an entry counts against the share: its rho, or a curve's equivalent rho."""
        if curve is None:
            return float(rho)
        delta = self.root.delta
        epsilon = rdp_to_epsilon(curve[0], curve[1] + rho * curve[0], delta)[0]
        return epsilon_to_rho(epsilon, delta) if epsilon > 0 else 0.0

    def _within_share(self, charge: float, delta: float) -> bool:
        slack = 1.0 + RELATIVE_SLACK
        return (self.rho_spent + charge <= self.rho * slack
                and self.delta_spent + delta <= self.delta * slack)

    def fits(self, *, rho: float = 0.0, delta: float = 0.0, rdp: Curve | None = None) -> bool:
        """Whether an entry with these costs fits in the share and in its parent.

        Parameters
        ----------
        rho, delta : float, default=0.0
            zCDP cost and additive delta of the candidate entry.
        rdp : (orders, values), optional
            Renyi curve of the candidate entry.

        Returns
        -------
        bool
        """
        curve = None if rdp is None else as_curve(rdp)
        return (self._within_share(self._charge(rho, curve), delta)
                and self.parent.fits(rho=rho, delta=delta, rdp=curve))

    def spend(
        self,
        *,
        target: str,
        mechanism: str,
        rho: float = 0.0,
        delta: float = 0.0,
        rdp: Curve | None = None,
        noise_scale: float | None = None,
        sensitivity: float | None = None,
        **details: Any,
    ) -> LedgerEntry:
        """Record an access in the parent; raise if it would exceed the share.

        Parameters
        ----------
        target, mechanism : str
            What is measured and how.
        rho, delta : float, default=0.0
            zCDP cost and additive delta.
        rdp : (orders, values), optional
            Renyi-DP curve (see the class docstring for how it is charged).
        noise_scale, sensitivity : float, optional
            Shown in the summary.
        **details
            Extra information kept in the entry (with ``share``: the label).

        Returns
        -------
        entry : LedgerEntry

        Raises
        ------
        BudgetExceededError
            If the entry would take the share past ``(rho, delta)``, or the
            parent past its budget.
        """
        check_cost(rho, delta)
        curve = None if rdp is None else as_curve(rdp)
        charge = self._charge(rho, curve)
        if not self._within_share(charge, delta):
            raise BudgetExceededError(
                f"measuring {target} with {mechanism} (rho={charge:.4g}, delta={delta:.3g}) "
                f"would exceed the budget share {self.path or '(unnamed)'} of "
                f"rho={self.rho:.4g}, delta={self.delta:.3g}; already spent "
                f"rho={self.rho_spent:.4g}, delta={self.delta_spent:.3g}.")
        if self.path:
            details.setdefault("share", self.path)
        entry = self.parent.spend(target=target, mechanism=mechanism, rho=rho, delta=delta,
                                  rdp=curve, noise_scale=noise_scale,
                                  sensitivity=sensitivity, **details)
        self.entries.append(entry)
        self._charges.append(charge)
        return entry

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return (f"LedgerShare({self.path or '(unnamed)'}: rho={self.rho:g}, "
                f"delta={self.delta:g}; spent rho={self.rho_spent:.6g}, "
                f"delta={self.delta_spent:.3g} in {len(self.entries)} entries)")


#: Ledger target of every release of the number of rows.
ROW_COUNT_TARGET = "row count"


def noisy_row_count(ledger: PrivacyLedger | LedgerShare, n_rows: int, rho: float,
                    rng: np.random.Generator) -> float:
    """Release the number of rows with the discrete Gaussian mechanism.

    Under add/remove-one-row neighbours the count has sensitivity 1; the
    release costs ``rho`` (noise scale
    :func:`~sklearn_dpsynth.privacy.gaussian_sigma` of ``rho``) and is recorded
    with the target ``"row count"``.

    Parameters
    ----------
    ledger : PrivacyLedger or LedgerShare
        Records the release.
    n_rows : int
        The true (private) count.
    rho : float
        zCDP budget of the release, ``> 0``.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    count : float
        The noisy count, an integer (it may be 0 or negative: callers floor
        it where they need a size).
    """
    noisy = ledger.gaussian(np.array([int(n_rows)]), sigma=gaussian_sigma(rho), rng=rng,
                            target=ROW_COUNT_TARGET, n_cells=1)
    return float(noisy[0])
