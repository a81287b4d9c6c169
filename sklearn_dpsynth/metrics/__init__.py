"""Evaluation metrics for synthetic tabular data.

Every metric takes the real table(s) and the synthetic table (DataFrames of
mixed types, or 2-D arrays) and returns a number (or a tidy table); see each
function for its definition, range and direction.

Fidelity
    :func:`workload_error`, :func:`histogram_intersection`,
    :func:`pair_similarity`, :func:`correlation_accuracy`, :func:`ks_score`,
    :func:`chi_square_score`, :func:`conjunction_error`,
    :func:`detection_score`
Utility
    :func:`ml_efficacy`, :func:`heldout_log_likelihood`
Privacy sanity (not a DP guarantee)
    :func:`distance_to_closest_record`
All at once
    :func:`evaluate`
Model selection
    :func:`make_fidelity_scorer`, :data:`fidelity_scorer`
Plots (matplotlib)
    :func:`plot_marginals`, :func:`plot_metric_vs_epsilon`
"""

from .conjunctions import conjunction_error
from .correlation import correlation_accuracy, correlation_ratio, cramers_v
from .detection import detection_score
from .efficacy import ml_efficacy
from .evaluate import METRIC_NAMES, evaluate
from .fidelity import chi_square_score, ks_score
from .likelihood import heldout_log_likelihood
from .marginals import histogram_intersection, pair_similarity, workload_error
from .plots import plot_marginals, plot_metric_vs_epsilon
from .privacy_sanity import distance_to_closest_record
from .scorers import FidelityScorer, fidelity_scorer, make_fidelity_scorer

__all__ = [
    "workload_error",
    "histogram_intersection",
    "pair_similarity",
    "correlation_accuracy",
    "cramers_v",
    "correlation_ratio",
    "ks_score",
    "chi_square_score",
    "conjunction_error",
    "detection_score",
    "ml_efficacy",
    "heldout_log_likelihood",
    "distance_to_closest_record",
    "evaluate",
    "METRIC_NAMES",
    "make_fidelity_scorer",
    "FidelityScorer",
    "fidelity_scorer",
    "plot_marginals",
    "plot_metric_vs_epsilon",
]
