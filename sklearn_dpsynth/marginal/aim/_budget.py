"""AIM's budget schedule: noise scales, annealing and the final round.

All costs are zCDP and come from :mod:`sklearn_dpsynth.privacy`: a
Gaussian measurement of a marginal (L2 sensitivity 1) with noise ``sigma``
costs ``1 / (2 sigma^2)`` (:func:`~sklearn_dpsynth.privacy.gaussian_rho`); an
exponential-mechanism selection at ``epsilon`` costs ``epsilon^2 / 8``
(:func:`~sklearn_dpsynth.privacy.exponential_rho`).  The schedule only
decides the parameters; the ledger records and enforces every cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...privacy import exponential_epsilon, exponential_rho, gaussian_rho, gaussian_sigma

__all__ = ["BudgetSchedule", "GAUSSIAN_SHARE"]

#: Share of each round's budget spent on the measurement (the rest selects).
GAUSSIAN_SHARE = 0.9


@dataclass
class BudgetSchedule:
    """Current noise scale and selection epsilon of an AIM run.

    Parameters
    ----------
    sigma : float
        Noise standard deviation of the next measurement.
    epsilon : float
        Exponential-mechanism epsilon of the next selection.
    final : bool, default=False
        Whether the current round spends everything left.
    """

    sigma: float
    epsilon: float
    final: bool = False

    @classmethod
    def start(cls, rho: float, rounds: int, n_initial: int) -> "BudgetSchedule":
        """Schedule planned for ``rounds`` rounds of the budget ``rho``.

        Parameters
        ----------
        rho : float
            zCDP budget of the whole run (``> 0``).
        rounds : int
            Planned rounds ``T``: ``sigma = sqrt(T / (2 * 0.9 * rho))`` and
            ``epsilon = sqrt(8 * 0.1 * rho / T)``, so that ``T`` rounds at
            these values spend ``rho``.  It is raised to ``n_initial + 2``
            when smaller, so that the initial measurements leave room for
            rounds.
        n_initial : int
            Number of marginals measured before the first round, each at
            ``sigma``.

        Returns
        -------
        BudgetSchedule
        """
        if not rho > 0:
            raise ValueError(f"there is no budget left to fit AIM (rho={rho!r}).")
        planned = max(int(rounds), int(n_initial) + 2)
        sigma = gaussian_sigma(GAUSSIAN_SHARE * rho / planned)
        epsilon = exponential_epsilon((1.0 - GAUSSIAN_SHARE) * rho / planned)
        return cls(sigma, epsilon)

    @property
    def round_cost(self) -> float:
        """zCDP cost of one round at the current parameters."""
        return gaussian_rho(self.sigma) + self.selection_rho

    @property
    def selection_rho(self) -> float:
        """zCDP cost of a selection at the current ``epsilon``."""
        return exponential_rho(self.epsilon)

    def begin_round(self, remaining: float) -> None:
        """Switch to a final round when ``remaining`` cannot pay two rounds.

        A final round spends exactly ``remaining``: ``0.1 * remaining`` on
        the selection and the rest on the measurement.

        Parameters
        ----------
        remaining : float
            zCDP budget left before the round.
        """
        if remaining < 2.0 * self.round_cost:
            self.final = True
            self.epsilon = exponential_epsilon((1.0 - GAUSSIAN_SHARE) * remaining)
            self.sigma = gaussian_sigma(GAUSSIAN_SHARE * remaining)

    def anneal(self) -> None:
        """Halve ``sigma`` and double ``epsilon`` (each costs four times more)."""
        self.sigma /= 2.0
        self.epsilon *= 2.0
