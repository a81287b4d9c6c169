"""One call that runs every applicable evaluation metric and returns a tidy table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .._progress import Progress
from .tables import CATEGORICAL, NUMERIC, column_kinds, prepare_tables
from .conjunctions import conjunction_error
from .correlation import correlation_accuracy
from .threads import check_n_jobs
from .detection import detection_score
from .efficacy import ml_efficacy
from .fidelity import chi_square_score, ks_score
from .likelihood import heldout_log_likelihood
from .marginals import histogram_intersection, pair_similarity, workload_error
from .privacy_sanity import distance_to_closest_record

__all__ = ["evaluate", "METRIC_NAMES"]

#: Names accepted by ``evaluate(metrics=...)``, in output order.
METRIC_NAMES = (
    "workload_error",
    "histogram_intersection",
    "pair_similarity",
    "correlation_accuracy",
    "ks_score",
    "chi_square_score",
    "conjunction_error",
    "detection_score",
    "ml_efficacy",
    "distance_to_closest_record",
    "heldout_log_likelihood",
)
COLUMNS = ["metric", "value", "k", "model", "detail"]


@dataclass
class _Context:
    """Inputs and options shared by the metric row builders."""

    train: pd.DataFrame
    test: pd.DataFrame
    synth: pd.DataFrame
    target: Any
    estimator: Any
    domain: Mapping | None
    seed: int
    bins: int
    workload_k: Sequence[int]
    n_marginals: int | None
    n_queries: int
    efficacy_models: Sequence[str]
    n_jobs: int | None = 1
    kinds: dict = field(default_factory=dict)


def _row(metric: str, value: float, k: Any = None, model: Any = None, detail: Any = None) -> dict:
    """One tidy output row."""
    return {"metric": metric, "value": float(value), "k": k, "model": model, "detail": detail}


def _workload_rows(c: _Context) -> list[dict]:
    ks = [k for k in c.workload_k if k <= c.train.shape[1]]
    return [_row("workload_error", workload_error(
        c.train, c.synth, k, c.domain, n_marginals=c.n_marginals, random_state=c.seed, bins=c.bins), k=k)
        for k in ks]


def _hist_rows(c: _Context) -> list[dict]:
    return [_row("histogram_intersection", histogram_intersection(c.train, c.synth, c.domain), k=1)]


def _pair_rows(c: _Context) -> list[dict]:
    value = pair_similarity(c.train, c.synth, c.domain, n_marginals=c.n_marginals, random_state=c.seed)
    return [_row("pair_similarity", value, k=2)]


def _coracc_rows(c: _Context) -> list[dict]:
    return [_row("correlation_accuracy", correlation_accuracy(c.train, c.synth, c.domain), k=2)]


def _ks_rows(c: _Context) -> list[dict]:
    return [_row("ks_score", ks_score(c.train, c.synth, c.domain), k=1)]


def _chi2_rows(c: _Context) -> list[dict]:
    return [_row("chi_square_score", chi_square_score(c.train, c.synth, c.domain), k=1)]


def _conjunction_rows(c: _Context) -> list[dict]:
    value = conjunction_error(c.train, c.synth, c.domain, n_queries=c.n_queries,
                              bins=c.bins, random_state=c.seed)
    return [_row("conjunction_error", value)]


def _detection_rows(c: _Context) -> list[dict]:
    scores = detection_score(c.train, c.synth, c.domain, form="both", random_state=c.seed,
                             n_jobs=c.n_jobs)
    return [_row("detection_score", v, model="hgb", detail=form) for form, v in scores.items()]


def _efficacy_rows(c: _Context) -> list[dict]:
    table = ml_efficacy(c.synth, c.test, c.target, models=c.efficacy_models,
                        domain=c.domain, random_state=c.seed, n_jobs=c.n_jobs)
    return [_row("ml_efficacy", r.value, model=r.model, detail=r.metric) for r in table.itertuples()]


def _dcr_rows(c: _Context) -> list[dict]:
    summary = distance_to_closest_record(c.train, c.synth, c.test, domain=c.domain, random_state=c.seed)
    return [_row("distance_to_closest_record", v, detail=key) for key, v in summary.items()]


def _nll_rows(c: _Context) -> list[dict]:
    return [_row("heldout_log_likelihood", heldout_log_likelihood(c.estimator, c.test))]


_BUILDERS: dict[str, Callable[[_Context], list[dict]]] = {
    "workload_error": _workload_rows,
    "histogram_intersection": _hist_rows,
    "pair_similarity": _pair_rows,
    "correlation_accuracy": _coracc_rows,
    "ks_score": _ks_rows,
    "chi_square_score": _chi2_rows,
    "conjunction_error": _conjunction_rows,
    "detection_score": _detection_rows,
    "ml_efficacy": _efficacy_rows,
    "distance_to_closest_record": _dcr_rows,
    "heldout_log_likelihood": _nll_rows,
}


def _why_not_applicable(name: str, c: _Context) -> str | None:
    """Reason why a metric cannot be computed on these inputs, or None."""
    kinds = set(c.kinds.values())
    reasons = {
        "ml_efficacy": None if c.target is not None else "no target was given",
        "heldout_log_likelihood": None if c.estimator is not None else "no estimator was given",
        "ks_score": None if NUMERIC in kinds else "the table has no numeric column",
        "chi_square_score": None if CATEGORICAL in kinds else "the table has no categorical column",
        "pair_similarity": None if len(c.kinds) > 1 else "the table has a single column",
        "correlation_accuracy": None if len(c.kinds) > 1 else "the table has a single column",
    }
    return reasons.get(name)


def _selected_metrics(metrics: Sequence[str] | None, c: _Context) -> list[str]:
    """Metrics to run: the requested ones (all must apply) or every applicable one."""
    if metrics is None:
        return [m for m in METRIC_NAMES if _why_not_applicable(m, c) is None]
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    for name in metrics:
        if name not in _BUILDERS:
            raise ValueError(f"metrics: unknown metric {name!r}; choose from {list(METRIC_NAMES)}.")
        reason = _why_not_applicable(name, c)
        if reason is not None:
            raise ValueError(f"metrics: {name!r} cannot be computed because {reason}.")
    return metrics


def evaluate(
    real_train: Any,
    real_test: Any,
    synth: Any,
    *,
    target: Any = None,
    estimator: Any = None,
    domain: Mapping | None = None,
    metrics: Sequence[str] | None = None,
    random_state: Any = None,
    bins: int = 20,
    workload_k: Sequence[int] = (1, 2, 3),
    n_marginals: int | None = None,
    n_queries: int = 100,
    efficacy_models: Sequence[str] = ("logistic", "boosting"),
    n_jobs: int | None = 1,
    verbose: int = 0,
) -> pd.DataFrame:
    """Evaluate synthetic data with every applicable metric.

    Fidelity metrics (workload error, HIST, Pair, CorAcc, KS, chi-square,
    conjunctions, detection) compare the synthetic table with the real
    *training* table, the distribution the synthesizer was fitted to.  ML
    efficacy trains on the synthetic table and tests on ``real_test`` (only
    with a ``target``); the DCR uses ``real_test`` as the holdout baseline;
    the held-out log-likelihood scores ``real_test`` under ``estimator``
    (only when given).

    Parameters
    ----------
    real_train : DataFrame or 2-D array
        Real training table (the private data given to the synthesizer).
    real_test : DataFrame or 2-D array
        Real held-out table with the same columns.
    synth : DataFrame or 2-D array
        Synthetic table with the same columns.
    target : hashable, default=None
        Target column for ML efficacy.
    estimator : fitted synthesizer, default=None
        For the held-out log-likelihood (``estimator.score(real_test)``).
    domain : mapping, default=None
        Column domain, as for the synthesizers.
    metrics : sequence of str, default=None
        Subset of ``METRIC_NAMES``; by default every applicable metric
        (metrics that need a target, an estimator, numeric or categorical
        columns are skipped when these are missing).  Naming a metric that
        cannot be computed raises a ValueError.
    random_state : int, RandomState or None, default=None
        Seed of every randomised metric.
    bins : int, default=20
        Bins of numeric columns for the workload and conjunction errors
        (HIST and Pair average over 20 and 50 bins).
    workload_k : sequence of int, default=(1, 2, 3)
        Orders of the workload errors.
    n_marginals : int, default=None
        Random subset of marginals per order (all by default).
    n_queries : int, default=100
        Number of conjunction queries.
    efficacy_models : sequence of str, default=("logistic", "boosting")
        Models of the ML efficacy.
    n_jobs : int or None, default=1
        Threads of the models that the detection score and the ML efficacy
        train (see :func:`detection_score`); -1 uses every core, None the
        libraries' defaults (one OpenMP thread per core, which oversubscribes
        a shared machine and is slower on small tables).
    verbose : int, default=0
        0 is silent; 1 (or more) shows a progress bar on stderr (tqdm) over
        the metrics, naming the one being computed.

    Returns
    -------
    results : DataFrame
        Tidy table with columns ``metric``, ``value``, ``k`` (marginal
        order, where relevant), ``model`` (ML efficacy and detection models)
        and ``detail`` (sub-measure, e.g. ``"f1"``, ``"auc"``,
        ``"dcr_median"``).  The range and direction of each value are those
        of the corresponding function.
    """
    train, test, synth_df = prepare_tables(real_train, ("real_test", real_test), ("synth", synth))
    seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    context = _Context(train, test, synth_df, target, estimator, domain, seed, bins,
                       tuple(workload_k), n_marginals, n_queries, tuple(efficacy_models),
                       check_n_jobs(n_jobs), column_kinds(train, domain))
    if target is not None and target not in train.columns:
        raise ValueError(f"target {target!r} is not a column of the tables.")
    rows = []
    names = list(_selected_metrics(metrics, context))
    with Progress(verbose, "evaluate").bar(names, unit="metric") as bar:
        for name in bar:
            bar.set_postfix_str(name)
            rows.extend(_BUILDERS[name](context))
    result = pd.DataFrame(rows, columns=COLUMNS)
    result["k"] = result["k"].astype("Int64")
    return result
