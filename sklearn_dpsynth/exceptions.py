"""Warnings and errors raised by sklearn-dpsynth."""

from __future__ import annotations

__all__ = ["PrivacyWarning", "DomainInferenceWarning", "DomainInferenceError",
           "BudgetExceededError"]


class PrivacyWarning(UserWarning):
    """Something was read from the private data without spending budget.

    Raised only on an explicit opt-out (for example
    ``preprocessing="non-private"``); the message names what leaked.
    """


class DomainInferenceWarning(UserWarning):
    """Private domain inference found too little signal for some columns.

    Only a single grid cell cleared the noise (e.g. the zeros of a
    zero-inflated amount), so every value outside it is clipped into it;
    or no category of a column that holds many values was kept (it looks
    identifier-like or long-tailed), so it is modelled as ``"<other>"``
    alone and its synthetic values carry no information; or, with the opt-in ``preprocessing="private-lenient"``, nothing
    cleared the noise, so the column's bounds fell back to the whole public
    grid (or no category was kept) and its synthetic values carry no
    information.  Emitted once per fit, naming the columns; it is computed
    from the noisy counts only, so it costs no budget.  The fix is to
    declare those columns with ``domain=``.
    """


class DomainInferenceError(ValueError):
    """Private domain inference found no signal for some columns: the fit stops.

    Raised by private domain learning (the default
    ``preprocessing="private"``) when the noisy histogram of an undeclared
    column has nothing above the noise, *before* the synthesizer measures
    anything else: the message names the columns, the budget spent so far
    (only domain learning's share) and the fix -- declare them with
    ``domain=`` (``dpsynth describe`` or
    :func:`~sklearn_dpsynth.describe_domain` drafts a declaration), give
    more budget or rows, or opt in to ``preprocessing="private-lenient"``,
    which fits anyway with those columns carrying no information.  The
    decision reads the noisy counts only.
    """


class BudgetExceededError(RuntimeError):
    """A mechanism tried to spend more privacy budget than was granted."""
