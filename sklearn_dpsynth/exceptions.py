"""Warnings and errors raised by sklearn-dpsynth."""

from __future__ import annotations

__all__ = ["PrivacyWarning", "BudgetExceededError"]


class PrivacyWarning(UserWarning):
    """Something was read from the private data without spending budget.

    Raised only on an explicit opt-out (for example
    ``preprocessing="non-private"``); the message names what leaked.
    """


class BudgetExceededError(RuntimeError):
    """A mechanism tried to spend more privacy budget than was granted."""
