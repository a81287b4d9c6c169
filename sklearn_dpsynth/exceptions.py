"""Warnings and errors raised by sklearn-dpsynth."""

from __future__ import annotations

__all__ = ["PrivacyWarning", "DomainInferenceWarning", "BudgetExceededError"]


class PrivacyWarning(UserWarning):
    """Something was read from the private data without spending budget.

    Raised only on an explicit opt-out (for example
    ``preprocessing="non-private"``); the message names what leaked.
    """


class DomainInferenceWarning(UserWarning):
    """Private domain inference found no, or too little, signal for some columns.

    Their noisy histograms had no count above the noise, so their bounds
    fell back to the whole public grid (or no category was kept) and their
    synthetic values carry no information; or only a single grid cell
    cleared the noise (e.g. the zeros of a zero-inflated amount), so every
    value outside it is clipped into it.  Emitted once per fit, naming
    the columns; it is computed from the noisy counts only, so it costs no
    budget.  The fix is to declare those columns with ``domain=``.
    """


class BudgetExceededError(RuntimeError):
    """A mechanism tried to spend more privacy budget than was granted."""
