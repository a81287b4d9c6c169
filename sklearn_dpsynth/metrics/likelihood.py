"""Held-out log-likelihood of a fitted synthesizer."""

from __future__ import annotations

from typing import Any

from sklearn.utils.validation import check_is_fitted

__all__ = ["heldout_log_likelihood"]


def heldout_log_likelihood(estimator: Any, X_test: Any) -> float:
    """Mean log-likelihood (nats per row) of held-out data under a fitted synthesizer.

    This is ``estimator.score(X_test)``; the synthesizers define ``score`` as
    the mean log-probability of the rows under the fitted model.

    Parameters
    ----------
    estimator : fitted synthesizer
        Any fitted estimator with a ``score(X)`` method.
    X_test : DataFrame or array-like
        Real rows not used for fitting, in the form the estimator was fitted
        on.

    Returns
    -------
    log_likelihood : float
        In ``(-inf, 0]`` for discrete models; higher is better.  Its negative
        is the held-out negative log-likelihood (NLL).
    """
    if not hasattr(estimator, "score"):
        raise ValueError(
            f"estimator {type(estimator).__name__} has no score method to compute a log-likelihood."
        )
    check_is_fitted(estimator)
    return float(estimator.score(X_test))
