"""Scorers for ranking synthesizer hyperparameters with scikit-learn's model selection.

A scorer is a callable ``scorer(estimator, X, y=None) -> float`` (higher is
better) that draws ``len(X)`` rows from the fitted synthesizer with
``estimator.sample(len(X), random_state=0)`` and compares them with the
held-out fold ``X``::

    search = GridSearchCV(MSTSynthesizer(domain=domain), {"n_bins": [8, 16, 32]},
                          scoring=make_fidelity_scorer("workload_error", k=2))
    search.fit(X, epsilon=1.0)

Note that every fit in a search is a separate release of the private data:
the privacy cost of a search is the composition over all of its fits, which
the scorer does not account for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from .conjunctions import conjunction_error
from .correlation import correlation_accuracy
from .detection import detection_score
from .fidelity import chi_square_score, ks_score
from .marginals import histogram_intersection, pair_similarity, workload_error

__all__ = ["make_fidelity_scorer", "FidelityScorer", "fidelity_scorer", "SCORER_METRICS"]


def _detection_one_minus_auc(real: Any, synth: Any, **kwargs: Any) -> float:
    """``1 - AUC`` of the detection classifier (higher is better)."""
    return detection_score(real, synth, form="1-auc", **kwargs)


#: Metric name -> (function, whether greater values are better).
SCORER_METRICS: dict[str, tuple[Callable[..., float], bool]] = {
    "workload_error": (workload_error, False),
    "conjunction_error": (conjunction_error, False),
    "histogram_intersection": (histogram_intersection, True),
    "pair_similarity": (pair_similarity, True),
    "correlation_accuracy": (correlation_accuracy, True),
    "ks_score": (ks_score, True),
    "chi_square_score": (chi_square_score, True),
    "detection_score": (_detection_one_minus_auc, True),
}


class FidelityScorer:
    """Callable ``scorer(estimator, X, y=None)`` comparing samples with ``X``.

    Parameters
    ----------
    metric : callable
        ``metric(real, synth, **kwargs) -> float``.
    greater_is_better : bool
        If False the metric is an error and the score is its negative.
    sample_random_state : int, default=0
        ``random_state`` passed to ``estimator.sample``.
    kwargs : dict
        Keyword arguments of ``metric``.  Without a ``domain`` keyword, the
        estimator's ``domain`` parameter, when it is a ``{column: entry}``
        mapping, is passed to the built-in metrics.
    """

    def __init__(self, metric: Callable[..., float], greater_is_better: bool,
                 sample_random_state: int = 0, kwargs: dict | None = None) -> None:
        self.metric = metric
        self.greater_is_better = greater_is_better
        self.sample_random_state = sample_random_state
        self.kwargs = dict(kwargs or {})

    def _metric_kwargs(self, estimator: Any) -> dict:
        """Keyword arguments, with the estimator's domain filled in if available."""
        kwargs = dict(self.kwargs)
        if "domain" not in kwargs and self.metric in _DOMAIN_AWARE:
            domain = getattr(estimator, "domain", None)
            if isinstance(domain, Mapping):
                kwargs["domain"] = domain
        return kwargs

    def __call__(self, estimator: Any, X: Any, y: Any = None) -> float:
        """Score the fitted ``estimator`` against the held-out rows ``X``.

        Parameters
        ----------
        estimator : fitted synthesizer
            Must have ``sample(n_samples, random_state=...)``.
        X : DataFrame or 2-D array
            Held-out real rows.
        y : ignored

        Returns
        -------
        score : float
            The metric (negated for errors): higher is better.
        """
        synth = estimator.sample(len(X), random_state=self.sample_random_state)
        value = float(self.metric(X, synth, **self._metric_kwargs(estimator)))
        return value if self.greater_is_better else -value

    def __repr__(self) -> str:
        name = getattr(self.metric, "__name__", repr(self.metric))
        args = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        sign = "" if self.greater_is_better else ", greater_is_better=False"
        return f"make_fidelity_scorer({name!r}{sign}{args})"


_DOMAIN_AWARE = {function for function, _ in SCORER_METRICS.values()}


def make_fidelity_scorer(
    metric: str | Callable[..., float],
    *,
    greater_is_better: bool | None = None,
    sample_random_state: int = 0,
    **kwargs: Any,
) -> FidelityScorer:
    """Make a scorer that ranks fitted synthesizers by a fidelity metric.

    Parameters
    ----------
    metric : str or callable
        A name from ``SCORER_METRICS`` (``"workload_error"``,
        ``"conjunction_error"``, ``"histogram_intersection"``,
        ``"pair_similarity"``, ``"correlation_accuracy"``, ``"ks_score"``,
        ``"chi_square_score"``, ``"detection_score"`` (scored as
        ``1 - AUC``)) or a callable ``metric(real, synth, **kwargs)``.
    greater_is_better : bool, default=None
        Required for a callable; for a named metric it is known (errors are
        negated) and may be omitted.
    sample_random_state : int, default=0
        Seed passed to ``estimator.sample``.
    **kwargs
        Keyword arguments of the metric (e.g. ``k=2``, ``bins=20``).

    Returns
    -------
    scorer : FidelityScorer
        ``scorer(estimator, X, y=None) -> float``, higher is better: the
        metric's value for similarity scores (in ``[0, 1]``), minus the
        error for errors (in ``[-1, 0]``).
    """
    if isinstance(metric, str):
        if metric not in SCORER_METRICS:
            raise ValueError(f"metric must be one of {list(SCORER_METRICS)} or a callable, got {metric!r}.")
        function, known = SCORER_METRICS[metric]
        if greater_is_better is not None and greater_is_better != known:
            raise ValueError(f"greater_is_better={greater_is_better} contradicts metric {metric!r}.")
        return FidelityScorer(function, known, sample_random_state, kwargs)
    if not callable(metric):
        raise ValueError(f"metric must be a metric name or a callable, got {metric!r}.")
    if greater_is_better is None:
        raise ValueError("greater_is_better must be given for a callable metric.")
    return FidelityScorer(metric, bool(greater_is_better), sample_random_state, kwargs)


#: Ready-made scorer: minus the mean 2-way workload error (TVD).
fidelity_scorer = make_fidelity_scorer("workload_error", k=2)
